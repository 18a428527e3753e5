/* mcap-conformance: the driver of the official MCAP conformance contracts
 * (../shared/mcap-conformance/README.md): `read-streamed FILE` and `read-indexed FILE`
 * print the records as JSON on stdout, `write FILE.json` writes the MCAP bytes to stdout.
 * It uses only runlab's public API. Exit status 0 on success, 1 on any error. */
#include "runlab/error.h"
#include "runlab/json.h"
#include "runlab/mcap.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- JSON output ------------------------------------------------------------------ */

static void u64_str(char buf[24], uint64_t v)
{
    snprintf(buf, 24, "%llu", (unsigned long long)v);
}

static int jnum(rl_json_writer *w, uint64_t v)
{
    char b[24];
    u64_str(b, v);
    return rl_json_string(w, b);
}

static int jbytes(rl_json_writer *w, rl_mcap_bytes b)
{
    return rl_json_string_n(w, (const char *)b.data, b.len);
}

/* A [name, value] pair is opened by pair() and closed by the caller with end_array. */
static int pair(rl_json_writer *w, const char *name)
{
    int rc = rl_json_begin_array(w);
    if (rc == RL_OK)
        rc = rl_json_string(w, name);
    return rc;
}

static int pair_num(rl_json_writer *w, const char *name, uint64_t v)
{
    int rc = pair(w, name);
    if (rc == RL_OK)
        rc = jnum(w, v);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    return rc;
}

static int pair_str(rl_json_writer *w, const char *name, rl_mcap_bytes s)
{
    int rc = pair(w, name);
    if (rc == RL_OK)
        rc = jbytes(w, s);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    return rc;
}

static int pair_data(rl_json_writer *w, const char *name, rl_mcap_bytes d)
{
    int rc = pair(w, name);
    if (rc == RL_OK)
        rc = rl_json_begin_array(w);
    for (size_t i = 0; i < d.len && rc == RL_OK; i++)
        rc = jnum(w, d.data[i]);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    return rc;
}

/* JSON objects use a NUL-terminated key, so map keys are copied (they are short). */
static int jkey_bytes(rl_json_writer *w, rl_mcap_bytes k)
{
    char *s = malloc(k.len + 1);
    if (!s)
        return rl_error_set(RL_ENOMEM, "out of memory");
    memcpy(s, k.data, k.len);
    s[k.len] = '\0';
    int rc = rl_json_key(w, s);
    free(s);
    return rc;
}

static int pair_str_map(rl_json_writer *w, const char *name, rl_mcap_bytes map)
{
    int rc = pair(w, name);
    if (rc == RL_OK)
        rc = rl_json_begin_object(w);
    size_t pos = 0;
    rl_mcap_bytes k, v;
    int more;
    while (rc == RL_OK && (more = rl_mcap_map_str_next(map, &pos, &k, &v)) == 1) {
        rc = jkey_bytes(w, k);
        if (rc == RL_OK)
            rc = jbytes(w, v);
    }
    if (rc == RL_OK)
        rc = rl_json_end_object(w);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    return rc;
}

static int pair_int_map(rl_json_writer *w, const char *name, rl_mcap_bytes map)
{
    int rc = pair(w, name);
    if (rc == RL_OK)
        rc = rl_json_begin_object(w);
    size_t pos = 0;
    uint16_t k;
    uint64_t v;
    while (rc == RL_OK && rl_mcap_map_u16u64_next(map, &pos, &k, &v) == 1) {
        char kb[24];
        u64_str(kb, k);
        rc = rl_json_key(w, kb);
        if (rc == RL_OK)
            rc = jnum(w, v);
    }
    if (rc == RL_OK)
        rc = rl_json_end_object(w);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    return rc;
}

/* One record as {"type": ..., "fields": [[name, value], ...]} with names sorted. Returns
 * 0 for records the contract never emits (Chunk, MessageIndex, unknown), 1 if written. */
