/* A Cyclone DDS sertype that keeps each sample's serialised bytes as they arrived, for
 * writers that send no type information (ROS 2's rmw_cyclonedds, idlc -t, and writers in
 * this very process, whose discovery data carries none): such writers match a reader by type
 * name alone, and the recorder only needs the bytes. Keys are not looked at: every sample
 * is one instance, which a keep-all reader that only takes loses nothing with. */
#include "lab/lab_internal.h"

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsi/q_radmin.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The hash of every raw serdata: the one Cyclone derives from these serdata ops (it keeps
 * serdata of other kinds apart in its instance map). Kept here rather than read from the
 * sertype on every sample, because Cyclone hands the sertype between threads in ways
 * ThreadSanitizer cannot see. */
static atomic_uint raw_basehash;

typedef struct raw_serdata {
    struct ddsi_serdata c;
    uint32_t size;
    uint32_t pool_class; /* POOL_NONE, or the pool class its allocation belongs to */
    unsigned char data[]; /* `size` bytes, encapsulation header included */
} raw_serdata;

/* Freed samples of 1 KiB and more go back to a pool and the receive thread takes its next
 * ones from there. Without it, each sample was malloc'd on Cyclone's receive thread and
 * freed on the recorder's writer thread once written, so glibc kept trimming the receive
 * thread's arena (madvise on the writer thread) and the receive thread took a page fault
 * for every 4 KiB it received: at 10 KB samples a million faults in 15 s, and `perf` put
 * the faults, zeroing pages and TLB shootdowns at a fifth of the two threads' time.
 * Allocations are rounded up to classes a quarter of a power of two apart (at most 25 %
 * unused); the pool keeps at most POOL_MAX_BYTES and hands back the most recently freed
 * buffer first (still in a cache). Process-wide, because a raw sample may be freed after
 * its sertype and reader are gone (lab_rawtype_pool_trim empties it). */
#define POOL_NONE UINT32_MAX
enum {
    POOL_MIN_LOG2 = 10,                     /* samples of up to 1 KiB: malloc */
    POOL_MAX_LOG2 = 22,                     /* and above 4 MiB */
    POOL_CLASSES = 4 * (POOL_MAX_LOG2 - POOL_MIN_LOG2),
};
#define POOL_MAX_BYTES ((size_t)32 << 20)

typedef struct pool_buf {
    struct pool_buf *next;
} pool_buf;

