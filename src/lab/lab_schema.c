/* omgidl schema text from XTypes type objects: the recorder writes raw CDR of topics whose
 * types it was not built with, and the bag needs a self-contained IDL for each (MCAP's omgidl
 * encoding, read by Foxglove's decoder). The writer's TypeMapping carries the complete type
 * objects of the type and every dependency; this walks them, dependencies first. */
#include "core/text.h"
#include "lab/lab_internal.h"
#include "runlab/error.h"
#include "runlab/lab.h"

#include <dds/dds.h>
#include <dds/ddsi/ddsi_xqos.h> /* before ddsi_typelib.h, which needs its QoS types */
#include <dds/ddsi/ddsi_typelib.h>
#include <dds/ddsrt/heap.h>
#include <dds/ddsi/ddsi_xt_impl.h>
#include <dds/ddsi/ddsi_xt_typeinfo.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Deepest nesting of type references followed (a guard for hostile mappings). */
#define MAX_DEPTH 64

typedef struct emitter {
    const DDS_XTypes_TypeMapping *map;
    uint8_t *state; /* per complete pair: 0 not yet, 1 being written, 2 written */
    rl_buf out;
    int depth;
} emitter;

static const DDS_XTypes_CompleteTypeObject *lookup(const emitter *e,
                                                   const DDS_XTypes_TypeIdentifier *ti,
                                                   size_t *index)
{
    const dds_sequence_DDS_XTypes_TypeIdentifierTypeObjectPair *s = &e->map->identifier_object_pair_complete;
    for (uint32_t i = 0; i < s->_length; i++) {
        const DDS_XTypes_TypeIdentifierTypeObjectPair *p = &s->_buffer[i];
        if (p->type_identifier._d == DDS_XTypes_EK_COMPLETE &&
            p->type_object._d == DDS_XTypes_EK_COMPLETE &&
            memcmp(p->type_identifier._u.equivalence_hash, ti->_u.equivalence_hash,
                   sizeof(DDS_XTypes_EquivalenceHash)) == 0) {
            if (index)
                *index = i;
            return &p->type_object._u.complete;
        }
    }
    return NULL;
}

/* The qualified name of a named complete type object, NULL for anonymous kinds. */
static const char *object_name(const DDS_XTypes_CompleteTypeObject *o)
{
    switch (o->_d) {
    case DDS_XTypes_TK_ALIAS: return o->_u.alias_type.header.detail.type_name;
    case DDS_XTypes_TK_STRUCTURE: return o->_u.struct_type.header.detail.type_name;
    case DDS_XTypes_TK_UNION: return o->_u.union_type.header.detail.type_name;
    case DDS_XTypes_TK_ENUM: return o->_u.enumerated_type.header.detail.type_name;
    default: return NULL;
    }
}

static int emit_object(emitter *e, size_t index);

/* Writes the IDL spelling of `ti` into `base` (element type) and `dims` (array dimensions,
 * "[3][3]"), emitting the declarations it depends on first. */
