/* An anti-aliased stroker for the paths that dominate drawing PNG figures: long, solid
 * polylines, opaque or translucent, with round caps and joins (data series, trajectories).
 * A pixel's coverage is that of a band of the stroke's width at the distance of the pixel's
 * centre from the polyline, taken once over the union of all segments, so the inside of a
 * stroke gets exactly the colour cairo paints and only the anti-aliased rim differs. */
#include "analysis/plot_internal.h"

#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Columns x0..x1 of row y that may hold coverage. */
typedef struct span {
    int y, x0, x1;
} span;

struct rl_stroker {
    int w, h;
    uint8_t *cov; /* w x h coverage of the polyline being drawn, 0 outside it */
    span *spans;  /* where cov may be non-zero (a loop's rows are mostly empty inside) */
    size_t nspans, cap_spans;
    bool oom;
};

int rl_stroker_new(rl_stroker **out, int w, int h)
{
    *out = NULL;
    if (w <= 0 || h <= 0)
        return rl_error_set(RL_EINVAL, "plot: stroker of %dx%d pixels", w, h);
    rl_stroker *s = calloc(1, sizeof *s);
    if (!s)
        return rl_error_set(RL_ENOMEM, "plot: out of memory");
    s->w = w;
    s->h = h;
    s->cov = calloc((size_t)w * (size_t)h, 1);
    if (!s->cov) {
        rl_stroker_free(s);
        return rl_error_set(RL_ENOMEM, "plot: out of memory for a %dx%d stroker", w, h);
    }
    *out = s;
    return RL_OK;
}

void rl_stroker_free(rl_stroker *s)
{
    if (!s)
        return;
    free(s->cov);
    free(s->spans);
    free(s);
}

/* The clip in whole pixels (the rows and columns with any coverage). */
typedef struct pixclip {
    double x0, y0, x1, y1; /* device pixels, fractional */
    int c0, c1, r0, r1;    /* first and last column and row inside */
} pixclip;

/* min and max that compile to one instruction (fminf and fmaxf are calls: their NaN rules). */
static inline float min_f(float a, float b)
{
    return a < b ? a : b;
}

static inline float max_f(float a, float b)
{
    return a > b ? a : b;
}

/* Keeps the larger of a pixel's coverage and c (0..1; the union of segments). */
static inline void put_coverage(uint8_t *cov, float c)
{
    c = min_f(max_f(c, 0), 1);
    uint8_t v = (uint8_t)(c * 255 + 0.5f);
    *cov = v > *cov ? v : *cov;
}

static void add_span(rl_stroker *s, int y, int x0, int x1)
{
    if (s->nspans == s->cap_spans) {
        size_t cap = s->cap_spans ? 2 * s->cap_spans : 1024;
        span *p = realloc(s->spans, cap * sizeof *p);
        if (!p) {
            s->oom = true; /* composite() goes over the whole clip */
            return;
        }
        s->spans = p;
        s->cap_spans = cap;
    }
    s->spans[s->nspans++] = (span){y, x0, x1};
}

/* ceil(v) and floor(v) limited to lo..hi (NaN: lo), without libm calls. */
static inline int ceil_in(double v, int lo, int hi)
{
    if (!(v > lo))
        return lo;
    if (v >= hi)
        return hi;
    int i = (int)v;
    return i < v ? i + 1 : i;
}

static inline int floor_in(double v, int lo, int hi)
{
    if (!(v > lo))
        return lo;
    if (v >= hi)
        return hi;
    return (int)v;
}

/* Adds one segment's coverage (the maximum with what is there: the union). Along the
 * segment the distance to it is that to its line, linear along a row; only past its ends is
 * it the distance to an end point. */
