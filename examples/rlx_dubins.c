/* Dubins curves for rlx's car problems: the shortest path of a car that drives forward only
 * with a bounded turning radius is one of six words of arcs (L, R) and lines (S) (Dubins
 * 1957); the closed forms follow Shkel and Lumelsky's classification. */
#include "rlx_internal.h"

#include <math.h>
#include <string.h>

/* a in [0, 2 pi); a hair below 2 pi is 0 (rounding of a zero-length arc), since no
 * shortest curve turns a full circle. */
static double mod2pi(double a)
{
    double r = fmod(a, 2 * M_PI);
    r = r < 0 ? r + 2 * M_PI : r;
    return r > 2 * M_PI - 1e-9 ? 0 : r;
}

/* Rounding can put a word that joins the ends exactly (a lone arc, a lone line) just out
 * of its domain; a shorter word lost that way would make the curve to a point on another
 * curve a needless loop. */
#define TOL 1e-9

/* One word's segment lengths (in units of rho) for normalized distance d and angles a, b
 * relative to the line joining the ends; false when the word cannot join them. */
static bool word(int w, double d, double a, double b, double seg[3])
{
    double sa = sin(a), sb = sin(b), ca = cos(a), cb = cos(b), cab = cos(a - b), tmp, p;
    switch (w) {
    case 0: /* LSL */
        tmp = 2 + d * d - 2 * cab + 2 * d * (sa - sb);
        if (tmp < -TOL)
            return false;
        tmp = fmax(tmp, 0);
        if (tmp < 1e-12) { /* one circle: a lone arc (the line's direction is noise) */
            seg[0] = mod2pi(b - a), seg[1] = seg[2] = 0;
            return true;
        }
        p = atan2(cb - ca, d + sa - sb);
        seg[0] = mod2pi(p - a), seg[1] = sqrt(tmp), seg[2] = mod2pi(b - p);
        return true;
    case 1: /* RSR */
        tmp = 2 + d * d - 2 * cab + 2 * d * (sb - sa);
        if (tmp < -TOL)
            return false;
        tmp = fmax(tmp, 0);
        if (tmp < 1e-12) {
            seg[0] = mod2pi(a - b), seg[1] = seg[2] = 0;
            return true;
        }
        p = atan2(ca - cb, d - sa + sb);
        seg[0] = mod2pi(a - p), seg[1] = sqrt(tmp), seg[2] = mod2pi(p - b);
        return true;
    case 2: /* LSR */
        tmp = -2 + d * d + 2 * cab + 2 * d * (sa + sb);
        if (tmp < -TOL)
            return false;
        tmp = fmax(tmp, 0);
        seg[1] = sqrt(tmp);
        p = atan2(-ca - cb, d + sa + sb) - atan2(-2, seg[1]);
        seg[0] = mod2pi(p - a), seg[2] = mod2pi(p - mod2pi(b));
        return true;
    case 3: /* RSL */
        tmp = d * d - 2 + 2 * cab - 2 * d * (sa + sb);
        if (tmp < -TOL)
            return false;
        tmp = fmax(tmp, 0);
        seg[1] = sqrt(tmp);
        p = atan2(ca + cb, d - sa - sb) - atan2(2, seg[1]);
        seg[0] = mod2pi(a - p), seg[2] = mod2pi(b - p);
        return true;
    case 4: /* RLR */
        tmp = (6 - d * d + 2 * cab + 2 * d * (sa - sb)) / 8;
        if (fabs(tmp) > 1 + TOL)
            return false;
        tmp = fmax(-1, fmin(1, tmp));
        seg[1] = mod2pi(2 * M_PI - acos(tmp));
        seg[0] = mod2pi(a - atan2(ca - cb, d - sa + sb) + seg[1] / 2);
        seg[2] = mod2pi(a - b - seg[0] + seg[1]);
        return true;
    default: /* LRL */
        tmp = (6 - d * d + 2 * cab + 2 * d * (sb - sa)) / 8;
        if (fabs(tmp) > 1 + TOL)
            return false;
        tmp = fmax(-1, fmin(1, tmp));
        seg[1] = mod2pi(2 * M_PI - acos(tmp));
        seg[0] = mod2pi(-a - atan2(ca - cb, d + sa - sb) + seg[1] / 2);
        seg[2] = mod2pi(mod2pi(b) - a - seg[0] + seg[1]);
        return true;
    }
}

void rlx_dubins_shortest(const double *a, const double *b, double rho, rlx_dubins *out)
{
    static const char *const WORDS[] = {"LSL", "RSR", "LSR", "RSL", "RLR", "LRL"};
    double dx = b[0] - a[0], dy = b[1] - a[1], d = hypot(dx, dy) / rho;
    double phi = d > 0 ? atan2(dy, dx) : 0;
    double alpha = mod2pi(a[2] - phi), beta = mod2pi(b[2] - phi);
    memcpy(out->start, a, sizeof out->start);
    out->rho = rho;
    if (d < 1e-12 && fabs(remainder(b[2] - a[2], 2 * M_PI)) < 1e-12) {
        memset(out->seg, 0, sizeof out->seg); /* the same state: no motion, not a loop */
        memcpy(out->word, "LSL", 4);
        return;
    }
    double best = INFINITY;
    for (int w = 0; w < 6; w++) {
        double seg[3];
        if (!word(w, d, alpha, beta, seg))
            continue;
        double len = seg[0] + seg[1] + seg[2];
        if (len < best) {
            best = len;
            memcpy(out->seg, seg, sizeof seg);
            memcpy(out->word, WORDS[w], 4);
        }
    }
}

double rlx_dubins_length(const rlx_dubins *d)
{
    return (d->seg[0] + d->seg[1] + d->seg[2]) * d->rho;
}

void rlx_dubins_at(const rlx_dubins *d, double s, double *q)
{
    double t = fmax(0, s / d->rho), x = 0, y = 0, th = d->start[2]; /* normalized units */
    for (int i = 0; i < 3 && t > 0; i++) {
        double u = fmin(t, d->seg[i]);
        t -= u;
        if (d->word[i] == 'L') {
            x += sin(th + u) - sin(th), y += cos(th) - cos(th + u), th += u;
        } else if (d->word[i] == 'R') {
            x += sin(th) - sin(th - u), y += cos(th - u) - cos(th), th -= u;
        } else {
            x += u * cos(th), y += u * sin(th);
        }
    }
    q[0] = d->start[0] + x * d->rho;
    q[1] = d->start[1] + y * d->rho;
    q[2] = mod2pi(th + M_PI) - M_PI;
}
