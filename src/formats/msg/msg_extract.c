/* One-pass extraction of many fields from a CDR payload (runlab/msgdef.h, rl_msg_extract_*):
 * a list of field paths compiled once per schema into a selection tree (shared prefixes
 * walked once), then each payload walked once along that tree, skipping what no path needs
 * and stopping after the last needed field. Values equal rl_msg_path_get's on every path. */
#include "cdr_internal.h"

#include "core/text.h"
#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EX_NONE UINT32_MAX

/* A node of the selection tree: a value of `type` reached by step `sel` from its parent. */
typedef struct ex_node {
    uint32_t type;
    uint32_t sel;        /* struct/union: member position; array: element index */
    bool all;            /* array: every element ("[]") */
    uint32_t child;      /* first child (children sorted by sel), EX_NONE for a leaf */
    uint32_t next;       /* next sibling */
    uint32_t slot;       /* leaf: first output slot (more in slot_next), else EX_NONE */
} ex_node;

struct rl_msg_extract {
    const rl_msgdef *def;
    ex_node *nodes;
    size_t nnodes, cap_nodes;
    size_t npaths;
    int *status;           /* per path: RL_OK or why it was not compiled */
    char **why;            /* per path: the message when status < 0 */
    uint32_t *slot_next;   /* per path: the next path ending at the same leaf, EX_NONE */
    uint32_t all_node;     /* the "[]" array's node, EX_NONE when none */
    char *all_prefix;      /* the path text before "[]" */
    uint32_t *all_slots;   /* the paths under "[]" (cleared before each element) */
    size_t nall_slots, cap_all_slots;
    struct fixed_layout *fixed[2]; /* per XCDR version (1, 2): NULL when not fixed */
};

/* ---- Fixed layouts ------------------------------------------------------------------
 * When every needed field of a final-extensibility payload (CDR, CDR2: what ROS 2 and the
 * lab send) lies at an offset known from the schema alone (only fixed-size primitives,
 * final structs and fixed arrays before the last of them; then at most the "[]" sequence
 * of fixed-size elements), the fields are loaded from those offsets after one length
 * check. A payload that does not pass the check is walked instead, which gives the error
 * (or reads what it can), so both ways always agree. */
typedef struct fixed_leaf {
    uint32_t off;  /* from the start of the payload (element leaves: of element 0 / 1) */
    uint32_t slot; /* the node's first output slot and its primitive kind, kept here so */
    uint32_t kind; /* that each element's leaves are put without a walk to node and type */
} fixed_leaf;

typedef struct fixed_layout {
    size_t need;         /* bytes the fixed part takes */
    fixed_leaf *leaves;  /* outside the sequence */
    size_t nleaves;
    bool seq;            /* the "[]" sequence follows */
    bool dheader;        /* XCDR2: a DHEADER before its count */
    uint32_t head;       /* offset of the DHEADER or else of the count */
    uint32_t bound;      /* the sequence's bound, 0 none */
    size_t first;        /* where element 0 starts (count > 0) */
    size_t end0, stride; /* where element 0 ends; elements 1.. are `stride` bytes each */
    fixed_leaf *e0, *e1; /* the element leaves in element 0 and in element 1 */
    size_t nelem;
} fixed_layout;

typedef struct layout_sim {
    const rl_msg_extract *ex;
    int v2;
    size_t found, total; /* leaves placed / to place */
    size_t need_floor;   /* bytes the decoder's array checks want before the last leaf */
    bool done, seq_seen;
    fixed_leaf *leaves;  /* where leaves go now */
    size_t *nleaves;     /* (room: one per node) */
    fixed_layout *lay;
} layout_sim;

static size_t sim_align(const layout_sim *s, size_t pos, size_t size)
{
    size_t a = s->v2 && size > 4 ? 4 : size;
    return pos + ((0 - (pos - 4)) & (a - 1));
}

static const ex_node *node_child(const rl_msg_extract *ex, const ex_node *n, uint32_t sel)
{
    if (!n)
        return NULL;
    for (uint32_t c = n->child; c != EX_NONE; c = ex->nodes[c].next)
        if (ex->nodes[c].sel == sel && !ex->nodes[c].all)
            return &ex->nodes[c];
    return NULL;
}

