/* Opens runtime maps: in memory or mmap'd from a file, checking magic, version, sizes,
 * CRCs and every offset and index once, so that no query can read out of bounds; then
 * plain accessors over the mapped structures and the map's summary (info). Loading any map
 * file (rl_map_load, compiling a source in memory) is in map_read.c. */
#include "map_internal.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BAD(...) rl_error_set(RL_EPARSE, __VA_ARGS__)

static int check_lanelets(const rl_map *m)
{
    const rlmap_header *h = m->h;
    uint64_t np = h->num_points, nl = h->num_links;
    for (uint32_t i = 0; i < h->num_lanelets; i++) {
        const rlmap_lanelet *L = &m->lanelets[i];
        size_t at = RLMAP_HEADER_SIZE + (size_t)i * sizeof *L;
        if (i > 0 && L->id <= m->lanelets[i - 1].id)
            return BAD("runtime map: byte %zu: lanelet %u: ids not ascending", at, i);
        const uint32_t ranges[4][2] = {{L->left_off, L->left_n},
                                       {L->right_off, L->right_n},
                                       {L->centre_off, L->centre_n},
                                       {L->poly_off, L->poly_n}};
        for (int k = 0; k < 4; k++)
            if (ranges[k][1] == 0 || (uint64_t)ranges[k][0] + ranges[k][1] > np)
                return BAD("runtime map: byte %zu: lanelet %u: point range %d out of bounds", at, i,
                           k);
        if ((uint64_t)L->left_n + L->right_n != L->poly_n)
            return BAD("runtime map: byte %zu: lanelet %u: polygon size", at, i);
        if ((uint64_t)L->succ_off + L->succ_n > nl || (uint64_t)L->pred_off + L->pred_n > nl)
            return BAD("runtime map: byte %zu: lanelet %u: link range out of bounds", at, i);
        if (L->adj_left < -1 || L->adj_left >= (int64_t)h->num_lanelets || L->adj_right < -1 ||
            L->adj_right >= (int64_t)h->num_lanelets)
            return BAD("runtime map: byte %zu: lanelet %u: adjacent index", at, i);
        if (L->subtype >= h->strings_len)
            return BAD("runtime map: byte %zu: lanelet %u: subtype offset", at, i);
    }
    for (uint32_t i = 0; i < h->num_links; i++)
        if (m->links[i] >= h->num_lanelets)
            return BAD("runtime map: link %u: lanelet index %u out of range", i, m->links[i]);
    return RL_OK;
}

static int check_grid(const rl_map *m)
{
    const rlmap_header *h = m->h;
    size_t cells = (size_t)h->nx * h->ny;
    if (m->cell_start[0] != 0 || m->cell_start[cells] != h->num_entries)
        return BAD("runtime map: grid: cell starts do not span the entries");
    for (size_t i = 0; i < cells; i++)
        if (m->cell_start[i + 1] < m->cell_start[i])
            return BAD("runtime map: grid: cell %zu: starts decrease", i);
    for (uint32_t i = 0; i < h->num_entries; i++)
        if ((m->entries[i] & ~RLMAP_ENTRY_FULL) >= h->num_lanelets)
            return BAD("runtime map: grid: entry %u: lanelet index out of range", i);
    return RL_OK;
}

/* The boundary cells: blocks whose ranks count their bits, each boundary cell a lanelet
 * entry whose records list edges of that lanelet's own polygon. */
