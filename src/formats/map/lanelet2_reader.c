/* Lanelet2 OSM reader (expat). Collects nodes, ways and relations, skipping JOSM's
 * action='delete' objects; ids are 64-bit integers, never doubles. Then positions nodes
 * (projection or local_x/local_y or metric), builds lanelets from type=lanelet relations,
 * re-orients their bounds as Lanelet2 does, derives successors, keeps the rest as data. */
#include "map_internal.h"
#include "map_xml.h"

#include "core/text.h"
#include "runlab/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct osm_node {
    int64_t id;
    double lat, lon, local_x, local_y;
    uint32_t line;
    uint8_t has_latlon, has_local; /* has_local: bit 0 local_x, bit 1 local_y */
} osm_node;

typedef struct osm_way {
    int64_t id;
    uint32_t line, ref_off, ref_n;
    bool area;
} osm_way;

typedef struct osm_member {
    int64_t ref;
    char type; /* 'n', 'w', 'r' */
    char role[23];
} osm_member;

typedef struct osm_relation {
    int64_t id;
    uint32_t line, mem_off, mem_n;
    char *type, *subtype, *location, *one_way, *speed_limit;
} osm_relation;

typedef struct osm_parse {
    rl_map_xml x; /* parser, file name, first error */
    int depth;
    bool root_seen;
    enum { IN_NONE, IN_NODE, IN_WAY, IN_RELATION, IN_SKIP } in;
    rl_map_source *src;
    osm_node *nodes;
    size_t num_nodes, cap_nodes;
    osm_way *ways;
    size_t num_ways, cap_ways;
    int64_t *refs;
    size_t num_refs, cap_refs;
    osm_relation *rels;
    size_t num_rels, cap_rels;
    osm_member *members;
    size_t num_members, cap_members;
} osm_parse;


static bool is_deleted(const XML_Char **a)
{
    const char *act = rl_map_xml_attr(a, "action");
    return act && strcmp(act, "delete") == 0;
}

static void start_node(osm_parse *p, const XML_Char **a)
{
    int64_t id;
    if (!rl_map_xml_id(&p->x, "node", a, &id))
        return;
    if (is_deleted(a)) {
        p->src->counts.deleted_nodes++;
        p->in = IN_SKIP;
        return;
    }
    int rc = rl_grow_array((void **)&p->nodes, &p->cap_nodes, p->num_nodes + 1, sizeof *p->nodes,
                           "OSM nodes");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    osm_node *n = &p->nodes[p->num_nodes++];
    memset(n, 0, sizeof *n);
    n->id = id;
    n->line = (uint32_t)XML_GetCurrentLineNumber(p->x.xp);
    const char *lat = rl_map_xml_attr(a, "lat"), *lon = rl_map_xml_attr(a, "lon");
    if (lat || lon) {
        if (!rl_map_parse_number(lat, &n->lat) || !rl_map_parse_number(lon, &n->lon)) {
            rl_map_xml_fail(&p->x, "node %lld: lat/lon '%.30s', '%.30s' are not numbers", (long long)id,
                 lat ? lat : "", lon ? lon : "");
            return;
        }
        n->has_latlon = 1;
    }
    p->in = IN_NODE;
}

static void start_way(osm_parse *p, const XML_Char **a)
{
    int64_t id;
    if (!rl_map_xml_id(&p->x, "way", a, &id))
        return;
    if (is_deleted(a)) {
        p->src->counts.deleted_ways++;
        p->in = IN_SKIP;
        return;
    }
    int rc = rl_grow_array((void **)&p->ways, &p->cap_ways, p->num_ways + 1, sizeof *p->ways,
                           "OSM ways");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    osm_way *w = &p->ways[p->num_ways++];
    memset(w, 0, sizeof *w);
    w->id = id;
    w->line = (uint32_t)XML_GetCurrentLineNumber(p->x.xp);
    w->ref_off = (uint32_t)p->num_refs;
    p->in = IN_WAY;
}