static int spell(emitter *e, const DDS_XTypes_TypeIdentifier *ti, rl_buf *base, rl_buf *dims)
{
    if (++e->depth > MAX_DEPTH) {
        e->depth--;
        return rl_error_set(RL_EUNSUPPORTED, "type nesting deeper than %d", MAX_DEPTH);
    }
    int rc = RL_OK;
    const char *prim = NULL;
    switch (ti->_d) {
    case DDS_XTypes_TK_BOOLEAN: prim = "boolean"; break;
    case DDS_XTypes_TK_BYTE: prim = "octet"; break;
    case DDS_XTypes_TK_INT16: prim = "short"; break;
    case DDS_XTypes_TK_INT32: prim = "long"; break;
    case DDS_XTypes_TK_INT64: prim = "long long"; break;
    case DDS_XTypes_TK_UINT16: prim = "unsigned short"; break;
    case DDS_XTypes_TK_UINT32: prim = "unsigned long"; break;
    case DDS_XTypes_TK_UINT64: prim = "unsigned long long"; break;
    case DDS_XTypes_TK_FLOAT32: prim = "float"; break;
    case DDS_XTypes_TK_FLOAT64: prim = "double"; break;
    case DDS_XTypes_TK_FLOAT128: prim = "long double"; break;
    case 12: prim = "int8"; break;  /* TK_INT8 (XTypes 1.3) */
    case 13: prim = "uint8"; break; /* TK_UINT8 */
    case DDS_XTypes_TK_CHAR8: prim = "char"; break;
    case DDS_XTypes_TK_CHAR16: prim = "wchar"; break;
    case DDS_XTypes_TI_STRING8_SMALL:
    case DDS_XTypes_TI_STRING16_SMALL: {
        unsigned bound = ti->_u.string_sdefn.bound;
        const char *kw = ti->_d == DDS_XTypes_TI_STRING8_SMALL ? "string" : "wstring";
        if (bound)
            rl_buf_printf(base, "%s<%u>", kw, bound);
        else
            rl_buf_puts(base, kw);
        break;
    }
    case DDS_XTypes_TI_STRING8_LARGE:
    case DDS_XTypes_TI_STRING16_LARGE:
        rl_buf_printf(base, "%s<%" PRIu32 ">",
                      ti->_d == DDS_XTypes_TI_STRING8_LARGE ? "string" : "wstring",
                      ti->_u.string_ldefn.bound);
        break;
    case DDS_XTypes_TI_PLAIN_SEQUENCE_SMALL:
    case DDS_XTypes_TI_PLAIN_SEQUENCE_LARGE: {
        int small = ti->_d == DDS_XTypes_TI_PLAIN_SEQUENCE_SMALL;
        const DDS_XTypes_TypeIdentifier *el = small ? ti->_u.seq_sdefn.element_identifier
                                                    : ti->_u.seq_ldefn.element_identifier;
        uint32_t bound = small ? ti->_u.seq_sdefn.bound : ti->_u.seq_ldefn.bound;
        if (!el) {
            rc = rl_error_set(RL_EPARSE, "sequence without an element type");
            break;
        }
        rl_buf eb = {0}, ed = {0};
        rc = spell(e, el, &eb, &ed);
        if (rc == RL_OK && ed.len) {
            rc = rl_error_set(RL_EUNSUPPORTED, "sequence of arrays (%s%s)", eb.data, ed.data);
        } else if (rc == RL_OK) {
            if (bound)
                rl_buf_printf(base, "sequence<%s, %" PRIu32 ">", eb.data, bound);
            else
                rl_buf_printf(base, "sequence<%s>", eb.data);
        }
        rl_buf_free(&eb);
        rl_buf_free(&ed);
        break;
    }
    case DDS_XTypes_TI_PLAIN_ARRAY_SMALL:
    case DDS_XTypes_TI_PLAIN_ARRAY_LARGE: {
        int small = ti->_d == DDS_XTypes_TI_PLAIN_ARRAY_SMALL;
        const DDS_XTypes_TypeIdentifier *el = small ? ti->_u.array_sdefn.element_identifier
                                                    : ti->_u.array_ldefn.element_identifier;
        if (!el) {
            rc = rl_error_set(RL_EPARSE, "array without an element type");
            break;
        }
        rc = spell(e, el, base, dims);
        uint32_t n = small ? ti->_u.array_sdefn.array_bound_seq._length
                           : ti->_u.array_ldefn.array_bound_seq._length;
        /* Outer dimensions first: this array's bounds go before the element's own. */
        rl_buf mine = {0};
        for (uint32_t i = 0; i < n; i++)
            rl_buf_printf(&mine, "[%" PRIu32 "]",
                          small ? (uint32_t)ti->_u.array_sdefn.array_bound_seq._buffer[i]
                                : ti->_u.array_ldefn.array_bound_seq._buffer[i]);
        if (dims->len)
            rl_buf_puts(&mine, dims->data);
        rl_buf_free(dims);
        *dims = mine;
        break;
    }
    case DDS_XTypes_EK_COMPLETE: {
        size_t index = 0;
        const DDS_XTypes_CompleteTypeObject *o = lookup(e, ti, &index);
        if (!o) {
            rc = rl_error_set(RL_ENOENT, "a referenced type is missing from the type mapping");
            break;
        }
        if (o->_d == DDS_XTypes_TK_SEQUENCE) {
            DDS_XTypes_TypeIdentifier seq = {0};
            seq._d = DDS_XTypes_TI_PLAIN_SEQUENCE_LARGE;
            seq._u.seq_ldefn.bound = o->_u.sequence_type.header.common.bound;
            seq._u.seq_ldefn.element_identifier =
                (DDS_XTypes_TypeIdentifier *)&o->_u.sequence_type.element.common.type;
            rc = spell(e, &seq, base, dims);
            break;
        }
        if (o->_d == DDS_XTypes_TK_ARRAY) {
            DDS_XTypes_TypeIdentifier arr = {0};
            arr._d = DDS_XTypes_TI_PLAIN_ARRAY_LARGE;
            arr._u.array_ldefn.array_bound_seq = o->_u.array_type.header.common.bound_seq;
            arr._u.array_ldefn.element_identifier =
                (DDS_XTypes_TypeIdentifier *)&o->_u.array_type.element.common.type;
            rc = spell(e, &arr, base, dims);
            break;
        }
        rc = emit_object(e, index);
        if (rc == RL_OK)
            rl_buf_puts(base, object_name(o));
        break;
    }
    default:
        rc = rl_error_set(RL_EUNSUPPORTED, "type kind 0x%02x (%s)", ti->_d,
                          ti->_d == DDS_XTypes_TI_PLAIN_MAP_SMALL ||
                                  ti->_d == DDS_XTypes_TI_PLAIN_MAP_LARGE
                              ? "map"
                              : "not expressible in omgidl");
    }
    if (prim)
        rl_buf_puts(base, prim);
    e->depth--;
    return rc;
}

