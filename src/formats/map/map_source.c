/* Map sources: what both readers share. Projections (local tangent plane, UTM by the
 * Krueger series, Lanelet2's spherical Mercator), Lanelet2's bound alignment, the
 * degenerate-lanelet warnings, format detection and freeing a source. Reading a file
 * (map_read.c) calls the readers, which call these; nothing here calls a reader. */
#include "map_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"
#include "runlab/log.h"
#include "runlab/number.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EARTH_R 6378137.0
#define DEG     (M_PI / 180.0)

static const char *const projection_names[] = {"auto",   "ltp",   "utm", "smerc",
                                               "metric", "local", "none"};

const char *rl_map_projection_name(rl_map_projection p)
{
    if ((unsigned)p < sizeof projection_names / sizeof projection_names[0])
        return projection_names[p];
    return "?";
}

int rl_map_projection_parse(const char *name, rl_map_projection *out)
{
    for (size_t i = 0; i < sizeof projection_names / sizeof projection_names[0]; i++)
        if (name && strcmp(name, projection_names[i]) == 0) {
            *out = (rl_map_projection)i;
            return RL_OK;
        }
    /* the names from the table itself, so the message never leaves one out */
    char names[128] = "";
    size_t n = sizeof projection_names / sizeof projection_names[0], used = 0;
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(names + used, sizeof names - used, "%s%s",
                         i == 0 ? "" : i + 1 == n ? " or " : ", ", projection_names[i]);
        if (w > 0 && (size_t)w < sizeof names - used)
            used += (size_t)w;
    }
    return rl_error_set(RL_EINVAL, "projection '%s': expected %s", name ? name : "", names);
}

/* UTM easting/northing (metres, false easting included) of lat/lon in degrees, in the
 * zone of `zone_lon` (the origin's longitude), by Krueger's series to order n^6. */
static void utm_forward(double zone_lon, double lat, double lon, double *e, double *n_out)
{
    const double a = EARTH_R, f = 1 / 298.257223563, k0 = 0.9996;
    const double n = f / (2 - f), n2 = n * n, n3 = n2 * n, n4 = n3 * n, n5 = n4 * n, n6 = n5 * n;
    const double A = a / (1 + n) * (1 + n2 / 4 + n4 / 64 + n6 / 256);
    const double alpha[6] = {
        n / 2 - 2.0 / 3 * n2 + 5.0 / 16 * n3 + 41.0 / 180 * n4 - 127.0 / 288 * n5 +
            7891.0 / 37800 * n6,
        13.0 / 48 * n2 - 3.0 / 5 * n3 + 557.0 / 1440 * n4 + 281.0 / 630 * n5 -
            1983433.0 / 1935360 * n6,
        61.0 / 240 * n3 - 103.0 / 140 * n4 + 15061.0 / 26880 * n5 + 167603.0 / 181440 * n6,
        49561.0 / 161280 * n4 - 179.0 / 168 * n5 + 6601661.0 / 7257600 * n6,
        34729.0 / 80640 * n5 - 3418889.0 / 1995840 * n6,
        212378941.0 / 319334400 * n6,
    };
    int zone = (int)floor((zone_lon + 180) / 6) + 1;
    double lon0 = (zone - 1) * 6 - 180 + 3;
    double phi = lat * DEG, lam = (lon - lon0) * DEG;
    double c = 2 * sqrt(n) / (1 + n);
    double t = sinh(atanh(sin(phi)) - c * atanh(c * sin(phi)));
    double xi_p = atan2(t, cos(lam)), eta_p = atanh(sin(lam) / sqrt(1 + t * t));
    double xi = xi_p, eta = eta_p;
    for (int j = 1; j <= 6; j++) {
        xi += alpha[j - 1] * sin(2 * j * xi_p) * cosh(2 * j * eta_p);
        eta += alpha[j - 1] * cos(2 * j * xi_p) * sinh(2 * j * eta_p);
    }
    *e = 500000 + k0 * A * eta;
    *n_out = k0 * A * xi + (lat < 0 ? 10000000 : 0);
}

static void smerc_forward(double lat0, double lat, double lon, double *x, double *y)
{
    double s = cos(lat0 * DEG);
    *x = s * EARTH_R * lon * DEG;
    *y = s * EARTH_R * log(tan(M_PI / 4 + lat * DEG / 2));
}