static void start_relation(osm_parse *p, const XML_Char **a)
{
    int64_t id;
    if (!rl_map_xml_id(&p->x, "relation", a, &id))
        return;
    if (is_deleted(a)) {
        p->src->counts.deleted_relations++;
        p->in = IN_SKIP;
        return;
    }
    int rc = rl_grow_array((void **)&p->rels, &p->cap_rels, p->num_rels + 1, sizeof *p->rels,
                           "OSM relations");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    osm_relation *r = &p->rels[p->num_rels++];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->line = (uint32_t)XML_GetCurrentLineNumber(p->x.xp);
    r->mem_off = (uint32_t)p->num_members;
    p->in = IN_RELATION;
}

static void set_tag(osm_parse *p, char **slot, const char *v)
{
    free(*slot);
    if (!(*slot = rl_map_strdup(v)))
        rl_map_xml_stop(&p->x, RL_ENOMEM);
}

static void child_tag(osm_parse *p, const XML_Char **a)
{
    const char *k = rl_map_xml_attr(a, "k"), *v = rl_map_xml_attr(a, "v");
    if (!k || !v) {
        rl_map_xml_fail(&p->x, "<tag> needs k and v");
        return;
    }
    if (p->in == IN_NODE) {
        osm_node *n = &p->nodes[p->num_nodes - 1];
        if (strcmp(k, "local_x") == 0 || strcmp(k, "local_y") == 0) {
            bool is_x = k[6] == 'x';
            if (!rl_map_parse_number(v, is_x ? &n->local_x : &n->local_y)) {
                rl_map_xml_fail(&p->x, "node %lld: tag %s='%.30s' is not a number", (long long)n->id, k, v);
                return;
            }
            n->has_local |= is_x ? 1 : 2;
        }
    } else if (p->in == IN_WAY) {
        if (strcmp(k, "area") == 0 && strcmp(v, "yes") == 0)
            p->ways[p->num_ways - 1].area = true;
    } else if (p->in == IN_RELATION) {
        osm_relation *r = &p->rels[p->num_rels - 1];
        if (strcmp(k, "type") == 0)
            set_tag(p, &r->type, v);
        else if (strcmp(k, "subtype") == 0)
            set_tag(p, &r->subtype, v);
        else if (strcmp(k, "location") == 0)
            set_tag(p, &r->location, v);
        else if (strcmp(k, "one_way") == 0)
            set_tag(p, &r->one_way, v);
        else if (strcmp(k, "speed_limit") == 0)
            set_tag(p, &r->speed_limit, v);
    }
}

static void child_nd(osm_parse *p, const XML_Char **a)
{
    osm_way *w = &p->ways[p->num_ways - 1];
    int64_t ref;
    const char *s = rl_map_xml_attr(a, "ref");
    if (!rl_map_parse_id(s, &ref)) {
        rl_map_xml_fail(&p->x, "way %lld: <nd ref='%.40s'> is not a 64-bit integer", (long long)w->id, s ? s : "");
        return;
    }
    if (p->num_refs >= UINT32_MAX) {
        rl_map_xml_fail(&p->x, "too many way nodes");
        return;
    }
    int rc = rl_grow_array((void **)&p->refs, &p->cap_refs, p->num_refs + 1, sizeof *p->refs,
                           "OSM way nodes");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    p->refs[p->num_refs++] = ref;
    w->ref_n++;
}