/* "a::b::T" -> writes "module a { module b { " and returns the last part. */
static const char *open_modules(rl_buf *out, const char *qualified, int *levels)
{
    const char *start = qualified, *sep;
    *levels = 0;
    while ((sep = strstr(start, "::")) != NULL) {
        rl_buf_printf(out, "module %.*s { ", (int)(sep - start), start);
        (*levels)++;
        start = sep + 2;
    }
    return start;
}

static void close_modules(rl_buf *out, int levels)
{
    for (int i = 0; i < levels; i++)
        rl_buf_puts(out, " };");
    rl_buf_puts(out, "\n");
}

static void put_extensibility(rl_buf *b, uint16_t flags)
{
    if (flags & DDS_XTypes_IS_MUTABLE)
        rl_buf_puts(b, "@mutable ");
    else if (flags & DDS_XTypes_IS_APPENDABLE)
        rl_buf_puts(b, "@appendable ");
    else
        rl_buf_puts(b, "@final ");
}

/* A member declaration "T name[dims];" with its annotations. */
static int put_member(emitter *e, rl_buf *decl, const DDS_XTypes_TypeIdentifier *ti,
                      const char *name, uint16_t flags, int64_t id, int64_t expected_id)
{
    rl_buf base = {0}, dims = {0};
    int rc = spell(e, ti, &base, &dims);
    if (rc == RL_OK) {
        if (id != expected_id)
            rl_buf_printf(decl, "@id(%" PRId64 ") ", id);
        if (flags & DDS_XTypes_IS_KEY)
            rl_buf_puts(decl, "@key ");
        if (flags & DDS_XTypes_IS_OPTIONAL)
            rl_buf_puts(decl, "@optional ");
        if (flags & DDS_XTypes_IS_EXTERNAL)
            rl_buf_puts(decl, "@external ");
        rl_buf_printf(decl, "%s %s%s; ", base.data, name, dims.len ? dims.data : "");
    } else {
        rl_error_prefix(rc, "member %s", name);
    }
    rl_buf_free(&base);
    rl_buf_free(&dims);
    return rc;
}