static int emit_record(rl_json_writer *w, const rl_mcap_record *r)
{
    switch (r->opcode) {
    case RL_MCAP_OP_HEADER:
    case RL_MCAP_OP_FOOTER:
    case RL_MCAP_OP_SCHEMA:
    case RL_MCAP_OP_CHANNEL:
    case RL_MCAP_OP_MESSAGE:
    case RL_MCAP_OP_CHUNK_INDEX:
    case RL_MCAP_OP_ATTACHMENT:
    case RL_MCAP_OP_ATTACHMENT_INDEX:
    case RL_MCAP_OP_STATISTICS:
    case RL_MCAP_OP_METADATA:
    case RL_MCAP_OP_METADATA_INDEX:
    case RL_MCAP_OP_SUMMARY_OFFSET:
    case RL_MCAP_OP_DATA_END: break;
    default: return 0;
    }
    int rc = rl_json_begin_object(w);
    if (rc == RL_OK)
        rc = rl_json_key(w, "type");
    if (rc == RL_OK)
        rc = rl_json_string(w, rl_mcap_opcode_name(r->opcode));
    if (rc == RL_OK)
        rc = rl_json_key(w, "fields");
    if (rc == RL_OK)
        rc = rl_json_begin_array(w);
    if (rc < 0)
        return rc;
    switch (r->opcode) {
    case RL_MCAP_OP_HEADER:
        if ((rc = pair_str(w, "library", r->u.header.library)) < 0)
            return rc;
        rc = pair_str(w, "profile", r->u.header.profile);
        break;
    case RL_MCAP_OP_FOOTER: {
        const rl_mcap_footer *f = &r->u.footer;
        if ((rc = pair_num(w, "summary_crc", f->summary_crc)) < 0 ||
            (rc = pair_num(w, "summary_offset_start", f->summary_offset_start)) < 0)
            return rc;
        rc = pair_num(w, "summary_start", f->summary_start);
        break;
    }
    case RL_MCAP_OP_SCHEMA: {
        const rl_mcap_schema *s = &r->u.schema;
        if ((rc = pair_data(w, "data", s->data)) < 0 ||
            (rc = pair_str(w, "encoding", s->encoding)) < 0 || (rc = pair_num(w, "id", s->id)) < 0)
            return rc;
        rc = pair_str(w, "name", s->name);
        break;
    }
    case RL_MCAP_OP_CHANNEL: {
        const rl_mcap_channel *c = &r->u.channel;
        if ((rc = pair_num(w, "id", c->id)) < 0 ||
            (rc = pair_str(w, "message_encoding", c->message_encoding)) < 0 ||
            (rc = pair_str_map(w, "metadata", c->metadata)) < 0 ||
            (rc = pair_num(w, "schema_id", c->schema_id)) < 0)
            return rc;
        rc = pair_str(w, "topic", c->topic);
        break;
    }
    case RL_MCAP_OP_MESSAGE: {
        const rl_mcap_message *m = &r->u.message;
        if ((rc = pair_num(w, "channel_id", m->channel_id)) < 0 ||
            (rc = pair_data(w, "data", m->data)) < 0 ||
            (rc = pair_num(w, "log_time", m->log_time)) < 0 ||
            (rc = pair_num(w, "publish_time", m->publish_time)) < 0)
            return rc;
        rc = pair_num(w, "sequence", m->sequence);
        break;
    }
    case RL_MCAP_OP_CHUNK_INDEX: {
        const rl_mcap_chunk_index *c = &r->u.chunk_index;
        if ((rc = pair_num(w, "chunk_length", c->chunk_length)) < 0 ||
            (rc = pair_num(w, "chunk_start_offset", c->chunk_start_offset)) < 0 ||
            (rc = pair_num(w, "compressed_size", c->compressed_size)) < 0 ||
            (rc = pair_str(w, "compression", c->compression)) < 0 ||
            (rc = pair_num(w, "message_end_time", c->message_end_time)) < 0 ||
            (rc = pair_num(w, "message_index_length", c->message_index_length)) < 0 ||
            (rc = pair_int_map(w, "message_index_offsets", c->message_index_offsets)) < 0 ||
            (rc = pair_num(w, "message_start_time", c->message_start_time)) < 0)
            return rc;
        rc = pair_num(w, "uncompressed_size", c->uncompressed_size);
        break;
    }
    case RL_MCAP_OP_ATTACHMENT: {
        const rl_mcap_attachment *a = &r->u.attachment;
        if ((rc = pair_num(w, "create_time", a->create_time)) < 0 ||
            (rc = pair_data(w, "data", a->data)) < 0 ||
            (rc = pair_num(w, "log_time", a->log_time)) < 0 ||
            (rc = pair_str(w, "media_type", a->media_type)) < 0)
            return rc;
        rc = pair_str(w, "name", a->name);
        break;
    }
    case RL_MCAP_OP_ATTACHMENT_INDEX: {
        const rl_mcap_attachment_index *a = &r->u.attachment_index;
        if ((rc = pair_num(w, "create_time", a->create_time)) < 0 ||
            (rc = pair_num(w, "data_size", a->data_size)) < 0 ||
            (rc = pair_num(w, "length", a->length)) < 0 ||
            (rc = pair_num(w, "log_time", a->log_time)) < 0 ||
            (rc = pair_str(w, "media_type", a->media_type)) < 0 ||
            (rc = pair_str(w, "name", a->name)) < 0)
            return rc;
        rc = pair_num(w, "offset", a->offset);
        break;
    }
    case RL_MCAP_OP_STATISTICS: {
        const rl_mcap_statistics *s = &r->u.statistics;
        if ((rc = pair_num(w, "attachment_count", s->attachment_count)) < 0 ||
            (rc = pair_num(w, "channel_count", s->channel_count)) < 0 ||
            (rc = pair_int_map(w, "channel_message_counts", s->channel_message_counts)) < 0 ||
            (rc = pair_num(w, "chunk_count", s->chunk_count)) < 0 ||
            (rc = pair_num(w, "message_count", s->message_count)) < 0 ||
            (rc = pair_num(w, "message_end_time", s->message_end_time)) < 0 ||
            (rc = pair_num(w, "message_start_time", s->message_start_time)) < 0 ||
            (rc = pair_num(w, "metadata_count", s->metadata_count)) < 0)
            return rc;
        rc = pair_num(w, "schema_count", s->schema_count);
        break;
    }
    case RL_MCAP_OP_METADATA:
        if ((rc = pair_str_map(w, "metadata", r->u.metadata.metadata)) < 0)
            return rc;
        rc = pair_str(w, "name", r->u.metadata.name);
        break;
    case RL_MCAP_OP_METADATA_INDEX:
        if ((rc = pair_num(w, "length", r->u.metadata_index.length)) < 0 ||
            (rc = pair_str(w, "name", r->u.metadata_index.name)) < 0)
            return rc;
        rc = pair_num(w, "offset", r->u.metadata_index.offset);
        break;
    case RL_MCAP_OP_SUMMARY_OFFSET:
        if ((rc = pair_num(w, "group_length", r->u.summary_offset.group_length)) < 0 ||
            (rc = pair_num(w, "group_opcode", r->u.summary_offset.group_opcode)) < 0)
            return rc;
        rc = pair_num(w, "group_start", r->u.summary_offset.group_start);
        break;
    case RL_MCAP_OP_DATA_END:
        rc = pair_num(w, "data_section_crc", r->u.data_end.data_section_crc);
        break;
    default: break;
    }
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_end_object(w);
    return rc < 0 ? rc : 1;
}

