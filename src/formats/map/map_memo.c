/* A memo for testing many footprints of one size against a map (rl_map_inside_memo): a
 * vehicle that laps a circuit puts its footprint on the same grid cells at the same yaw
 * lap after lap, and wherever every box near such a pose lies in cells the lanelets cover
 * wholly, the answer is known without walking the footprint's edges again. */
#include "formats/map/map_internal.h"

#include "runlab/error.h"

#include <math.h>
#include <stdlib.h>

/* Yaw bins over a half turn (a rectangle is the same turned by pi), a quarter degree wide,
 * and bins of a box's centre, SUB x SUB per grid cell. The finer, the less a slot's box is
 * grown and the more boxes near the lanes' edges it fits (the lab's lanes fit its cars
 * closely), but the more slots are new. 3 x 3 took the fewest instructions on bench_eval's
 * recording (0.50 G for lanelet_collision's footprints, against 0.56 G with 2 x 2 or 4 x 4
 * and 1.06 G without the memo). */
enum { YAW_BINS = 720, SUB = 3 };
/* Slots of the memo's table at most (16 MiB of keys): beyond, new poses are walked, not
 * remembered, so a run of any length keeps the memo bounded. */
enum { MAX_SLOTS = 1u << 21, FIRST_SLOTS = 1u << 12 };

/* A slot: 0 empty, else (key << 1 | whole) with key = (centre bin * YAW_BINS + yaw bin) + 1. */
struct rl_map_inside_memo {
    const rl_map *map;
    double length, width;
    double margin; /* how far a box of the slot's poses lies from the slot's own box */
    uint64_t *slots;
    size_t nslots, used;
    bool full; /* at MAX_SLOTS and three quarters used: remember nothing more */
};

int rl_map_inside_memo_new(const rl_map *map, double length, double width,
                           rl_map_inside_memo **out)
{
    *out = NULL;
    if (!map || !(length > 0) || !(width > 0) || !isfinite(length) || !isfinite(width))
        return rl_error_set(RL_EINVAL, "rl_map_inside_memo_new: no map or a box of %g x %g m",
                            length, width);
    rl_map_inside_memo *m = calloc(1, sizeof *m);
    uint64_t *slots = calloc(FIRST_SLOTS, sizeof *slots);
    if (!m || !slots) {
        free(m);
        free(slots);
        return rl_error_set(RL_ENOMEM, "map: out of memory for a footprint memo");
    }
    m->map = map;
    m->length = length;
    m->width = width;
    m->slots = slots;
    m->nslots = FIRST_SLOTS;
    /* A pose whose centre lies anywhere in the slot's centre bin (up to half the bin's
     * diagonal from its middle) at a yaw within half a yaw bin of the bin's middle: every
     * point of its box lies within this of the slot's box (the centre's offset plus the
     * turn of a corner about the centre). */
    double half_diag = 0.5 * hypot(length, width), bin = M_PI / YAW_BINS;
    m->margin = map->h->cell / SUB * M_SQRT1_2 + half_diag * (bin / 2) + 1e-9;
    *out = m;
    return RL_OK;
}

void rl_map_inside_memo_free(rl_map_inside_memo *m)
{
    if (!m)
        return;
    free(m->slots);
    free(m);
}

static size_t slot_of(uint64_t key, size_t nslots)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (nslots - 1);
}

/* The slot holding key, or the empty one where it would go. */
static uint64_t *find(const rl_map_inside_memo *m, uint64_t key)
{
    size_t i = slot_of(key, m->nslots);
    while (m->slots[i] && (m->slots[i] >> 1) != key)
        i = (i + 1) & (m->nslots - 1);
    return &m->slots[i];
}

/* Doubles the table; false when it may not grow (then nothing more is remembered). */
static bool grow(rl_map_inside_memo *m)
{
    if (m->nslots >= MAX_SLOTS)
        return false;
    size_t n = m->nslots * 2;
    uint64_t *slots = calloc(n, sizeof *slots), *old = m->slots;
    if (!slots)
        return false;
    size_t old_n = m->nslots;
    m->slots = slots;
    m->nslots = n;
    for (size_t i = 0; i < old_n; i++)
        if (old[i])
            *find(m, old[i] >> 1) = old[i];
    free(old);
    return true;
}

static inline double min_d(double a, double b)
{
    return a < b ? a : b;
}

static inline double max_d(double a, double b)
{
    return a > b ? a : b;
}

/* Whether every grid cell that the convex quadrilateral q overlaps is wholly drivable; false
 * when q leaves the grid. Row by row of cells: the part of q within the row's band of y
 * spans from the least to the largest x of its corners in the band and of its edges'
 * crossings of the band's two lines. Along a row, a cell of depth k (every cell within k - 1
 * of it wholly drivable) vouches for the k - 1 cells after it. */