static bool sim_value(layout_sim *s, uint32_t t, const ex_node *n, size_t *pos, bool full);

/* The "[]" sequence (node n, element node c) at *pos: its header, then two elements to find
 * the stride. Nothing needed may follow it. */
static bool sim_sequence(layout_sim *s, const rl_msg_type *ty, const ex_node *n, size_t *pos)
{
    const rl_msgdef *def = s->ex->def;
    const ex_node *c = &s->ex->nodes[n->child];
    fixed_layout *lay = s->lay;
    size_t esize = msgdef_prim_size(def->types[ty->elem].kind);
    if (ty->kind != RL_MSG_SEQUENCE || s->seq_seen || (!esize && def->min_size[ty->elem] == 0))
        return false;
    s->seq_seen = true;
    lay->dheader = s->v2 && !msgdef_prim_size(def->types[cdr_innermost(def, (uint32_t)(ty - def->types))].kind);
    size_t at = sim_align(s, *pos, 4);
    lay->head = (uint32_t)at;
    at += lay->dheader ? 8 : 4;
    lay->need = at;
    lay->bound = ty->bound;
    lay->first = esize ? sim_align(s, at, esize) : at;
    size_t found = s->found, floor = s->need_floor, n0 = 0, n1 = 0, end1 = lay->first;
    s->leaves = lay->e0, s->nleaves = &n0;
    if (!sim_value(s, ty->elem, c, &end1, true))
        return false;
    lay->end0 = end1;
    s->found = found;
    s->leaves = lay->e1, s->nleaves = &n1;
    if (!sim_value(s, ty->elem, c, &end1, true))
        return false;
    lay->stride = end1 - lay->end0;
    s->need_floor = floor; /* inside whole elements: checked by the elements' room */
    lay->nelem = n0;
    if (n0 != n1 || lay->stride == 0 || lay->stride % (s->v2 ? 4 : 8) != 0)
        return false;
    s->done = s->found == s->total;
    return s->done;
}

static bool sim_value(layout_sim *s, uint32_t t, const ex_node *n, size_t *pos, bool full)
{
    if (s->done && !full)
        return true;
    const rl_msgdef *def = s->ex->def;
    const rl_msg_type *ty = &def->types[t];
    size_t size = msgdef_prim_size(ty->kind);
    if (size) {
        *pos = sim_align(s, *pos, size);
        if (n) {
            s->leaves[(*s->nleaves)++] =
                (fixed_leaf){(uint32_t)*pos, n->slot, ty->kind};
            s->done = ++s->found == s->total;
        }
        *pos += size;
        if (*pos > UINT32_MAX / 2)
            return false;
        return true;
    }
    if (n && n->child != EX_NONE && s->ex->nodes[n->child].all)
        return sim_sequence(s, ty, n, pos);
    switch (ty->kind) {
    case RL_MSG_STRUCT:
        if (ty->ext != RL_MSG_EXT_DEFAULT && ty->ext != RL_MSG_EXT_FINAL)
            return false;
        for (size_t j = 0; j < ty->nmembers && (full || !s->done); j++)
            if (ty->members[j].optional ||
                !sim_value(s, ty->members[j].type, node_child(s->ex, n, (uint32_t)j), pos, full))
                return false;
        return true;
    case RL_MSG_ARRAY: {
        size_t esize = msgdef_prim_size(def->types[ty->elem].kind);
        if (esize && !(n && n->child != EX_NONE)) {
            *pos = sim_align(s, *pos, esize) + (size_t)ty->bound * esize;
            return *pos <= UINT32_MAX / 2;
        }
        if ((s->v2 && !ty->inner_dim && !esize) || ty->bound > 4096)
            return false; /* a DHEADER, or too long to lay out element by element */
        /* the decoder checks the whole array's room (a byte per element at least) first */
        size_t start = esize ? sim_align(s, *pos, esize) : *pos;
        size_t lower = esize ? esize : def->min_size[ty->elem] ? 1 : 0;
        if (start + (size_t)ty->bound * lower > s->need_floor)
            s->need_floor = start + (size_t)ty->bound * lower;
        for (uint32_t k = 0; k < ty->bound && (full || !s->done); k++)
            if (!sim_value(s, ty->elem, node_child(s->ex, n, k), pos, full))
                return false;
        return true;
    }
    default: /* strings, enums, unions, sequences: their size is in the payload */
        return false;
    }
}