/* ---- read-streamed ---------------------------------------------------------------- */

static int read_streamed(const char *path, rl_json_writer *w)
{
    rl_mcap_reader *r = NULL;
    int rc = rl_mcap_reader_open(&r, path, NULL);
    if (rc < 0)
        return rc;
    rc = rl_json_begin_object(w);
    if (rc == RL_OK)
        rc = rl_json_key(w, "records");
    if (rc == RL_OK)
        rc = rl_json_begin_array(w);
    rl_mcap_record rec;
    while (rc == RL_OK) {
        int n = rl_mcap_reader_next(r, &rec);
        if (n <= 0) {
            rc = n;
            break;
        }
        n = emit_record(w, &rec);
        if (n < 0)
            rc = n;
    }
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_end_object(w);
    rl_mcap_reader_close(r);
    return rc;
}

/* ---- read-indexed ----------------------------------------------------------------- */

static int emit_as_record(rl_json_writer *w, uint8_t opcode, const void *fields, size_t size)
{
    rl_mcap_record rec;
    memset(&rec, 0, sizeof rec);
    rec.opcode = opcode;
    memcpy(&rec.u, fields, size);
    int rc = emit_record(w, &rec);
    return rc < 0 ? rc : RL_OK;
}

static int read_indexed(const char *path, rl_json_writer *w)
{
    rl_mcap_indexed *idx = NULL;
    int rc = rl_mcap_indexed_open(&idx, path, 0);
    if (rc < 0)
        return rc;
    rl_mcap_message_iter *it = NULL;
    const rl_mcap_schema *schemas;
    const rl_mcap_channel *channels;
    size_t ns = rl_mcap_indexed_schemas(idx, &schemas);
    size_t nc = rl_mcap_indexed_channels(idx, &channels);
    rc = rl_json_begin_object(w);
    if (rc == RL_OK)
        rc = rl_json_key(w, "schemas");
    if (rc == RL_OK)
        rc = rl_json_begin_array(w);
    for (size_t i = 0; i < ns && rc == RL_OK; i++)
        rc = emit_as_record(w, RL_MCAP_OP_SCHEMA, &schemas[i], sizeof schemas[i]);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_key(w, "channels");
    if (rc == RL_OK)
        rc = rl_json_begin_array(w);
    for (size_t i = 0; i < nc && rc == RL_OK; i++)
        rc = emit_as_record(w, RL_MCAP_OP_CHANNEL, &channels[i], sizeof channels[i]);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_key(w, "messages");
    if (rc == RL_OK)
        rc = rl_json_begin_array(w);
    if (rc == RL_OK)
        rc = rl_mcap_indexed_messages(idx, NULL, &it);
    while (rc == RL_OK) {
        rl_mcap_message m;
        int n = rl_mcap_message_iter_next(it, &m, NULL);
        if (n <= 0) {
            rc = n;
            break;
        }
        rc = emit_as_record(w, RL_MCAP_OP_MESSAGE, &m, sizeof m);
    }
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_key(w, "statistics");
    if (rc == RL_OK)
        rc = rl_json_begin_array(w);
    const rl_mcap_statistics *st = rl_mcap_indexed_statistics(idx);
    if (rc == RL_OK && st)
        rc = emit_as_record(w, RL_MCAP_OP_STATISTICS, st, sizeof *st);
    if (rc == RL_OK)
        rc = rl_json_end_array(w);
    if (rc == RL_OK)
        rc = rl_json_end_object(w);
    rl_mcap_message_iter_free(it);
    rl_mcap_indexed_close(idx);
    return rc;
}

