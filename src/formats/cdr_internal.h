/* Internal interface of the CDR decoder (cdr.c), shared with the field-path reader
 * (msgpath.c) and the JSON writer (cdr_json.c): the decoder state and the steps that
 * open structs, unions, arrays and members one at a time. */
#ifndef RUNLAB_SRC_FORMATS_CDR_INTERNAL_H
#define RUNLAB_SRC_FORMATS_CDR_INTERNAL_H

#include "msgdef_internal.h"

#include <locale.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CDR_PATH_MAX = 512 };

typedef struct cdr_dec {
    const rl_msgdef *def;
    const uint8_t *buf;
    size_t pos, end; /* offsets in buf; end is the current limit (DHEADER, member) */
    size_t origin;   /* alignment origin */
    int be, v2;
    rl_msg_ext top_ext; /* extensibility the encapsulation header declares */
    int in_appendable;  /* members may be cut off by the enclosing DHEADER */
    int depth, stopped;
    rl_msg_visit_fn fn; /* NULL: skipping */
    void *ctx;
    size_t plen;
    char path[CDR_PATH_MAX]; /* must stay last: cdr_open clears what precedes it */
} cdr_dec;

/* A saved limit: DHEADER bodies, optional members' parameter headers. */
typedef struct cdr_frame {
    size_t end, origin, body_start, body_end; /* body_end SIZE_MAX: none */
} cdr_frame;

int cdr_open(cdr_dec *d, const rl_msgdef *def, const uint8_t *data, size_t len);
int cdr_fail(cdr_dec *d, int code, const char *what);
int cdr_read_prim(cdr_dec *d, rl_msg_kind k, rl_msg_value *out);
int cdr_read_leaf(cdr_dec *d, const rl_msg_type *ty, rl_msg_value *out);
size_t cdr_push_name(cdr_dec *d, const char *name);
size_t cdr_push_index(cdr_dec *d, size_t i);
void cdr_pop(cdr_dec *d, size_t saved);
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
/* Decodes a value of type t without reporting it (moves past it). */
int cdr_skip_value(cdr_dec *d, uint32_t t);

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
/* The C numeric locale on this thread while numbers are written (returns the old one for
 * cdr_c_numeric_leave); '.' as the decimal point whatever the application set. */
locale_t cdr_c_numeric_enter(void);
void cdr_c_numeric_leave(locale_t old);
/* The shortest text that reads back to the same finite double, spelled as printf's %g
 * spells it ("0.1", "1e+300", "-0"); 32 bytes suffice (cdr_double.c). Thread-safe. */
size_t cdr_format_f64(double v, char *buf);
/* Room for n more bytes and a NUL; RL_ENOMEM (sticky) otherwise. */
int cdr_json_reserve(cdr_json_out *j, size_t n);

#endif