static void child_member(osm_parse *p, const XML_Char **a)
{
    osm_relation *r = &p->rels[p->num_rels - 1];
    const char *type = rl_map_xml_attr(a, "type"), *ref = rl_map_xml_attr(a, "ref"), *role = rl_map_xml_attr(a, "role");
    int64_t id;
    if (!type || !rl_map_parse_id(ref, &id)) {
        rl_map_xml_fail(&p->x, "relation %lld: <member> needs a type and an integer ref", (long long)r->id);
        return;
    }
    if (p->num_members >= UINT32_MAX) {
        rl_map_xml_fail(&p->x, "too many relation members");
        return;
    }
    int rc = rl_grow_array((void **)&p->members, &p->cap_members, p->num_members + 1,
                           sizeof *p->members, "OSM relation members");
    if (rc < 0) {
        rl_map_xml_stop(&p->x, rc);
        return;
    }
    osm_member *m = &p->members[p->num_members++];
    memset(m, 0, sizeof *m);
    m->ref = id;
    m->type = type[0];
    snprintf(m->role, sizeof m->role, "%s", role ? role : "");
    r->mem_n++;
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **a)
{
    osm_parse *p = ud;
    if (p->x.rc < 0)
        return;
    p->depth++;
    if (p->depth == 1) {
        if (strcmp(el, "osm") != 0) {
            rl_map_xml_fail(&p->x, "root element <%s>, expected <osm>", el);
            return;
        }
        p->root_seen = true;
        for (; a[0]; a += 2) {
            size_t k = p->src->num_meta;
            char **nk = realloc(p->src->meta_keys, (k + 1) * sizeof *nk);
            if (nk)
                p->src->meta_keys = nk;
            char **nv = realloc(p->src->meta_values, (k + 1) * sizeof *nv);
            if (nv)
                p->src->meta_values = nv;
            if (!nk || !nv) {
                rl_map_xml_stop(&p->x, rl_error_set(RL_ENOMEM, "out of memory"));
                return;
            }
            nk[k] = rl_map_strdup(a[0]);
            nv[k] = rl_map_strdup(a[1]);
            p->src->num_meta++;
            if (!nk[k] || !nv[k]) {
                rl_map_xml_stop(&p->x, RL_ENOMEM);
                return;
            }
        }
        return;
    }
    if (p->depth == 2) {
        p->in = IN_NONE;
        if (strcmp(el, "node") == 0)
            start_node(p, a);
        else if (strcmp(el, "way") == 0)
            start_way(p, a);
        else if (strcmp(el, "relation") == 0)
            start_relation(p, a);
        return; /* <bounds>, <MetaInfo> and the like are ignored */
    }
    if (p->depth == 3 && p->in != IN_NONE && p->in != IN_SKIP) {
        if (strcmp(el, "tag") == 0)
            child_tag(p, a);
        else if (strcmp(el, "nd") == 0 && p->in == IN_WAY)
            child_nd(p, a);
        else if (strcmp(el, "member") == 0 && p->in == IN_RELATION)
            child_member(p, a);
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *el)
{
    (void)el;
    osm_parse *p = ud;
    if (p->depth == 2)
        p->in = IN_NONE;
    p->depth--;
}

/* Copies a way's node positions; the message names the lanelet, role and missing node. */
static int way_points(osm_parse *p, const rl_map_idmap *nodes, const rl_map_point *pos,
                      const osm_relation *r, const osm_way *w, const char *role, rl_map_point **out,
                      size_t *n)
{
    if (w->ref_n == 0)
        return rl_error_set(RL_EPARSE, "%s:%u: relation %lld (lanelet): %s way %lld has no nodes",
                            p->x.name, r->line, (long long)r->id, role, (long long)w->id);
    if (!(*out = malloc(w->ref_n * sizeof **out)))
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < w->ref_n; i++) {
        uint32_t k = rl_map_idmap_get(nodes, p->refs[w->ref_off + i]);
        if (k == UINT32_MAX)
            return rl_error_set(RL_EPARSE,
                                "%s:%u: way %lld (%s bound of lanelet %lld): node %lld not found",
                                p->x.name, w->line, (long long)w->id, role, (long long)r->id,
                                (long long)p->refs[w->ref_off + i]);
        (*out)[i] = pos[k];
    }
    *n = w->ref_n;
    return RL_OK;
}