/* ---- write ------------------------------------------------------------------------ */

/* Looks up field `name` in a record's [[name, value], ...] array; NULL when absent. */
static json_object *field(json_object *fields, const char *name)
{
    size_t n = json_object_array_length(fields);
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(fields, i);
        if (json_object_is_type(p, json_type_array) && json_object_array_length(p) == 2 &&
            strcmp(json_object_get_string(json_object_array_get_idx(p, 0)), name) == 0)
            return json_object_array_get_idx(p, 1);
    }
    return NULL;
}

static int get_u64(json_object *fields, const char *name, uint64_t max, uint64_t *out)
{
    json_object *v = field(fields, name);
    if (!v || !json_object_is_type(v, json_type_string))
        return rl_error_set(RL_EPARSE, "field %s: missing or not a string", name);
    const char *s = json_object_get_string(v);
    char *end = NULL;
    unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || x > max)
        return rl_error_set(RL_EPARSE, "field %s: '%s' is not an integer <= %llu", name, s,
                            (unsigned long long)max);
    *out = x;
    return RL_OK;
}

static int get_str(json_object *fields, const char *name, rl_mcap_bytes *out)
{
    json_object *v = field(fields, name);
    if (!v || !json_object_is_type(v, json_type_string))
        return rl_error_set(RL_EPARSE, "field %s: missing or not a string", name);
    out->data = (const uint8_t *)json_object_get_string(v);
    out->len = (size_t)json_object_get_string_len(v);
    return RL_OK;
}

/* Byte arrays are decoded into `buf` (freed by the caller). */
static int get_data(json_object *fields, const char *name, uint8_t **buf, rl_mcap_bytes *out)
{
    json_object *v = field(fields, name);
    if (!v || !json_object_is_type(v, json_type_array))
        return rl_error_set(RL_EPARSE, "field %s: missing or not an array", name);
    size_t n = json_object_array_length(v);
    *buf = malloc(n ? n : 1);
    if (!*buf)
        return rl_error_set(RL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(v, i));
        char *end = NULL;
        unsigned long x = s ? strtoul(s, &end, 10) : 256;
        if (!s || !*s || *end || x > 255)
            return rl_error_set(RL_EPARSE, "field %s: element %zu is not a byte", name, i);
        (*buf)[i] = (uint8_t)x;
    }
    out->data = *buf;
    out->len = n;
    return RL_OK;
}

