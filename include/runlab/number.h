/* runlab/number.h: numbers as text, the same in every file runlab writes (CSV, JSON,
 * YAML): the shortest decimal that reads back to the same double, and parsing, both
 * independent of the process's LC_NUMERIC (a comma decimal separator would corrupt
 * every file). */
#ifndef RUNLAB_NUMBER_H
#define RUNLAB_NUMBER_H

#include "runlab/export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Formats `v` in the shortest decimal form (printf %g style) that strtod reads back to the
 * same bits, -0 included; NaN as "nan", infinities as "inf" / "-inf". 32 bytes always
 * suffice. Returns the length; like snprintf it truncates to `cap` - 1 bytes and returns
 * the full length. Thread-safe. */
RL_API size_t rl_format_f64(double v, char *buf, size_t cap);

/* strtod in the C locale, whatever LC_NUMERIC the application set. Thread-safe. */
RL_API double rl_parse_f64(const char *s, char **end);

/* A fast exact reader of plain decimals ([+-]digits[.digits][(e|E)[+-]digits], at least one
 * digit) and of "nan" and "inf" (any case, optional sign), for bulk loading. Reads the
 * longest such prefix of [s, end) and returns a pointer just past it with the value in
 * *out, bit-identical to what rl_parse_f64 returns for the same text. Returns NULL, leaving
 * *out alone, when the text does not start with a plain decimal, when a hexadecimal prefix
 * follows ("0x"), for "nan(...)" and "infinity", or when the value cannot be decided
 * exactly here (more than 19 significant digits, a decimal exponent beyond +-27, or beyond
 * +-22 over 2^53 on a compiler without 128-bit integers): the caller then calls
 * rl_parse_f64. Never reads at or past `end`. Thread-safe, no allocation. */
RL_API const char *rl_scan_decimal(const char *s, const char *end, double *out);

#ifdef __cplusplus
}
#endif
#endif