/* The members of a struct and of its bases (base members first, as CDR has them). */
static int put_struct_members(emitter *e, rl_buf *decl, const DDS_XTypes_CompleteStructType *st,
                              int64_t *next_id, int depth)
{
    if (depth > MAX_DEPTH)
        return rl_error_set(RL_EUNSUPPORTED, "inheritance deeper than %d", MAX_DEPTH);
    if (st->header.base_type._d != DDS_XTypes_TK_NONE) {
        const DDS_XTypes_CompleteTypeObject *b = st->header.base_type._d == DDS_XTypes_EK_COMPLETE
                                                     ? lookup(e, &st->header.base_type, NULL)
                                                     : NULL;
        if (!b || b->_d != DDS_XTypes_TK_STRUCTURE)
            return rl_error_set(RL_ENOENT, "base type of %s missing from the type mapping",
                                st->header.detail.type_name);
        int rc = put_struct_members(e, decl, &b->_u.struct_type, next_id, depth + 1);
        if (rc < 0)
            return rc;
    }
    for (uint32_t i = 0; i < st->member_seq._length; i++) {
        const DDS_XTypes_CompleteStructMember *m = &st->member_seq._buffer[i];
        int rc = put_member(e, decl, &m->common.member_type_id, m->detail.name,
                            m->common.member_flags, m->common.member_id, *next_id);
        if (rc < 0)
            return rl_error_prefix(rc, "%s", st->header.detail.type_name);
        *next_id = (int64_t)m->common.member_id + 1;
    }
    return RL_OK;
}

static int emit_object(emitter *e, size_t index)
{
    if (e->state[index] == 2)
        return RL_OK;
    const DDS_XTypes_CompleteTypeObject *o =
        &e->map->identifier_object_pair_complete._buffer[index].type_object._u.complete;
    const char *name = object_name(o);
    if (!name || !name[0])
        return rl_error_set(RL_EUNSUPPORTED, "type kind 0x%02x (not expressible in omgidl)",
                            o->_d);
    if (e->state[index] == 1)
        return rl_error_set(RL_EUNSUPPORTED, "recursive type %s", name);
    e->state[index] = 1;
    /* Dependencies are emitted while the declaration is built, so build it aside. */
    rl_buf decl = {0};
    int levels = 0;
    const char *local = open_modules(&decl, name, &levels);
    int rc = RL_OK;
    switch (o->_d) {
    case DDS_XTypes_TK_STRUCTURE: {
        const DDS_XTypes_CompleteStructType *st = &o->_u.struct_type;
        put_extensibility(&decl, st->struct_flags);
        rl_buf_printf(&decl, "struct %s { ", local);
        int64_t next_id = 0;
        rc = put_struct_members(e, &decl, st, &next_id, 0);
        rl_buf_puts(&decl, "};");
        break;
    }
    case DDS_XTypes_TK_ENUM: {
        const DDS_XTypes_CompleteEnumeratedType *en = &o->_u.enumerated_type;
        if (en->header.common.bit_bound != 32)
            rl_buf_printf(&decl, "@bit_bound(%u) ", (unsigned)en->header.common.bit_bound);
        rl_buf_printf(&decl, "enum %s { ", local);
        for (uint32_t i = 0; i < en->literal_seq._length; i++)
            rl_buf_printf(&decl, "%s@value(%" PRId32 ") %s", i ? ", " : "",
                          en->literal_seq._buffer[i].common.value,
                          en->literal_seq._buffer[i].detail.name);
        rl_buf_puts(&decl, " };");
        break;
    }
    case DDS_XTypes_TK_ALIAS: {
        rl_buf base = {0}, dims = {0};
        rc = spell(e, &o->_u.alias_type.body.common.related_type, &base, &dims);
        if (rc == RL_OK)
            rl_buf_printf(&decl, "typedef %s %s%s;", base.data, local, dims.len ? dims.data : "");
        rl_buf_free(&base);
        rl_buf_free(&dims);
        break;
    }
    case DDS_XTypes_TK_UNION: {
        const DDS_XTypes_CompleteUnionType *un = &o->_u.union_type;
        rl_buf disc = {0}, ddims = {0};
        rc = spell(e, &un->discriminator.common.type_id, &disc, &ddims);
        if (rc == RL_OK) {
            put_extensibility(&decl, un->union_flags);
            rl_buf_printf(&decl, "union %s switch (%s) { ", local, disc.data);
        }
        for (uint32_t i = 0; rc == RL_OK && i < un->member_seq._length; i++) {
            const DDS_XTypes_CompleteUnionMember *m = &un->member_seq._buffer[i];
            for (uint32_t l = 0; l < m->common.label_seq._length; l++)
                rl_buf_printf(&decl, "case %" PRId32 ": ", m->common.label_seq._buffer[l]);
            if (m->common.member_flags & DDS_XTypes_IS_DEFAULT)
                rl_buf_puts(&decl, "default: ");
            rc = put_member(e, &decl, &m->common.type_id, m->detail.name, 0,
                            m->common.member_id, m->common.member_id);
        }
        rl_buf_puts(&decl, "};");
        rl_buf_free(&disc);
        rl_buf_free(&ddims);
        if (rc < 0)
            rl_error_prefix(rc, "%s", name);
        break;
    }
    default:
        rc = rl_error_set(RL_EUNSUPPORTED, "%s: type kind 0x%02x not expressible in omgidl",
                          name, o->_d);
    }
    if (rc == RL_OK) {
        close_modules(&decl, levels);
        if (decl.err)
            rc = RL_ENOMEM;
        else
            rl_buf_put(&e->out, decl.data, decl.len);
    }
    rl_buf_free(&decl);
    e->state[index] = rc == RL_OK ? 2 : 0;
    return rc;
}

