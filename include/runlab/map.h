/* runlab/map.h: road maps. Readers for Lanelet2 OSM and CommonRoad XML (expat) give a
 * map source; it compiles into one binary runtime map (little-endian, versioned,
 * CRC-checked, with a grid index), opened with mmap and no parsing, whose SHA-256 names
 * it. The geometry the evaluation needs works on the runtime map: lanelets at a point,
 * signed distance to the drivable area, arc-length coordinates, footprints inside the
 * drivable area, and oriented rectangles against each other. See docs/map.md. */
#ifndef RUNLAB_MAP_H
#define RUNLAB_MAP_H

#include "runlab/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A position in the map frame, metres. */
typedef struct rl_map_point {
    double x, y;
} rl_map_point;

/* How Lanelet2 positions are made from a file's nodes. AUTO: local_x/local_y tags when
 * every node has them, else METRIC when some lat/lon lies outside what lat/lon can be,
 * else LTP. Every geographic projection subtracts the projected origin. */
typedef enum rl_map_projection {
    RL_MAP_PROJ_AUTO = 0,
    RL_MAP_PROJ_LTP = 1,    /* local tangent plane: x = R cos(lat0) dlon, y = R dlat */
    RL_MAP_PROJ_UTM = 2,    /* UTM (WGS84, Krueger series), zone of the origin */
    RL_MAP_PROJ_SMERC = 3,  /* Lanelet2's SphericalMercatorProjector, scale cos(lat0) */
    RL_MAP_PROJ_METRIC = 4, /* lat/lon fields hold metres: x = lon, y = lat */
    RL_MAP_PROJ_LOCAL = 5,  /* local_x / local_y tags (Autoware) */
    RL_MAP_PROJ_NONE = 6    /* the file is metric already (CommonRoad) */
} rl_map_projection;

/* Name ("ltp", "utm", "smerc", "metric", "local", "none", "auto"); never NULL. */
RL_API const char *rl_map_projection_name(rl_map_projection p);
/* Parses a name as above; RL_OK or RL_EINVAL (message lists the names). */
RL_API int rl_map_projection_parse(const char *name, rl_map_projection *out);

/* Projects one lat/lon (degrees) to map metres relative to the projected origin.
 * For LTP, UTM and SMERC only; RL_OK or RL_EINVAL. Thread-safe. */
RL_API int rl_map_project(rl_map_projection p, double origin_lat, double origin_lon, double lat,
                   double lon, rl_map_point *out);

/* Default origin (the Lanelet2 examples' Karlsruhe origin). */
#define RL_MAP_DEFAULT_ORIGIN_LAT 49.0
#define RL_MAP_DEFAULT_ORIGIN_LON 8.4

typedef struct rl_map_read_options {
    rl_map_projection projection;  /* default AUTO */
    double origin_lat, origin_lon; /* default RL_MAP_DEFAULT_ORIGIN_* */
    bool align_bounds;             /* Lanelet2's bound re-orientation; default true */
    bool quiet;                    /* do not log warnings (they are still collected) */
} rl_map_read_options;

RL_API void rl_map_read_options_init(rl_map_read_options *o);

typedef enum rl_map_format {
    RL_MAP_FORMAT_UNKNOWN = 0,
    RL_MAP_FORMAT_LANELET2 = 1,
    RL_MAP_FORMAT_COMMONROAD = 2,
    RL_MAP_FORMAT_RUNTIME = 3
} rl_map_format;

/* Guesses the format from the first bytes (XML root "osm" or "commonRoad", or the runtime
 * map's magic). */
RL_API rl_map_format rl_map_detect_format(const void *data, size_t len);

/* ---------------------------------------------------------------------------------------
 * Map source: what a reader found, in the map frame. Read-only after reading. */

typedef struct rl_map_source_lanelet {
    int64_t id;
    uint64_t line;                       /* line of the element in the source file */
    rl_map_point *left, *right, *centre; /* bounds in driving direction; centre may be NULL */
    size_t num_left, num_right, num_centre;
    bool left_inverted, right_inverted; /* re-oriented on load (Lanelet2) */
    char *subtype;      /* Lanelet2 subtype / CommonRoad laneletType(s); NULL when absent */
    char *location;     /* Lanelet2 location; NULL when absent */
    int one_way;        /* 1 yes, 0 no, -1 not stated */
    double speed_limit; /* number in the speed_limit tag (as written, unit not converted); NaN */
    int64_t *predecessors, *successors, *regulatory_elements;
    size_t num_predecessors, num_successors, num_regulatory_elements;
    int64_t adjacent_left, adjacent_right; /* 0 when none (has_* says) */
    bool has_adjacent_left, has_adjacent_right;
    bool adjacent_left_same_direction, adjacent_right_same_direction;
} rl_map_source_lanelet;

