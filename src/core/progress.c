/* Progress bar and plain progress lines behind runlab/progress.h. Redraws are limited
 * by a monotonic clock so callers may report every unit; the ETA is the elapsed time
 * scaled by the remaining fraction, the estimate that needs no tuning. */
#include "runlab/progress.h"

#include "runlab/error.h"
#include "runlab/time.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BAR_WIDTH = 30, NOTE_MAX = 48 };

struct rl_progress {
    FILE *out;
    char label[32];
    char note[NOTE_MAX + 1];
    uint64_t total;
    uint64_t done;
    bool tty;
    int64_t start_ns;
    int64_t last_draw_ns;
    int last_decile; /* plain mode: last 10% step printed */
};

int rl_progress_new(rl_progress **out, FILE *stream, const char *label, uint64_t total,
                    int force_tty)
{
    rl_progress *p = calloc(1, sizeof *p);
    if (!p)
        return rl_error_set(RL_ENOMEM, "progress: out of memory");
    p->out = stream;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "items");
    p->total = total;
    p->tty = force_tty < 0 ? isatty(fileno(stream)) != 0 : force_tty != 0;
    p->start_ns = rl_mono_ns();
    p->last_draw_ns = 0;
    p->last_decile = -1;
    *out = p;
    return RL_OK;
}

void rl_progress_format_duration(double seconds, char *buf, size_t cap)
{
    if (!(seconds >= 0) || seconds > 359999) {
        snprintf(buf, cap, "--");
        return;
    }
    long s = (long)(seconds + 0.5);
    if (s < 60)
        snprintf(buf, cap, "%lds", s);
    else if (s < 3600)
        snprintf(buf, cap, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, cap, "%ldh%02ldm", s / 3600, s / 60 % 60);
}

static void draw(rl_progress *p, int64_t now, bool final)
{
    double elapsed = (double)(now - p->start_ns) / 1e9;
    /* A rate over the first instants (a few microseconds for the first unit) is noise:
     * "--/s" until a fifth of a second has passed, except in the final line. */
    char rate[32] = "--/s";
    if (elapsed >= 0.2 || (final && elapsed > 0))
        snprintf(rate, sizeof rate, "%.1f/s", (double)p->done / elapsed);
    char el[16], eta[16];
    rl_progress_format_duration(elapsed, el, sizeof el);
    if (p->total && p->done > 0 && p->done < p->total && elapsed >= 0.2)
        rl_progress_format_duration(elapsed * (double)(p->total - p->done) / (double)p->done, eta,
                                    sizeof eta);
    else
        snprintf(eta, sizeof eta, final ? "0s" : "--");

    if (p->tty) {
        char bar[BAR_WIDTH + 1];
        int filled = p->total ? (int)((double)BAR_WIDTH * (double)p->done / (double)p->total) : 0;
        if (filled > BAR_WIDTH)
            filled = BAR_WIDTH;
        for (int i = 0; i < BAR_WIDTH; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[BAR_WIDTH] = '\0';
        if (p->total)
            fprintf(p->out, "\r\033[K[%s] %llu/%llu %s  %s  elapsed %s  ETA %s  %s", bar,
                    (unsigned long long)p->done, (unsigned long long)p->total, p->label, rate,
                    el, eta, p->note);
        else
            fprintf(p->out, "\r\033[K%llu %s  %s  elapsed %s  %s",
                    (unsigned long long)p->done, p->label, rate, el, p->note);
        if (final)
            fputc('\n', p->out);
    } else {
        if (p->total)
            fprintf(p->out, "progress: %llu/%llu %s (%d%%), elapsed %s, ETA %s%s%s\n",
                    (unsigned long long)p->done, (unsigned long long)p->total, p->label,
                    (int)(100.0 * (double)p->done / (double)p->total), el, eta,
                    p->note[0] ? ", " : "", p->note);
        else
            fprintf(p->out, "progress: %llu %s, elapsed %s%s%s\n", (unsigned long long)p->done,
                    p->label, el, p->note[0] ? ", " : "", p->note);
    }
    fflush(p->out);
    p->last_draw_ns = now;
}

void rl_progress_update(rl_progress *p, uint64_t done, const char *note)
{
    if (!p)
        return;
    if (done > p->done)
        p->done = done;
    if (note)
        snprintf(p->note, sizeof p->note, "%s", note);
    int64_t now = rl_mono_ns();
    if (p->tty) {
        if (now - p->last_draw_ns >= 100000000LL)
            draw(p, now, false);
        return;
    }
    /* Plain output: one line per 10% of a known total, or every 10 s when unknown. */
    if (p->total) {
        int decile = (int)(10.0 * (double)p->done / (double)p->total);
        if (decile > p->last_decile && decile < 10) {
            p->last_decile = decile;
            draw(p, now, false);
        }
    } else if (now - p->last_draw_ns >= 10000000000LL) {
        draw(p, now, false);
    }
}

void rl_progress_finish(rl_progress *p)
{
    if (!p)
        return;
    draw(p, rl_mono_ns(), true);
    free(p);
}
