/* runlab/msgdef.h: message schemas — ROS 2 `.msg`/`.srv` text ("ros2msg") and OMG IDL
 * ("omgidl") — parsed into one type model, and the CDR decoder driven by that model
 * (XCDR1 and XCDR2, both byte orders, final/appendable/mutable types): a visitor that
 * allocates nothing per message, typed access by field path, and canonical JSON. */
#ifndef RUNLAB_MSGDEF_H
#define RUNLAB_MSGDEF_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Type model ------------------------------------------------------------------------
 * A parsed schema is a table of types; types refer to each other by index. The primitive
 * kinds (RL_MSG_BOOL .. RL_MSG_WSTRING) always sit at the index equal to their kind, so
 * `type == RL_MSG_FLOAT64` is "a float64". Typedefs are resolved away; IDL struct
 * inheritance is flattened (inherited members first). */
typedef enum rl_msg_kind {
    RL_MSG_BOOL = 1,
    RL_MSG_OCTET, /* ros2msg `byte`, IDL `octet` */
    RL_MSG_CHAR,  /* ros2msg `char` (an unsigned byte), IDL `char` */
    RL_MSG_INT8,
    RL_MSG_UINT8,
    RL_MSG_INT16,
    RL_MSG_UINT16,
    RL_MSG_INT32,
    RL_MSG_UINT32,
    RL_MSG_INT64,
    RL_MSG_UINT64,
    RL_MSG_FLOAT32,
    RL_MSG_FLOAT64,
    RL_MSG_STRING,  /* unbounded; bounded strings are types of their own with `bound` */
    RL_MSG_WSTRING,
    RL_MSG_ENUM,     /* members are the enumerators (name, value) */
    RL_MSG_STRUCT,   /* members are the fields */
    RL_MSG_UNION,    /* `elem` is the discriminator type; members are the cases */
    RL_MSG_ARRAY,    /* fixed length `bound`, elements of type `elem` */
    RL_MSG_SEQUENCE  /* at most `bound` elements (0: unbounded) of type `elem` */
} rl_msg_kind;

/* Extensibility of a struct or union. DEFAULT (every ros2msg type) takes the kind the
 * payload's encapsulation header declares (CDR/CDR2: final, D_CDR2: appendable,
 * PL_CDR/PL_CDR2: mutable). An omgidl type never has DEFAULT: without an annotation it is
 * FINAL, as Cyclone's idlc makes it, or what @default_extensibility(...) of its innermost
 * annotated module says; a derived struct without one has its base's. */
typedef enum rl_msg_ext {
    RL_MSG_EXT_DEFAULT = 0,
    RL_MSG_EXT_FINAL,
    RL_MSG_EXT_APPENDABLE,
    RL_MSG_EXT_MUTABLE
} rl_msg_ext;

/* A struct field, a union case or an enumerator. */
typedef struct rl_msg_member {
    const char *name;
    uint32_t type;             /* index in the type table (unused for enumerators) */
    uint32_t id;               /* member id: @id, else the position (mutable types) */
    bool optional, key;        /* @optional, @key */
    bool hidden; /* read but never reported: the uint8 rosidl puts in an empty message */
    const char *default_value; /* ros2msg default / IDL @default, as written; NULL if none */
    const int64_t *labels;     /* union case labels */
    size_t nlabels;
    bool is_default_case; /* union `default:` */
    int64_t value;        /* enumerator value */
} rl_msg_member;

/* A constant (`int32 X=5`, IDL `const long X = 5;`), its value as written. */
typedef struct rl_msg_constant {
    const char *name;
    uint32_t type;
    const char *value;
} rl_msg_constant;

typedef struct rl_msg_type {
    rl_msg_kind kind;
    const char *name; /* struct/enum/union: full name ("geometry_msgs/Pose", "a::b::T") */
    uint32_t bound;   /* string: max length; array: length; sequence: max count; 0 none */
    uint32_t elem;    /* array/sequence: element type; union: discriminator type */
    rl_msg_ext ext;
    bool inner_dim; /* array that is an inner dimension of a multi-dimensional array */
    const rl_msg_member *members;
    size_t nmembers;
    const rl_msg_constant *constants;
    size_t nconstants;
} rl_msg_type;

typedef struct rl_msgdef rl_msgdef;