static bool quad_in_whole_cells(const rl_map *map, const rl_map_point q[4])
{
    const rlmap_header *h = map->h;
    double inv = map->inv_cell, u[4], v[4];
    double vmin = INFINITY, vmax = -INFINITY;
    for (int i = 0; i < 4; i++) {
        u[i] = (q[i].x - h->grid_x0) * inv;
        v[i] = (q[i].y - h->grid_y0) * inv;
        vmin = min_d(vmin, v[i]);
        vmax = max_d(vmax, v[i]);
        if (!(u[i] >= 0 && u[i] < h->nx && v[i] >= 0 && v[i] < h->ny))
            return false;
    }
    for (long row = (long)vmin; row <= (long)vmax; row++) {
        double lo_v = max_d((double)row, vmin), hi_v = min_d((double)row + 1, vmax);
        double ulo = INFINITY, uhi = -INFINITY;
        for (int i = 0; i < 4; i++) {
            if (v[i] >= lo_v && v[i] <= hi_v) {
                ulo = min_d(ulo, u[i]);
                uhi = max_d(uhi, u[i]);
            }
            int j = (i + 1) & 3;
            double dv = v[j] - v[i];
            if (dv == 0)
                continue;
            for (int side = 0; side < 2; side++) {
                double line = side ? hi_v : lo_v, t = (line - v[i]) / dv;
                if (t >= 0 && t <= 1) {
                    double x = u[i] + t * (u[j] - u[i]);
                    ulo = min_d(ulo, x);
                    uhi = max_d(uhi, x);
                }
            }
        }
        if (!(ulo <= uhi))
            continue;
        const uint8_t *flags = map->cell_flags + (size_t)row * h->nx;
        long last = (long)uhi;
        for (long col = (long)ulo; col <= last;) {
            unsigned f = flags[col];
            if (!(f & (RLMAP_CELL_COVERED | RLMAP_CELL_IN_UNION)))
                return false;
            long depth = (long)(f >> RLMAP_DEPTH_SHIFT);
            col += depth > 1 ? depth : 1;
        }
    }
    return true;
}

bool rl_map_footprint_inside_memo(rl_map_inside_memo *m, const rl_map_box *b,
                                  double gap_tolerance)
{
    const rl_map *map = m->map;
    const rlmap_header *h = map->h;
    if (b->length != m->length || b->width != m->width || !isfinite(b->x) ||
        !isfinite(b->y) || !isfinite(b->yaw) || fabs(b->yaw) > 1e6)
        return rl_map_footprint_inside(map, b, gap_tolerance);
    double u = (b->x - h->grid_x0) * map->inv_cell, v = (b->y - h->grid_y0) * map->inv_cell;
    if (!(u >= 0 && u < h->nx && v >= 0 && v < h->ny))
        return rl_map_footprint_inside(map, b, gap_tolerance);
    /* The yaw's bin over a half turn, without fmod (|yaw| <= 1e6: the long holds it). */
    double turns = b->yaw * (1 / M_PI);
    long whole_turns = (long)turns;
    whole_turns -= turns < (double)whole_turns;
    long bin = (long)((turns - (double)whole_turns) * YAW_BINS);
    bin = bin < 0 ? 0 : bin >= YAW_BINS ? YAW_BINS - 1 : bin;
    uint64_t ix = (uint64_t)(u * SUB), iy = (uint64_t)(v * SUB);
    uint64_t key = ((iy * h->nx * SUB + ix) * YAW_BINS + (uint64_t)bin) + 1;
    uint64_t *slot = find(m, key);
    if (*slot)
        return (*slot & 1) ? true : rl_map_footprint_inside(map, b, gap_tolerance);
    /* The slot's box: centred on the cell at the bin's middle yaw, grown by the margin. */
    rl_map_box grown = {h->grid_x0 + ((double)ix + 0.5) * (h->cell / SUB),
                        h->grid_y0 + ((double)iy + 0.5) * (h->cell / SUB),
                        ((double)bin + 0.5) * (M_PI / YAW_BINS), m->length + 2 * m->margin,
                        m->width + 2 * m->margin};
    rl_map_point q[4];
    rl_map_box_corners(&grown, q);
    bool whole = quad_in_whole_cells(map, q);
    if (!m->full) {
        if (4 * (m->used + 1) > 3 * m->nslots && !grow(m))
            m->full = true;
        if (!m->full) {
            *find(m, key) = key << 1 | (whole ? 1u : 0u);
            m->used++;
        }
    }
    return whole ? true : rl_map_footprint_inside(map, b, gap_tolerance);
}