int rl_map_project(rl_map_projection p, double origin_lat, double origin_lon, double lat,
                   double lon, rl_map_point *out)
{
    double x, y, x0, y0;
    switch (p) {
    case RL_MAP_PROJ_LTP:
        out->x = EARTH_R * cos(origin_lat * DEG) * (lon - origin_lon) * DEG;
        out->y = EARTH_R * (lat - origin_lat) * DEG;
        return RL_OK;
    case RL_MAP_PROJ_UTM:
        utm_forward(origin_lon, lat, lon, &x, &y);
        utm_forward(origin_lon, origin_lat, origin_lon, &x0, &y0);
        break;
    case RL_MAP_PROJ_SMERC:
        smerc_forward(origin_lat, lat, lon, &x, &y);
        smerc_forward(origin_lat, origin_lat, origin_lon, &x0, &y0);
        break;
    default:
        return rl_error_set(RL_EINVAL, "projection %s does not take lat/lon",
                            rl_map_projection_name(p));
    }
    out->x = x - x0;
    out->y = y - y0;
    return RL_OK;
}

void rl_map_read_options_init(rl_map_read_options *o)
{
    memset(o, 0, sizeof *o);
    o->projection = RL_MAP_PROJ_AUTO;
    o->origin_lat = RL_MAP_DEFAULT_ORIGIN_LAT;
    o->origin_lon = RL_MAP_DEFAULT_ORIGIN_LON;
    o->align_bounds = true;
}

char *rl_map_strdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        rl_error_set(RL_ENOMEM, "out of memory");
    return d;
}

int rl_map_source_begin(const char *data, size_t len, const char *name, rl_map_format format,
                        const rl_map_read_options **opts, rl_map_read_options *defaults,
                        rl_map_source **src)
{
    *src = NULL;
    if (!*opts) {
        rl_map_read_options_init(defaults);
        *opts = defaults;
    }
    if (len > INT32_MAX)
        return rl_error_set(RL_ERANGE, "%s: %zu bytes is too large for a map", name, len);
    rl_map_source *s = calloc(1, sizeof *s);
    if (!s || !(s->name = rl_map_strdup(name))) {
        rl_map_source_free(s);
        return rl_error_set(RL_ENOMEM, "out of memory");
    }
    s->format = format;
    rl_sha256(data, len, s->source_sha256);
    *src = s;
    return RL_OK;
}

int rl_map_source_warn(rl_map_source *src, bool quiet, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t cap = src->num_warnings; /* grown one at a time; warnings are few */
    char **w = realloc(src->warnings, (cap + 1) * sizeof *w);
    if (!w)
        return rl_error_set(RL_ENOMEM, "out of memory for warnings");
    src->warnings = w;
    if (!(w[src->num_warnings] = rl_map_strdup(line)))
        return RL_ENOMEM;
    src->num_warnings++;
    if (!quiet)
        rl_log(RL_LOG_WARN, "%s", line);
    return RL_OK;
}

/* Signed distance from p to the polyline (closest segment; left of it positive). */
static double signed_distance(const rl_map_point *ls, size_t n, rl_map_point p)
{
    if (n == 1)
        return hypot(p.x - ls[0].x, p.y - ls[0].y);
    double best = INFINITY, sign = 1;
    for (size_t i = 0; i + 1 < n; i++) {
        double d = rl_map_seg_dist2(p.x, p.y, ls[i], ls[i + 1], NULL);
        if (d < best) {
            best = d;
            double c = rl_map_cross(ls[i + 1].x - ls[i].x, ls[i + 1].y - ls[i].y, p.x - ls[i].x,
                                    p.y - ls[i].y);
            sign = c < 0 ? -1 : 1;
        }
    }
    return sign * sqrt(best);
}

static rl_map_point middle_point(const rl_map_point *ls, size_t n)
{
    if (n > 2)
        return ls[n / 2];
    if (n == 2)
        return (rl_map_point){(ls[0].x + ls[1].x) / 2, (ls[0].y + ls[1].y) / 2};
    return ls[0];
}