/* ---- Encodings -----------------------------------------------------------------------
 * One table (src/formats/msg/msg_codec.c) says which (schema encoding, message encoding)
 * pairs runlab decodes and with what: today ros2msg/cdr and omgidl/cdr ("ros2idl" is
 * refused). Every reader asks it instead of comparing strings; docs/msgdef.md "Adding an
 * encoding". Codecs are static and immutable: any thread may use them, nothing to free. */
#define RL_SCHEMA_ENCODING_ROS2MSG "ros2msg"
#define RL_SCHEMA_ENCODING_OMGIDL "omgidl"
#define RL_MESSAGE_ENCODING_CDR "cdr"

typedef struct rl_msg_codec rl_msg_codec;

/* The codec for the pair, or NULL with RL_EUNSUPPORTED set (rl_error_last names both
 * encodings, non-printable bytes as \xNN, and the supported pairs). NULL encodings count
 * as "". The _bytes form takes MCAP's length-counted strings. */
RL_API const rl_msg_codec *rl_msg_codec_find(const char *schema_encoding, const char *message_encoding);
RL_API const rl_msg_codec *rl_msg_codec_find_bytes(const void *schema_encoding, size_t schema_len,
                                            const void *message_encoding, size_t message_len);
RL_API const char *rl_msg_codec_schema_encoding(const rl_msg_codec *codec);
RL_API const char *rl_msg_codec_message_encoding(const rl_msg_codec *codec);
/* True for the pairs the MCAP ros2 profile allows and runlab decodes (ros2msg/cdr). */
RL_API bool rl_msg_codec_ros2_profile(const rl_msg_codec *codec);
/* The supported pairs for messages: "ros2msg/cdr, omgidl/cdr". Static. */
RL_API const char *rl_msg_codec_supported(void);
/* Parses a schema with the codec's parser (as rl_msgdef_parse, which is this with the
 * codec for (encoding, "cdr")); payloads then decode with rl_msg_decode and friends.
 * RL_EINVAL for a NULL codec. */
RL_API int rl_msg_codec_parse(const rl_msg_codec *codec, rl_msgdef **out, const char *name,
                       const char *text, size_t len);

/* Parses a schema as MCAP stores it: `encoding` "ros2msg" (also "ros2idl" is refused as
 * unsupported) or "omgidl"; `name` is the schema name (the root type: "pkg/msg/Type",
 * "a::b::T"); `text` need not be NUL-terminated. ros2msg names ending in `_Event` whose
 * text is a service (`---` separator) give the rosbag2 service event type.
 * Errors (RL_EPARSE) name the schema, the line and column and what was expected;
 * RL_EUNSUPPORTED for other encodings. The result is immutable and may be shared by
 * threads. Free with rl_msgdef_free. */
RL_API int rl_msgdef_parse(rl_msgdef **out, const char *encoding, const char *name, const char *text,
                    size_t len);
RL_API void rl_msgdef_free(rl_msgdef *def);

/* The type table: rl_msgdef_type(def, i) for i < rl_msgdef_type_count(def), NULL past
 * it. The root (the schema's message type) is rl_msgdef_root(def). */
RL_API size_t rl_msgdef_type_count(const rl_msgdef *def);
RL_API const rl_msg_type *rl_msgdef_type(const rl_msgdef *def, uint32_t index);
RL_API uint32_t rl_msgdef_root(const rl_msgdef *def);
/* IDL module-level constants ("a::b::MAX"), in declaration order; ros2msg constants
 * belong to their message type (rl_msg_type.constants). */
RL_API const rl_msg_constant *rl_msgdef_constants(const rl_msgdef *def, size_t *count);
/* Index of the named struct/enum/union, or RL_ENOENT. */
RL_API int rl_msgdef_find(const rl_msgdef *def, const char *name, uint32_t *index);

/* Normalised text of the schema: every struct, enum and union reachable from the root,
 * dependencies first, one member per line ("float64[36] covariance"). Caller frees. */
RL_API int rl_msgdef_format(const rl_msgdef *def, char **out);

/* ---- Decoding ------------------------------------------------------------------------
 * Payloads are CDR with the 4-byte encapsulation header. Every length and count is
 * checked against the bytes left; a malformed payload is RL_EPARSE (RL_ETRUNCATED when it
 * ends early) with a message naming the field path and the byte offset (from the start
 * of the payload, header included). Decoding never allocates and is thread-safe. */