static int build_lanelet(osm_parse *p, const rl_map_idmap *nodes, const rl_map_idmap *ways,
                         const rl_map_point *pos, const osm_relation *r, rl_map_source_lanelet *ll)
{
    const osm_way *bound[3] = {NULL, NULL, NULL};
    static const char *const roles[3] = {"left", "right", "centerline"};
    size_t nreg = 0;
    for (uint32_t i = 0; i < r->mem_n; i++) {
        const osm_member *m = &p->members[r->mem_off + i];
        if (strcmp(m->role, "regulatory_element") == 0) {
            nreg++;
            continue;
        }
        for (int k = 0; k < 3; k++) {
            if (strcmp(m->role, roles[k]) != 0)
                continue;
            if (bound[k])
                return rl_error_set(RL_EPARSE, "%s:%u: relation %lld (lanelet): two '%s' members",
                                    p->x.name, r->line, (long long)r->id, roles[k]);
            uint32_t wi = m->type == 'w' ? rl_map_idmap_get(ways, m->ref) : UINT32_MAX;
            if (wi == UINT32_MAX)
                return rl_error_set(RL_EPARSE,
                                    "%s:%u: relation %lld (lanelet): member way %lld (role %s) "
                                    "not found",
                                    p->x.name, r->line, (long long)r->id, (long long)m->ref,
                                    roles[k]);
            bound[k] = &p->ways[wi];
        }
    }
    for (int k = 0; k < 2; k++)
        if (!bound[k])
            return rl_error_set(RL_EPARSE, "%s:%u: relation %lld (lanelet): no '%s' member",
                                p->x.name, r->line, (long long)r->id, roles[k]);
    ll->id = r->id;
    ll->line = r->line;
    ll->one_way = -1;
    ll->speed_limit = NAN;
    int rc = way_points(p, nodes, pos, r, bound[0], "left", &ll->left, &ll->num_left);
    if (rc == RL_OK)
        rc = way_points(p, nodes, pos, r, bound[1], "right", &ll->right, &ll->num_right);
    if (rc == RL_OK && bound[2])
        rc = way_points(p, nodes, pos, r, bound[2], "centerline", &ll->centre, &ll->num_centre);
    if (rc < 0)
        return rc;
    if (r->subtype && !(ll->subtype = rl_map_strdup(r->subtype)))
        return RL_ENOMEM;
    if (r->location && !(ll->location = rl_map_strdup(r->location)))
        return RL_ENOMEM;
    if (r->one_way)
        ll->one_way = strcmp(r->one_way, "yes") == 0 ? 1 : strcmp(r->one_way, "no") == 0 ? 0 : -1;
    if (r->speed_limit) {
        char *end;
        double v = strtod(r->speed_limit, &end);
        if (end != r->speed_limit && isfinite(v))
            ll->speed_limit = v;
    }
    if (nreg) {
        if (!(ll->regulatory_elements = malloc(nreg * sizeof(int64_t))))
            return rl_error_set(RL_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < r->mem_n; i++)
            if (strcmp(p->members[r->mem_off + i].role, "regulatory_element") == 0)
                ll->regulatory_elements[ll->num_regulatory_elements++] =
                    p->members[r->mem_off + i].ref;
    }
    return RL_OK;
}

static int build_object(osm_parse *p, const osm_relation *r, rl_map_source_object *o)
{
    o->id = r->id;
    if (!(o->kind = rl_map_strdup(r->type ? r->type : "relation")))
        return RL_ENOMEM;
    if (r->subtype && !(o->subtype = rl_map_strdup(r->subtype)))
        return RL_ENOMEM;
    if (r->mem_n) {
        if (!(o->refs = malloc(r->mem_n * sizeof *o->refs)))
            return rl_error_set(RL_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < r->mem_n; i++)
            o->refs[i] = p->members[r->mem_off + i].ref;
        o->num_refs = r->mem_n;
    }
    return RL_OK;
}

