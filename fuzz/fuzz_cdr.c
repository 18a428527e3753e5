/* libFuzzer target for the CDR decoder (runlab/msgdef.h): the first byte chooses one of a
 * few fixed schemas (nested structs, sequences of structs, strings, wstrings, arrays, services,
 * IDL extensibility kinds, unions, optionals), the rest is the payload, decoded to JSON,
 * to a visitor and through field paths. Nothing may crash or read out of bounds, a
 * decoded message that the encoder accepts must decode again to the same JSON, and the
 * decoding plan must report what the tree walker reports (events, status, error), also
 * with arrays of primitives as one event (RL_MSG_DECODE_ARRAYS), whose elements must be
 * those of the per-element events. */
#include "runlab/error.h"
#include "runlab/msgdef.h"
#include "formats/msg/cdr_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    const char *encoding, *name, *text, *path;
} schemas[] = {
    {"ros2msg", "geometry_msgs/msg/PoseStamped",
     "std_msgs/Header header\nPose pose\n"
     "====\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"
     "====\nMSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n"
     "====\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n"
     "====\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n",
     "pose.orientation.w"},
    {"ros2msg", "t/msg/S",
     "P[] ps\nint16[<=3] xs\nstring<=4 s\nbool[2] bs\nuint64[] us\nE e\n"
     "====\nMSG: t/P\nstring name\nfloat32[] v\nint8 a\n====\nMSG: t/E\n",
     "ps[1].v[2]"},
    {"ros2msg", "t/srv/Add_Event", "int64 a\nint64 b\n---\nint64 sum\n", "response[0].sum"},
    {"omgidl", "m::A",
     "module m { @appendable struct In { long a; @optional string s; };\n"
     "@mutable struct A { @id(3) double x; sequence<In> ins; @optional long o; In fixed[2];\n"
     "  @optional wstring<4> w; };\n};\n",
     "ins[1].a"},
    {"omgidl", "U::S",
     "module U { enum E { A, @value(7) B };\n union V switch (E) { case A: long l; case B: string s; };\n"
     "union W switch (short) { case 1: case 2: double d; default: octet o; };\n"
     "@final struct S { V v; W w; sequence<V, 3> vs; long m[2][3]; };\n};\n",
     "w.d"},
};

enum { NSCHEMAS = sizeof schemas / sizeof schemas[0] };

static int count_visit(void *ctx, const rl_msg_visit *v)
{
    (*(size_t *)ctx) += v->path_len;
    return 0;
}

/* A running hash of every event: kind, path, name, index, count and value. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static int hash_visit(void *ctx, const rl_msg_visit *v)
{
    uint64_t *h = ctx;
    uint64_t words[4] = {(uint64_t)v->event, v->index, v->count, 0};
    const rl_msg_value *x = &v->value;
    if (v->event == RL_MSG_VALUE) {
        if (x->kind == RL_MSG_STRING || x->kind == RL_MSG_WSTRING)
            *h = mix(*h, x->v.s.ptr, x->v.s.len);
        else if (x->kind == RL_MSG_BOOL)
            words[3] = x->v.b;
        else if (x->kind == RL_MSG_FLOAT32 || x->kind == RL_MSG_FLOAT64)
            memcpy(&words[3], &x->v.f, 8);
        else
            words[3] = x->v.u;
    }
    *h = mix(*h, words, sizeof words);
    *h = mix(*h, v->path, v->path_len + 1);
    if (v->name)
        *h = mix(*h, v->name, strlen(v->name));
    return 0;
}

/* With RL_MSG_DECODE_ARRAYS: a VALUES event hashed as the VALUE events of its elements,
 * so that the hash equals the per-element one. */