static void fixed_free(fixed_layout *lay)
{
    if (!lay)
        return;
    free(lay->leaves);
    free(lay->e0);
    free(lay->e1);
    free(lay);
}

/* The fixed layout for XCDR version v2, or NULL (also on running out of memory: the walk
 * works without it). */
static fixed_layout *fixed_build(const rl_msg_extract *ex, int v2)
{
    fixed_layout *lay = calloc(1, sizeof *lay);
    size_t room = ex->nnodes;
    layout_sim s = {.ex = ex, .v2 = v2, .lay = lay};
    for (size_t i = 0; i < ex->nnodes; i++)
        s.total += ex->nodes[i].slot != EX_NONE;
    if (!lay || !(lay->leaves = malloc(room * sizeof *lay->leaves)) ||
        !(lay->e0 = malloc(room * sizeof *lay->e0)) || !(lay->e1 = malloc(room * sizeof *lay->e1))) {
        fixed_free(lay);
        return NULL;
    }
    s.leaves = lay->leaves;
    s.nleaves = &lay->nleaves;
    size_t pos = 4;
    if (s.total == 0 || !sim_value(&s, ex->def->root, &ex->nodes[0], &pos, false) || !s.done) {
        fixed_free(lay);
        return NULL;
    }
    lay->seq = s.seq_seen;
    if (!lay->seq)
        lay->need = pos;
    if (lay->need < s.need_floor)
        lay->need = s.need_floor;
    return lay;
}

/* ---- Compiling -------------------------------------------------------------------- */

void rl_msg_extract_free(rl_msg_extract *ex)
{
    if (!ex)
        return;
    for (size_t i = 0; i < ex->npaths; i++)
        free(ex->why[i]);
    free(ex->why);
    free(ex->status);
    free(ex->slot_next);
    free(ex->nodes);
    free(ex->all_prefix);
    free(ex->all_slots);
    fixed_free(ex->fixed[0]);
    fixed_free(ex->fixed[1]);
    free(ex);
}

static int add_node(rl_msg_extract *ex, uint32_t type, uint32_t sel, bool all, uint32_t *at)
{
    int rc = rl_grow_array((void **)&ex->nodes, &ex->cap_nodes, ex->nnodes + 1,
                           sizeof *ex->nodes, "field extraction");
    if (rc < 0)
        return rc;
    ex->nodes[ex->nnodes] = (ex_node){type, sel, all, EX_NONE, EX_NONE, EX_NONE};
    *at = (uint32_t)ex->nnodes++;
    return RL_OK;
}

/* The child of `parent` for step (sel, all) in *at, made when missing (without `create`:
 * EX_NONE). RL_EUNSUPPORTED when an array would be read both whole and by index. */
static int child_of(rl_msg_extract *ex, uint32_t parent, uint32_t type, uint32_t sel, bool all,
                    bool create, uint32_t *at)
{
    *at = EX_NONE;
    if (parent == EX_NONE)
        return RL_OK;
    uint32_t *link = &ex->nodes[parent].child;
    while (*link != EX_NONE) {
        const ex_node *c = &ex->nodes[*link];
        if (c->all != all)
            return RL_EUNSUPPORTED;
        if (all || c->sel == sel) {
            *at = *link;
            return RL_OK;
        }
        if (c->sel > sel)
            break;
        link = &ex->nodes[*link].next;
    }
    if (!create)
        return RL_OK;
    uint32_t n;
    int rc = add_node(ex, type, sel, all, &n);
    if (rc < 0)
        return rc;
    link = &ex->nodes[parent].child; /* nodes may have moved */
    while (*link != EX_NONE && ex->nodes[*link].sel < sel)
        link = &ex->nodes[*link].next;
    ex->nodes[n].next = *link;
    *link = n;
    *at = n;
    return RL_OK;
}