static int check_boundary(const rl_map *m)
{
    const rlmap_header *h = m->h;
    size_t cells = (size_t)h->nx * h->ny, nblocks = (cells + 63) / 64;
    uint64_t rank = 0;
    for (size_t b = 0; b < nblocks; b++) {
        const rlmap_cell_block *B = &m->boundary_blocks[b];
        if (B->rank != rank || B->reserved != 0)
            return BAD("runtime map: boundary block %zu: rank %u, expected %llu", b, B->rank,
                       (unsigned long long)rank);
        if (b == nblocks - 1 && cells % 64 && (B->bits >> (cells % 64)) != 0)
            return BAD("runtime map: boundary block %zu: bits past the last cell", b);
        rank += (uint64_t)__builtin_popcountll(B->bits);
    }
    if (rank != h->num_boundary_cells)
        return BAD("runtime map: %llu boundary cells marked, the header says %u",
                   (unsigned long long)rank, h->num_boundary_cells);
    if (m->boundary_start[0] != 0 || m->boundary_start[rank] != h->num_local_records)
        return BAD("runtime map: boundary starts do not span the local records");
    size_t o = 0;
    for (size_t b = 0; b < nblocks; b++)
        for (uint64_t bits = m->boundary_blocks[b].bits; bits; bits &= bits - 1) {
            size_t cell = b * 64 + (size_t)__builtin_ctzll(bits);
            uint32_t first = m->boundary_start[o], end = m->boundary_start[o + 1];
            uint32_t e0 = m->cell_start[cell];
            if (end < first || end - first != m->cell_start[cell + 1] - e0)
                return BAD("runtime map: boundary cell %zu: %u local records for %u entries", cell,
                           end < first ? 0 : end - first, m->cell_start[cell + 1] - e0);
            for (uint32_t k = first; k < end; k++) {
                const rlmap_local *r = &m->locals[k];
                const rlmap_lanelet *L =
                    &m->lanelets[m->entries[e0 + (k - first)] & ~RLMAP_ENTRY_FULL];
                if ((uint64_t)r->first_edge + r->num_edges > h->num_local_edges || r->parity > 1 ||
                    r->reserved != 0)
                    return BAD("runtime map: local record %u: edge range or parity", k);
                for (uint32_t i = r->first_edge; i < r->first_edge + r->num_edges; i++)
                    if (m->local_edges[i] < L->poly_off ||
                        m->local_edges[i] - L->poly_off >= L->poly_n)
                        return BAD(
                            "runtime map: local edge %u: point %u not in its lanelet's polygon", i,
                            m->local_edges[i]);
            }
            o++;
        }
    return RL_OK;
}

void rlmap_layout_of(const rlmap_header *h, rlmap_layout *o)
{
    uint64_t cells = (uint64_t)h->nx * h->ny;
    o->points = RLMAP_HEADER_SIZE + (uint64_t)h->num_lanelets * sizeof(rlmap_lanelet);
    o->links = o->points + (uint64_t)h->num_points * sizeof(rl_map_point);
    o->starts = o->links + rlmap_pad8((uint64_t)h->num_links * 4);
    o->entries = o->starts + rlmap_pad8((cells + 1) * 4);
    o->flags = o->entries + rlmap_pad8((uint64_t)h->num_entries * 4);
    o->extents = o->flags + rlmap_pad8(cells);
    o->strings = o->extents + rlmap_pad8(cells * 2);
    o->blocks = o->strings + rlmap_pad8(h->strings_len);
    o->boundary_starts = o->blocks + (cells + 63) / 64 * sizeof(rlmap_cell_block);
    o->locals = o->boundary_starts + rlmap_pad8(((uint64_t)h->num_boundary_cells + 1) * 4);
    o->local_edges = o->locals + (uint64_t)h->num_local_records * sizeof(rlmap_local);
    o->total = o->local_edges + rlmap_pad8((uint64_t)h->num_local_edges * 4);
}