/* A string map object into kv pairs (malloc'd, caller frees), in the object's order. */
static int get_kv(json_object *fields, const char *name, rl_mcap_kv **kv, size_t *count)
{
    json_object *v = field(fields, name);
    if (!v || !json_object_is_type(v, json_type_object))
        return rl_error_set(RL_EPARSE, "field %s: missing or not an object", name);
    size_t n = (size_t)json_object_object_length(v);
    *kv = calloc(n ? n : 1, sizeof **kv);
    if (!*kv)
        return rl_error_set(RL_ENOMEM, "out of memory");
    size_t i = 0;
    json_object_object_foreach(v, key, val)
    {
        (*kv)[i].key.data = (const uint8_t *)key;
        (*kv)[i].key.len = strlen(key);
        (*kv)[i].value.data = (const uint8_t *)json_object_get_string(val);
        (*kv)[i].value.len = (size_t)json_object_get_string_len(val);
        i++;
    }
    *count = n;
    return RL_OK;
}

static int has_feature(json_object *features, const char *code)
{
    size_t n = features ? json_object_array_length(features) : 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(features, i)), code) == 0)
            return 1;
    return 0;
}

static int write_one(rl_mcap_writer *w, const char *type, json_object *fields)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;
    uint8_t *buf = NULL;
    rl_mcap_kv *kv = NULL;
    int rc = RL_OK;
    if (strcmp(type, "Schema") == 0) {
        rl_mcap_schema s;
        memset(&s, 0, sizeof s);
        if ((rc = get_u64(fields, "id", 65535, &a)) == RL_OK &&
            (rc = get_str(fields, "name", &s.name)) == RL_OK &&
            (rc = get_str(fields, "encoding", &s.encoding)) == RL_OK &&
            (rc = get_data(fields, "data", &buf, &s.data)) == RL_OK) {
            s.id = (uint16_t)a;
            rc = rl_mcap_writer_add_schema(w, &s);
        }
    } else if (strcmp(type, "Channel") == 0) {
        rl_mcap_channel ch;
        memset(&ch, 0, sizeof ch);
        if ((rc = get_u64(fields, "id", 65535, &a)) == RL_OK &&
            (rc = get_u64(fields, "schema_id", 65535, &b)) == RL_OK &&
            (rc = get_str(fields, "topic", &ch.topic)) == RL_OK &&
            (rc = get_str(fields, "message_encoding", &ch.message_encoding)) == RL_OK &&
            (rc = get_kv(fields, "metadata", &kv, &ch.metadata_kv_count)) == RL_OK) {
            ch.id = (uint16_t)a;
            ch.schema_id = (uint16_t)b;
            ch.metadata_kv = kv;
            rc = rl_mcap_writer_add_channel(w, &ch);
        }
    } else if (strcmp(type, "Message") == 0) {
        rl_mcap_message m;
        memset(&m, 0, sizeof m);
        if ((rc = get_u64(fields, "channel_id", 65535, &a)) == RL_OK &&
            (rc = get_u64(fields, "sequence", UINT32_MAX, &b)) == RL_OK &&
            (rc = get_u64(fields, "log_time", UINT64_MAX, &c)) == RL_OK &&
            (rc = get_u64(fields, "publish_time", UINT64_MAX, &d)) == RL_OK &&
            (rc = get_data(fields, "data", &buf, &m.data)) == RL_OK) {
            m.channel_id = (uint16_t)a;
            m.sequence = (uint32_t)b;
            m.log_time = c;
            m.publish_time = d;
            rc = rl_mcap_writer_add_message(w, &m);
        }
    } else if (strcmp(type, "Attachment") == 0) {
        rl_mcap_attachment at;
        memset(&at, 0, sizeof at);
        if ((rc = get_u64(fields, "log_time", UINT64_MAX, &at.log_time)) == RL_OK &&
            (rc = get_u64(fields, "create_time", UINT64_MAX, &at.create_time)) == RL_OK &&
            (rc = get_str(fields, "name", &at.name)) == RL_OK &&
            (rc = get_str(fields, "media_type", &at.media_type)) == RL_OK &&
            (rc = get_data(fields, "data", &buf, &at.data)) == RL_OK)
            rc = rl_mcap_writer_add_attachment(w, &at);
    } else if (strcmp(type, "Metadata") == 0) {
        rl_mcap_metadata md;
        memset(&md, 0, sizeof md);
        if ((rc = get_str(fields, "name", &md.name)) == RL_OK &&
            (rc = get_kv(fields, "metadata", &kv, &md.metadata_kv_count)) == RL_OK) {
            md.metadata_kv = kv;
            rc = rl_mcap_writer_add_metadata(w, &md);
        }
    }
    free(buf);
    free(kv);
    if (rc < 0)
        rl_error_prefix(rc, "%s record", type);
    return rc;
}