static int path_refused(rl_msg_extract *ex, size_t i, int code, const char *path, const char *what)
{
    char msg[600];
    snprintf(msg, sizeof msg, "field path '%s': %s", path, what);
    ex->status[i] = code;
    ex->why[i] = strdup(msg);
    return ex->why[i] ? RL_OK : rl_error_set(RL_ENOMEM, "field extraction: out of memory");
}

/* Adds path i (already checked by rl_msg_path_compile, so every step exists) to the tree;
 * `dry`: only finds whether it can be added (a refused path leaves no node behind). */
static int add_path(rl_msg_extract *ex, size_t i, const char *path, bool dry)
{
    const rl_msgdef *def = ex->def;
    uint32_t node = 0, t = def->root;
    const char *s = path, *all_at = NULL;
    while (*s) {
        const rl_msg_type *ty = &def->types[t];
        uint32_t sel = 0, next;
        bool all = false;
        if (*s == '[') {
            char *endp = (char *)s + 1;
            if (*endp == ']') {
                if (all_at)
                    return path_refused(ex, i, RL_EUNSUPPORTED, path, "only one '[]' per path");
                all = true;
                all_at = s;
            } else {
                sel = (uint32_t)strtoul(s + 1, &endp, 10);
            }
            s = endp + 1;
            next = ty->elem;
        } else {
            if (*s == '.')
                s++;
            size_t n = strcspn(s, ".[");
            while (strlen(ty->members[sel].name) != n || memcmp(ty->members[sel].name, s, n) != 0)
                sel++;
            s += n;
            next = ty->members[sel].type;
        }
        if (all) {
            size_t plen = (size_t)(all_at - path);
            if (ex->all_node != EX_NONE &&
                (strlen(ex->all_prefix) != plen || memcmp(ex->all_prefix, path, plen) != 0))
                return path_refused(ex, i, RL_EUNSUPPORTED, path,
                                    "another sequence is already read whole ('[]'): one per "
                                    "extraction");
        }
        int rc = child_of(ex, node, next, sel, all, !dry, &node);
        if (rc == RL_EUNSUPPORTED)
            return path_refused(ex, i, rc, path,
                                "an array is read both whole ('[]') and by index");
        if (rc < 0)
            return rc;
        if (all && !dry && ex->all_node == EX_NONE) {
            ex->all_node = node;
            ex->all_prefix = msgdef_strndup(path, (size_t)(all_at - path));
            if (!ex->all_prefix)
                return rl_error_set(RL_ENOMEM, "field extraction: out of memory");
        }
        t = next;
    }
    if (dry)
        return RL_OK;
    ex_node *leaf = &ex->nodes[node];
    ex->slot_next[i] = leaf->slot;
    leaf->slot = (uint32_t)i;
    if (all_at) {
        int rc = rl_grow_array((void **)&ex->all_slots, &ex->cap_all_slots, ex->nall_slots + 1,
                               sizeof *ex->all_slots, "field extraction");
        if (rc < 0)
            return rc;
        ex->all_slots[ex->nall_slots++] = (uint32_t)i;
    }
    return RL_OK;
}

/* Checks path i with the field-path compiler ("[]" read as "[0]" there), so that a path the
 * schema lacks gets the same message as rl_msg_path_compile. */
static int check_path(rl_msg_extract *ex, size_t i, const char *path)
{
    size_t n = strlen(path);
    char *probe = malloc(2 * n + 1);
    if (!probe)
        return rl_error_set(RL_ENOMEM, "field extraction: out of memory");
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        probe[k++] = path[j];
        if (path[j] == '[' && path[j + 1] == ']')
            probe[k++] = '0';
    }
    probe[k] = '\0';
    rl_msg_path *p = NULL;
    int rc = rl_msg_path_compile(&p, ex->def, probe);
    rl_msg_path_free(p);
    free(probe);
    if (rc == RL_ENOMEM)
        return rc;
    if (rc < 0) {
        ex->status[i] = rc;
        ex->why[i] = strdup(rl_error_last());
        return ex->why[i] ? RL_OK : rl_error_set(RL_ENOMEM, "field extraction: out of memory");
    }
    rc = add_path(ex, i, path, true);
    return rc < 0 || ex->status[i] < 0 ? rc : add_path(ex, i, path, false);
}