static void reverse_points(rl_map_point *p, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        rl_map_point t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

void rl_map_align_bounds(rl_map_source_lanelet *ll)
{
    if (ll->num_left == 0 || ll->num_right == 0)
        return;
    /* The right bound's middle must lie strictly right of the left bound, and the left
     * bound's middle strictly left of the right bound (Lanelet2's geometry::align). */
    if (!(signed_distance(ll->left, ll->num_left, middle_point(ll->right, ll->num_right)) < 0)) {
        reverse_points(ll->left, ll->num_left);
        ll->left_inverted = !ll->left_inverted;
    }
    if (!(signed_distance(ll->right, ll->num_right, middle_point(ll->left, ll->num_left)) > 0)) {
        reverse_points(ll->right, ll->num_right);
        ll->right_inverted = !ll->right_inverted;
    }
}

size_t rl_map_polygon_build(const rl_map_source_lanelet *ll, rl_map_point *out)
{
    size_t k = 0;
    for (size_t i = 0; i < ll->num_left; i++)
        out[k++] = ll->left[i];
    for (size_t i = ll->num_right; i-- > 0;)
        out[k++] = ll->right[i];
    return k;
}

double rl_map_polygon_signed_area(const rl_map_point *p, size_t n)
{
    double s = 0;
    for (size_t i = 0, j = n - 1; i < n; j = i++)
        s += p[j].x * p[i].y - p[i].x * p[j].y;
    return s / 2;
}

static int orient(rl_map_point a, rl_map_point b, rl_map_point c)
{
    double v = rl_map_cross(b.x - a.x, b.y - a.y, c.x - a.x, c.y - a.y);
    return (v > 0) - (v < 0);
}

/* Whether edges i and j (edge k runs from p[k] to p[k+1], the last one closes the ring)
 * cross properly: each one's end points strictly on both sides of the other's line. */
static bool edges_cross(const rl_map_point *p, size_t n, size_t i, size_t j)
{
    rl_map_point a = p[i], b = p[(i + 1) % n], c = p[j], d = p[(j + 1) % n];
    int o1 = orient(a, b, c), o2 = orient(a, b, d), o3 = orient(c, d, a), o4 = orient(c, d, b);
    return o1 * o2 < 0 && o3 * o4 < 0;
}

static int cmp_edge_xmin(const void *a, const void *b, void *ctx)
{
    const double *xmin = ctx;
    double x = xmin[*(const uint32_t *)a], y = xmin[*(const uint32_t *)b];
    return (x > y) - (x < y);
}

/* Counts pairs of non-adjacent edges that cross. A sweep along x: edges sorted by their
 * smallest x, each tested only against the edges whose x range overlaps its own (two
 * edges that cross share a point, so their x ranges overlap). A lanelet's bounds run
 * along its length, so an edge meets a handful of others and the count costs n log n
 * (it was every pair: 20 k vertices took seconds); only edges that really overlap in x
 * and y, as in a polygon crossing itself everywhere, cost more. */
size_t rl_map_polygon_self_crossings(const rl_map_point *p, size_t n)
{
    size_t count = 0;
    if (n < 4)
        return 0;
    uint32_t *order = n <= UINT32_MAX ? malloc(n * sizeof *order) : NULL;
    double *box = malloc(4 * n * sizeof *box); /* xmin[n], xmax[n], ymin[n], ymax[n] */
    if (!order || !box) { /* out of memory: every pair, slowly but the same count */
        free(order);
        free(box);
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 2; j < n; j++)
                if (!(i == 0 && j == n - 1) && edges_cross(p, n, i, j))
                    count++;
        return count;
    }
    double *xmin = box, *xmax = box + n, *ymin = box + 2 * n, *ymax = box + 3 * n;
    for (size_t i = 0; i < n; i++) {
        rl_map_point a = p[i], b = p[(i + 1) % n];
        xmin[i] = fmin(a.x, b.x), xmax[i] = fmax(a.x, b.x);
        ymin[i] = fmin(a.y, b.y), ymax[i] = fmax(a.y, b.y);
        order[i] = (uint32_t)i;
    }
    qsort_r(order, n, sizeof *order, cmp_edge_xmin, xmin);
    for (size_t s = 0; s < n; s++) {
        size_t i = order[s];
        for (size_t t = s + 1; t < n && xmin[order[t]] <= xmax[i]; t++) {
            size_t j = order[t];
            size_t lo = i < j ? i : j, hi = i < j ? j : i;
            if (hi - lo < 2 || (lo == 0 && hi == n - 1)) /* adjacent edges share a vertex */
                continue;
            if (ymin[j] > ymax[i] || ymin[i] > ymax[j])
                continue;
            if (edges_cross(p, n, lo, hi))
                count++;
        }
    }
    free(order);
    free(box);
    return count;
}

int rl_map_source_check_degenerate(rl_map_source *src, bool quiet)
{
    size_t cap = 0;
    rl_map_point *poly = NULL;
    int rc = RL_OK;
    for (size_t i = 0; i < src->num_lanelets && rc == RL_OK; i++) {
        rl_map_source_lanelet *ll = &src->lanelets[i];
        size_t n = ll->num_left + ll->num_right;
        if (n > cap) {
            free(poly);
            cap = n;
            if (!(poly = malloc(cap * sizeof *poly)))
                return rl_error_set(RL_ENOMEM, "out of memory");
        }
        n = rl_map_polygon_build(ll, poly);
        double ws = hypot(ll->left[0].x - ll->right[0].x, ll->left[0].y - ll->right[0].y);
        double we = hypot(ll->left[ll->num_left - 1].x - ll->right[ll->num_right - 1].x,
                          ll->left[ll->num_left - 1].y - ll->right[ll->num_right - 1].y);
        double area = fabs(rl_map_polygon_signed_area(poly, n));
        size_t cross = rl_map_polygon_self_crossings(poly, n);
        if (ws == 0 || we == 0)
            rc = rl_map_source_warn(src, quiet, "%s: lanelet %lld: zero width at its %s (kept)",
                                    src->name, (long long)ll->id, ws == 0 ? "start" : "end");
        if (rc == RL_OK && area < 1e-9)
            rc = rl_map_source_warn(src, quiet, "%s: lanelet %lld: zero area (kept)", src->name,
                                    (long long)ll->id);
        if (rc == RL_OK && cross)
            rc = rl_map_source_warn(src, quiet,
                                    "%s: lanelet %lld: polygon crosses itself %zu time(s) (kept)",
                                    src->name, (long long)ll->id, cross);
    }
    free(poly);
    return rc;
}