static int write_file(const char *path)
{
    json_object *root = NULL;
    int rc = rl_json_read_file(path, (size_t)256 << 20, &root);
    if (rc < 0)
        return rc;
    json_object *records = NULL, *meta = NULL, *variant = NULL, *features = NULL;
    json_object_object_get_ex(root, "records", &records);
    if (json_object_object_get_ex(root, "meta", &meta) &&
        json_object_object_get_ex(meta, "variant", &variant))
        json_object_object_get_ex(variant, "features", &features);
    if (!root || !records || !json_object_is_type(records, json_type_array)) {
        json_object_put(root);
        return rl_error_set(RL_EPARSE, "%s: no records array", path);
    }
    /* Every optional feature off, no compression, data CRC on; then the variant's codes. */
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.compression = RL_MCAP_COMPRESSION_NONE;
    o.message_index = has_feature(features, "mx");
    o.chunk_index = has_feature(features, "chx");
    o.use_chunks = has_feature(features, "ch") || o.message_index || o.chunk_index;
    o.statistics = has_feature(features, "st");
    o.repeated_schemas = has_feature(features, "rsh");
    o.repeated_channels = has_feature(features, "rch");
    o.attachment_index = has_feature(features, "ax");
    o.metadata_index = has_feature(features, "mdx");
    o.summary_offsets = has_feature(features, "sum");

    rl_mcap_writer *w = NULL;
    int closed = 0;
    size_t n = json_object_array_length(records);
    for (size_t i = 0; i < n && rc == RL_OK && !closed; i++) {
        json_object *rec = json_object_array_get_idx(records, i);
        json_object *type = NULL, *fields = NULL;
        if (!json_object_object_get_ex(rec, "type", &type) ||
            !json_object_object_get_ex(rec, "fields", &fields) ||
            !json_object_is_type(fields, json_type_array)) {
            rc = rl_error_set(RL_EPARSE, "%s: record %zu: no type or fields", path, i);
            break;
        }
        const char *t = json_object_get_string(type);
        if (strcmp(t, "Header") == 0) {
            rl_mcap_bytes profile, library;
            if ((rc = get_str(fields, "profile", &profile)) < 0 ||
                (rc = get_str(fields, "library", &library)) < 0)
                break;
            o.profile = (const char *)profile.data;
            o.library = (const char *)library.data;
            rc = rl_mcap_writer_open_fd(&w, STDOUT_FILENO, &o);
        } else if (strcmp(t, "DataEnd") == 0) {
            rc = w ? rl_mcap_writer_close(w) : rl_error_set(RL_EPARSE, "DataEnd before Header");
            w = NULL;
            closed = 1;
        } else if (!w) {
            rc = rl_error_set(RL_EPARSE, "%s: record %zu (%s) before the Header", path, i, t);
        } else {
            rc = write_one(w, t, fields);
        }
    }
    if (rc == RL_OK && !closed)
        rc = rl_error_set(RL_EPARSE, "%s: no DataEnd record", path);
    rl_mcap_writer_free(w);
    json_object_put(root);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr,
                "usage: %s read-streamed FILE.mcap | read-indexed FILE.mcap | write FILE.json\n",
                argv[0]);
        return 2;
    }
    const char *cmd = argv[1], *path = argv[2];
    int rc;
    if (strcmp(cmd, "write") == 0) {
        rc = write_file(path);
    } else if (strcmp(cmd, "read-streamed") == 0 || strcmp(cmd, "read-indexed") == 0) {
        rl_json_writer *w = NULL;
        rc = rl_json_writer_new_file(&w, stdout, RL_JSON_COMPACT);
        if (rc == RL_OK)
            rc = cmd[5] == 's' ? read_streamed(path, w) : read_indexed(path, w);
        if (rc == RL_OK)
            rc = rl_json_writer_finish(w);
        rl_json_writer_free(w);
    } else {
        fprintf(stderr, "%s: unknown command '%s'\n", argv[0], cmd);
        return 2;
    }
    if (rc < 0) {
        fprintf(stderr, "mcap-conformance: %s: %s\n", path, rl_error_last());
        return 1;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "mcap-conformance: write error on stdout\n");
        return 1;
    }
    return 0;
}
