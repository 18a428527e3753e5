/* Internal text utilities of the library (not public API): a growable byte buffer for
 * generated text, strict UTF-8 decoding, and checked array growth. One copy of each, used
 * by the JSON/YAML/CSV writers, the OMPL formats, perflog and the plot/report writers. */
#ifndef RUNLAB_SRC_CORE_TEXT_H
#define RUNLAB_SRC_CORE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A growable NUL-terminated byte buffer. Zero-initialise it ({0}); errors are sticky: after
 * the first failure (RL_ENOMEM, message set) further appends do nothing and `err` says so. */
typedef struct rl_buf {
    char *data;
    size_t len, cap;
    int err;
} rl_buf;

void rl_buf_put(rl_buf *b, const char *s, size_t n);
void rl_buf_puts(rl_buf *b, const char *s);
void rl_buf_putc(rl_buf *b, char c);
void rl_buf_printf(rl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the NUL-terminated contents to the caller (free()) and empties the buffer; NULL
 * (and the buffer freed) when an append had failed. */
char *rl_buf_take(rl_buf *b, size_t *len);
void rl_buf_free(rl_buf *b);

/* Decodes one UTF-8 sequence at `s` (`len` > 0 bytes available). Returns its length
 * (1..4) and the code point in `*cp`, or 0 when the first byte does not start a valid
 * sequence: overlong forms, surrogates (U+D800..U+DFFF), values above U+10FFFF and
 * truncated sequences are all invalid. */
size_t rl_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* Appends code point `cp` (at most U+10FFFF, not a surrogate: the caller checks) as
 * UTF-8. */
void rl_buf_put_utf8(rl_buf *b, uint32_t cp);

/* Makes room for `need` elements of `elem` bytes in *arr (capacity *cap, doubled as
 * needed), refusing sizes whose byte count would overflow. `what` names the array in the
 * message. RL_OK, RL_ERANGE or RL_ENOMEM. */
int rl_grow_array(void **arr, size_t *cap, size_t need, size_t elem, const char *what);

/* The shortest decimal that reads back to the same finite double, spelled as printf's %g
 * would spell it ("0.1", "1e+300", "-0"), NUL-terminated in buf (32 bytes suffice);
 * returns the length. Ryū (number_ryu.c); locale-independent and thread-safe. The one
 * formatter behind rl_format_f64 and the message JSON. */
size_t rl_shortest_f64(double v, char *buf);

/* The same for a finite float: the shortest %g text (at most 9 significant digits) that
 * reads back to the same float, NUL-terminated in buf (32 bytes suffice); returns the
 * length. Written and read back in number.c's C locale, so '.' whatever LC_NUMERIC the
 * application chose; thread-safe. The message JSON's float32 values. */
size_t rl_shortest_f32(float v, char *buf);

#endif