/* Decides the projection (AUTO) and computes every node's position. */
static int position_nodes(osm_parse *p, const rl_map_read_options *o, rl_map_point *pos)
{
    rl_map_projection proj = o->projection;
    if (proj == RL_MAP_PROJ_AUTO) {
        bool all_local = p->num_nodes > 0, any_out = false;
        for (size_t i = 0; i < p->num_nodes; i++) {
            all_local &= p->nodes[i].has_local == 3;
            any_out |= fabs(p->nodes[i].lat) > 90 || fabs(p->nodes[i].lon) > 180;
        }
        proj = all_local ? RL_MAP_PROJ_LOCAL : any_out ? RL_MAP_PROJ_METRIC : RL_MAP_PROJ_LTP;
    }
    if (proj == RL_MAP_PROJ_NONE)
        return rl_error_set(RL_EINVAL, "%s: projection 'none' is for CommonRoad files", p->x.name);
    p->src->projection = proj;
    bool geo = proj == RL_MAP_PROJ_LTP || proj == RL_MAP_PROJ_UTM || proj == RL_MAP_PROJ_SMERC;
    if (geo) {
        if (!(fabs(o->origin_lat) <= 90 && fabs(o->origin_lon) <= 180))
            return rl_error_set(RL_EINVAL, "origin %g,%g is not a lat/lon", o->origin_lat,
                                o->origin_lon);
        p->src->origin_lat = o->origin_lat;
        p->src->origin_lon = o->origin_lon;
    }
    for (size_t i = 0; i < p->num_nodes; i++) {
        const osm_node *n = &p->nodes[i];
        if (proj == RL_MAP_PROJ_LOCAL) {
            if (n->has_local != 3)
                return rl_error_set(RL_EPARSE, "%s:%u: node %lld: no local_x/local_y tags", p->x.name,
                                    n->line, (long long)n->id);
            pos[i] = (rl_map_point){n->local_x, n->local_y};
            continue;
        }
        if (!n->has_latlon)
            return rl_error_set(RL_EPARSE, "%s:%u: node %lld: no lat/lon", p->x.name, n->line,
                                (long long)n->id);
        if (proj == RL_MAP_PROJ_METRIC) {
            pos[i] = (rl_map_point){n->lon, n->lat};
            continue;
        }
        if (fabs(n->lat) > 90 || fabs(n->lon) > 180)
            return rl_error_set(RL_EPARSE,
                                "%s:%u: node %lld: lat %g lon %g out of range (a metric file? "
                                "use --projection metric)",
                                p->x.name, n->line, (long long)n->id, n->lat, n->lon);
        rl_map_project(proj, o->origin_lat, o->origin_lon, n->lat, n->lon, &pos[i]);
    }
    for (size_t i = 0; i < p->num_nodes; i++)
        if (!(fabs(pos[i].x) <= RL_MAP_MAX_COORD && fabs(pos[i].y) <= RL_MAP_MAX_COORD))
            return rl_error_set(RL_EPARSE,
                                "%s:%u: node %lld: position (%g, %g) is not finite or farther "
                                "than %g m from the origin",
                                p->x.name, p->nodes[i].line, (long long)p->nodes[i].id, pos[i].x,
                                pos[i].y, RL_MAP_MAX_COORD);
    return RL_OK;
}

/* Lanes wider than this, read as lat/lon, mean the lat/lon fields held something else. */
#define ABSURD_WIDTH 100.0

/* One warning when a file read through a lat/lon projection has most lanelets wider than
 * ABSURD_WIDTH at an end: most likely a metric file (a JOSM work file whose lat/lon fields
 * hold metres, whose small values pass for lat/lon). Real maps have the odd wide lanelet
 * (mapping_example.osm: one of 371 is 102 m wide at an end), so one is not enough. */
static int warn_absurd_widths(rl_map_source *src, bool quiet)
{
    if (!(src->projection == RL_MAP_PROJ_LTP || src->projection == RL_MAP_PROJ_UTM ||
          src->projection == RL_MAP_PROJ_SMERC))
        return RL_OK;
    size_t wide = 0;
    double widest = 0;
    int64_t widest_id = 0;
    for (size_t i = 0; i < src->num_lanelets; i++) {
        const rl_map_source_lanelet *ll = &src->lanelets[i];
        double ws = hypot(ll->left[0].x - ll->right[0].x, ll->left[0].y - ll->right[0].y);
        double we = hypot(ll->left[ll->num_left - 1].x - ll->right[ll->num_right - 1].x,
                          ll->left[ll->num_left - 1].y - ll->right[ll->num_right - 1].y);
        double w = fmax(ws, we);
        if (!(w > ABSURD_WIDTH))
            continue;
        if (wide++ == 0 || w > widest) {
            widest = w;
            widest_id = ll->id;
        }
    }
    if (wide == 0 || wide * 2 <= src->num_lanelets)
        return RL_OK;
    return rl_map_source_warn(src, quiet,
                              "%s: %zu of %zu lanelets are wider than %g m read as lat/lon "
                              "(projection %s; widest: lanelet %lld, %.0f m): if the file's "
                              "lat/lon fields hold metres (a JOSM work file), use "
                              "--projection metric",
                              src->name, wide, src->num_lanelets, ABSURD_WIDTH,
                              rl_map_projection_name(src->projection), (long long)widest_id,
                              widest);
}