static struct {
    pthread_mutex_t mu;
    pool_buf *free[POOL_CLASSES];
    size_t bytes;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The class of an allocation of n bytes and its rounded size, or POOL_NONE. */
static uint32_t pool_class(size_t n, size_t *rounded)
{
    if (n <= (size_t)1 << POOL_MIN_LOG2 || n > (size_t)1 << POOL_MAX_LOG2)
        return POOL_NONE;
    unsigned k = POOL_MIN_LOG2; /* 2^k < n <= 2^(k+1) */
    while (((size_t)2 << k) < n)
        k++;
    size_t quarter = (size_t)1 << (k - 2);
    size_t q = (n - 1 - ((size_t)1 << k)) / quarter; /* 0..3 */
    *rounded = ((size_t)1 << k) + (q + 1) * quarter;
    return (uint32_t)(4 * (k - POOL_MIN_LOG2) + q);
}

static size_t pool_class_bytes(uint32_t cls)
{
    unsigned k = POOL_MIN_LOG2 + cls / 4;
    return ((size_t)1 << k) + (cls % 4 + 1) * ((size_t)1 << (k - 2));
}

static raw_serdata *raw_alloc(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind,
                              size_t size)
{
    if (size > UINT32_MAX - sizeof(raw_serdata))
        return NULL;
    size_t n = sizeof(raw_serdata) + size, rounded = n;
    uint32_t cls = pool_class(n, &rounded);
    raw_serdata *d = NULL;
    if (cls != POOL_NONE) {
        pthread_mutex_lock(&pool.mu);
        pool_buf *b = pool.free[cls];
        if (b) {
            pool.free[cls] = b->next;
            pool.bytes -= rounded;
        }
        pthread_mutex_unlock(&pool.mu);
        d = (raw_serdata *)b;
    }
    if (!d && !(d = malloc(rounded)))
        return NULL;
    ddsi_serdata_init(&d->c, type, kind);
    d->c.hash = atomic_load(&raw_basehash);
    d->size = (uint32_t)size;
    d->pool_class = cls;
    return d;
}

static void raw_release(raw_serdata *d)
{
    uint32_t cls = d->pool_class;
    if (cls != POOL_NONE) {
        size_t bytes = pool_class_bytes(cls);
        pool_buf *b = (pool_buf *)d;
        pthread_mutex_lock(&pool.mu);
        if (pool.bytes + bytes <= POOL_MAX_BYTES) {
            b->next = pool.free[cls];
            pool.free[cls] = b;
            pool.bytes += bytes;
            b = NULL;
        }
        pthread_mutex_unlock(&pool.mu);
        free(b);
        return;
    }
    free(d);
}

void lab_rawtype_pool_trim(void)
{
    pool_buf *lists[POOL_CLASSES];
    pthread_mutex_lock(&pool.mu);
    memcpy(lists, pool.free, sizeof lists);
    memset(pool.free, 0, sizeof pool.free);
    pool.bytes = 0;
    pthread_mutex_unlock(&pool.mu);
    for (size_t i = 0; i < POOL_CLASSES; i++)
        for (pool_buf *b = lists[i]; b;) {
            pool_buf *next = b->next;
            free(b);
            b = next;
        }
}

size_t lab_rawtype_pool_bytes(void)
{
    pthread_mutex_lock(&pool.mu);
    size_t n = pool.bytes;
    pthread_mutex_unlock(&pool.mu);
    return n;
}

static bool raw_eqkey(const struct ddsi_serdata *a, const struct ddsi_serdata *b)
{
    (void)a;
    (void)b;
    return true;
}

static uint32_t raw_size(const struct ddsi_serdata *d)
{
    return ((const raw_serdata *)d)->size;
}

static void raw_free(struct ddsi_serdata *d)
{
    lab_handoff_acquire(); /* see raw_to_untyped (a load: nothing on the hot path) */
    raw_release((raw_serdata *)d);
}

static struct ddsi_serdata *raw_from_ser(const struct ddsi_sertype *type,
                                         enum ddsi_serdata_kind kind,
                                         const struct nn_rdata *fragchain, size_t size)
{
    raw_serdata *d = raw_alloc(type, kind, size);
    if (!d)
        return NULL;
    /* Fragments come in order and may overlap; copy each byte once. */
    uint32_t off = 0;
    for (const struct nn_rdata *f = fragchain; f; f = f->nextfrag) {
        if (f->maxp1 > off && f->min <= off && f->maxp1 <= size) {
            const unsigned char *payload = NN_RMSG_PAYLOADOFF(f->rmsg, NN_RDATA_PAYLOAD_OFF(f));
            memcpy(d->data + off, payload + (off - f->min), f->maxp1 - off);
            off = f->maxp1;
        }
    }
    if (off != size) {
        raw_release(d);
        return NULL;
    }
    return &d->c;
}

static struct ddsi_serdata *raw_from_ser_iov(const struct ddsi_sertype *type,
                                             enum ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov,
                                             const ddsrt_iovec_t *iov, size_t size)
{
    raw_serdata *d = raw_alloc(type, kind, size);
    if (!d)
        return NULL;
    size_t off = 0;
    for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++) {
        size_t n = iov[i].iov_len < size - off ? iov[i].iov_len : size - off;
        memcpy(d->data + off, iov[i].iov_base, n);
        off += n;
    }
    if (off != size) {
        raw_release(d);
        return NULL;
    }
    return &d->c;
}

static struct ddsi_serdata *raw_from_keyhash(const struct ddsi_sertype *type,
                                             const struct ddsi_keyhash *keyhash)
{
    (void)keyhash;
    raw_serdata *d = raw_alloc(type, SDK_KEY, 0);
    return d ? &d->c : NULL;
}

static struct ddsi_serdata *raw_from_sample(const struct ddsi_sertype *type,
                                            enum ddsi_serdata_kind kind, const void *sample)
{
    (void)type;
    (void)kind;
    (void)sample;
    return NULL; /* nothing writes through this type */
}

static void raw_to_ser(const struct ddsi_serdata *d, size_t off, size_t sz, void *buf)
{
    memcpy(buf, ((const raw_serdata *)d)->data + off, sz);
}

static struct ddsi_serdata *raw_to_ser_ref(const struct ddsi_serdata *d, size_t off, size_t sz,
                                           ddsrt_iovec_t *ref)
{
    ref->iov_base = (void *)(((const raw_serdata *)d)->data + off);
    ref->iov_len = (ddsrt_iov_len_t)sz;
    return ddsi_serdata_ref(d);
}

static void raw_to_ser_unref(struct ddsi_serdata *d, const ddsrt_iovec_t *ref)
{
    (void)ref;
    ddsi_serdata_unref(d);
}

static bool raw_to_sample(const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim)
{
    (void)d;
    (void)sample;
    (void)bufptr;
    (void)buflim;
    return false; /* read only with dds_takecdr */
}