/* Anything else the file holds, kept as data: Lanelet2 areas (multipolygons) and
 * regulatory elements, CommonRoad obstacles, traffic signs and intersections. */
typedef struct rl_map_source_object {
    int64_t id;
    char *kind;    /* "multipolygon", "regulatory_element", "obstacle", "trafficSign", ... */
    char *subtype; /* subtype tag / obstacle type; NULL when absent */
    int64_t *refs; /* ids the object refers to (members) */
    size_t num_refs;
} rl_map_source_object;

typedef struct rl_map_source_counts {
    size_t nodes, ways, relations; /* Lanelet2, after skipping deleted ones */
    size_t deleted_nodes, deleted_ways, deleted_relations;
    size_t points; /* CommonRoad <point> elements in lanelet bounds */
} rl_map_source_counts;

typedef struct rl_map_source {
    rl_map_format format;
    rl_map_projection projection;  /* the one used (never AUTO) */
    double origin_lat, origin_lon; /* for geographic projections, else 0 */
    uint8_t source_sha256[32];     /* SHA-256 of the file's bytes */
    char *name;                    /* file name used in messages */
    rl_map_source_counts counts;
    rl_map_source_lanelet *lanelets;
    size_t num_lanelets;
    rl_map_source_object *objects;
    size_t num_objects;
    char **meta_keys, **meta_values; /* CommonRoad root attributes, OSM root attributes */
    size_t num_meta;
    char **warnings; /* one line each: degenerate lanelets, dangling non-lanelet refs */
    size_t num_warnings;
} rl_map_source;

/* Reads a Lanelet2 OSM document from memory. `name` is used in messages. On success
 * *out is owned by the caller (rl_map_source_free). Errors: RL_EPARSE with
 * "name:line:column: element <e> id N: what" for malformed XML, bad numbers and dangling
 * references of lanelets; RL_ENOMEM; RL_EINVAL for bad options. Thread-safe for
 * distinct outputs. */
RL_API int rl_lanelet2_read_mem(const char *data, size_t len, const char *name,
                         const rl_map_read_options *o, rl_map_source **out);

/* Reads a CommonRoad XML document (2018b, 2020a) from memory; as rl_lanelet2_read_mem. */
RL_API int rl_commonroad_read_mem(const char *data, size_t len, const char *name,
                           const rl_map_read_options *o, rl_map_source **out);

/* Reads a Lanelet2 or CommonRoad file (format from its content). Options may be NULL. */
RL_API int rl_map_source_read_file(const char *path, const rl_map_read_options *o, rl_map_source **out);

RL_API void rl_map_source_free(rl_map_source *src);

/* ---------------------------------------------------------------------------------------
 * Runtime map. */

typedef struct rl_map rl_map;

typedef struct rl_map_compile_options {
    /* Lab area (the floor); all zero = the bounding box of the lanelets. */
    double area_xmin, area_ymin, area_xmax, area_ymax;
} rl_map_compile_options;

/* Most points a lanelet bound may have: a longer one is refused by rl_map_compile
 * (RL_ERANGE naming the file, line and lanelet). Real maps use tens; compile time grows
 * as n log n in a lanelet's points, and this bounds it to seconds for any shape. */
enum { RL_MAP_MAX_BOUND_POINTS = 20000 };

/* Compiles a source into runtime-map bytes (*bytes malloc'd, the caller frees). The same
 * source always gives the same bytes. Options may be NULL. RL_OK, RL_ENOMEM, RL_ERANGE
 * (among others: a bound of more than RL_MAP_MAX_BOUND_POINTS points, a position farther
 * than 1e9 m from the origin, a lanelet id used twice). */
RL_API int rl_map_compile(const rl_map_source *src, const rl_map_compile_options *o, void **bytes,
                   size_t *len);

enum { RL_MAP_OPEN_NO_CRC = 1 }; /* skip the checksum (fuzzing); structure is still checked */

/* Opens runtime-map bytes in place (borrowed: they must outlive the map and stay 8-byte
 * aligned). Checks magic, version, size, CRC-32 and every offset and index, so a map that
 * opens never reads out of bounds. RL_EPARSE / RL_ECRC / RL_EUNSUPPORTED with the byte
 * offset and field in the message. */
RL_API int rl_map_open_mem(const void *data, size_t len, unsigned flags, rl_map **out);

/* Opens a runtime-map file with mmap (read-only, shared). Errors as rl_map_open_mem plus
 * RL_ENOENT / RL_EIO naming the path. */
RL_API int rl_map_open_file(const char *path, rl_map **out);