int rl_msg_extract_compile(rl_msg_extract **out, const rl_msgdef *def, const char *const *paths,
                           size_t npaths)
{
    if (!out || !def || (!paths && npaths))
        return rl_error_set(RL_EINVAL, "field extraction: NULL argument");
    *out = NULL;
    rl_msg_extract *ex = calloc(1, sizeof *ex);
    if (!ex)
        return rl_error_set(RL_ENOMEM, "field extraction: out of memory");
    ex->def = def;
    ex->all_node = EX_NONE;
    ex->npaths = npaths;
    ex->status = calloc(npaths + 1, sizeof *ex->status);
    ex->why = calloc(npaths + 1, sizeof *ex->why);
    ex->slot_next = calloc(npaths + 1, sizeof *ex->slot_next);
    uint32_t root;
    int rc = ex->status && ex->why && ex->slot_next
                 ? add_node(ex, def->root, 0, false, &root)
                 : rl_error_set(RL_ENOMEM, "field extraction: out of memory");
    for (size_t i = 0; i < npaths && rc == RL_OK; i++) {
        if (!paths[i])
            rc = rl_error_set(RL_EINVAL, "field extraction: path %zu is NULL", i);
        else
            rc = check_path(ex, i, paths[i]);
    }
    if (rc < 0) {
        rl_msg_extract_free(ex);
        return rc;
    }
    ex->fixed[0] = fixed_build(ex, 0);
    ex->fixed[1] = fixed_build(ex, 1);
    *out = ex;
    return RL_OK;
}

size_t rl_msg_extract_count(const rl_msg_extract *ex)
{
    return ex ? ex->npaths : 0;
}

int rl_msg_extract_status(const rl_msg_extract *ex, size_t i, const char **why)
{
    if (why)
        *why = NULL;
    if (!ex || i >= ex->npaths)
        return rl_error_set(RL_EINVAL, "field extraction: no path %zu", i);
    if (why)
        *why = ex->why[i];
    return ex->status[i];
}

/* ---- Running ---------------------------------------------------------------------- */

typedef struct ex_run {
    cdr_dec d;
    const rl_msg_extract *ex;
    rl_msg_field *fields;
    rl_msg_element_fn each;
    void *ctx;
} ex_run;

static int walk(ex_run *r, const ex_node *n, int finish);

static void put_leaf(ex_run *r, const ex_node *n, const rl_msg_value *v)
{
    double f = cdr_value_f64(v);
    for (uint32_t s = n->slot; s != EX_NONE; s = r->ex->slot_next[s]) {
        r->fields[s].present = true;
        r->fields[s].value = *v;
        r->fields[s].f = f;
    }
}

/* A primitive of `size` bytes at the current position: room checked, aligned; *p set.
 * Returns 0 when it is not there (the caller then reports it through the decoder). */
static inline int prim_at(cdr_dec *d, size_t size, const uint8_t **p)
{
    size_t a = d->v2 && size > 4 ? 4 : size;
    size_t pad = (0 - (d->pos - d->origin)) & (a - 1);
    if (pad > d->end - d->pos || size > d->end - d->pos - pad)
        return 0;
    *p = d->buf + d->pos + pad;
    d->pos += pad + size;
    return 1;
}

static int read_leaf(ex_run *r, const ex_node *n)
{
    cdr_dec *d = &r->d;
    const rl_msg_type *ty = &d->def->types[n->type];
    rl_msg_value v;
    size_t size = msgdef_prim_size(ty->kind);
    const uint8_t *p;
    if (size && prim_at(d, size, &p)) {
        cdr_load_prim(d, ty->kind, p, &v);
    } else {
        int rc = cdr_read_leaf(d, ty, &v);
        if (rc < 0)
            return rc;
    }
    put_leaf(r, n, &v);
    return RL_OK;
}

