/* `runlab map compile|info|query|draw`: compiles a Lanelet2 or CommonRoad map into a
 * runtime map, prints its summary (counts, bounding box, widths, areas, hashes), answers
 * where a point is (lanelets holding it, signed distance), and draws it. Every command
 * takes a runtime map or an original map file. */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/json.h"
#include "runlab/map.h"
#include "runlab/number.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: runlab map compile IN -o OUT [--projection P] [--origin LAT,LON]\n"
            "                          [--area XMIN,YMIN,XMAX,YMAX]\n"
            "       runlab map info FILE [--json]\n"
            "       runlab map query FILE X Y [--json]\n"
            "       runlab map draw FILE -o OUT.svg|png|pdf [--ids]\n\n"
            "Reads Lanelet2 OSM and CommonRoad XML maps and compiles them into a runtime map\n"
            "(binary, checksummed, indexed; its SHA-256 names it). Every command takes a\n"
            "runtime map or an original map file (compiled in memory).\n\n"
            "  -o, --output PATH       file to write\n"
            "  --projection P          Lanelet2 positions: auto (default), ltp, utm, smerc,\n"
            "                          metric (lat/lon fields hold metres: x = lon, y = lat),\n"
            "                          local (local_x/local_y tags)\n"
            "  --origin LAT,LON        origin of ltp/utm/smerc (default 49,8.4)\n"
            "  --area X0,Y0,X1,Y1      lab area stored in the map (default: the bounding box)\n"
            "  --json                  machine-readable output\n"
            "  --ids                   label lanelets with their ids (draw)\n"
            "  -h, --help              show this help\n\n"
            "query prints inside, the lanelets holding the point, the nearest lanelet and the\n"
            "distance: positive inside (depth), negative outside (clearance).\n"
            "Exit codes: 0 success, 1 failure, 2 usage error.\n");
}

typedef struct map_args {
    const char *output;
    rl_map_read_options read;
    rl_map_compile_options compile;
    bool json, ids;
    char **pos;
    int num_pos;
} map_args;

static bool parse_list(const char *s, double *v, int n)
{
    char *end;
    for (int i = 0; i < n; i++) {
        v[i] = rl_parse_f64(s, &end);
        if (end == s || !isfinite(v[i]))
            return false;
        if (i + 1 < n) {
            if (*end != ',')
                return false;
            s = end + 1;
        }
    }
    return *end == '\0';
}

/* Options anywhere among the operands; "-1.5" is an operand (a coordinate), not an option. */
static int parse_args(const char *cmd, int argc, char **argv, map_args *a)
{
    memset(a, 0, sizeof *a);
    rl_map_read_options_init(&a->read);
    a->pos = calloc((size_t)argc + 1, sizeof *a->pos);
    if (!a->pos)
        return cli_fail(cmd, "out of memory");
    double v[4];
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool operand = s[0] != '-' || s[1] == '\0' || (s[1] >= '0' && s[1] <= '9') || s[1] == '.';
        if (operand) {
            a->pos[a->num_pos++] = argv[i];
            continue;
        }
        if (strcmp(s, "--json") == 0) {
            a->json = true;
            continue;
        }
        if (strcmp(s, "--ids") == 0) {
            a->ids = true;
            continue;
        }
        bool takes = strcmp(s, "-o") == 0 || strcmp(s, "--output") == 0 ||
                     strcmp(s, "--projection") == 0 || strcmp(s, "--origin") == 0 ||
                     strcmp(s, "--area") == 0;
        if (!takes)
            return cli_usage_error(cmd, "unknown option '%s'", s);
        if (i + 1 >= argc)
            return cli_usage_error(cmd, "%s needs a value", s);
        const char *val = argv[++i];
        if (s[1] == 'o' || strcmp(s, "--output") == 0) {
            a->output = val;
        } else if (strcmp(s, "--projection") == 0) {
            if (rl_map_projection_parse(val, &a->read.projection) < 0)
                return cli_usage_error(cmd, "%s", rl_error_last());
        } else if (strcmp(s, "--origin") == 0) {
            if (!parse_list(val, v, 2) || fabs(v[0]) > 90 || fabs(v[1]) > 180)
                return cli_usage_error(cmd, "--origin '%s': expected LAT,LON in degrees", val);
            a->read.origin_lat = v[0];
            a->read.origin_lon = v[1];
        } else {
            if (!parse_list(val, v, 4) || !(v[2] > v[0] && v[3] > v[1]))
                return cli_usage_error(cmd, "--area '%s': expected XMIN,YMIN,XMAX,YMAX", val);
            a->compile = (rl_map_compile_options){v[0], v[1], v[2], v[3]};
        }
    }
    return RL_EXIT_OK;
}