int rl_map_open_mem(const void *data, size_t len, unsigned flags, rl_map **out)
{
    *out = NULL;
    const uint8_t *b = data;
    if (((uintptr_t)b & 7) != 0)
        return rl_error_set(RL_EINVAL, "runtime map: bytes not 8-byte aligned");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    return rl_error_set(RL_EUNSUPPORTED, "runtime map: big-endian hosts are not supported");
#endif
    if (len < RLMAP_HEADER_SIZE)
        return BAD("runtime map: %zu bytes, shorter than the %d-byte header", len,
                   RLMAP_HEADER_SIZE);
    const rlmap_header *h = data;
    if (memcmp(h->magic, RLMAP_MAGIC, 8) != 0)
        return BAD("runtime map: byte 0: bad magic (not a runlab runtime map)");
    if (h->version != RLMAP_VERSION)
        return rl_error_set(RL_EUNSUPPORTED,
                            "runtime map: byte 8: version %u (this runlab reads %d)", h->version,
                            RLMAP_VERSION);
    if (h->header_size != RLMAP_HEADER_SIZE)
        return BAD("runtime map: byte 12: header size %u", h->header_size);
    if (!(flags & RL_MAP_OPEN_NO_CRC) &&
        rl_crc32(0, h, offsetof(rlmap_header, header_crc)) != h->header_crc)
        return rl_error_set(RL_ECRC, "runtime map: byte 252: header CRC mismatch");
    if (h->file_size != len)
        return BAD("runtime map: byte 16: size %llu, but %zu bytes given",
                   (unsigned long long)h->file_size, len);
    if (h->nx == 0 || h->ny == 0 || (uint64_t)h->nx * h->ny > (1u << 22) || !(h->cell > 0) ||
        !isfinite(h->cell) || !isfinite(h->grid_x0) || !isfinite(h->grid_y0) || h->strings_len == 0)
        return BAD("runtime map: byte 168: bad grid or string table");
    rlmap_layout at;
    rlmap_layout_of(h, &at);
    if (at.total != len)
        return BAD("runtime map: sections need %llu bytes, the map has %zu",
                   (unsigned long long)at.total, len);
    if (!(flags & RL_MAP_OPEN_NO_CRC) &&
        rl_crc32(0, b + RLMAP_HEADER_SIZE, len - RLMAP_HEADER_SIZE) != h->crc32)
        return rl_error_set(RL_ECRC, "runtime map: byte 24: CRC-32 mismatch (the map is damaged)");
    rl_map *m = calloc(1, sizeof *m);
    if (!m)
        return rl_error_set(RL_ENOMEM, "out of memory");
    pthread_mutex_init(&m->sha_mu, NULL);
    m->bytes = b;
    m->len = len;
    m->h = h;
    m->lanelets = (const rlmap_lanelet *)(b + RLMAP_HEADER_SIZE);
    m->points = (const rl_map_point *)(b + at.points);
    m->links = (const uint32_t *)(b + at.links);
    m->cell_start = (const uint32_t *)(b + at.starts);
    m->entries = (const uint32_t *)(b + at.entries);
    m->cell_flags = b + at.flags;
    m->cell_extents = (const uint16_t *)(b + at.extents);
    m->strings = (const char *)(b + at.strings);
    m->boundary_blocks = (const rlmap_cell_block *)(b + at.blocks);
    m->boundary_start = (const uint32_t *)(b + at.boundary_starts);
    m->locals = (const rlmap_local *)(b + at.locals);
    m->local_edges = (const uint32_t *)(b + at.local_edges);
    m->inv_cell = 1 / h->cell;
    int rc = m->strings[h->strings_len - 1] == '\0'
                 ? RL_OK
                 : BAD("runtime map: string table not terminated");
    if (rc == RL_OK)
        rc = check_lanelets(m);
    if (rc == RL_OK)
        rc = check_grid(m);
    if (rc == RL_OK)
        rc = check_boundary(m);
    if (rc < 0) {
        pthread_mutex_destroy(&m->sha_mu);
        free(m);
        return rc;
    }
    *out = m;
    return RL_OK;
}

int rl_map_open_file(const char *path, rl_map **out)
{
    *out = NULL;
    uint64_t size = 0;
    int fd = rl_fs_open_input(path, &size); /* refuses FIFOs and devices without blocking */
    if (fd < 0)
        return fd;
    if (size > SIZE_MAX / 2) {
        close(fd);
        return rl_error_set(RL_ERANGE, "%s: %llu bytes, too large for a runtime map", path,
                            (unsigned long long)size);
    }
    size_t len = (size_t)size;
    if (len < RLMAP_HEADER_SIZE) {
        close(fd);
        return rl_error_set(RL_EPARSE, "%s: %zu bytes, too short for a runtime map", path, len);
    }
    void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return rl_error_set_errno(RL_EIO, e, "%s: mmap", path);
    int rc = rl_map_open_mem(p, len, 0, out);
    if (rc < 0) {
        munmap(p, len);
        return rl_error_prefix(rc, "%s", path);
    }
    (*out)->mapped = p;
    (*out)->mapped_len = len;
    return RL_OK;
}

void rl_map_close(rl_map *map)
{
    if (!map)
        return;
    if (map->mapped)
        munmap(map->mapped, map->mapped_len);
    free(map->owned);
    pthread_mutex_destroy(&map->sha_mu);
    free(map);
}