/* Moves past a member no path needs (non-optional primitives without a call). */
static int skip_member(cdr_dec *d, const rl_msg_member *m)
{
    size_t size = msgdef_prim_size(d->def->types[m->type].kind);
    const uint8_t *p;
    if (size && !m->optional && !(d->in_appendable && d->pos >= d->end) && prim_at(d, size, &p))
        return RL_OK;
    size_t saved = cdr_push_name(d, m->name);
    cdr_frame f;
    int present;
    int rc = cdr_member_enter(d, m, &f, &present);
    if (rc == RL_OK && present)
        rc = cdr_skip_value(d, m->type);
    cdr_member_leave(d, &f);
    cdr_pop(d, saved);
    return rc;
}

static int walk_final(ex_run *r, const ex_node *n, const rl_msg_type *ty, rl_msg_ext ext,
                      int finish)
{
    cdr_dec *d = &r->d;
    cdr_frame df = {0};
    int rc, appendable = ext == RL_MSG_EXT_APPENDABLE && d->v2, was_in = d->in_appendable;
    if (appendable && (rc = cdr_dheader(d, &df)) < 0)
        return rc;
    d->in_appendable = appendable;
    const ex_node *c = n->child != EX_NONE ? &r->ex->nodes[n->child] : NULL;
    rc = RL_OK;
    for (size_t j = 0; j < ty->nmembers && rc == RL_OK && (c || (finish && !appendable)); j++) {
        const rl_msg_member *m = &ty->members[j];
        if (!c || c->sel != j) {
            rc = skip_member(d, m);
            continue;
        }
        const ex_node *next = c->next != EX_NONE ? &r->ex->nodes[c->next] : NULL;
        size_t saved = cdr_push_name(d, m->name);
        cdr_frame f;
        int present;
        rc = cdr_member_enter(d, m, &f, &present);
        /* what follows in a DHEADER is jumped over, not read (as the decoder skips it) */
        if (rc == RL_OK && present)
            rc = walk(r, c, next || (finish && !appendable));
        cdr_member_leave(d, &f);
        cdr_pop(d, saved);
        c = next;
    }
    d->in_appendable = was_in;
    if (rc == RL_OK && appendable)
        cdr_frame_close(d, &df);
    return rc;
}

static int walk_mutable(ex_run *r, const ex_node *n, const rl_msg_type *ty, int finish)
{
    cdr_dec *d = &r->d;
    cdr_frame f = {0};
    size_t start = d->pos, after = d->pos;
    int rc;
    if (d->v2 && (rc = cdr_dheader(d, &f)) < 0)
        return rc;
    for (uint32_t ci = n->child; ci != EX_NONE; ci = r->ex->nodes[ci].next) {
        const ex_node *c = &r->ex->nodes[ci];
        const rl_msg_member *m = &ty->members[c->sel];
        size_t data = 0, size = 0, end = d->end, origin = d->origin;
        int found = d->v2 ? cdr_find_emheader(d, f.body_start, f.body_end, m->id, &data, &size)
                          : cdr_find_param(d, start, m->id, &data, &size, &after);
        if (found < 0)
            return found;
        if (!found)
            continue;
        size_t saved = cdr_push_name(d, m->name);
        d->pos = data;
        d->end = data + size;
        if (!d->v2)
            d->origin = data;
        rc = walk(r, c, 0);
        d->end = end;
        d->origin = origin;
        cdr_pop(d, saved);
        if (rc != RL_OK)
            return rc;
    }
    if (finish && d->v2)
        cdr_frame_close(d, &f);
    else if (finish)
        d->pos = after;
    return RL_OK;
}