static int load(const char *cmd, const map_args *a, const char *path, rl_map **map)
{
    rl_map_read_options o = a->read;
    o.quiet = true; /* warnings are counted in `info`; the log would repeat them per command */
    if (rl_map_load(path, &o, map, NULL) < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    return RL_EXIT_OK;
}

static int cmd_compile(const map_args *a)
{
    const char *cmd = "map compile";
    if (a->num_pos != 1 || !a->output)
        return cli_usage_error("map", "compile needs IN and -o OUT");
    rl_map_source *src = NULL;
    if (rl_map_source_read_file(a->pos[0], &a->read, &src) < 0)
        return cli_fail(cmd, "%s", rl_error_last());
    void *bytes = NULL;
    size_t len = 0;
    int rc = rl_map_compile(src, &a->compile, &bytes, &len);
    size_t warnings = src->num_warnings;
    rl_map_source_free(src);
    if (rc == RL_OK)
        rc = rl_fs_write_atomic(a->output, bytes, len, 0644);
    if (rc < 0) {
        free(bytes);
        return cli_fail(cmd, "%s", rl_error_last());
    }
    uint8_t d[RL_SHA256_LEN];
    char hex[RL_SHA256_HEX_LEN + 1];
    rl_sha256(bytes, len, d);
    rl_sha256_hex(d, hex);
    free(bytes);
    printf("%s: %zu bytes, sha256 %s, %zu warning(s)\n", a->output, len, hex, warnings);
    return RL_EXIT_OK;
}

static void json_bbox(rl_json_writer *w, const char *key, double x0, double y0, double x1,
                      double y1)
{
    rl_json_key(w, key);
    rl_json_begin_object(w);
    rl_json_key(w, "xmin");
    rl_json_double(w, x0);
    rl_json_key(w, "ymin");
    rl_json_double(w, y0);
    rl_json_key(w, "xmax");
    rl_json_double(w, x1);
    rl_json_key(w, "ymax");
    rl_json_double(w, y1);
    rl_json_end_object(w);
}

static void json_stats(rl_json_writer *w, const char *key, double mn, double med, double mx)
{
    rl_json_key(w, key);
    rl_json_begin_object(w);
    rl_json_key(w, "min");
    rl_json_double(w, mn);
    rl_json_key(w, "median");
    rl_json_double(w, med);
    rl_json_key(w, "max");
    rl_json_double(w, mx);
    rl_json_end_object(w);
}

static const char *format_name(rl_map_format f)
{
    return f == RL_MAP_FORMAT_LANELET2     ? "lanelet2"
           : f == RL_MAP_FORMAT_COMMONROAD ? "commonroad"
                                           : "unknown";
}

static int info_json(const rl_map_info *in, const char *hex, const char *src_hex)
{
    rl_json_writer *w;
    if (rl_json_writer_new_file(&w, stdout, RL_JSON_PRETTY) != RL_OK)
        return cli_fail("map info", "%s", rl_error_last());
    rl_json_begin_object(w);
    rl_json_key(w, "lanelets");
    rl_json_uint64(w, in->lanelets);
    json_bbox(w, "bbox", in->xmin, in->ymin, in->xmax, in->ymax);
    rl_json_key(w, "area_sum");
    rl_json_double(w, in->area_sum);
    rl_json_key(w, "area_union");
    rl_json_double(w, in->area_union);
    rl_json_key(w, "sha256");
    rl_json_string(w, hex);
    rl_json_key(w, "source_sha256");
    rl_json_string(w, src_hex);
    rl_json_key(w, "format");
    rl_json_string(w, format_name(in->source_format));
    rl_json_key(w, "projection");
    rl_json_string(w, rl_map_projection_name(in->projection));
    rl_json_key(w, "origin");
    if (in->projection == RL_MAP_PROJ_LTP || in->projection == RL_MAP_PROJ_UTM ||
        in->projection == RL_MAP_PROJ_SMERC) {
        rl_json_begin_array(w);
        rl_json_double(w, in->origin_lat);
        rl_json_double(w, in->origin_lon);
        rl_json_end_array(w);
    } else {
        rl_json_null(w);
    }
    rl_json_key(w, "points");
    rl_json_uint64(w, in->points);
    json_stats(w, "start_width", in->width_min, in->width_median, in->width_max);
    json_stats(w, "end_width", in->end_width_min, in->end_width_median, in->end_width_max);
    rl_json_key(w, "successors");
    rl_json_uint64(w, in->successors_total);
    rl_json_key(w, "degenerate");
    rl_json_uint64(w, in->degenerate);
    rl_json_key(w, "regulatory_elements");
    rl_json_uint64(w, in->regulatory_elements);
    rl_json_key(w, "areas");
    rl_json_uint64(w, in->areas);
    rl_json_key(w, "obstacles");
    rl_json_uint64(w, in->obstacles);
    json_bbox(w, "lab_area", in->area_xmin, in->area_ymin, in->area_xmax, in->area_ymax);
    rl_json_key(w, "index_cells");
    rl_json_uint64(w, in->index_cells);
    rl_json_key(w, "cell_size");
    rl_json_double(w, in->cell_size);
    rl_json_key(w, "version");
    rl_json_uint64(w, in->version);
    rl_json_end_object(w);
    int rc = rl_json_writer_finish(w);
    rl_json_writer_free(w);
    fputc('\n', stdout);
    return rc == RL_OK ? RL_EXIT_OK : cli_fail("map info", "%s", rl_error_last());
}

static int cmd_info(const map_args *a)
{
    if (a->num_pos != 1)
        return cli_usage_error("map", "info needs one FILE");
    rl_map *map;
    int rc = load("map info", a, a->pos[0], &map);
    if (rc != RL_EXIT_OK)
        return rc;
    rl_map_info in;
    rl_map_get_info(map, &in);
    rl_map_close(map);
    char hex[RL_SHA256_HEX_LEN + 1], src_hex[RL_SHA256_HEX_LEN + 1];
    rl_sha256_hex(in.sha256, hex);
    rl_sha256_hex(in.source_sha256, src_hex);
    if (a->json)
        return info_json(&in, hex, src_hex);
    printf("format        %s (projection %s", format_name(in.source_format),
           rl_map_projection_name(in.projection));
    if (in.projection == RL_MAP_PROJ_LTP || in.projection == RL_MAP_PROJ_UTM ||
        in.projection == RL_MAP_PROJ_SMERC)
        printf(", origin %.9g,%.9g", in.origin_lat, in.origin_lon);
    printf(")\nlanelets      %zu (%zu degenerate), %zu points, %zu successor links\n", in.lanelets,
           in.degenerate, in.points, in.successors_total);
    printf("other data    %zu regulatory elements, %zu areas, %zu obstacles\n",
           in.regulatory_elements, in.areas, in.obstacles);
    printf("bbox          x %.6f .. %.6f, y %.6f .. %.6f\n", in.xmin, in.xmax, in.ymin, in.ymax);
    printf("start width   min %.6f, median %.6f, max %.6f\n", in.width_min, in.width_median,
           in.width_max);
    printf("end width     min %.6f, median %.6f, max %.6f\n", in.end_width_min, in.end_width_median,
           in.end_width_max);
    printf("area          sum %.6f m^2, union %.6f m^2\n", in.area_sum, in.area_union);
    printf("index         %zu cells of %.4g m\n", in.index_cells, in.cell_size);
    printf("sha256        %s\nsource_sha256 %s\n", hex, src_hex);
    return RL_EXIT_OK;
}

static int cmd_query(const map_args *a)
{
    double x, y;
    if (a->num_pos != 3)
        return cli_usage_error("map", "query needs FILE X Y");
    if (!parse_list(a->pos[1], &x, 1) || !parse_list(a->pos[2], &y, 1))
        return cli_usage_error("map", "query: X and Y must be numbers (metres)");
    rl_map *map;
    int rc = load("map query", a, a->pos[0], &map);
    if (rc != RL_EXIT_OK)
        return rc;
    rl_map_where where;
    rl_map_where_is(map, x, y, &where);
    size_t n = rl_map_lanelets_at(map, x, y, NULL, 0);
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx) {
        rl_map_close(map);
        return cli_fail("map query", "out of memory");
    }
    rl_map_lanelets_at(map, x, y, idx, n);
    if (a->json) {
        rl_json_writer *w;
        if (rl_json_writer_new_file(&w, stdout, RL_JSON_PRETTY) == RL_OK) {
            rl_json_begin_object(w);
            rl_json_key(w, "inside");
            rl_json_bool(w, where.inside);
            rl_json_key(w, "lanelets");
            rl_json_begin_array(w);
            for (size_t i = 0; i < n; i++)
                rl_json_int64(w, rl_map_lanelet_id(map, idx[i]));
            rl_json_end_array(w);
            rl_json_key(w, "nearest");
            if (where.nearest >= 0)
                rl_json_int64(w, rl_map_lanelet_id(map, (size_t)where.nearest));
            else
                rl_json_null(w);
            rl_json_key(w, "distance");
            rl_json_double(w, where.distance);
            rl_json_end_object(w);
            rc = rl_json_writer_finish(w) == RL_OK ? RL_EXIT_OK : RL_EXIT_FAILURE;
            rl_json_writer_free(w);
            fputc('\n', stdout);
        } else {
            rc = cli_fail("map query", "%s", rl_error_last());
        }
    } else {
        printf("inside    %s\nlanelets ", where.inside ? "yes" : "no");
        for (size_t i = 0; i < n; i++)
            printf(" %lld", (long long)rl_map_lanelet_id(map, idx[i]));
        printf("%s\n", n ? "" : " -");
        if (where.nearest >= 0)
            printf("nearest   %lld\n", (long long)rl_map_lanelet_id(map, (size_t)where.nearest));
        printf("distance  %.6f m (%s)\n", where.distance, where.inside ? "depth" : "clearance");
    }
    free(idx);
    rl_map_close(map);
    return rc;
}

