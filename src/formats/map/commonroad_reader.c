/* CommonRoad XML reader (expat; versions 2018b and 2020a). Lanelets with their bound
 * points, predecessor/successor/adjacent links and types; obstacles, traffic signs and
 * lights, intersections and planning problems kept as data; the root's attributes as meta
 * data. Coordinates are metres already. Dangling lanelet links are errors. */
#include "map_internal.h"
#include "map_xml.h"

#include "core/text.h"
#include "runlab/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TEXT = 256 };

typedef struct link_ref {
    int64_t ref;
    uint32_t line;
    uint32_t lanelet; /* index of the lanelet holding the link */
    char what[16];
} link_ref;

typedef struct cr_parse {
    rl_map_xml x; /* parser, file name, first error */
    int depth;
    bool root_seen;
    rl_map_source *src;
    size_t cap_lanelets, cap_objects;
    rl_map_source_lanelet *ll; /* lanelet being read, or NULL */
    rl_map_source_object *obj; /* object being read, or NULL */
    int bound;                 /* 1 left, 2 right, 0 none */
    size_t cap_bound;
    bool in_point, have_x, have_y;
    double px, py;
    char text[MAX_TEXT];
    size_t text_len;
    bool collect;
    link_ref *links;
    size_t num_links, cap_links;
} cr_parse;


static void start_lanelet(cr_parse *p, const XML_Char **a)
{
    int64_t id;
    if (!rl_map_xml_id(&p->x, "lanelet", a, &id))
        return;
    rl_map_source *src = p->src;
    int rc = rl_grow_array((void **)&src->lanelets, &p->cap_lanelets, src->num_lanelets + 1,
                           sizeof *src->lanelets, "CommonRoad lanelets");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    p->ll = &src->lanelets[src->num_lanelets];
    memset(p->ll, 0, sizeof *p->ll);
    p->ll->id = id;
    p->ll->line = XML_GetCurrentLineNumber(p->x.xp);
    p->ll->one_way = -1;
    p->ll->speed_limit = NAN;
    src->num_lanelets++;
}

static void start_object(cr_parse *p, const char *el, const XML_Char **a)
{
    int64_t id;
    if (!rl_map_xml_id(&p->x, el, a, &id))
        return;
    rl_map_source *src = p->src;
    int rc = rl_grow_array((void **)&src->objects, &p->cap_objects, src->num_objects + 1,
                           sizeof *src->objects, "CommonRoad objects");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    p->obj = &src->objects[src->num_objects++];
    memset(p->obj, 0, sizeof *p->obj);
    p->obj->id = id;
    if (!(p->obj->kind = rl_map_strdup(el)))
        rl_map_xml_stop(&p->x, RL_ENOMEM);
}