static int walk_union(ex_run *r, const ex_node *n, const rl_msg_type *ty, int finish)
{
    cdr_dec *d = &r->d;
    cdr_frame f;
    rl_msg_value disc;
    int rc = cdr_union_begin(d, ty, &f, &disc);
    if (rc < 0)
        return rc;
    const rl_msg_member *active = cdr_union_case(ty, cdr_value_as_i64(&disc));
    int walked = 0;
    for (uint32_t ci = n->child; ci != EX_NONE && active; ci = r->ex->nodes[ci].next) {
        const ex_node *c = &r->ex->nodes[ci];
        if (&ty->members[c->sel] != active)
            continue;
        size_t saved = cdr_push_name(d, active->name);
        rc = walk(r, c, finish);
        cdr_pop(d, saved);
        if (rc != RL_OK)
            return rc;
        walked = 1;
    }
    /* The decoder reads a union's active member whole, DHEADER or not (and so fails on a bad
     * one): when something later is needed, so does this. */
    if (finish && active && !walked) {
        size_t saved = cdr_push_name(d, active->name);
        rc = cdr_skip_value(d, active->type);
        cdr_pop(d, saved);
    }
    if (rc == RL_OK && finish && f.body_end != SIZE_MAX)
        cdr_frame_close(d, &f);
    return rc;
}

/* Skips elements [from, to) of an array of non-primitive elements. */
static int skip_elements(cdr_dec *d, uint32_t elem, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        size_t saved = cdr_push_index(d, k);
        int rc = cdr_skip_value(d, elem);
        cdr_pop(d, saved);
        if (rc < 0)
            return rc;
    }
    return RL_OK;
}

static int walk_array(ex_run *r, const ex_node *n, const rl_msg_type *ty, int finish)
{
    cdr_dec *d = &r->d;
    cdr_frame f;
    size_t count;
    int rc = cdr_array_begin(d, ty, &f, &count);
    if (rc < 0)
        return rc;
    size_t esize = msgdef_prim_size(d->def->types[ty->elem].kind), start = d->pos, k = 0;
    const ex_node *c = &r->ex->nodes[n->child];
    if (c->all) {
        const rl_msg_extract *ex = r->ex;
        for (size_t i = 0; i < count; i++) {
            for (size_t s = 0; s < ex->nall_slots; s++)
                r->fields[ex->all_slots[s]].present = false;
            size_t saved = cdr_push_index(d, i);
            rc = walk(r, c, i + 1 < count || (finish && f.body_end == SIZE_MAX));
            cdr_pop(d, saved);
            if (rc == RL_OK && r->each)
                rc = r->each(r->ctx, i, r->fields);
            if (rc != RL_OK)
                return rc;
        }
        k = count;
    } else {
        for (; c; c = c->next != EX_NONE ? &r->ex->nodes[c->next] : NULL) {
            if (c->sel >= count)
                break;
            if (esize)
                d->pos = start + c->sel * esize; /* checked by cdr_array_begin */
            else if ((rc = skip_elements(d, ty->elem, k, c->sel)) < 0)
                return rc;
            size_t saved = cdr_push_index(d, c->sel);
            bool more = c->next != EX_NONE && r->ex->nodes[c->next].sel < count;
            rc = walk(r, c, !esize && (more || (finish && f.body_end == SIZE_MAX)));
            cdr_pop(d, saved);
            if (rc != RL_OK)
                return rc;
            k = c->sel + 1;
        }
    }
    if (!finish)
        return RL_OK;
    if (f.body_end != SIZE_MAX)
        cdr_frame_close(d, &f);
    else if (esize)
        d->pos = start + count * esize;
    else
        return skip_elements(d, ty->elem, k, count);
    return RL_OK;
}

/* Reads node n's value at the current position. With `finish`, the position ends after the
 * whole value (something later is needed); without, it may stop after the last needed field. */
static int walk(ex_run *r, const ex_node *n, int finish)
{
    if (n->child == EX_NONE)
        return read_leaf(r, n);
    const rl_msg_type *ty = &r->d.def->types[n->type];
    switch (ty->kind) {
    case RL_MSG_STRUCT: {
        rl_msg_ext ext = cdr_ext(&r->d, ty);
        return ext == RL_MSG_EXT_MUTABLE ? walk_mutable(r, n, ty, finish)
                                         : walk_final(r, n, ty, ext, finish);
    }
    case RL_MSG_UNION:
        return walk_union(r, n, ty, finish);
    default:
        return walk_array(r, n, ty, finish);
    }
}