static int cmd_draw(const map_args *a)
{
    if (a->num_pos != 1 || !a->output)
        return cli_usage_error("map", "draw needs FILE and -o OUT.svg|png|pdf");
    rl_map *map;
    int rc = load("map draw", a, a->pos[0], &map);
    if (rc != RL_EXIT_OK)
        return rc;
    if (rl_map_draw(map, a->output, a->ids) < 0)
        rc = cli_fail("map draw", "%s", rl_error_last());
    else
        printf("%s\n", a->output);
    rl_map_close(map);
    return rc;
}

int cmd_map(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return RL_EXIT_OK;
    }
    if (argc < 2)
        return cli_usage_error("map", "missing subcommand (compile, info, query or draw)");
    const char *sub = argv[1];
    map_args a;
    int rc = parse_args("map", argc - 1, argv + 1, &a);
    if (rc == RL_EXIT_OK) {
        if (strcmp(sub, "compile") == 0)
            rc = cmd_compile(&a);
        else if (strcmp(sub, "info") == 0)
            rc = cmd_info(&a);
        else if (strcmp(sub, "query") == 0)
            rc = cmd_query(&a);
        else if (strcmp(sub, "draw") == 0)
            rc = cmd_draw(&a);
        else
            rc = cli_usage_error("map", "unknown subcommand '%s'", sub);
    }
    free(a.pos);
    return rc;
}