/* Opens any map file: a runtime map directly, a Lanelet2 or CommonRoad file by reading and
 * compiling it in memory (options may be NULL). When `src_out` is not NULL and the file
 * was a source file, the source is handed over too (else *src_out = NULL). */
RL_API int rl_map_load(const char *path, const rl_map_read_options *o, rl_map **out,
                rl_map_source **src_out);

/* Closes a map (unmaps or frees what it owns). NULL is fine. */
RL_API void rl_map_close(rl_map *map);

/* The runtime map's bytes (the SHA-256 of these names the map). */
RL_API const void *rl_map_bytes(const rl_map *map, size_t *len);

typedef struct rl_map_info {
    uint32_t version;
    rl_map_format source_format;
    rl_map_projection projection;
    double origin_lat, origin_lon;
    size_t lanelets, points, index_cells, successors_total;
    size_t regulatory_elements, areas, obstacles;
    double xmin, ymin, xmax, ymax;                     /* bounding box of all bound points */
    double area_xmin, area_ymin, area_xmax, area_ymax; /* lab area */
    double cell_size;
    double width_min, width_median, width_max; /* start widths */
    double end_width_min, end_width_median, end_width_max;
    double area_sum, area_union; /* m^2; the union by exact row intervals (0.1 % rows) */
    size_t degenerate;           /* lanelets flagged zero-width, zero-area or self-crossing */
    uint8_t sha256[32], source_sha256[32];
} rl_map_info;

/* Fills *info. The sha256 is of the runtime map's bytes. Thread-safe. */
RL_API void rl_map_get_info(const rl_map *map, rl_map_info *info);

/* Lanelet flags. */
enum {
    RL_MAP_LANELET_ZERO_WIDTH = 1,    /* start or end width 0 */
    RL_MAP_LANELET_ZERO_AREA = 2,     /* polygon area below 1e-9 m^2 */
    RL_MAP_LANELET_SELF_CROSSING = 4, /* polygon edges cross */
    RL_MAP_LANELET_LEFT_INVERTED = 8,
    RL_MAP_LANELET_RIGHT_INVERTED = 16,
    RL_MAP_LANELET_ONE_WAY = 32
};

/* Lanelets are numbered 0..count-1 in the order of their ids (signed). */
RL_API size_t rl_map_lanelet_count(const rl_map *map);
RL_API int64_t rl_map_lanelet_id(const rl_map *map, size_t idx);
/* Index of lanelet `id`; RL_OK or RL_ENOENT. */
RL_API int rl_map_lanelet_find(const rl_map *map, int64_t id, size_t *idx);
RL_API uint32_t rl_map_lanelet_flags(const rl_map *map, size_t idx);
/* Subtype text ("" when none). Valid while the map is open. */
RL_API const char *rl_map_lanelet_subtype(const rl_map *map, size_t idx);

typedef enum rl_map_line {
    RL_MAP_LEFT = 0,
    RL_MAP_RIGHT = 1,
    RL_MAP_CENTRE = 2,
    RL_MAP_POLYGON = 3
} rl_map_line;
/* Points of a lanelet's bound, centre line or polygon (left bound then right bound
 * reversed, closed implicitly); pointers into the map. Returns the count. */
RL_API size_t rl_map_lanelet_line(const rl_map *map, size_t idx, rl_map_line which,
                           const rl_map_point **pts);
/* Polygon area (absolute shoelace), start and end width. */
RL_API double rl_map_lanelet_area(const rl_map *map, size_t idx);
RL_API double rl_map_lanelet_start_width(const rl_map *map, size_t idx);
RL_API double rl_map_lanelet_end_width(const rl_map *map, size_t idx);

/* Routing graph: successor / predecessor / adjacent lanelet indices (pointer into the map).
 * For Lanelet2 a successor starts where the lanelet ends (both bounds); for CommonRoad the
 * file's links. Returns the count. */
RL_API size_t rl_map_successors(const rl_map *map, size_t idx, const uint32_t **out);
RL_API size_t rl_map_predecessors(const rl_map *map, size_t idx, const uint32_t **out);
/* Adjacent lanelet index or -1. */
RL_API long rl_map_adjacent(const rl_map *map, size_t idx, bool left);

/* ---- Geometry. All queries are read-only and thread-safe on an open map. ---- */

/* Point in one lanelet's polygon (even-odd; the boundary counts as inside). */
RL_API bool rl_map_point_in_lanelet(const rl_map *map, size_t idx, double x, double y);

/* Lanelets containing the point: writes up to `cap` indices (ascending) and returns how
 * many contain it. */
RL_API size_t rl_map_lanelets_at(const rl_map *map, double x, double y, uint32_t *out, size_t cap);

