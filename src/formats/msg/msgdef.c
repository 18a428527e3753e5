/* The entry of the message-schema type model (runlab/msgdef.h): rl_msgdef_parse finds the
 * parser by encoding in the codec table (msg_codec.c) and compiles the decoding plan; lookups, freeing, and the normalised
 * text `runlab mcap schema` prints. It calls down into the builder (msgdef_build.c), the
 * parsers and cdr_plan.c; none of them calls back. */
#include "msg_codec.h"
#include "msgdef_internal.h"

#include "core/text.h"
#include "runlab/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const prim_names[] = {
    [RL_MSG_BOOL] = "bool",       [RL_MSG_OCTET] = "octet",     [RL_MSG_CHAR] = "char",
    [RL_MSG_INT8] = "int8",       [RL_MSG_UINT8] = "uint8",     [RL_MSG_INT16] = "int16",
    [RL_MSG_UINT16] = "uint16",   [RL_MSG_INT32] = "int32",     [RL_MSG_UINT32] = "uint32",
    [RL_MSG_INT64] = "int64",     [RL_MSG_UINT64] = "uint64",   [RL_MSG_FLOAT32] = "float32",
    [RL_MSG_FLOAT64] = "float64", [RL_MSG_STRING] = "string",   [RL_MSG_WSTRING] = "wstring",
};

void rl_msgdef_free(rl_msgdef *d)
{
    if (!d)
        return;
    cdr_plan_free(d->plan);
    d->plan = NULL;
    msgdef_destroy(d);
}

size_t rl_msgdef_type_count(const rl_msgdef *d) { return d ? d->ntypes : 0; }

const rl_msg_type *rl_msgdef_type(const rl_msgdef *d, uint32_t index)
{
    return d && index < d->ntypes ? &d->types[index] : NULL;
}

uint32_t rl_msgdef_root(const rl_msgdef *d) { return d ? d->root : 0; }

const rl_msg_constant *rl_msgdef_constants(const rl_msgdef *d, size_t *count)
{
    if (count)
        *count = d ? d->nconstants : 0;
    return d ? d->constants : NULL;
}

int rl_msgdef_find(const rl_msgdef *d, const char *name, uint32_t *index)
{
    for (size_t i = MSGDEF_FIRST_USER_TYPE; d && name && i < d->ntypes; i++)
        if (d->types[i].name && strcmp(d->types[i].name, name) == 0) {
            if (index)
                *index = (uint32_t)i;
            return RL_OK;
        }
    return rl_error_set(RL_ENOENT, "schema: no type '%s'", name ? name : "(null)");
}

int rl_msg_codec_parse(const rl_msg_codec *codec, rl_msgdef **out, const char *name,
                       const char *text, size_t len)
{
    if (!out || !codec || !name || (!text && len))
        return rl_error_set(RL_EINVAL, "schema: NULL argument");
    *out = NULL;
    if (len > MSGDEF_MAX_TEXT)
        return rl_error_set(RL_ERANGE, "schema '%s': %zu bytes of text, more than the %d MiB a "
                                       "schema may have", name, len, MSGDEF_MAX_TEXT >> 20);
    rl_msgdef *d = NULL;
    int rc = msgdef_new(&d, name);
    if (rc < 0)
        return rc;
    d->wstring_ros = msg_codec_wstring_ros(codec);
    rc = msg_codec_parser(codec)(d, name, text ? text : "", len);
    if (rc == RL_OK)
        rc = cdr_plan_build(d, &d->plan);
    if (rc < 0) {
        rl_msgdef_free(d);
        return rc;
    }
    *out = d;
    return RL_OK;
}

int rl_msgdef_parse(rl_msgdef **out, const char *encoding, const char *name, const char *text,
                    size_t len)
{
    if (!out || !encoding || !name || (!text && len))
        return rl_error_set(RL_EINVAL, "schema: NULL argument");
    *out = NULL;
    const rl_msg_codec *codec = rl_msg_codec_find(encoding, RL_MESSAGE_ENCODING_CDR);
    if (!codec)
        return rl_error_set(RL_EUNSUPPORTED, "schema '%s': %s", name, rl_error_last());
    return rl_msg_codec_parse(codec, out, name, text, len);
}

/* ---- Normalised text ------------------------------------------------------------------ */

static void put_type_name(rl_buf *b, const rl_msgdef *d, uint32_t t)
{
    const rl_msg_type *ty = &d->types[t];
    if (ty->name) {
        rl_buf_puts(b, ty->name);
        return;
    }
    switch (ty->kind) {
    case RL_MSG_STRING:
    case RL_MSG_WSTRING:
        rl_buf_puts(b, prim_names[ty->kind]);
        if (ty->bound)
            rl_buf_printf(b, "<=%u", ty->bound);
        return;
    case RL_MSG_ARRAY:
    case RL_MSG_SEQUENCE:
        if (ty->kind == RL_MSG_ARRAY) { /* dimensions outer to inner: int32[6][2] */
            uint32_t e = ty->elem;
            while (d->types[e].kind == RL_MSG_ARRAY && d->types[e].inner_dim)
                e = d->types[e].elem;
            put_type_name(b, d, e);
            for (const rl_msg_type *a = ty;; a = &d->types[a->elem]) {
                rl_buf_printf(b, "[%u]", a->bound);
                if (a->elem == e)
                    break;
            }
            return;
        }
        put_type_name(b, d, ty->elem);
        if (ty->bound)
            rl_buf_printf(b, "[<=%u]", ty->bound);
        else
            rl_buf_puts(b, "[]");
        return;
    default:
        rl_buf_puts(b, ty->kind <= RL_MSG_WSTRING ? prim_names[ty->kind] : "?");
    }
}