/* Cyclone 0.10's ddsi_typemap_deser aborts the process on some malformed TypeMappings
 * (found by fuzz_lab_schema), and a TypeMapping is data from another node. It is tried
 * first in a child process that does nothing else and exits; only bytes the child read
 * without dying are deserialised here. 1 when the bytes are safe to deserialise, 0 when not
 * (or no child could be made), -1 when the child hung and was killed. */
static int trial_in_child(const uint8_t *bytes, size_t len)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 0; /* cannot check: refuse rather than risk the recorder */
    if (pid == 0) {
        /* die quietly: no handler of the parent's (a fuzzer's, a sanitizer's) may act */
        static const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
        for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
            signal(fatal[i], SIG_DFL);
        uint8_t *copy = malloc(len);
        if (!copy)
            _exit(2);
        memcpy(copy, bytes, len);
        struct ddsi_sertype_cdr_data ser = {.sz = (uint32_t)len, .data = copy};
        ddsi_typemap_t *tm = ddsi_typemap_deser(&ser);
        _exit(tm ? 10 : 11); /* codes of its own: a sanitizer's report exits with 1 */
    }
    /* The child of a threaded process can hang in an allocator whose lock another thread
       held at the fork (seen with AddressSanitizer's; glibc's malloc guards its own): it
       gets 10 s, far more than reading a few KiB needs, then it is killed and tried again. */
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 10) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            break;
        if (got < 0 && errno != EINTR)
            return 0;
        if (waited_ms >= 10000) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return -1;
        }
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    return WIFEXITED(status) && (WEXITSTATUS(status) == 10 || WEXITSTATUS(status) == 11);
}

/* True when the bytes are safe to deserialise (a hung trial is tried again, twice). */
static bool typemap_survives(const uint8_t *bytes, size_t len)
{
    int ok = -1;
    for (int attempt = 0; attempt < 3 && ok < 0; attempt++)
        ok = trial_in_child(bytes, len);
    return ok == 1;
}

/* TypeMappings that already survived the trial in a child, kept (a copy each) so that the same
 * bytes are not tried again: a recorder sees the same types run after run, and a fork of a
 * large process that is receiving at full speed is costly for the receive path (page tables
 * copied, then a copy-on-write fault and a TLB shootdown for every page it writes to next).
 * Process-wide, at most SURVIVORS_MAX entries (then the trial runs again). */