static int hash_values_visit(void *ctx, const rl_msg_visit *v)
{
    if (v->event != RL_MSG_VALUES)
        return hash_visit(ctx, v);
    for (size_t i = 0; i < v->count; i++) {
        char path[CDR_PATH_MAX + 32];
        int n = snprintf(path, sizeof path, "%s[%zu]", v->path, i);
        if ((size_t)n >= CDR_PATH_MAX) /* the decoder leaves the index off such paths */
            n = snprintf(path, sizeof path, "%s", v->path);
        rl_msg_visit e = {.event = RL_MSG_VALUE, .path = path, .path_len = (size_t)n,
                          .index = i, .type = v->type};
        if (rl_msg_values_get(v, i, &e.value) != RL_OK)
            abort();
        hash_visit(ctx, &e);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rl_msgdef *defs[NSCHEMAS];
    static rl_msg_path *paths[NSCHEMAS];
    static int ready;
    if (!ready) {
        for (size_t i = 0; i < NSCHEMAS; i++) {
            if (rl_msgdef_parse(&defs[i], schemas[i].encoding, schemas[i].name, schemas[i].text,
                                strlen(schemas[i].text)) != RL_OK ||
                rl_msg_path_compile(&paths[i], defs[i], schemas[i].path) != RL_OK)
                abort(); /* a fixed schema that does not parse is a bug */
        }
        ready = 1;
    }
    if (size < 1)
        return 0;
    size_t which = data[0] % NSCHEMAS;
    /* a copy of exactly the payload's size, so reads past it are caught */
    uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
    if (!copy)
        return 0;
    memcpy(copy, data + 1, size - 1);
    char *buf = NULL;
    size_t cap = 0, n = 0, sum = 0;
    if (rl_msg_to_json(defs[which], copy, size - 1, &buf, &cap, &n) == RL_OK) {
        uint8_t *enc = NULL;
        size_t elen = 0;
        if (rl_msg_encode_json_text(defs[which], buf, n, copy[1], &enc, &elen) == RL_OK) {
            char *again = NULL;
            size_t acap = 0, alen = 0;
            if (rl_msg_to_json(defs[which], enc, elen, &again, &acap, &alen) != RL_OK ||
                alen != n || memcmp(again, buf, n) != 0) {
                fprintf(stderr, "round trip differs:\n%s\n%s\n", buf, again ? again : rl_error_last());
                abort();
            }
            free(again);
        }
        free(enc);
    }
    free(buf);
    rl_msg_decode(defs[which], copy, size - 1, count_visit, &sum);
    uint64_t ha = 1, hb = 1;
    int ra = rl_msg_decode(defs[which], copy, size - 1, hash_visit, &ha);
    char ea[512];
    snprintf(ea, sizeof ea, "%s", ra < 0 ? rl_error_last() : "");
    int rb = cdr_decode_tree(defs[which], copy, size - 1, 0, hash_visit, &hb);
    if (ra != rb || ha != hb || (rb < 0 && strcmp(ea, rl_error_last()) != 0)) {
        fprintf(stderr, "plan and tree walker differ: %d %s / %d %s\n", ra, ea, rb,
                rb < 0 ? rl_error_last() : "");
        abort();
    }
    /* arrays of primitives as one event: the same elements, status and error, both ways */
    for (int use_plan = 0; use_plan < 2; use_plan++) {
        uint64_t hc = 1;
        int rc = use_plan ? rl_msg_decode_flags(defs[which], copy, size - 1, RL_MSG_DECODE_ARRAYS,
                                                hash_values_visit, &hc)
                          : cdr_decode_tree(defs[which], copy, size - 1, RL_MSG_DECODE_ARRAYS,
                                            hash_values_visit, &hc);
        if (rc != rb || hc != hb || (rb < 0 && strcmp(ea, rl_error_last()) != 0)) {
            fprintf(stderr, "arrays mode (%s) differs: %d %s / %d %s\n",
                    use_plan ? "plan" : "tree walker", rc, rc < 0 ? rl_error_last() : "", rb, ea);
            abort();
        }
    }
    rl_msg_value v;
    rl_msg_path_get(paths[which], copy, size - 1, &v);
    free(copy);
    return 0;
}