static void segment(rl_stroker *s, const pixclip *pc, double ax, double ay, double bx, double by,
                    double r)
{
    if (!isfinite(ax) || !isfinite(ay) || !isfinite(bx) || !isfinite(by))
        return;
    double reach = r + 0.5; /* farthest a covered pixel centre can be */
    double dx = bx - ax, dy = by - ay, len = sqrt(dx * dx + dy * dy);
    double xmin = (ax < bx ? ax : bx) - reach, xmax = (ax < bx ? bx : ax) + reach;
    double ymin = (ay < by ? ay : by) - reach, ymax = (ay < by ? by : ay) + reach;
    if (xmax < pc->c0 || xmin > pc->c1 + 1 || ymax < pc->r0 || ymin > pc->r1 + 1)
        return;
    double ux = len > 0 ? dx / len : 1, uy = len > 0 ? dy / len : 0; /* along; normal (-uy, ux) */
    float fr = (float)r, flen = (float)len, fux = (float)ux, fuy = (float)uy;
    float inv_ux = fux != 0 ? 1 / fux : 0;
    int y0 = ceil_in(ymin - 0.5, pc->r0, pc->r1 + 1), y1 = floor_in(ymax - 0.5, pc->r0 - 1, pc->r1);
    /* The stroke lies within `reach` of the segment's line: on a row, within half_row of
     * where the line crosses it. */
    double half_row = dy != 0 ? reach * len / fabs(dy) : 0, slope = dy != 0 ? dx / dy : 0;
    for (int y = y0; y <= y1; y++) {
        double yc = y + 0.5, xlo = xmin, xhi = xmax;
        if (dy != 0) {
            double xc = ax + (yc - ay) * slope;
            xlo = xc - half_row > xlo ? xc - half_row : xlo;
            xhi = xc + half_row < xhi ? xc + half_row : xhi;
        }
        int x0 = ceil_in(xlo - 0.5, pc->c0, pc->c1 + 1), x1 = floor_in(xhi - 0.5, pc->c0 - 1, pc->c1);
        if (x0 > x1)
            continue;
        /* Pixel k of the row (x0 + k) lies `along` the segment and `across` it; for k_in <=
         * k < k_out, 0 <= along <= len and the nearest point is inside the segment, else an
         * end. */
        int n = x1 - x0 + 1, k_in = 0, k_out = n;
        float py = (float)(yc - ay), px0 = (float)(x0 + 0.5 - ax);
        float along0 = px0 * fux + py * fuy, across0 = py * fux - px0 * fuy;
        if (fux != 0) {
            float a0 = -along0 * inv_ux, a1 = (flen - along0) * inv_ux;
            k_in = ceil_in(a0 < a1 ? a0 : a1, 0, n);
            k_out = floor_in(a0 < a1 ? a1 : a0, -1, n - 1) + 1;
        } else if (!(along0 >= 0 && along0 <= flen)) {
            k_out = 0;
        }
        if (k_out < k_in)
            k_in = k_out = 0;
        uint8_t *row = s->cov + (size_t)y * (size_t)s->w + x0;
        for (int k = 0; k < n; k++) {
            if (k == k_in && k_in < k_out) {
                for (; k < k_out; k++) {
                    float d = fabsf(across0 - (float)k * fuy);
                    put_coverage(row + k, min_f(d + fr, 0.5f) - max_f(d - fr, -0.5f));
                }
                if (k >= n)
                    break;
            }
            float px = px0 + (float)k, along = along0 + (float)k * fux;
            float t = min_f(max_f(along, 0), flen), ex = px - t * fux, ey = py - t * fuy;
            float d = sqrtf(ex * ex + ey * ey);
            put_coverage(row + k, min_f(d + fr, 0.5f) - max_f(d - fr, -0.5f));
        }
        add_span(s, y, x0, x1);
    }
}

/* pixman's x * a / 255, rounded. */
static uint32_t mul_un8(uint32_t x, uint32_t a)
{
    uint32_t t = x * a + 0x80;
    return ((t >> 8) + t) >> 8;
}

/* mul_un8 on the four channels of a pixel at once, two per 32-bit lane. */
static inline uint32_t mul_un8x4(uint32_t x, uint32_t a)
{
    uint32_t rb = (x & 0x00FF00FFu) * a + 0x00800080u;
    rb = ((rb + ((rb >> 8) & 0x00FF00FFu)) >> 8) & 0x00FF00FFu;
    uint32_t ag = ((x >> 8) & 0x00FF00FFu) * a + 0x00800080u;
    ag = (ag + ((ag >> 8) & 0x00FF00FFu)) & 0xFF00FF00u;
    return rb | ag;
}