static struct ddsi_serdata *raw_to_untyped(const struct ddsi_serdata *d)
{
    /* ddsi_serdata_init needs the real type; an untyped serdata then has none. */
    raw_serdata *u = raw_alloc(d->type, SDK_KEY, 0);
    if (!u)
        return NULL;
    u->c.type = NULL;
    /* Made on a writing thread of ours and freed by one of Cyclone's: visible to TSan
       (lab_internal.h; once per instance, not per sample). */
    lab_handoff_publish();
    return &u->c;
}

static bool raw_untyped_to_sample(const struct ddsi_sertype *type, const struct ddsi_serdata *d,
                                  void *sample, void **bufptr, void *buflim)
{
    (void)type;
    (void)d;
    (void)sample;
    (void)bufptr;
    (void)buflim;
    return true; /* no key fields to fill */
}

static size_t raw_print(const struct ddsi_sertype *type, const struct ddsi_serdata *d, char *buf,
                        size_t size)
{
    (void)type;
    int n = snprintf(buf, size, "(%u bytes)", (unsigned)((const raw_serdata *)d)->size);
    return n < 0 ? 0 : (size_t)n;
}

static void raw_get_keyhash(const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5)
{
    (void)d;
    (void)force_md5;
    memset(buf, 0, sizeof *buf);
}

static const struct ddsi_serdata_ops raw_serdata_ops = {
    .eqkey = raw_eqkey,
    .get_size = raw_size,
    .from_ser = raw_from_ser,
    .from_ser_iov = raw_from_ser_iov,
    .from_keyhash = raw_from_keyhash,
    .from_sample = raw_from_sample,
    .to_ser = raw_to_ser,
    .to_ser_ref = raw_to_ser_ref,
    .to_ser_unref = raw_to_ser_unref,
    .to_sample = raw_to_sample,
    .to_untyped = raw_to_untyped,
    .untyped_to_sample = raw_untyped_to_sample,
    .free = raw_free,
    .print = raw_print,
    .get_keyhash = raw_get_keyhash,
};

/* Cyclone calls the type's operations from any of its threads (its deferred free of a
 * deleted reader hashes and frees the type): each acquires what lab_rawtype_new published
 * (lab_internal.h). */
static void raw_type_free(struct ddsi_sertype *tp)
{
    lab_handoff_acquire();
    ddsi_sertype_fini(tp);
    free(tp);
}

static void raw_zero_samples(const struct ddsi_sertype *d, void *samples, size_t count)
{
    (void)d;
    (void)samples;
    (void)count;
}

static void raw_realloc_samples(void **ptrs, const struct ddsi_sertype *d, void *old,
                                size_t oldcount, size_t count)
{
    (void)d;
    (void)oldcount;
    /* Samples are never materialised; pointer-sized slots keep callers safe. */
    void *p = realloc(old, count ? count * sizeof(void *) : 1);
    for (size_t i = 0; i < count; i++)
        ptrs[i] = p ? (char *)p + i * sizeof(void *) : NULL;
}

static void raw_free_samples(const struct ddsi_sertype *d, void **ptrs, size_t count,
                             dds_free_op_t op)
{
    (void)d;
    if (count && (op & DDS_FREE_ALL_BIT))
        free(ptrs[0]);
}

static bool raw_equal(const struct ddsi_sertype *a, const struct ddsi_sertype *b)
{
    lab_handoff_acquire();
    return a->typekind_no_key == b->typekind_no_key;
}

static uint32_t raw_hash(const struct ddsi_sertype *tp)
{
    lab_handoff_acquire();
    return tp->typekind_no_key;
}

static const struct ddsi_sertype_ops raw_sertype_ops = {
    .version = ddsi_sertype_v0,
    .free = raw_type_free,
    .zero_samples = raw_zero_samples,
    .realloc_samples = raw_realloc_samples,
    .free_samples = raw_free_samples,
    .equal = raw_equal,
    .hash = raw_hash,
};

const void *lab_rawtype_bytes(const struct ddsi_serdata *d)
{
    return d->ops == &raw_serdata_ops ? ((const raw_serdata *)d)->data : NULL;
}

struct ddsi_sertype *lab_rawtype_new(const char *type_name, int keyed)
{
    struct ddsi_sertype *tp = calloc(1, sizeof *tp);
    if (!tp)
        return NULL;
    atomic_store(&raw_basehash, ddsi_sertype_compute_serdata_basehash(&raw_serdata_ops));
    ddsi_sertype_init(tp, type_name, &raw_sertype_ops, &raw_serdata_ops, !keyed);
    tp->allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1 |
                                      DDS_DATA_REPRESENTATION_FLAG_XCDR2;
    lab_handoff_publish();
    return tp;
}