static void add_link(cr_parse *p, const char *el, const XML_Char **a)
{
    int64_t ref;
    const char *s = rl_map_xml_attr(a, "ref");
    if (!rl_map_parse_id(s, &ref)) {
        rl_map_xml_fail(&p->x, "lanelet %lld: <%s ref='%.40s'>: ref is not a 64-bit integer", (long long)p->ll->id,
             el, s ? s : "");
        return;
    }
    int rc = rl_grow_array((void **)&p->links, &p->cap_links, p->num_links + 1, sizeof *p->links,
                           "CommonRoad links");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    link_ref *l = &p->links[p->num_links++];
    l->ref = ref;
    l->line = (uint32_t)XML_GetCurrentLineNumber(p->x.xp);
    l->lanelet = (uint32_t)(p->ll - p->src->lanelets);
    snprintf(l->what, sizeof l->what, "%s", el);
    rl_map_source_lanelet *ll = p->ll;
    int64_t **arr = NULL;
    size_t *n = NULL;
    if (strcmp(el, "predecessor") == 0) {
        arr = &ll->predecessors;
        n = &ll->num_predecessors;
    } else if (strcmp(el, "successor") == 0) {
        arr = &ll->successors;
        n = &ll->num_successors;
    } else {
        const char *dir = rl_map_xml_attr(a, "drivingDir");
        bool same = !dir || strcmp(dir, "same") == 0;
        if (el[8] == 'L') {
            ll->adjacent_left = ref;
            ll->has_adjacent_left = true;
            ll->adjacent_left_same_direction = same;
        } else {
            ll->adjacent_right = ref;
            ll->has_adjacent_right = true;
            ll->adjacent_right_same_direction = same;
        }
        return;
    }
    int64_t *v = realloc(*arr, (*n + 1) * sizeof *v);
    if (!v) {
        rl_map_xml_stop(&p->x, rl_error_set(RL_ENOMEM, "out of memory"));
        return;
    }
    *arr = v;
    v[(*n)++] = ref;
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **a)
{
    cr_parse *p = ud;
    if (p->x.rc < 0)
        return;
    p->depth++;
    p->collect = false;
    if (p->depth == 1) {
        if (strcmp(el, "commonRoad") != 0) {
            rl_map_xml_fail(&p->x, "root element <%s>, expected <commonRoad>", el);
            return;
        }
        p->root_seen = true;
        rl_map_source *src = p->src;
        for (; a[0]; a += 2) {
            size_t k = src->num_meta;
            char **nk = realloc(src->meta_keys, (k + 1) * sizeof *nk);
            if (nk)
                src->meta_keys = nk;
            char **nv = realloc(src->meta_values, (k + 1) * sizeof *nv);
            if (nv)
                src->meta_values = nv;
            if (!nk || !nv) {
                rl_map_xml_stop(&p->x, rl_error_set(RL_ENOMEM, "out of memory"));
                return;
            }
            nk[k] = rl_map_strdup(a[0]);
            nv[k] = rl_map_strdup(a[1]);
            src->num_meta++;
            if (!nk[k] || !nv[k]) {
                rl_map_xml_stop(&p->x, RL_ENOMEM);
                return;
            }
        }
        return;
    }
    if (p->depth == 2) {
        if (strcmp(el, "lanelet") == 0)
            start_lanelet(p, a);
        else if (strcmp(el, "obstacle") == 0 || strcmp(el, "staticObstacle") == 0 ||
                 strcmp(el, "dynamicObstacle") == 0 || strcmp(el, "environmentObstacle") == 0 ||
                 strcmp(el, "trafficSign") == 0 || strcmp(el, "trafficLight") == 0 ||
                 strcmp(el, "intersection") == 0 || strcmp(el, "planningProblem") == 0)
            start_object(p, el, a);
        return;
    }
    if (p->ll && p->depth == 3) {
        if (strcmp(el, "leftBound") == 0 || strcmp(el, "rightBound") == 0) {
            p->bound = el[0] == 'l' ? 1 : 2;
            p->cap_bound = 0;
        } else if (strcmp(el, "predecessor") == 0 || strcmp(el, "successor") == 0 ||
                   strcmp(el, "adjacentLeft") == 0 || strcmp(el, "adjacentRight") == 0) {
            add_link(p, el, a);
        } else if (strcmp(el, "laneletType") == 0 || strcmp(el, "speedLimit") == 0 ||
                   strcmp(el, "userOneWay") == 0) {
            p->collect = true;
        }
    } else if (p->ll && p->bound && p->depth == 4 && strcmp(el, "point") == 0) {
        p->in_point = true;
        p->have_x = p->have_y = false;
    } else if (p->in_point && p->depth == 5 && (strcmp(el, "x") == 0 || strcmp(el, "y") == 0)) {
        p->collect = true;
    } else if (p->obj && p->depth == 3 &&
               (strcmp(el, "type") == 0 || strcmp(el, "obstacleType") == 0)) {
        p->collect = true;
    }
    p->text_len = 0;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    cr_parse *p = ud;
    if (!p->collect || p->x.rc < 0 || len <= 0)
        return;
    if (p->text_len + (size_t)len >= MAX_TEXT) {
        rl_map_xml_fail(&p->x, "element text longer than %d bytes", MAX_TEXT - 1);
        return;
    }
    memcpy(p->text + p->text_len, s, (size_t)len);
    p->text_len += (size_t)len;
}

static void append_text(cr_parse *p, char **slot)
{
    size_t old = *slot ? strlen(*slot) + 1 : 0;
    char *v = realloc(*slot, old + p->text_len + 1);
    if (!v) {
        rl_map_xml_stop(&p->x, rl_error_set(RL_ENOMEM, "out of memory"));
        return;
    }
    if (old)
        v[old - 1] = ',';
    memcpy(v + old, p->text, p->text_len);
    v[old + p->text_len] = '\0';
    *slot = v;
}

static void end_point(cr_parse *p)
{
    rl_map_source_lanelet *ll = p->ll;
    if (!p->have_x || !p->have_y) {
        rl_map_xml_fail(&p->x, "lanelet %lld: <point> without <x> and <y>", (long long)ll->id);
        return;
    }
    rl_map_point **pts = p->bound == 1 ? &ll->left : &ll->right;
    size_t *n = p->bound == 1 ? &ll->num_left : &ll->num_right;
    int rc = rl_grow_array((void **)pts, &p->cap_bound, *n + 1, sizeof **pts, "bound points");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    (*pts)[(*n)++] = (rl_map_point){p->px, p->py};
    p->src->counts.points++;
}

