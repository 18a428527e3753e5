/* Benchmark behind the recorder's default zstd level (docs/mcap.md, "Compression level"):
 * robot-like payloads (poses, lidar point clouds, camera images, all synthesized with the
 * structure real ones have) written through the MCAP writer at zstd levels 1, 3 and lz4,
 * beside the bare compressor on the same 1 MiB chunks, in the same run. Prints write rate,
 * file size and the writer / compressor ratio. Files go to $TMPDIR (default /tmp). */
#include "runlab/error.h"
#include "runlab/mcap.h"

#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

enum { REPS = 3, CHUNK = 1 << 20 };

static void die(const char *what)
{
    fprintf(stderr, "bench_zstd: %s: %s\n", what, rl_error_last());
    exit(1);
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static double urand(void) /* [0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

typedef struct stream {
    const char *name;
    uint8_t *mem;
    size_t msg_size, count;
} stream;

static void put_f64(uint8_t **p, double v)
{
    memcpy(*p, &v, 8);
    *p += 8;
}

static void put_f32(uint8_t **p, float v)
{
    memcpy(*p, &v, 4);
    *p += 4;
}

/* CDR header (4 bytes) + std_msgs/Header (stamp, frame_id "map") + geometry_msgs/Pose:
 * a vehicle driving a smooth curve at 100 Hz, with sensor noise in the last digits. */
static void make_poses(stream *s, size_t count)
{
    s->name = "poses (PoseStamped, 100 Hz)";
    s->msg_size = 4 + 8 + 4 + 4 + 4 + 56;
    s->count = count;
    s->mem = malloc(s->msg_size * count);
    double x = 0, y = 0, yaw = 0;
    for (size_t i = 0; i < count; i++) {
        uint8_t *p = s->mem + i * s->msg_size;
        memcpy(p, "\0\1\0\0", 4);
        p += 4;
        uint32_t sec = 1700000000u + (uint32_t)(i / 100), nsec = (uint32_t)(i % 100) * 10000000u;
        memcpy(p, &sec, 4);
        memcpy(p + 4, &nsec, 4);
        p += 8;
        uint32_t len = 4;
        memcpy(p, &len, 4);
        memcpy(p + 4, "map\0", 4);
        p += 8;
        memset(p, 0, 4); /* alignment to 8 */
        p += 4;
        yaw += 0.002 * sin((double)i * 1e-3);
        x += 0.1 * cos(yaw);
        y += 0.1 * sin(yaw);
        put_f64(&p, x + 0.002 * (urand() - 0.5));
        put_f64(&p, y + 0.002 * (urand() - 0.5));
        put_f64(&p, 0.0);
        put_f64(&p, 0.0);
        put_f64(&p, 0.0);
        put_f64(&p, sin(yaw / 2));
        put_f64(&p, cos(yaw / 2));
    }
}

/* A 16-ring lidar sweep as PointCloud2 data (x, y, z, intensity as float32): 1800 points a
 * ring, ranges from a room-like scene plus centimetre noise, at 10 Hz. */
static void make_clouds(stream *s, size_t count)
{
    s->name = "point clouds (16 x 1800, xyzi f32)";
    const size_t points = 16 * 1800;
    s->msg_size = 4 + points * 16;
    s->count = count;
    s->mem = malloc(s->msg_size * count);
    for (size_t i = 0; i < count; i++) {
        uint8_t *p = s->mem + i * s->msg_size;
        memcpy(p, "\0\1\0\0", 4);
        p += 4;
        for (int ring = 0; ring < 16; ring++) {
            double elev = (-15.0 + 2.0 * ring) * M_PI / 180;
            for (int a = 0; a < 1800; a++) {
                double az = a * 2 * M_PI / 1800 + (double)i * 0.01;
                double wall = 8.0 / fmax(fabs(cos(az)), fabs(sin(az))) * 0.5;
                double r = (ring < 6 ? fmin(wall, 1.8 / fabs(sin(elev))) : wall) +
                           0.01 * (urand() - 0.5);
                put_f32(&p, (float)(r * cos(elev) * cos(az)));
                put_f32(&p, (float)(r * cos(elev) * sin(az)));
                put_f32(&p, (float)(r * sin(elev)));
                put_f32(&p, (float)(40 + 30 * sin(az * 3) + 5 * urand()));
            }
        }
    }
}

/* 640 x 480 rgb8 camera frames: a lit floor and walls (gradients), a few objects (flat
 * colours with edges), sensor noise of a few levels, moving slowly between frames. */
static void make_images(stream *s, size_t count)
{
    s->name = "images (640x480 rgb8)";
    const int w = 640, h = 480;
    s->msg_size = 4 + (size_t)w * h * 3;
    s->count = count;
    s->mem = malloc(s->msg_size * count);
    for (size_t i = 0; i < count; i++) {
        uint8_t *p = s->mem + i * s->msg_size;
        memcpy(p, "\0\1\0\0", 4);
        p += 4;
        int shift = (int)i * 3;
        for (int yy = 0; yy < h; yy++)
            for (int xx = 0; xx < w; xx++) {
                int r, g, b;
                if (yy > h / 2) { /* floor */
                    r = 90 + yy / 8;
                    g = 80 + yy / 8;
                    b = 70 + yy / 10;
                } else { /* wall */
                    r = 180 - yy / 6;
                    g = 185 - yy / 6;
                    b = 190 - yy / 5;
                }
                int ox = (xx + shift) % w;
                if (ox > 200 && ox < 320 && yy > 180 && yy < 360) { /* a box */
                    r = 150;
                    g = 60;
                    b = 40;
                }
                if ((ox - 480) * (ox - 480) + (yy - 300) * (yy - 300) < 3600) { /* a ball */
                    r = 30;
                    g = 90;
                    b = 160;
                }
                int n = (int)(urand() * 7) - 3;
                *p++ = (uint8_t)(r + n < 0 ? 0 : r + n > 255 ? 255 : r + n);
                *p++ = (uint8_t)(g + n < 0 ? 0 : g + n > 255 ? 255 : g + n);
                *p++ = (uint8_t)(b + n < 0 ? 0 : b + n > 255 ? 255 : b + n);
            }
    }
}

static double write_file(const char *path, const stream *s, rl_mcap_compression c, int level,
                         long *size)
{
    rl_mcap_writer_options o;
    rl_mcap_writer_options_default(&o);
    o.compression = c;
    o.compression_level = level;
    unlink(path);
    double t0 = bench_now_s();
    rl_mcap_writer *w = NULL;
    if (rl_mcap_writer_open_path(&w, path, &o) < 0)
        die("open");
    rl_mcap_schema sc = {1, {(const uint8_t *)"m", 1}, {(const uint8_t *)"ros2msg", 7},
                         {(const uint8_t *)"", 0}};
    rl_mcap_channel ch;
    memset(&ch, 0, sizeof ch);
    ch.id = 1;
    ch.schema_id = 1;
    ch.topic.data = (const uint8_t *)"/t";
    ch.topic.len = 2;
    ch.message_encoding.data = (const uint8_t *)"cdr";
    ch.message_encoding.len = 3;
    if (rl_mcap_writer_add_schema(w, &sc) < 0 || rl_mcap_writer_add_channel(w, &ch) < 0)
        die("schema/channel");
    rl_mcap_message m;
    memset(&m, 0, sizeof m);
    m.channel_id = 1;
    for (size_t i = 0; i < s->count; i++) {
        m.sequence = (uint32_t)i;
        m.log_time = m.publish_time = 1700000000000000000ull + i * 10000000ull;
        m.data.data = s->mem + i * s->msg_size;
        m.data.len = s->msg_size;
        if (rl_mcap_writer_add_message(w, &m) < 0)
            die("message");
    }
    if (rl_mcap_writer_close(w) < 0)
        die("close");
    double t = bench_now_s() - t0;
    struct stat st;
    *size = stat(path, &st) == 0 ? (long)st.st_size : 0;
    unlink(path);
    return t;
}

/* The bare compressor at `level` on the stream cut in 1 MiB pieces, one reused context. */
static double bare_zstd(const stream *s, int level, size_t *out_bytes)
{
    size_t total = s->msg_size * s->count;
    size_t cap = ZSTD_compressBound(CHUNK);
    uint8_t *out = malloc(cap);
    ZSTD_CCtx *cx = ZSTD_createCCtx();
    double t0 = bench_now_s();
    *out_bytes = 0;
    for (size_t off = 0; off < total; off += CHUNK) {
        size_t n = total - off < CHUNK ? total - off : CHUNK;
        size_t r = ZSTD_compressCCtx(cx, out, cap, s->mem + off, n, level);
        if (ZSTD_isError(r))
            die("zstd");
        *out_bytes += r;
    }
    double t = bench_now_s() - t0;
    ZSTD_freeCCtx(cx);
    free(out);
    return t;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/bench_zstd_%d.mcap", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    stream streams[3];
    make_poses(&streams[0], 400000);  /* 36 MB */
    make_clouds(&streams[1], 80);     /* 37 MB */
    make_images(&streams[2], 40);     /* 37 MB */
    printf("bench_zstd: writer at zstd levels 1 and 3 (and lz4) on robot payloads; median of %d\n",
           REPS);
    for (int k = 0; k < 3; k++) {
        const stream *s = &streams[k];
        if (!s->mem)
            die("malloc");
        double mbytes = (double)(s->msg_size * s->count) / 1e6;
        printf("\n%s: %zu messages of %zu bytes, %.0f MB\n", s->name, s->count, s->msg_size,
               mbytes);
        static const struct {
            const char *name;
            rl_mcap_compression c;
            int level;
        } modes[] = {{"zstd level 1", RL_MCAP_COMPRESSION_ZSTD, 1},
                     {"zstd level 3", RL_MCAP_COMPRESSION_ZSTD, 3},
                     {"lz4", RL_MCAP_COMPRESSION_LZ4, 0},
                     {"none", RL_MCAP_COMPRESSION_NONE, 0}};
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            double t[REPS], tb[REPS];
            long size = 0;
            size_t bare_bytes = 0;
            for (int r = 0; r < REPS; r++) {
                t[r] = write_file(path, s, modes[m].c, modes[m].level, &size);
                if (modes[m].c == RL_MCAP_COMPRESSION_ZSTD)
                    tb[r] = bare_zstd(s, modes[m].level, &bare_bytes);
            }
            double t_med = bench_median(t, REPS);
            printf("  write %-13s %7.0f MB/s  file %6.1f MB (%.2f of the payload)", modes[m].name,
                   mbytes / t_med, (double)size / 1e6, (double)size / 1e6 / mbytes);
            if (modes[m].c == RL_MCAP_COMPRESSION_ZSTD) {
                double tb_med = bench_median(tb, REPS);
                printf("; bare zstd %7.0f MB/s, %.2f -> writer/bare time %.2f", mbytes / tb_med,
                       (double)bare_bytes / 1e6 / mbytes, t_med / tb_med);
            }
            printf("\n");
        }
    }
    for (int k = 0; k < 3; k++)
        free(streams[k].mem);
    return 0;
}
