/* Internal interface of the CDR decoder (cdr.c), shared with the field-path reader
 * (msgpath.c) and the JSON writer (cdr_json.c): the decoder state and the steps that
 * open structs, unions, arrays and members one at a time. */
#ifndef RUNLAB_SRC_FORMATS_CDR_INTERNAL_H
#define RUNLAB_SRC_FORMATS_CDR_INTERNAL_H

#include "cdr_prim.h"
#include "msgdef_internal.h"

#include "runlab/error.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>


/* Checks the encapsulation header and sets the decoder up for a payload. */
int cdr_open(cdr_dec *d, const rl_msgdef *def, const uint8_t *data, size_t len);

/* A wstring (cdr_wstring.c): its length, bound and UTF-16 checked; the value points at
 * the code units. */
int cdr_read_wstring(cdr_dec *d, const rl_msg_type *ty, rl_msg_value *out);
/* Converts whole code points of a wstring value, from code unit *i on, to UTF-8 in out (at
 * most cap bytes, cap >= 4); returns the bytes written (0 at the end) and advances *i. */
size_t cdr_wstring_utf8_chunk(const rl_msg_value *v, size_t *i, char *out, size_t cap);
int cdr_read_leaf(cdr_dec *d, const rl_msg_type *ty, rl_msg_value *out);
rl_msg_ext cdr_ext(const cdr_dec *d, const rl_msg_type *ty);
int cdr_dheader(cdr_dec *d, cdr_frame *f);
void cdr_frame_close(cdr_dec *d, const cdr_frame *f);
int cdr_find_emheader(cdr_dec *d, size_t start, size_t end, uint32_t id, size_t *data,
                      size_t *size);
int cdr_find_param(cdr_dec *d, size_t start, uint32_t id, size_t *data, size_t *size,
                   size_t *after);
int cdr_member_enter(cdr_dec *d, const rl_msg_member *m, cdr_frame *f, int *present);
void cdr_member_leave(cdr_dec *d, const cdr_frame *f);
const rl_msg_member *cdr_union_case(const rl_msg_type *ty, int64_t disc);
int64_t cdr_value_as_i64(const rl_msg_value *v);
int cdr_union_begin(cdr_dec *d, const rl_msg_type *ty, cdr_frame *f, rl_msg_value *disc);
uint32_t cdr_innermost(const rl_msgdef *def, uint32_t t);
int cdr_array_begin(cdr_dec *d, const rl_msg_type *ty, cdr_frame *f, size_t *count);

/* The tree walker: decodes (and reports) a value of type t whose path is already pushed;
 * a member of a final or appendable struct (pushes its name, handles @optional). */
int cdr_decode_value(cdr_dec *d, uint32_t t, const char *name, size_t index);
int cdr_decode_member(cdr_dec *d, const rl_msg_member *m);
/* Decodes a value of type t without reporting it (moves past it). */
int cdr_skip_value(cdr_dec *d, uint32_t t);

/* The decoding plan of a schema (cdr_plan.c; struct cdr_plan is declared in
 * msgdef_internal.h): runs the root type for a payload whose encapsulation is final. */
int cdr_plan_run(cdr_dec *d, const cdr_plan *p);
/* rl_msg_decode without the plan: the tree walker alone (the reference the plan is tested
 * against). */
int cdr_decode_tree(const rl_msgdef *def, const uint8_t *data, size_t len, unsigned flags,
                    rl_msg_visit_fn fn, void *ctx);

/* The canonical JSON writer (cdr_json.c) as a visitor: appends to *buf (capacity *cap)
 * from `len` on; zero-initialise the rest. */
enum { CDR_JSON_MAX_DEPTH = 256 };
typedef struct cdr_json_out {
    char **buf;
    size_t *cap, len;
    int oom;
    int depth;
    unsigned char first[CDR_JSON_MAX_DEPTH];
} cdr_json_out;
int cdr_json_visit(void *ctx, const rl_msg_visit *v);
void cdr_json_put_value(cdr_json_out *j, const rl_msg_value *v);
/* Room for n more bytes and a NUL; RL_ENOMEM (sticky) otherwise. */
int cdr_json_reserve(cdr_json_out *j, size_t n);

#endif