rl_map_format rl_map_detect_format(const void *data, size_t len)
{
    const char *s = data;
    if (len >= 8 && memcmp(s, RLMAP_MAGIC, 8) == 0)
        return RL_MAP_FORMAT_RUNTIME;
    /* The root element's name: skip the XML declaration, comments and doctype. */
    size_t i = 0;
    while (i < len) {
        while (i < len && s[i] != '<')
            i++;
        if (i + 1 >= len)
            break;
        char c = s[i + 1];
        if (c == '?' || c == '!') {
            i++;
            continue;
        }
        size_t rest = len - i - 1;
        if (rest >= 3 && memcmp(s + i + 1, "osm", 3) == 0)
            return RL_MAP_FORMAT_LANELET2;
        if (rest >= 10 && memcmp(s + i + 1, "commonRoad", 10) == 0)
            return RL_MAP_FORMAT_COMMONROAD;
        return RL_MAP_FORMAT_UNKNOWN;
    }
    return RL_MAP_FORMAT_UNKNOWN;
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void rl_map_source_free(rl_map_source *src)
{
    if (!src)
        return;
    for (size_t i = 0; i < src->num_lanelets; i++) {
        rl_map_source_lanelet *ll = &src->lanelets[i];
        free(ll->left);
        free(ll->right);
        free(ll->centre);
        free(ll->subtype);
        free(ll->location);
        free(ll->predecessors);
        free(ll->successors);
        free(ll->regulatory_elements);
    }
    free(src->lanelets);
    for (size_t i = 0; i < src->num_objects; i++) {
        free(src->objects[i].kind);
        free(src->objects[i].subtype);
        free(src->objects[i].refs);
    }
    free(src->objects);
    free_strings(src->meta_keys, src->num_meta);
    free_strings(src->meta_values, src->num_meta);
    free_strings(src->warnings, src->num_warnings);
    free(src->name);
    free(src);
}

static uint64_t id_hash(int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

int rl_map_idmap_init(rl_map_idmap *m, size_t n)
{
    size_t cap = 16;
    while (cap < n * 2) {
        if (cap > SIZE_MAX / 4 / sizeof(int64_t))
            return rl_error_set(RL_ERANGE, "%zu ids are too many", n);
        cap *= 2;
    }
    m->keys = malloc(cap * sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->mask = cap - 1;
    if (!m->keys || !m->vals) {
        rl_map_idmap_free(m);
        return rl_error_set(RL_ENOMEM, "out of memory for %zu ids", n);
    }
    memset(m->vals, 0xff, cap * sizeof *m->vals);
    return RL_OK;
}

void rl_map_idmap_put(rl_map_idmap *m, int64_t key, uint32_t val, uint32_t *existing)
{
    size_t i = id_hash(key) & m->mask;
    while (m->vals[i] != UINT32_MAX) {
        if (m->keys[i] == key) {
            *existing = m->vals[i];
            return;
        }
        i = (i + 1) & m->mask;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    *existing = UINT32_MAX;
}

uint32_t rl_map_idmap_get(const rl_map_idmap *m, int64_t key)
{
    size_t i = id_hash(key) & m->mask;
    while (m->vals[i] != UINT32_MAX) {
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & m->mask;
    }
    return UINT32_MAX;
}

void rl_map_idmap_free(rl_map_idmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
}

bool rl_map_parse_id(const char *s, int64_t *out)
{
    if (!s || !*s)
        return false;
    const char *p = s;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (!*p)
        return false;
    uint64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

bool rl_map_parse_number(const char *s, double *out)
{
    if (!s)
        return false;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (!*s)
        return false;
    /* Decimal only: strtod-style parsing would read "0x10" as 16 and "inf"/"nan" as numbers. */
    for (const char *q = s; *q && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r'; q++)
        if (!((*q >= '0' && *q <= '9') || *q == '.' || *q == '-' || *q == '+' || *q == 'e' ||
              *q == 'E'))
            return false;
    char *end;
    double v = rl_parse_f64(s, &end);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (*end || !isfinite(v))
        return false;
    *out = v;
    return true;
}
