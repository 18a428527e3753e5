/* Internal pieces of the map module (not public API): the runtime map's binary layout,
 * the open map, the readers' shared helpers (warnings, bound alignment, degenerate
 * checks) and the small planar geometry primitives every map file uses. */
#ifndef RUNLAB_SRC_FORMATS_MAP_INTERNAL_H
#define RUNLAB_SRC_FORMATS_MAP_INTERNAL_H

#include "runlab/map.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- Runtime map layout (version 2). Little-endian; every section 8-byte aligned, in
 * this order, sizes derived from the header's counts:
 *   header (256 bytes) | lanelets | points | links (u32) | cell starts (u32, cells+1) |
 *   cell entries (u32) | cell flags (u8) | cell extents (u16) | strings |
 *   boundary blocks (one per 64 cells) | boundary starts (u32, boundary cells+1) |
 *   local records | local edges (u32)
 * The CRC-32 covers everything after the header; the header has its own CRC.
 * Version 2 added the cell extents (the footprint walk's strides along the axes) and the
 * last four sections: for each boundary cell (not wholly drivable, listing lanelets), per
 * lanelet it lists, the polygon edges near the cell, so that the footprint test's exact
 * work there reads a few edges instead of whole polygons. */
#define RLMAP_MAGIC "RLMAP\r\n\x1a"
enum { RLMAP_VERSION = 2, RLMAP_HEADER_SIZE = 256 };
#define RLMAP_ENTRY_FULL    0x80000000u /* cell entry: the cell lies wholly in this lanelet */
#define RLMAP_CELL_COVERED  1u          /* cell flag: some lanelet covers the whole cell */
#define RLMAP_CELL_IN_UNION 2u          /* cell flag: the lanelets together cover the cell */
#define RLMAP_DEPTH_SHIFT   2           /* cell flags bits 2..7: the chessboard distance in cells */
#define RLMAP_DEPTH_MAX     63 /* to the nearest cell not wholly drivable (rlmap_compile.c) */
/* Cell extents: for a cell of depth k >= 1 (s = k - 1), four 4-bit codes, bits 0-3: +x,
 * 4-7: -x, 8-11: +y, 12-15: -y. Code c along +x says the rectangle from s cells left of
 * the cell to rlmap_extent_cells[c] cells right of it, s rows above and below, is wholly
 * drivable (the others alike); the extent is rounded down to the table, 0 when not above s. */
static inline int rlmap_extent_cells(unsigned code)
{
    static const uint8_t cells[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 32};
    return cells[code & 15];
}

typedef struct rlmap_header {
    char magic[8];
    uint32_t version, header_size;
    uint64_t file_size;
    uint32_t crc32, source_format;
    uint32_t projection, reserved0;
    double origin_lat, origin_lon;
    uint8_t source_sha256[32];
    double bbox[4];
    double area[4];
    double area_sum, area_union;
    double grid_x0, grid_y0, cell;
    uint32_t nx, ny;
    uint32_t num_lanelets, num_points;
    uint32_t num_links, num_entries;
    uint32_t strings_len, num_regulatory, num_areas, num_obstacles;
    uint32_t num_boundary_cells, num_local_records, num_local_edges;
    uint32_t reserved[2];
    uint32_t header_crc;
} rlmap_header;

typedef struct rlmap_lanelet {
    int64_t id;
    uint32_t flags, subtype; /* subtype: offset in strings */
    uint32_t left_off, left_n, right_off, right_n;
    uint32_t centre_off, centre_n, poly_off, poly_n;
    uint32_t succ_off, succ_n, pred_off, pred_n;
    int32_t adj_left, adj_right;
    double bbox[4];
    double area, start_width, end_width, length, speed_limit;
} rlmap_lanelet;

/* Which cells are boundary cells: bit k of block b is cell 64 b + k; `rank` counts the
 * boundary cells before the block, so a cell's number among them is rank + the bits below. */
typedef struct rlmap_cell_block {
    uint64_t bits;
    uint32_t rank, reserved;
} rlmap_cell_block;

/* One lanelet of a boundary cell (records follow the cell's entries' order): its polygon
 * edges near the cell (within RLMAP_LOCAL_MARGIN of it) plus those that may cross the
 * cell's rows to its right, each by the index of its end point (the edge runs from the
 * polygon point before it); `parity`: the even-odd count of the lanelet's other edges,
 * which is the same for every point of the cell. */
typedef struct rlmap_local {
    uint32_t first_edge;
    uint16_t num_edges;
    uint8_t parity, reserved;
} rlmap_local;

/* Metres: an edge this near a boundary cell is listed; more than the boundary tolerance
 * (1e-9 m), so every edge that could hold a point of the cell on it is there. */
#define RLMAP_LOCAL_MARGIN 1e-8

_Static_assert(sizeof(rlmap_header) == RLMAP_HEADER_SIZE, "runtime map header is 256 bytes");
_Static_assert(sizeof(rlmap_cell_block) == 16 && sizeof(rlmap_local) == 8,
               "boundary records keep 8-byte alignment");
_Static_assert(sizeof(rlmap_lanelet) % 8 == 0, "lanelet records keep 8-byte alignment");

struct rl_map {
    const uint8_t *bytes;
    size_t len;
    void *owned;  /* malloc'd bytes to free, or NULL */
    void *mapped; /* mmap'd region to unmap, or NULL */
    size_t mapped_len;
    const rlmap_header *h;
    const rlmap_lanelet *lanelets;
    const rl_map_point *points;
    const uint32_t *links, *cell_start, *entries;
    const uint8_t *cell_flags;
    const uint16_t *cell_extents;
    const char *strings;
    const rlmap_cell_block *boundary_blocks;
    const uint32_t *boundary_start, *local_edges;
    const rlmap_local *locals;
    double inv_cell; /* 1 / cell size */
    /* SHA-256 of the bytes, made once on first use (rl_map_get_info): an evaluation asks for
       the map's info several times, and hashing a large map each time was 9 % of its CPU. */
    pthread_mutex_t sha_mu;
    bool sha_done;
    uint8_t sha256[32];
};

/* Section offsets of a runtime map with these counts (rlmap_load.c), from the header on. */
typedef struct rlmap_layout {
    uint64_t points, links, starts, entries, flags, extents, strings, blocks, boundary_starts,
        locals, local_edges, total;
} rlmap_layout;
void rlmap_layout_of(const rlmap_header *h, rlmap_layout *o);

/* The boundary-cell number of `cell`, or -1 when it is no boundary cell. */
static inline long rlmap_boundary_index(const rl_map *m, size_t cell)
{
    const rlmap_cell_block *b = &m->boundary_blocks[cell >> 6];
    uint64_t bit = (uint64_t)1 << (cell & 63);
    if (!(b->bits & bit))
        return -1;
    return (long)b->rank + __builtin_popcountll(b->bits & (bit - 1));
}

static inline size_t rlmap_pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Exact (up to a 1e-6 cell offset beside lanelet edges): does the union of the lanelets
 * touching the cell cover all of it? Used by the compiler to set RLMAP_CELL_IN_UNION. */
bool rl_map_cell_in_union(const rl_map *map, size_t cell);

/* ---- Reader helpers (map_source.c). */

/* Appends a formatted warning to src (and logs it unless quiet). RL_OK or RL_ENOMEM. */
int rl_map_source_warn(rl_map_source *src, bool quiet, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* What both readers do first: the default options when `*opts` is NULL (kept in
 * *defaults), the size check, and a new source named `name` of format `format` holding the
 * data's SHA-256. RL_OK, RL_ERANGE or RL_ENOMEM (nothing allocated then). */
int rl_map_source_begin(const char *data, size_t len, const char *name, rl_map_format format,
                        const rl_map_read_options **opts, rl_map_read_options *defaults,
                        rl_map_source **src);
/* strdup that sets the error on failure. */
char *rl_map_strdup(const char *s);
/* Lanelet2's bound alignment on one lanelet (sets *_inverted). */
void rl_map_align_bounds(rl_map_source_lanelet *ll);
/* Warns once per degenerate lanelet (zero width, zero area, self-crossing). */
int rl_map_source_check_degenerate(rl_map_source *src, bool quiet);
/* Polygon helpers over a lanelet's bounds (left, then right reversed). */
size_t rl_map_polygon_build(const rl_map_source_lanelet *ll, rl_map_point *out);
double rl_map_polygon_signed_area(const rl_map_point *p, size_t n);
size_t rl_map_polygon_self_crossings(const rl_map_point *p, size_t n);

/* Metres from the origin beyond which a position is refused (a wrong projection or unit);
 * the OSM reader checks each node against it with its line, the compiler each lanelet. */
#define RL_MAP_MAX_COORD 1e9

/* An id -> index hash (open addressing), sized once for `n` keys. */
typedef struct rl_map_idmap {
    int64_t *keys;
    uint32_t *vals; /* UINT32_MAX: empty slot */
    size_t mask;
} rl_map_idmap;
int rl_map_idmap_init(rl_map_idmap *m, size_t n);
/* Inserts key -> val; when the key is present already, leaves it and returns its value
 * in *existing (else *existing = UINT32_MAX). */
void rl_map_idmap_put(rl_map_idmap *m, int64_t key, uint32_t val, uint32_t *existing);
/* Value of key, or UINT32_MAX. */
uint32_t rl_map_idmap_get(const rl_map_idmap *m, int64_t key);
void rl_map_idmap_free(rl_map_idmap *m);
/* Parses a whole decimal 64-bit signed id; false when malformed or out of range. */
bool rl_map_parse_id(const char *s, int64_t *out);
/* Parses a whole finite number (C locale); false when malformed. */
bool rl_map_parse_number(const char *s, double *out);

/* ---- Geometry primitives. */

static inline double rl_map_cross(double ax, double ay, double bx, double by)
{
    return ax * by - ay * bx;
}

/* Squared distance from p to segment ab, and the segment parameter of the closest point. */
static inline double rl_map_seg_dist2(double px, double py, rl_map_point a, rl_map_point b,
                                      double *t_out)
{
    double dx = b.x - a.x, dy = b.y - a.y;
    double l2 = dx * dx + dy * dy;
    double t = 0;
    if (l2 > 0) {
        t = ((px - a.x) * dx + (py - a.y) * dy) / l2;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
    }
    double ex = a.x + t * dx - px, ey = a.y + t * dy - py;
    if (t_out)
        *t_out = t;
    return ex * ex + ey * ey;
}

/* Even-odd point in polygon (ray casting), closed implicitly. */
static inline bool rl_map_pip(const rl_map_point *p, size_t n, double x, double y)
{
    bool in = false;
    for (size_t i = 0, j = n - 1; i < n; j = i++) {
        if ((p[i].y > y) != (p[j].y > y)) {
            double xi = p[j].x + (y - p[j].y) * (p[i].x - p[j].x) / (p[i].y - p[j].y);
            if (x < xi)
                in = !in;
        }
    }
    return in;
}

/* Distance from a point to a closed polygon's boundary. */
static inline double rl_map_poly_dist(const rl_map_point *p, size_t n, double x, double y)
{
    double best = INFINITY;
    for (size_t i = 0, j = n - 1; i < n; j = i++) {
        double d = rl_map_seg_dist2(x, y, p[j], p[i], NULL);
        if (d < best)
            best = d;
    }
    return sqrt(best);
}

#endif