typedef struct rl_msg_value {
    rl_msg_kind kind; /* the primitive kind; RL_MSG_ENUM for enums (in `i`) */
    union {
        bool b;
        int64_t i;  /* signed kinds, enums */
        uint64_t u; /* unsigned kinds, octet, char */
        double f;   /* float32 (widened exactly) and float64 */
        struct {
            const char *ptr; /* into the payload; not NUL-terminated. wstring: the raw
                                UTF-16 code units (validated), read them as UTF-8 with
                                rl_msg_wstring_utf8 */
            size_t len;      /* bytes */
            unsigned char wunit; /* wstring: bytes per code unit (2, or 4 for ros2msg) */
            bool wbig_endian;    /* wstring: the code units' byte order */
        } s;
    } v;
} rl_msg_value;

typedef enum rl_msg_event {
    RL_MSG_VALUE = 1,   /* a primitive, string or enum value */
    RL_MSG_BEGIN_STRUCT,/* a struct or union starts (unions: "_d" comes first as a VALUE) */
    RL_MSG_END_STRUCT,
    RL_MSG_BEGIN_ARRAY, /* an array or sequence starts; `count` elements follow */
    RL_MSG_END_ARRAY,
    RL_MSG_ABSENT,      /* an optional member that is not present (JSON null) */
    RL_MSG_VALUES       /* only with RL_MSG_DECODE_ARRAYS: all the elements of an array or
                           sequence of primitives at once, between its BEGIN_ARRAY and
                           END_ARRAY (also when it is empty) */
} rl_msg_event;

typedef struct rl_msg_visit {
    rl_msg_event event;
    const char *path; /* "pose.position.x", "points[3].x"; NUL-terminated, valid during the
                         call only; "" for the root */
    size_t path_len;
    const char *name; /* the member's name, or NULL for an array element and the root */
    size_t index;     /* the element index when `name` is NULL */
    const rl_msg_type *type;
    size_t count;       /* BEGIN_ARRAY, VALUES: element count */
    rl_msg_value value; /* VALUE; VALUES: only value.kind, the elements' kind */
    /* VALUES: the `count` elements as they lie in the payload — packed, each of the CDR
     * size of value.kind (bool, octet, char, int8, uint8: 1; 16-bit: 2; 32-bit and float32:
     * 4; 64-bit and float64: 8), in the payload's byte order (`big_endian`), and not
     * necessarily aligned in memory. Read them with rl_msg_values_get / rl_msg_values_f64
     * (or memcpy and swap). `path`, `name` and `index` are the array's own, `type` the
     * element type. Valid during the call only. */
    const uint8_t *elems;
    bool big_endian;
} rl_msg_visit;

/* Called for every event; return 0 to go on, > 0 to stop decoding (rl_msg_decode then
 * returns that value), < 0 to fail with that code. */
typedef int (*rl_msg_visit_fn)(void *ctx, const rl_msg_visit *v);

/* Walks the payload with the schema's root type, in declaration order. Returns RL_OK
 * after the whole message, the visitor's positive value when it stopped early, or a
 * negative status. */
RL_API int rl_msg_decode(const rl_msgdef *def, const uint8_t *data, size_t len, rl_msg_visit_fn fn,
                  void *ctx);

/* Options of rl_msg_decode_flags (or-ed). */
enum {
    /* Arrays and sequences of primitives (bool .. float64; not strings or enums) come as
     * BEGIN_ARRAY, one RL_MSG_VALUES event pointing at all their elements, END_ARRAY,
     * instead of one VALUE per element: a visitor reading a covariance or a point cloud
     * handles it in one call, and one that wants none of it pays nothing per element. */
    RL_MSG_DECODE_ARRAYS = 1u << 0
};

/* rl_msg_decode with options (flags 0: the same). Unknown flags are RL_EINVAL. */
RL_API int rl_msg_decode_flags(const rl_msgdef *def, const uint8_t *data, size_t len, unsigned flags,
                        rl_msg_visit_fn fn, void *ctx);

/* Element i of a VALUES event, as a VALUE event for it would carry it. RL_ERANGE when
 * i >= v->count, RL_EINVAL when v is not a VALUES event. Thread-safe. */
RL_API int rl_msg_values_get(const rl_msg_visit *v, size_t i, rl_msg_value *out);

/* Elements [first, first + n) of a VALUES event as doubles (integers converted, bool 0/1);
 * returns how many were written (n, fewer at the end of the array, 0 when v is not a
 * VALUES event). Thread-safe. */