/* Channel-wise x + y, saturated at 255 (pixman's UN8x4_ADD_UN8x4). */
static inline uint32_t add_un8x4(uint32_t x, uint32_t y)
{
    uint32_t rb = (x & 0x00FF00FFu) + (y & 0x00FF00FFu);
    rb = (rb | (0x01000100u - ((rb >> 8) & 0x00010001u))) & 0x00FF00FFu;
    uint32_t ag = ((x >> 8) & 0x00FF00FFu) + ((y >> 8) & 0x00FF00FFu);
    ag = (ag | (0x01000100u - ((ag >> 8) & 0x00010001u))) & 0x00FF00FFu;
    return rb | (ag << 8);
}

/* How much of pixel column (or row) i the clip interval [lo, hi] covers, 0..255. */
static uint32_t clip_cover(int i, double lo, double hi)
{
    double c = fmin(i + 1.0, hi) - fmax((double)i, lo);
    return c >= 1 ? 255 : c <= 0 ? 0 : (uint32_t)(c * 255 + 0.5);
}

/* Paints the coverage of columns x0..x1 of row y in `argb` (premultiplied, opaque or
 * translucent) over the image (as cairo's OVER with a mask) and clears it. */
static void composite_span(rl_stroker *s, const pixclip *pc, unsigned char *data, int stride,
                           uint32_t argb, int y, int x0, int x1)
{
    uint8_t *cov = s->cov + (size_t)y * (size_t)s->w;
    uint32_t *px = (uint32_t *)(void *)(data + (size_t)y * (size_t)stride);
    uint32_t ycov = clip_cover(y, pc->y0, pc->y1);
    for (int x = x0; x <= x1; x++) {
        uint32_t m = cov[x];
        if (m == 0)
            continue;
        cov[x] = 0;
        if (ycov < 255)
            m = mul_un8(m, ycov);
        if (x == pc->c0 || x == pc->c1)
            m = mul_un8(m, clip_cover(x, pc->x0, pc->x1));
        if (m == 255 && argb >> 24 == 255) {
            px[x] = argb;
            continue;
        }
        /* OVER with a mask, as pixman: the source times the mask, plus the image times
           one minus that product's alpha (255 - m for an opaque colour). */
        uint32_t src = m == 255 ? argb : mul_un8x4(argb, m);
        px[x] = add_un8x4(src, mul_un8x4(px[x], 255 - (src >> 24)));
    }
}

/* Paints and clears the polyline's coverage. Spans overlap where segments meet: a pixel is
 * painted at its first visit, which clears it. Without the list of spans (out of memory),
 * the whole clip. */
static void composite(rl_stroker *s, const pixclip *pc, unsigned char *data, int stride,
                      uint32_t argb)
{
    if (s->oom) {
        for (int y = pc->r0; y <= pc->r1; y++)
            composite_span(s, pc, data, stride, argb, y, pc->c0, pc->c1);
    } else {
        for (size_t i = 0; i < s->nspans; i++)
            composite_span(s, pc, data, stride, argb, s->spans[i].y, s->spans[i].x0,
                           s->spans[i].x1);
    }
    s->nspans = 0;
    s->oom = false;
}

void rl_stroker_polyline(rl_stroker *s, unsigned char *data, int stride, const double *xy,
                         size_t n, double width, uint32_t argb, const double clip[4])
{
    pixclip pc = {fmax(clip[0], 0), fmax(clip[1], 0), fmin(clip[2], s->w), fmin(clip[3], s->h),
                  0, 0, 0, 0};
    if (!(pc.x1 > pc.x0 && pc.y1 > pc.y0) || n == 0 || !(width > 0))
        return;
    pc.c0 = (int)floor(pc.x0);
    pc.c1 = (int)ceil(pc.x1) - 1;
    pc.r0 = (int)floor(pc.y0);
    pc.r1 = (int)ceil(pc.y1) - 1;
    double r = width / 2;
    for (size_t i = 0; i + 1 < n; i++)
        segment(s, &pc, xy[2 * i], xy[2 * i + 1], xy[2 * i + 2], xy[2 * i + 3], r);
    composite(s, &pc, data, stride, argb);
}