/* Point on the drivable area (inside some lanelet). Indexed: a grid cell lookup, and
 * polygon tests only near boundaries. */
RL_API bool rl_map_point_drivable(const rl_map *map, double x, double y);
/* Same answer by testing every polygon (the baseline of the benchmark and the tests). */
RL_API bool rl_map_point_drivable_brute(const rl_map *map, double x, double y);

typedef struct rl_map_where {
    bool inside;
    double distance; /* > 0 inside: the largest depth over the containing lanelets;
                        < 0 outside: minus the clearance to the nearest lanelet */
    long nearest;    /* index: the deepest containing lanelet, or the nearest one; -1 if none */
} rl_map_where;

/* Signed distance to the nearest lane boundary (as above). */
RL_API void rl_map_where_is(const rl_map *map, double x, double y, rl_map_where *out);

/* Arc-length coordinates of a point relative to one lanelet's centre line. */
typedef struct rl_map_frenet {
    double s;                     /* arc length of the closest centre-line point */
    double length;                /* centre-line length */
    double offset;                /* signed lateral offset from the centre line (left positive) */
    double heading;               /* direction of the centre line there, radians */
    double dist_left, dist_right; /* distance to the left / right bound */
} rl_map_frenet;
RL_API void rl_map_lanelet_frenet(const rl_map *map, size_t idx, double x, double y, rl_map_frenet *out);

/* A vehicle footprint: rectangle centred on (x, y), `length` along yaw, `width` across. */
typedef struct rl_map_box {
    double x, y, yaw, length, width;
} rl_map_box;

/* Corners front-left, front-right, rear-right, rear-left. */
RL_API void rl_map_box_corners(const rl_map_box *b, rl_map_point out[4]);

/* Whole footprint inside the union of lanelets: corners and every point of the edges
 * (not only corners). Gaps between lanelets narrower than `gap_tolerance` metres may be
 * closed: an outside stretch of an edge counts as inside when all of it lies within
 * gap_tolerance/2 of a lanelet (to within gap_tolerance/16: gaps under 7/8 of the
 * tolerance always close, gaps over it never). A hole of the drivable area lying wholly
 * inside the rectangle, touching no edge, is not seen. */
RL_API bool rl_map_footprint_inside(const rl_map *map, const rl_map_box *b, double gap_tolerance);
/* rl_map_footprint_inside's answer with no gap closing (gap_tolerance 0), without the
 * index: each edge split where it crosses any lanelet edge, the middle of every piece
 * tested against every polygon (the baseline of the benchmark and the tests; about 1e4
 * times slower). Thread-safe on an open map. */
RL_API bool rl_map_footprint_inside_brute(const rl_map *map, const rl_map_box *b);

/* A memo for rl_map_footprint_inside over many boxes of one size (a vehicle's poses): per
 * grid cell of a box's centre and half-degree bin of its yaw, whether every box there lies
 * in cells the lanelets cover wholly. A vehicle lapping a circuit comes back to the same
 * cells and yaws, and there the edges need no walk. The answers are rl_map_footprint_inside's,
 * always. Memory grows with the distinct cells and yaws met, to at most 16 MiB (then poses
 * are walked, not remembered). Not thread-safe: one memo per thread; the map must outlive
 * it. rl_map_inside_memo_new: RL_EINVAL (no map, a size not > 0), RL_ENOMEM. */
typedef struct rl_map_inside_memo rl_map_inside_memo;
RL_API int rl_map_inside_memo_new(const rl_map *map, double length, double width,
                                  rl_map_inside_memo **out);
RL_API void rl_map_inside_memo_free(rl_map_inside_memo *memo);
/* rl_map_footprint_inside(map, b, gap_tolerance); a box of another size than the memo's is
 * tested without it. */
RL_API bool rl_map_footprint_inside_memo(rl_map_inside_memo *memo, const rl_map_box *b,
                                         double gap_tolerance);

/* Oriented rectangles (separating axes): overlap (touching counts) and distance (0 when
 * they overlap). Thread-safe, no map needed. */
RL_API bool rl_map_box_overlap(const rl_map_box *a, const rl_map_box *b);
RL_API double rl_map_box_distance(const rl_map_box *a, const rl_map_box *b);

/* Draws the map (lanelet polygons, bounds, the lab area; ids when `ids`) to an SVG, PNG or
 * PDF file chosen by the extension (src/analysis/map_draw.c, cairo). RL_OK, RL_EINVAL
 * (unknown extension), RL_EIO naming the path. */
RL_API int rl_map_draw(const rl_map *map, const char *path, bool ids);

#ifdef __cplusplus
}
#endif
#endif