enum { SURVIVORS_MAX = 256 };
static struct {
    pthread_mutex_t mu;
    size_t count;
    size_t len[SURVIVORS_MAX];
    uint8_t *bytes[SURVIVORS_MAX];
} survivors = {.mu = PTHREAD_MUTEX_INITIALIZER};

static bool survived_before(const uint8_t *bytes, size_t len)
{
    bool found = false;
    pthread_mutex_lock(&survivors.mu);
    for (size_t i = 0; i < survivors.count && !found; i++)
        found = survivors.len[i] == len && memcmp(survivors.bytes[i], bytes, len) == 0;
    pthread_mutex_unlock(&survivors.mu);
    return found;
}

static void remember_survivor(const uint8_t *bytes, size_t len)
{
    pthread_mutex_lock(&survivors.mu);
    uint8_t *copy = survivors.count < SURVIVORS_MAX ? malloc(len) : NULL;
    if (copy) {
        memcpy(copy, bytes, len);
        survivors.bytes[survivors.count] = copy;
        survivors.len[survivors.count++] = len;
    }
    pthread_mutex_unlock(&survivors.mu);
}

static bool typemap_safe(const uint8_t *bytes, size_t len)
{
    if (survived_before(bytes, len))
        return true;
    if (!typemap_survives(bytes, len))
        return false;
    remember_survivor(bytes, len);
    return true;
}

int rl_lab_schema_from_type_mapping(const void *type_mapping, size_t len, const char *type_name,
                                    char **out)
{
    if (!type_mapping || !type_name || !out || len == 0 || len > UINT32_MAX)
        return rl_error_set(RL_EINVAL, "schema: no type mapping or type name");
    *out = NULL;
    if (!typemap_safe(type_mapping, len))
        return rl_error_set(RL_EPARSE,
                            "schema for %s: the %zu bytes are no TypeMapping Cyclone DDS can "
                            "read (its reader fails on them)",
                            type_name, len);
    /* Cyclone's deserialiser validates the bytes against the TypeMapping type; it wants a
     * mutable buffer of its own. */
    uint8_t *copy = malloc(len);
    if (!copy)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    memcpy(copy, type_mapping, len);
    struct ddsi_sertype_cdr_data ser = {.sz = (uint32_t)len, .data = copy};
    ddsi_typemap_t *tm = ddsi_typemap_deser(&ser);
    free(copy);
    if (!tm)
        return rl_error_set(RL_EPARSE, "schema for %s: the %zu bytes are no XTypes TypeMapping",
                            type_name, len);
    emitter e = {.map = &tm->x};
    uint32_t n = e.map->identifier_object_pair_complete._length;
    e.state = calloc(n ? n : 1, 1);
    int rc = e.state ? RL_OK : rl_error_set(RL_ENOMEM, "schema: out of memory");
    size_t root = n;
    for (uint32_t i = 0; rc == RL_OK && i < n; i++) {
        const DDS_XTypes_TypeIdentifierTypeObjectPair *p = &e.map->identifier_object_pair_complete._buffer[i];
        const char *nm = p->type_object._d == DDS_XTypes_EK_COMPLETE
                             ? object_name(&p->type_object._u.complete)
                             : NULL;
        if (nm && strcmp(nm, type_name) == 0) {
            root = i;
            break;
        }
    }
    if (rc == RL_OK && root == n)
        rc = rl_error_set(RL_ENOENT, "schema: type %s is not in its type mapping", type_name);
    if (rc == RL_OK)
        rc = emit_object(&e, root);
    if (rc == RL_OK) {
        *out = rl_buf_take(&e.out, NULL);
        if (!*out)
            rc = rl_error_set(RL_ENOMEM, "schema: out of memory");
    } else {
        rl_error_prefix(rc, "schema for %s", type_name);
    }
    rl_buf_free(&e.out);
    free(e.state);
    ddsi_typemap_fini(tm);
    ddsrt_free(tm);
    return rc;
}