static int cmp_point(rl_map_point a, rl_map_point b)
{
    if (a.x != b.x)
        return a.x < b.x ? -1 : 1;
    if (a.y != b.y)
        return a.y < b.y ? -1 : 1;
    return 0;
}

typedef struct start_key {
    rl_map_point left, right;
    uint32_t idx;
} start_key;

static int cmp_start(const void *pa, const void *pb)
{
    const start_key *a = pa, *b = pb;
    int c = cmp_point(a->left, b->left);
    if (!c)
        c = cmp_point(a->right, b->right);
    if (!c)
        c = (a->idx > b->idx) - (a->idx < b->idx);
    return c;
}

/* Lanelet2's routing: B succeeds A when both of B's bounds start where A's end. */
static int derive_successors(rl_map_source *src)
{
    size_t n = src->num_lanelets;
    if (n == 0)
        return RL_OK;
    start_key *keys = malloc(n * sizeof *keys);
    if (!keys)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        keys[i] = (start_key){src->lanelets[i].left[0], src->lanelets[i].right[0], (uint32_t)i};
    qsort(keys, n, sizeof *keys, cmp_start);
    int rc = RL_OK;
    for (size_t a = 0; a < n && rc == RL_OK; a++) {
        rl_map_source_lanelet *A = &src->lanelets[a];
        start_key want = {A->left[A->num_left - 1], A->right[A->num_right - 1], 0};
        size_t lo = 0, hi = n; /* first key >= want */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cmp_start(&keys[mid], &want) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo;
             k < n && !cmp_point(keys[k].left, want.left) && !cmp_point(keys[k].right, want.right);
             k++) {
            if (keys[k].idx == a)
                continue;
            int64_t *s = realloc(A->successors, (A->num_successors + 1) * sizeof *s);
            rl_map_source_lanelet *B = &src->lanelets[keys[k].idx];
            int64_t *pr = realloc(B->predecessors, (B->num_predecessors + 1) * sizeof *pr);
            if (s)
                A->successors = s;
            if (pr)
                B->predecessors = pr;
            if (!s || !pr) {
                rc = rl_error_set(RL_ENOMEM, "out of memory");
                break;
            }
            s[A->num_successors++] = B->id;
            pr[B->num_predecessors++] = A->id;
        }
    }
    free(keys);
    return rc;
}