static void XMLCALL on_end(void *ud, const XML_Char *el)
{
    cr_parse *p = ud;
    if (p->x.rc < 0)
        return;
    if (p->collect) {
        p->text[p->text_len] = '\0';
        double v;
        if (p->in_point && p->depth == 5) {
            if (!rl_map_parse_number(p->text, &v)) {
                rl_map_xml_fail(&p->x, "lanelet %lld: <%s>%.40s</%s> is not a number", (long long)p->ll->id, el,
                     p->text, el);
                return;
            }
            if (el[0] == 'x' ? p->have_x : p->have_y) { /* no silent "last one wins" */
                rl_map_xml_fail(&p->x, "lanelet %lld: <point> has a second <%s>",
                                (long long)p->ll->id, el);
                return;
            }
            if (el[0] == 'x') {
                p->px = v;
                p->have_x = true;
            } else {
                p->py = v;
                p->have_y = true;
            }
        } else if (p->ll && strcmp(el, "laneletType") == 0) {
            append_text(p, &p->ll->subtype);
        } else if (p->ll && strcmp(el, "speedLimit") == 0) {
            if (rl_map_parse_number(p->text, &v))
                p->ll->speed_limit = v;
        } else if (p->ll && strcmp(el, "userOneWay") == 0) {
            p->ll->one_way = 1;
        } else if (p->obj && !p->obj->subtype) {
            append_text(p, &p->obj->subtype);
        }
        p->collect = false;
    }
    if (p->in_point && p->depth == 4) {
        end_point(p);
        p->in_point = false;
    } else if (p->ll && p->depth == 3 && p->bound) {
        p->bound = 0;
    } else if (p->depth == 2) {
        p->ll = NULL;
        p->obj = NULL;
    }
    p->depth--;
}

static int check_lanelets(cr_parse *p, const rl_map_read_options *o)
{
    rl_map_source *src = p->src;
    rl_map_idmap ids = {0};
    int rc = rl_map_idmap_init(&ids, src->num_lanelets);
    for (size_t i = 0; rc == RL_OK && i < src->num_lanelets; i++) {
        rl_map_source_lanelet *ll = &src->lanelets[i];
        uint32_t prev;
        rl_map_idmap_put(&ids, ll->id, (uint32_t)i, &prev);
        if (prev != UINT32_MAX)
            rc = rl_error_set(RL_EPARSE, "%s:%llu: lanelet %lld: id also used on line %llu",
                              p->x.name, (unsigned long long)ll->line, (long long)ll->id,
                              (unsigned long long)src->lanelets[prev].line);
        else if (ll->num_left == 0 || ll->num_right == 0)
            rc = rl_error_set(RL_EPARSE, "%s:%llu: lanelet %lld: %s has no points", p->x.name,
                              (unsigned long long)ll->line, (long long)ll->id,
                              ll->num_left == 0 ? "leftBound" : "rightBound");
    }
    for (size_t i = 0; rc == RL_OK && i < p->num_links; i++) {
        const link_ref *l = &p->links[i];
        if (rl_map_idmap_get(&ids, l->ref) == UINT32_MAX)
            rc = rl_error_set(RL_EPARSE, "%s:%u: lanelet %lld: <%s ref='%lld'>: no such lanelet",
                              p->x.name, l->line, (long long)src->lanelets[l->lanelet].id, l->what,
                              (long long)l->ref);
    }
    rl_map_idmap_free(&ids);
    if (rc == RL_OK)
        rc = rl_map_source_check_degenerate(src, o->quiet);
    return rc;
}

int rl_commonroad_read_mem(const char *data, size_t len, const char *name,
                           const rl_map_read_options *opts, rl_map_source **out)
{
    rl_map_read_options defaults;
    *out = NULL;
    cr_parse p = {.x.name = name};
    int begun = rl_map_source_begin(data, len, name, RL_MAP_FORMAT_COMMONROAD, &opts, &defaults,
                                    &p.src);
    if (begun < 0)
        return begun;
    p.src->projection = RL_MAP_PROJ_NONE;
    rl_map_xml_parse(&p.x, data, len, &p, on_start, on_end, on_text);
    if (p.x.rc == RL_OK && !p.root_seen)
        p.x.rc = rl_error_set(RL_EPARSE, "%s: no <commonRoad> root element", name);
    if (p.x.rc == RL_OK)
        p.x.rc = check_lanelets(&p, opts);
    int rc = p.x.rc;
    rl_map_xml_free(&p.x);
    free(p.links);
    if (rc < 0) {
        rl_map_source_free(p.src);
        return rc;
    }
    *out = p.src;
    return RL_OK;
}
