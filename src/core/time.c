/* UTC timestamps and the monotonic clock behind runlab/time.h.
 * Calendar conversion is done by hand (days-from-civil) rather than with timegm/gmtime,
 * so it is exact for every year 0..9999 and independent of the process's TZ. */
#include "runlab/time.h"

#include "runlab/error.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t rl_time_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t rl_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

struct civil {
    int64_t year;
    int month, day, hour, minute, second;
    int64_t nanos;
};

static int split_ns(int64_t ns, struct civil *c)
{
    int64_t secs = ns / 1000000000LL;
    int64_t nanos = ns % 1000000000LL;
    if (nanos < 0) {
        nanos += 1000000000LL;
        secs -= 1;
    }
    int64_t days = secs / 86400;
    int64_t rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    civil_from_days(days, &c->year, &c->month, &c->day);
    c->hour = (int)(rem / 3600);
    c->minute = (int)(rem % 3600 / 60);
    c->second = (int)(rem % 60);
    c->nanos = nanos;
    if (c->year < 0 || c->year > 9999)
        return rl_error_set(RL_ERANGE, "time %lld ns: year %lld outside 0000..9999",
                            (long long)ns, (long long)c->year);
    return RL_OK;
}

static int finish_format(int n, size_t cap)
{
    if (n < 0 || (size_t)n >= cap)
        return rl_error_set(RL_ERANGE, "time format: buffer of %zu bytes too small", cap);
    return RL_OK;
}

int rl_time_format_iso(int64_t ns, char *buf, size_t cap)
{
    struct civil c;
    int rc = split_ns(ns, &c);
    if (rc < 0)
        return rc;
    return finish_format(snprintf(buf, cap, "%04lld-%02d-%02dT%02d:%02d:%02d.%09lldZ",
                                  (long long)c.year, c.month, c.day, c.hour, c.minute,
                                  c.second, (long long)c.nanos),
                         cap);
}

int rl_time_format_compact(int64_t ns, char *buf, size_t cap)
{
    struct civil c;
    int rc = split_ns(ns, &c);
    if (rc < 0)
        return rc;
    return finish_format(snprintf(buf, cap, "%04lld%02d%02dT%02d%02d%02dZ", (long long)c.year,
                                  c.month, c.day, c.hour, c.minute, c.second),
                         cap);
}

int rl_time_format_dirstamp(int64_t ns, char *buf, size_t cap)
{
    struct civil c;
    int rc = split_ns(ns, &c);
    if (rc < 0)
        return rc;
    return finish_format(snprintf(buf, cap, "%04lld%02d%02d_%02d%02d%02d", (long long)c.year,
                                  c.month, c.day, c.hour, c.minute, c.second),
                         cap);
}

/* Reads exactly `n` decimal digits at text[*pos]. */
static int digits(const char *text, size_t *pos, int n, int64_t *out)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        char ch = text[*pos];
        if (ch < '0' || ch > '9')
            return -1;
        v = v * 10 + (ch - '0');
        (*pos)++;
    }
    *out = v;
    return 0;
}

static int expect(const char *text, size_t *pos, char ch)
{
    if (text[*pos] != ch)
        return -1;
    (*pos)++;
    return 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

int rl_time_parse_iso(const char *text, int64_t *out_ns)
{
    size_t pos = 0;
    int64_t year, month, day, hour, minute, second, nanos = 0;
    const char *what = "expected YYYY-mm-ddTHH:MM:SS[.fraction]Z";
    if (digits(text, &pos, 4, &year) || expect(text, &pos, '-') ||
        digits(text, &pos, 2, &month) || expect(text, &pos, '-') ||
        digits(text, &pos, 2, &day) || (expect(text, &pos, 'T') && expect(text, &pos, 't')) ||
        digits(text, &pos, 2, &hour) || expect(text, &pos, ':') ||
        digits(text, &pos, 2, &minute) || expect(text, &pos, ':') ||
        digits(text, &pos, 2, &second))
        goto bad;
    if (text[pos] == '.') {
        pos++;
        int n = 0;
        while (text[pos] >= '0' && text[pos] <= '9') {
            if (n == 9) {
                what = "more than 9 fraction digits";
                goto bad;
            }
            nanos = nanos * 10 + (text[pos] - '0');
            pos++;
            n++;
        }
        if (n == 0) {
            what = "no digits after '.'";
            goto bad;
        }
        for (; n < 9; n++)
            nanos *= 10;
    }
    int64_t offset_s = 0;
    if (text[pos] == 'Z' || text[pos] == 'z') {
        pos++;
    } else if (text[pos] == '+' || text[pos] == '-') {
        int sign = text[pos] == '-' ? -1 : 1;
        pos++;
        int64_t oh, om;
        if (digits(text, &pos, 2, &oh) || expect(text, &pos, ':') || digits(text, &pos, 2, &om) ||
            oh > 23 || om > 59) {
            what = "bad UTC offset, expected +HH:MM";
            goto bad;
        }
        offset_s = sign * (oh * 3600 + om * 60);
    } else {
        what = "missing time zone (Z or +HH:MM)";
        goto bad;
    }
    if (text[pos] != '\0') {
        what = "trailing characters";
        goto bad;
    }
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, (int)month) ||
        hour > 23 || minute > 59 || second > 60) {
        pos = 0;
        what = "date or time field out of range";
        goto bad;
    }
    /* years 0000..9999 fit in seconds; nanoseconds in int64 only from 1677-09-21T00:12:43.145224192Z
     * to 2262-04-11T23:47:16.854775807Z */
    int64_t secs = days_from_civil(year, (int)month, (int)day) * 86400 + hour * 3600 +
                   minute * 60 + second - offset_s;
    const int64_t max_s = INT64_MAX / 1000000000LL, max_ns = INT64_MAX % 1000000000LL;
    const int64_t min_s = INT64_MIN / 1000000000LL - 1, min_ns = 1000000000LL + INT64_MIN % 1000000000LL;
    if (secs > max_s || (secs == max_s && nanos > max_ns) || secs < min_s ||
        (secs == min_s && nanos < min_ns))
        return rl_error_set(RL_ERANGE,
                            "timestamp '%s': out of the range of 64-bit nanoseconds "
                            "(1677-09-21T00:12:43.145224192Z .. 2262-04-11T23:47:16.854775807Z)",
                            text);
    /* at min_s, secs * 1e9 alone would overflow: one second less, a second more of nanos */
    *out_ns = secs == min_s ? (secs + 1) * 1000000000LL + (nanos - 1000000000LL)
                            : secs * 1000000000LL + nanos;
    return RL_OK;
bad:
    return rl_error_set(RL_EPARSE, "timestamp '%s': byte %zu: %s", text, pos, what);
}