static int resolve(osm_parse *p, const rl_map_read_options *o)
{
    rl_map_source *src = p->src;
    rl_map_idmap nodes = {0}, ways = {0};
    rl_map_point *pos = NULL;
    int rc = rl_map_idmap_init(&nodes, p->num_nodes);
    if (rc == RL_OK)
        rc = rl_map_idmap_init(&ways, p->num_ways);
    for (size_t i = 0; rc == RL_OK && i < p->num_nodes; i++) {
        uint32_t prev;
        rl_map_idmap_put(&nodes, p->nodes[i].id, (uint32_t)i, &prev);
        if (prev != UINT32_MAX)
            rc = rl_error_set(RL_EPARSE, "%s:%u: node %lld: id also used on line %u", p->x.name,
                              p->nodes[i].line, (long long)p->nodes[i].id, p->nodes[prev].line);
    }
    for (size_t i = 0; rc == RL_OK && i < p->num_ways; i++) {
        uint32_t prev;
        rl_map_idmap_put(&ways, p->ways[i].id, (uint32_t)i, &prev);
        if (prev != UINT32_MAX)
            rc = rl_error_set(RL_EPARSE, "%s:%u: way %lld: id also used on line %u", p->x.name,
                              p->ways[i].line, (long long)p->ways[i].id, p->ways[prev].line);
    }
    if (rc == RL_OK) { /* relations: lanelets and every other kind share one id space */
        rl_map_idmap rels = {0};
        rc = rl_map_idmap_init(&rels, p->num_rels);
        for (size_t i = 0; rc == RL_OK && i < p->num_rels; i++) {
            uint32_t prev;
            rl_map_idmap_put(&rels, p->rels[i].id, (uint32_t)i, &prev);
            if (prev != UINT32_MAX)
                rc = rl_error_set(RL_EPARSE, "%s:%u: relation %lld: id also used on line %u",
                                  p->x.name, p->rels[i].line, (long long)p->rels[i].id,
                                  p->rels[prev].line);
        }
        rl_map_idmap_free(&rels);
    }
    if (rc == RL_OK && !(pos = malloc((p->num_nodes + 1) * sizeof *pos)))
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    if (rc == RL_OK)
        rc = position_nodes(p, o, pos);
    size_t nl = 0, no = 0;
    for (size_t i = 0; i < p->num_rels; i++) {
        bool lanelet = p->rels[i].type && strcmp(p->rels[i].type, "lanelet") == 0;
        nl += lanelet;
        no += !lanelet;
    }
    for (size_t i = 0; i < p->num_ways; i++)
        no += p->ways[i].area;
    if (rc == RL_OK && ((nl && !(src->lanelets = calloc(nl, sizeof *src->lanelets))) ||
                        (no && !(src->objects = calloc(no, sizeof *src->objects)))))
        rc = rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; rc == RL_OK && i < p->num_rels; i++) {
        const osm_relation *r = &p->rels[i];
        if (r->type && strcmp(r->type, "lanelet") == 0) {
            rc = build_lanelet(p, &nodes, &ways, pos, r, &src->lanelets[src->num_lanelets++]);
            if (rc == RL_OK && o->align_bounds)
                rl_map_align_bounds(&src->lanelets[src->num_lanelets - 1]);
        } else {
            rc = build_object(p, r, &src->objects[src->num_objects++]);
        }
    }
    for (size_t i = 0; rc == RL_OK && i < p->num_ways; i++) {
        if (!p->ways[i].area)
            continue;
        rl_map_source_object *ob = &src->objects[src->num_objects++];
        ob->id = p->ways[i].id;
        if (!(ob->kind = rl_map_strdup("area")))
            rc = RL_ENOMEM;
    }
    if (rc == RL_OK)
        rc = derive_successors(src);
    if (rc == RL_OK)
        rc = rl_map_source_check_degenerate(src, o->quiet);
    if (rc == RL_OK)
        rc = warn_absurd_widths(src, o->quiet);
    free(pos);
    rl_map_idmap_free(&nodes);
    rl_map_idmap_free(&ways);
    return rc;
}

static void parse_free(osm_parse *p)
{
    for (size_t i = 0; i < p->num_rels; i++) {
        free(p->rels[i].type);
        free(p->rels[i].subtype);
        free(p->rels[i].location);
        free(p->rels[i].one_way);
        free(p->rels[i].speed_limit);
    }
    free(p->rels);
    free(p->nodes);
    free(p->ways);
    free(p->refs);
    free(p->members);
    rl_map_xml_free(&p->x);
}

int rl_lanelet2_read_mem(const char *data, size_t len, const char *name,
                         const rl_map_read_options *opts, rl_map_source **out)
{
    rl_map_read_options defaults;
    *out = NULL;
    osm_parse p = {.x.name = name};
    int begun = rl_map_source_begin(data, len, name, RL_MAP_FORMAT_LANELET2, &opts, &defaults,
                                    &p.src);
    if (begun < 0)
        return begun;
    rl_map_xml_parse(&p.x, data, len, &p, on_start, on_end, NULL);
    if (p.x.rc == RL_OK && !p.root_seen)
        p.x.rc = rl_error_set(RL_EPARSE, "%s: no <osm> root element", name);
    if (p.x.rc == RL_OK) {
        p.src->counts.nodes = p.num_nodes;
        p.src->counts.ways = p.num_ways;
        p.src->counts.relations = p.num_rels;
        p.x.rc = resolve(&p, opts);
    }
    int rc = p.x.rc;
    parse_free(&p);
    if (rc < 0) {
        rl_map_source_free(p.src);
        return rc;
    }
    *out = p.src;
    return RL_OK;
}