RL_API size_t rl_msg_values_f64(const rl_msg_visit *v, size_t first, double *out, size_t n);

/* Canonical JSON of the payload into *buf (capacity *cap, grown with realloc; the caller
 * keeps and frees it, so a loop allocates only while messages grow): 64-bit integers
 * exact, floats shortest (float32 as float32), "NaN"/"Infinity"/"-Infinity", enums and
 * char/byte/octet as numbers, unions as {"_d": d, "<case>": v}, absent optionals null.
 * *out_len is the length without the terminating NUL. */
RL_API int rl_msg_to_json(const rl_msgdef *def, const uint8_t *data, size_t len, char **buf,
                   size_t *cap, size_t *out_len);

/* ---- Field paths ---------------------------------------------------------------------
 * "pose.pose.position.x", "transforms[0].header.stamp.sec", "ranges[10]": compiled once
 * per schema, then read from many payloads, skipping what lies before the field. */
typedef struct rl_msg_path rl_msg_path;

/* Compiles `path` against the root type; it must end at a primitive, string or enum.
 * RL_ENOENT names the first part that does not exist; RL_EINVAL for bad syntax. The
 * compiled path refers to `def`, which must outlive it. Free with rl_msg_path_free. */
RL_API int rl_msg_path_compile(rl_msg_path **out, const rl_msgdef *def, const char *path);
RL_API void rl_msg_path_free(rl_msg_path *path);
/* Reads the field from one payload. RL_ENOENT when an index is past a sequence's length
 * or an optional member / union case on the way is absent. Thread-safe, no allocation. */
RL_API int rl_msg_path_get(const rl_msg_path *path, const uint8_t *data, size_t len,
                    rl_msg_value *out);

/* A wstring value (kind RL_MSG_WSTRING) as UTF-8: writes up to cap - 1 bytes and a NUL to
 * out (when cap > 0) and returns the full UTF-8 length, so a first call with cap 0 sizes
 * the buffer. A string value is copied as it is. Thread-safe. */
RL_API size_t rl_msg_wstring_utf8(const rl_msg_value *v, char *out, size_t cap);

/* The value as a double (integers converted, bool 0/1); RL_EINVAL for strings. */
RL_API int rl_msg_value_f64(const rl_msg_value *v, double *out);

/* One-shot convenience: compile `path`, read it as a double, free. */
RL_API int rl_msg_get_f64(const rl_msgdef *def, const uint8_t *data, size_t len, const char *path,
                   double *out);

/* ---- Extraction: many fields in one pass ------------------------------------------------
 * A list of field paths compiled once per schema, then read from each payload in one walk
 * (shared prefixes read once, fields no path needs skipped, the walk stops after the last
 * needed field): what an analysis reading a few fields of millions of messages wants. Each
 * value equals what rl_msg_path_get gives for the same path. A path may read every element
 * of one sequence or array with "[]" ("trajectory_points[].px"): the element callback then
 * sees each element's values in turn. */
typedef struct rl_msg_extract rl_msg_extract;

/* One path's value in one payload. */
typedef struct rl_msg_field {
    bool present;       /* false: the schema lacks the path, or this payload does not hold it
                           (index past a sequence's length, optional member or union case
                           absent: where rl_msg_path_get says RL_ENOENT) */
    rl_msg_value value; /* when present: exactly as rl_msg_path_get (64-bit integers exact) */
    double f;           /* when present: rl_msg_value_f64 of it; NaN for strings and absent */
} rl_msg_field;

/* Compiles `npaths` paths (syntax as rl_msg_path_compile, plus "[]") against `def`, which
 * must outlive the result. A path the schema lacks does not fail the compilation: it is
 * never present, and rl_msg_extract_status gives its reason (so data recorded with an
 * older message set is still read as far as its fields go). Paths with "[]" must all name
 * the same sequence, only once each, and that sequence may not also be read by index
 * (RL_EUNSUPPORTED for the path otherwise). Fails only with RL_EINVAL (NULL arguments) or
 * RL_ENOMEM. The result is immutable: one extraction may run on many threads at once.
 * Free with rl_msg_extract_free. */
RL_API int rl_msg_extract_compile(rl_msg_extract **out, const rl_msgdef *def, const char *const *paths,
                           size_t npaths);
