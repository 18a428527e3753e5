/* PNG encoding of a rendered figure: cairo's image surface written as 8-bit RGB when it is
 * opaque and RGBA otherwise, the pixels cairo's own PNG writer stores (un-premultiplied,
 * with its white bKGD chunk),
 * compressed by libdeflate with one cheap filter choice per row: libpng's adaptive filters
 * and zlib took longer than drawing the figure. */
#include "analysis/plot_internal.h"

#include "runlab/error.h"

#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* One chunk: length, type, data, CRC over type and data. */
static void put_chunk(rl_buf *out, const char type[4], const uint8_t *data, size_t len)
{
    uint8_t head[8], tail[4];
    put_u32(head, (uint32_t)len);
    memcpy(head + 4, type, 4);
    uint32_t crc = libdeflate_crc32(0, type, 4);
    if (len > 0) /* libdeflate_crc32 of NULL is the initial value, not `crc` */
        crc = libdeflate_crc32(crc, data, len);
    put_u32(tail, crc);
    rl_buf_put(out, (const char *)head, 8);
    if (len > 0)
        rl_buf_put(out, (const char *)data, len);
    rl_buf_put(out, (const char *)tail, 4);
}

/* A native-endian premultiplied ARGB32 row as straight RGBA bytes (RGB when `opaque`), the
 * way cairo does. */
static void unpremultiply(const uint32_t *px, int w, bool opaque, uint8_t *rgba)
{
    if (opaque) {
        for (int x = 0; x < w; x++, rgba += 3) {
            rgba[0] = (uint8_t)(px[x] >> 16);
            rgba[1] = (uint8_t)(px[x] >> 8);
            rgba[2] = (uint8_t)px[x];
        }
        return;
    }
    for (int x = 0; x < w; x++, rgba += 4) {
        uint32_t p = px[x], a = p >> 24;
        if (a == 0) {
            memset(rgba, 0, 4);
            continue;
        }
        rgba[0] = (uint8_t)((((p >> 16) & 0xFF) * 255 + a / 2) / a);
        rgba[1] = (uint8_t)((((p >> 8) & 0xFF) * 255 + a / 2) / a);
        rgba[2] = (uint8_t)(((p & 0xFF) * 255 + a / 2) / a);
        rgba[3] = (uint8_t)a;
    }
}

/* Sum of the filtered bytes read as signed: the usual estimate of how well a row packs. */
static uint64_t cost(const uint8_t *f, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += f[i] < 128 ? f[i] : 256u - f[i];
    return s;
}

int rl_png_encode_argb32(const unsigned char *data, int w, int h, int stride, rl_buf *out)
{
    if (w <= 0 || h <= 0 || stride < 4 * w)
        return rl_error_set(RL_EINVAL, "plot: PNG of %dx%d pixels", w, h);
    bool opaque = true;
    for (int y = 0; y < h && opaque; y++) {
        const uint32_t *px = (const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride);
        for (int x = 0; x < w && opaque; x++)
            opaque = px[x] >> 24 == 0xFF;
    }
    size_t bpp = opaque ? 3 : 4, row = bpp * (size_t)w, raw_len = (row + 1) * (size_t)h;
    uint8_t *raw = malloc(raw_len), *cur = malloc(row), *prev = calloc(row, 1),
            *sub = malloc(row), *up = malloc(row);
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(6);
    size_t cap = raw_len ? libdeflate_zlib_compress_bound(z, raw_len) : 0;
    uint8_t *packed = z ? malloc(cap) : NULL;
    int rc = RL_OK;
    if (!raw || !cur || !prev || !sub || !up || !packed) {
        rc = rl_error_set(RL_ENOMEM, "plot: out of memory for a %dx%d PNG", w, h);
        goto out;
    }
    for (int y = 0; y < h; y++) {
        unpremultiply((const uint32_t *)(const void *)(data + (size_t)y * (size_t)stride), w,
                      opaque, cur);
        for (size_t i = 0; i < row; i++) {
            sub[i] = (uint8_t)(cur[i] - (i >= bpp ? cur[i - bpp] : 0));
            up[i] = (uint8_t)(cur[i] - prev[i]);
        }
        uint64_t c0 = cost(cur, row), c1 = cost(sub, row), c2 = cost(up, row);
        uint8_t *line = raw + (size_t)y * (row + 1);
        line[0] = c1 <= c0 && c1 <= c2 ? 1 : c2 < c0 ? 2 : 0;
        memcpy(line + 1, line[0] == 1 ? sub : line[0] == 2 ? up : cur, row);
        uint8_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t packed_len = libdeflate_zlib_compress(z, raw, raw_len, packed, cap);
    if (packed_len == 0) {
        rc = rl_error_set(RL_ERR, "plot: PNG compression failed");
        goto out;
    }
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    uint8_t ihdr[13] = {0, 0, 0, 0, 0, 0, 0, 0, 8, opaque ? 2 : 6, 0, 0, 0}; /* 8-bit RGB(A) */
    put_u32(ihdr, (uint32_t)w);
    put_u32(ihdr + 4, (uint32_t)h);
    static const uint8_t white[6] = {0, 255, 0, 255, 0, 255}; /* bKGD as cairo writes it */
    rl_buf_put(out, (const char *)signature, 8);
    put_chunk(out, "IHDR", ihdr, sizeof ihdr);
    put_chunk(out, "bKGD", white, sizeof white);
    put_chunk(out, "IDAT", packed, packed_len);
    put_chunk(out, "IEND", NULL, 0);
    if (out->err)
        rc = rl_error_set(RL_ENOMEM, "plot: out of memory for a %dx%d PNG", w, h);
out:
    libdeflate_free_compressor(z);
    free(packed);
    free(raw);
    free(cur);
    free(prev);
    free(sub);
    free(up);
    return rc;
}
