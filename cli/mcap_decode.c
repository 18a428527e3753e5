/* `runlab mcap cat --json` payloads: the schema of each channel parsed once (ros2msg or
 * omgidl with cdr; jsonschema with json passes the payload through), each message written
 * as a decoded "message" object, or as "data_base64" with a one-time warning naming why. */
#include "mcap_decode.h"

#include "cli.h"

#include "runlab/error.h"
#include "runlab/msgdef.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CH_UNKNOWN = 0, CH_CDR, CH_JSON, CH_RAW };

typedef struct channel_state {
    int kind;
    int warned; /* a json payload that is not JSON was reported */
    rl_msgdef *def;
} channel_state;

struct mcap_payloads {
    rl_mcap_indexed *x;
    const char *file;
    int raw, failed;
    channel_state *ch; /* by channel id, 65536 entries */
    char *json;
    size_t json_cap;
    char *b64;
    size_t b64_cap;
};

int mcap_payloads_new(mcap_payloads **out, rl_mcap_indexed *x, const char *file, int raw)
{
    mcap_payloads *p = calloc(1, sizeof *p);
    if (p)
        p->ch = calloc(65536, sizeof *p->ch);
    if (!p || !p->ch) {
        free(p);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    p->x = x;
    p->file = file;
    p->raw = raw;
    *out = p;
    return RL_OK;
}

void mcap_payloads_free(mcap_payloads *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < 65536; i++)
        rl_msgdef_free(p->ch[i].def);
    free(p->ch);
    free(p->json);
    free(p->b64);
    free(p);
}

int mcap_payloads_failed(const mcap_payloads *p) { return p->failed; }

static void warn(const mcap_payloads *p, const rl_mcap_channel *ch, const char *why)
{
    fprintf(stderr, "runlab: mcap: %s: warning: topic '", p->file);
    cli_print_escaped_n(stderr, ch->topic.data, ch->topic.len); /* names reach no terminal raw */
    fputs("': ", stderr);
    cli_print_escaped(stderr, why); /* it may quote the file's encoding name */
    fputs("; its payloads are printed as data_base64\n", stderr);
}

/* Decides once per channel how its payloads are written. */
static channel_state *state_of(mcap_payloads *p, const rl_mcap_channel *ch)
{
    channel_state *st = &p->ch[ch->id];
    if (st->kind != CH_UNKNOWN)
        return st;
    st->kind = CH_RAW;
    if (p->raw)
        return st;
    const rl_mcap_schema *s = ch->schema_id ? rl_mcap_indexed_schema(p->x, ch->schema_id) : NULL;
    char why[1200];
    if (rl_mcap_bytes_eq(ch->message_encoding, rl_mcap_bytes_of("json"))) {
        st->kind = CH_JSON;
        return st;
    }
    if (!s) {
        int shown = (int)(ch->message_encoding.len > 64 ? 64 : ch->message_encoding.len);
        snprintf(why, sizeof why, "its schema is missing (message encoding '%.*s'; json needs "
                 "none, %s need one)", shown, (const char *)ch->message_encoding.data,
                 rl_msg_codec_supported());
        warn(p, ch, why);
        return st;
    }
    const rl_msg_codec *codec = rl_msg_codec_find_bytes(s->encoding.data, s->encoding.len,
                                                        ch->message_encoding.data,
                                                        ch->message_encoding.len);
    if (!codec) {
        warn(p, ch, rl_error_last());
        return st;
    }
    char *name = rl_mcap_bytes_dup(s->name);
    if (name) {
        if (rl_msg_codec_parse(codec, &st->def, name, (const char *)s->data.data, s->data.len) ==
            RL_OK)
            st->kind = CH_CDR;
        else
            warn(p, ch, rl_error_last());
    } else {
        warn(p, ch, "out of memory");
    }
    free(name);
    return st;
}

/* Payloads as standard base64 with padding (OpenSSL's EVP_EncodeBlock: no line breaks).
 * It takes an int length, so a larger payload goes in pieces of a multiple of 3 bytes,
 * which encode to the same text as the whole. */
static int write_base64(mcap_payloads *p, rl_json_writer *j, rl_mcap_bytes b)
{
    enum { PIECE = 3 << 28 }; /* 768 MiB in, 1 GiB out: both fit an int */
    size_t need = (b.len + 2) / 3 * 4 + 1;
    if (need > p->b64_cap) {
        char *nb = realloc(p->b64, need);
        if (!nb)
            return rl_error_set(RL_ENOMEM, "out of memory for %zu bytes of base64", need);
        p->b64 = nb;
        p->b64_cap = need;
    }
    size_t n = 0;
    for (size_t i = 0; i < b.len; i += PIECE) {
        size_t len = b.len - i < PIECE ? b.len - i : PIECE;
        n += (size_t)EVP_EncodeBlock((unsigned char *)p->b64 + n, b.data + i, (int)len);
    }
    int rc = rl_json_key(j, "data_base64");
    return rc < 0 ? rc : rl_json_string_n(j, p->b64, n);
}

int mcap_payloads_write(mcap_payloads *p, const rl_mcap_channel *ch, const rl_mcap_message *m,
                        rl_json_writer *j)
{
    channel_state *st = ch ? state_of(p, ch) : NULL;
    if (st && st->kind == CH_JSON) {
        json_object *obj = NULL;
        if (rl_json_parse((const char *)m->data.data, m->data.len, "payload", &obj) == RL_OK) {
            int rc = rl_json_key(j, "message");
            if (rc == RL_OK)
                rc = rl_json_value(j, obj);
            json_object_put(obj);
            return rc;
        }
        /* the channel says json but the bytes are not: keep them, say so once */
        if (!st->warned) {
            char why[1100];
            snprintf(why, sizeof why, "a payload is not JSON (%s)", rl_error_last());
            warn(p, ch, why);
            st->warned = 1;
        }
        return write_base64(p, j, m->data);
    } else if (st && st->kind == CH_CDR) {
        size_t n = 0;
        int rc = rl_msg_to_json(st->def, m->data.data, m->data.len, &p->json, &p->json_cap, &n);
        if (rc == RL_OK) {
            rc = rl_json_key(j, "message");
            return rc < 0 ? rc : rl_json_raw(j, p->json, n);
        }
    } else {
        return write_base64(p, j, m->data);
    }
    /* a payload that does not decode */
    p->failed = 1;
    char why[1100];
    snprintf(why, sizeof why, "%s", rl_error_last());
    fprintf(stderr, "runlab: mcap: %s: topic '", p->file);
    cli_print_escaped_n(stderr, ch->topic.data, ch->topic.len);
    fprintf(stderr, "', log_time %llu: %s\n", (unsigned long long)m->log_time, why);
    int rc = rl_json_key(j, "decode_error");
    if (rc == RL_OK)
        rc = rl_json_string(j, why);
    return rc < 0 ? rc : write_base64(p, j, m->data);
}

int mcap_take_flag(int *argc, char **argv, const char *flag)
{
    int found = 0, w = 1, only_pos = 0;
    for (int i = 1; i < *argc; i++) {
        if (!only_pos && strcmp(argv[i], "--") == 0)
            only_pos = 1;
        if (!only_pos && strcmp(argv[i], flag) == 0) {
            found = 1;
            continue;
        }
        argv[w++] = argv[i];
    }
    *argc = w;
    argv[w] = NULL;
    return found;
}