const void *rl_map_bytes(const rl_map *map, size_t *len)
{
    *len = map->len;
    return map->bytes;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void width_stats(const rl_map *m, bool end, double *mn, double *med, double *mx)
{
    size_t n = m->h->num_lanelets;
    *mn = *med = *mx = 0;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v || !n) {
        free(v);
        return;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = end ? m->lanelets[i].end_width : m->lanelets[i].start_width;
    qsort(v, n, sizeof *v, cmp_double);
    *mn = v[0];
    *mx = v[n - 1];
    *med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
}

void rl_map_get_info(const rl_map *map, rl_map_info *info)
{
    const rlmap_header *h = map->h;
    memset(info, 0, sizeof *info);
    info->version = h->version;
    info->source_format = (rl_map_format)h->source_format;
    info->projection = (rl_map_projection)h->projection;
    info->origin_lat = h->origin_lat;
    info->origin_lon = h->origin_lon;
    info->lanelets = h->num_lanelets;
    info->points = h->num_points;
    info->index_cells = (size_t)h->nx * h->ny;
    info->regulatory_elements = h->num_regulatory;
    info->areas = h->num_areas;
    info->obstacles = h->num_obstacles;
    info->xmin = h->bbox[0];
    info->ymin = h->bbox[1];
    info->xmax = h->bbox[2];
    info->ymax = h->bbox[3];
    info->area_xmin = h->area[0];
    info->area_ymin = h->area[1];
    info->area_xmax = h->area[2];
    info->area_ymax = h->area[3];
    info->cell_size = h->cell;
    info->area_sum = h->area_sum;
    info->area_union = h->area_union;
    for (size_t i = 0; i < h->num_lanelets; i++) {
        info->successors_total += map->lanelets[i].succ_n;
        info->degenerate +=
            (map->lanelets[i].flags & (RL_MAP_LANELET_ZERO_WIDTH | RL_MAP_LANELET_ZERO_AREA |
                                       RL_MAP_LANELET_SELF_CROSSING)) != 0;
    }
    width_stats(map, false, &info->width_min, &info->width_median, &info->width_max);
    width_stats(map, true, &info->end_width_min, &info->end_width_median, &info->end_width_max);
    /* the bytes never change while the map is open: hashed once (the cache is the map's own,
       behind its mutex, so a const map stays thread-safe) */
    rl_map *cache = (rl_map *)map;
    pthread_mutex_lock(&cache->sha_mu);
    if (!cache->sha_done) {
        rl_sha256(map->bytes, map->len, cache->sha256);
        cache->sha_done = true;
    }
    memcpy(info->sha256, cache->sha256, 32);
    pthread_mutex_unlock(&cache->sha_mu);
    memcpy(info->source_sha256, h->source_sha256, 32);
}

size_t rl_map_lanelet_count(const rl_map *map)
{
    return map->h->num_lanelets;
}

int64_t rl_map_lanelet_id(const rl_map *map, size_t idx)
{
    return map->lanelets[idx].id;
}

int rl_map_lanelet_find(const rl_map *map, int64_t id, size_t *idx)
{
    size_t lo = 0, hi = map->h->num_lanelets;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (map->lanelets[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < map->h->num_lanelets && map->lanelets[lo].id == id) {
        *idx = lo;
        return RL_OK;
    }
    return rl_error_set(RL_ENOENT, "no lanelet %lld in the map", (long long)id);
}

uint32_t rl_map_lanelet_flags(const rl_map *map, size_t idx)
{
    return map->lanelets[idx].flags;
}

const char *rl_map_lanelet_subtype(const rl_map *map, size_t idx)
{
    return map->strings + map->lanelets[idx].subtype;
}

size_t rl_map_lanelet_line(const rl_map *map, size_t idx, rl_map_line which,
                           const rl_map_point **pts)
{
    const rlmap_lanelet *L = &map->lanelets[idx];
    uint32_t off = L->poly_off, n = L->poly_n;
    if (which == RL_MAP_LEFT) {
        off = L->left_off;
        n = L->left_n;
    } else if (which == RL_MAP_RIGHT) {
        off = L->right_off;
        n = L->right_n;
    } else if (which == RL_MAP_CENTRE) {
        off = L->centre_off;
        n = L->centre_n;
    }
    *pts = map->points + off;
    return n;
}

double rl_map_lanelet_area(const rl_map *map, size_t idx)
{
    return map->lanelets[idx].area;
}

double rl_map_lanelet_start_width(const rl_map *map, size_t idx)
{
    return map->lanelets[idx].start_width;
}

double rl_map_lanelet_end_width(const rl_map *map, size_t idx)
{
    return map->lanelets[idx].end_width;
}

size_t rl_map_successors(const rl_map *map, size_t idx, const uint32_t **out)
{
    *out = map->links + map->lanelets[idx].succ_off;
    return map->lanelets[idx].succ_n;
}

size_t rl_map_predecessors(const rl_map *map, size_t idx, const uint32_t **out)
{
    *out = map->links + map->lanelets[idx].pred_off;
    return map->lanelets[idx].pred_n;
}

long rl_map_adjacent(const rl_map *map, size_t idx, bool left)
{
    return left ? map->lanelets[idx].adj_left : map->lanelets[idx].adj_right;
}