/* The text of one named type (its dependencies are written before it). */
static void format_one(rl_buf *b, const rl_msgdef *d, const rl_msg_type *ty)
{
    static const char *const ext_names[] = {"", "@final ", "@appendable ", "@mutable "};
    const char *what = ty->kind == RL_MSG_ENUM ? "enum" : ty->kind == RL_MSG_UNION ? "union" : "struct";
    rl_buf_printf(b, "%s%s %s", ext_names[ty->ext], what, ty->name);
    if (ty->kind == RL_MSG_UNION) {
        rl_buf_puts(b, " switch (");
        put_type_name(b, d, ty->elem);
        rl_buf_puts(b, ")");
    }
    rl_buf_puts(b, "\n");
    for (size_t c = 0; c < ty->nconstants; c++) {
        rl_buf_puts(b, "  const ");
        put_type_name(b, d, ty->constants[c].type);
        rl_buf_printf(b, " %s = %s\n", ty->constants[c].name, ty->constants[c].value);
    }
    for (size_t m = 0; m < ty->nmembers; m++) {
        const rl_msg_member *mb = &ty->members[m];
        rl_buf_puts(b, "  ");
        if (ty->kind == RL_MSG_ENUM) {
            rl_buf_printf(b, "%s = %lld\n", mb->name, (long long)mb->value);
            continue;
        }
        if (ty->kind == RL_MSG_UNION) {
            for (size_t l = 0; l < mb->nlabels; l++)
                rl_buf_printf(b, "case %lld: ", (long long)mb->labels[l]);
            if (mb->is_default_case)
                rl_buf_puts(b, "default: ");
        }
        if (ty->ext == RL_MSG_EXT_MUTABLE)
            rl_buf_printf(b, "@id(%u) ", mb->id);
        if (mb->key)
            rl_buf_puts(b, "@key ");
        if (mb->optional)
            rl_buf_puts(b, "@optional ");
        put_type_name(b, d, mb->type);
        rl_buf_printf(b, " %s", mb->name);
        if (mb->default_value)
            rl_buf_printf(b, " %s", mb->default_value);
        rl_buf_puts(b, "\n");
    }
}

typedef struct format_frame {
    uint32_t type;
    size_t next; /* the next dependency to visit: the discriminator (unions), then members */
} format_frame;

/* Pushes the named type behind t (through arrays and sequences) when not written yet. */
static int format_push(const rl_msgdef *d, uint32_t t, unsigned char *done, format_frame *stack,
                       size_t *sp)
{
    while (d->types[t].kind == RL_MSG_ARRAY || d->types[t].kind == RL_MSG_SEQUENCE)
        t = d->types[t].elem;
    if (!d->types[t].name || done[t])
        return 0;
    done[t] = 1;
    stack[(*sp)++] = (format_frame){.type = t};
    return 1;
}

/* Writes t and what it depends on, dependencies first, with an explicit stack (a chain of
 * types through sequences is as long as the schema, too deep for recursion). Each named
 * type is pushed once, so the stack holds at most ntypes frames. */
static int format_type(rl_buf *b, const rl_msgdef *d, uint32_t t, unsigned char *done)
{
    format_frame *stack = malloc(d->ntypes * sizeof *stack);
    if (!stack)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    size_t sp = 0;
    format_push(d, t, done, stack, &sp);
    while (sp) {
        format_frame *f = &stack[sp - 1];
        const rl_msg_type *ty = &d->types[f->type];
        size_t ndeps = (ty->kind == RL_MSG_UNION) + (ty->kind == RL_MSG_ENUM ? 0 : ty->nmembers);
        if (f->next < ndeps) {
            size_t i = f->next++;
            uint32_t dep = ty->kind == RL_MSG_UNION ? (i == 0 ? ty->elem : ty->members[i - 1].type)
                                                    : ty->members[i].type;
            format_push(d, dep, done, stack, &sp);
            continue;
        }
        format_one(b, d, ty);
        sp--;
    }
    free(stack);
    return RL_OK;
}

int rl_msgdef_format(const rl_msgdef *d, char **out)
{
    if (!d || !out)
        return rl_error_set(RL_EINVAL, "schema: NULL argument");
    unsigned char *done = calloc(d->ntypes, 1);
    if (!done)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    rl_buf b = {0};
    for (size_t c = 0; c < d->nconstants; c++) {
        rl_buf_puts(&b, "const ");
        put_type_name(&b, d, d->constants[c].type);
        rl_buf_printf(&b, " %s = %s\n", d->constants[c].name, d->constants[c].value);
    }
    int rc = format_type(&b, d, d->root, done);
    free(done);
    if (rc < 0) {
        free(rl_buf_take(&b, NULL));
        return rc;
    }
    size_t n;
    *out = rl_buf_take(&b, &n);
    return *out ? RL_OK : RL_ENOMEM;
}