/* The value is loaded straight into its first slot and copied from there to any other:
 * loaded into a local first, its kind and number (written apart) were read back as one
 * wider copy, which the processor cannot forward from the two stores and waits for. */
static void put_fixed(ex_run *r, const fixed_leaf *l, size_t n, size_t shift)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t s = l[i].slot;
        if (s == EX_NONE)
            continue;
        rl_msg_field *first = &r->fields[s];
        const uint8_t *p = r->d.buf + l[i].off + shift;
        first->present = true;
        if (l[i].kind == RL_MSG_FLOAT64) { /* most leaves (poses, speeds): no switch twice */
            uint64_t bits = cdr_ld64(&r->d, p);
            double f;
            memcpy(&f, &bits, 8);
            first->value.kind = RL_MSG_FLOAT64;
            first->value.v.f = f;
            first->f = f;
        } else {
            cdr_load_prim(&r->d, l[i].kind, p, &first->value);
            first->f = cdr_value_f64(&first->value);
        }
        for (s = r->ex->slot_next[s]; s != EX_NONE; s = r->ex->slot_next[s]) {
            r->fields[s].present = true;
            r->fields[s].value = first->value;
            r->fields[s].f = first->f;
        }
    }
}

/* Reads the payload by its fixed layout. Returns 1 when it did (rc in *rc), 0 when the
 * payload is not long enough for it (or its sequence does not fit): the walk then decides. */
static int run_fixed(ex_run *r, const fixed_layout *lay, int *rc)
{
    cdr_dec *d = &r->d;
    *rc = RL_OK;
    if (d->end < lay->need)
        return 0;
    if (!lay->seq) {
        put_fixed(r, lay->leaves, lay->nleaves, 0);
        return 1;
    }
    size_t body_end = d->end, at = lay->head;
    if (lay->dheader) {
        uint32_t size = cdr_ld32(d, d->buf + at);
        at += 4;
        if (size > d->end - at)
            return 0;
        body_end = at + size;
        if (at + 4 > body_end)
            return 0;
    }
    size_t count = cdr_ld32(d, d->buf + at);
    if (lay->bound && count > lay->bound)
        return 0;
    if (count && (lay->end0 > body_end ||
                  (count - 1) > (body_end - lay->end0) / lay->stride))
        return 0;
    put_fixed(r, lay->leaves, lay->nleaves, 0);
    const rl_msg_extract *ex = r->ex;
    for (size_t i = 0; i < count; i++) {
        for (size_t k = 0; k < ex->nall_slots; k++)
            r->fields[ex->all_slots[k]].present = false;
        if (i == 0)
            put_fixed(r, lay->e0, lay->nelem, 0);
        else
            put_fixed(r, lay->e1, lay->nelem, (i - 1) * lay->stride);
        if (r->each && (*rc = r->each(r->ctx, i, r->fields)) != 0)
            return 1;
    }
    return 1;
}

int rl_msg_extract_run(const rl_msg_extract *ex, const uint8_t *data, size_t len,
                       rl_msg_field *fields, rl_msg_element_fn each, void *ctx)
{
    if (!ex || (!fields && ex->npaths))
        return rl_error_set(RL_EINVAL, "field extraction: NULL argument");
    for (size_t i = 0; i < ex->npaths; i++) {
        fields[i].present = false;
        fields[i].f = NAN;
    }
    ex_run r = {.ex = ex, .fields = fields, .each = each, .ctx = ctx};
    int rc = cdr_open(&r.d, ex->def, data, len);
    if (rc < 0)
        return rc;
    const fixed_layout *lay = ex->fixed[r.d.v2];
    if (lay && r.d.top_ext == RL_MSG_EXT_FINAL && run_fixed(&r, lay, &rc))
        return rc;
    return ex->nodes[0].child == EX_NONE ? RL_OK : walk(&r, &ex->nodes[0], 0);
}
