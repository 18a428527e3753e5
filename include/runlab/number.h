/* runlab/number.h: numbers as text, the same in every file runlab writes (CSV, JSON,
 * YAML): the shortest decimal that reads back to the same double, and parsing, both
 * independent of the process's LC_NUMERIC (a comma decimal separator would corrupt
 * every file). */
#ifndef RUNLAB_NUMBER_H
#define RUNLAB_NUMBER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Formats `v` in the shortest decimal form (printf %g style) that strtod reads back to the
 * same bits, -0 included; NaN as "nan", infinities as "inf" / "-inf". 32 bytes always
 * suffice. Returns the length; like snprintf it truncates to `cap` - 1 bytes and returns
 * the full length. Thread-safe. */
size_t rl_format_f64(double v, char *buf, size_t cap);

/* strtod in the C locale, whatever LC_NUMERIC the application set. Thread-safe. */
double rl_parse_f64(const char *s, char **end);

#ifdef __cplusplus
}
#endif
#endif