RL_API void rl_msg_extract_free(rl_msg_extract *ex);
/* The number of paths given to rl_msg_extract_compile. */
RL_API size_t rl_msg_extract_count(const rl_msg_extract *ex);
/* RL_OK when path i compiled; else the error rl_msg_path_compile gives for it (RL_ENOENT: the
 * schema lacks it, RL_EINVAL: bad syntax) or RL_EUNSUPPORTED, with its message in *why
 * (owned by the extraction). */
RL_API int rl_msg_extract_status(const rl_msg_extract *ex, size_t i, const char **why);

/* Called after each element of the "[]" sequence with `fields`, whose "[]" paths then hold
 * that element's values. Return 0 to go on, > 0 to stop (rl_msg_extract_run returns it),
 * < 0 to fail with that code. */
typedef int (*rl_msg_element_fn)(void *ctx, size_t index, const rl_msg_field *fields);

/* Reads every compiled path from one payload into fields[0 .. count) (the caller's array;
 * "[]" paths end with the last element's values). `each` may be NULL. Returns RL_OK, the
 * callback's stop value, or a malformed payload's error as rl_msg_path_get gives it
 * (RL_EPARSE / RL_ETRUNCATED naming the field path and byte offset), after which `fields`
 * is partly filled. No allocation; thread-safe. */
RL_API int rl_msg_extract_run(const rl_msg_extract *ex, const uint8_t *data, size_t len,
                       rl_msg_field *fields, rl_msg_element_fn each, void *ctx);

/* ---- Tables ----------------------------------------------------------------------------
 * Messages as rows (runlab mcap export): one column per leaf field named by its full path
 * ("pose.pose.position.x", "covariance[0]"); fixed arrays of up to RL_MSG_MAX_EXPANDED
 * elements are expanded, longer ones, sequences and unions are one column holding their
 * canonical JSON text. */
enum { RL_MSG_MAX_EXPANDED = 1024 };

/* The column names of the root type; free with rl_msg_columns_free. */
RL_API int rl_msg_columns(const rl_msgdef *def, char ***names, size_t *count);
RL_API void rl_msg_columns_free(char **names, size_t count);

/* One decoded row: cell i is buf[offsets[i] .. offsets[i + 1]) — numbers as in the JSON,
 * strings raw, absent members empty. Zero-initialise, reuse for many payloads, then
 * rl_msg_row_free. */
typedef struct rl_msg_row {
    char *buf;
    size_t cap;
    size_t *offsets; /* ncols + 1 entries */
    size_t ncols;
} rl_msg_row;
RL_API int rl_msg_row_decode(const rl_msgdef *def, const uint8_t *data, size_t len, rl_msg_row *row);
RL_API void rl_msg_row_free(rl_msg_row *row);

/* ---- Encoding ----------------------------------------------------------------------------
 * CDR from a JSON value in the canonical form rl_msg_to_json writes (numbers, "NaN" /
 * "Infinity" strings, enums as numbers or enumerator names, unions as {"_d": d, "<case>":
 * v}, absent optionals as null or left out), so tests, simulators and users can write
 * correctly encoded messages without generated code: decode(encode(v)) == v. */

/* Encapsulation kinds (the representation identifier of the 4-byte header). */
enum {
    RL_CDR_BE = 0, RL_CDR_LE = 1, RL_PL_CDR_BE = 2, RL_PL_CDR_LE = 3,
    RL_CDR2_BE = 6, RL_CDR2_LE = 7, RL_D_CDR2_BE = 8, RL_D_CDR2_LE = 9,
    RL_PL_CDR2_BE = 10, RL_PL_CDR2_LE = 11
};

struct json_object;
/* Encodes `value` (a json-c object) with the schema's root type. *out is malloc'd (caller
 * frees), *len its size. Errors (RL_EINVAL) name the field path and what is wrong: a
 * missing member, a value out of the field's range, a string or sequence over its bound,
 * an array of the wrong length. The kind sets byte order, XCDR version and the
 * extensibility of ros2msg types (an omgidl type has its own; the caller picks a kind that
 * fits the root's: CDR/CDR2 for final, D_CDR2 appendable, PL_CDR/PL_CDR2 mutable).
 * Thread-safe. */
RL_API int rl_msg_encode_json(const rl_msgdef *def, struct json_object *value, int kind, uint8_t **out,
                       size_t *len);
/* The same from JSON text. */
RL_API int rl_msg_encode_json_text(const rl_msgdef *def, const char *json, size_t json_len, int kind,
                            uint8_t **out, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
