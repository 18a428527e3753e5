/* SHA-256 through OpenSSL's EVP interface and CRC-32 through libdeflate,
 * behind runlab/hash.h. Files are hashed in fixed blocks so memory stays constant. */
#include "runlab/hash.h"

#include "runlab/error.h"
#include "runlab/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

struct rl_sha256_ctx {
    EVP_MD_CTX *md;
};

int rl_sha256_begin(rl_sha256_ctx **out)
{
    *out = NULL;
    rl_sha256_ctx *ctx = malloc(sizeof *ctx);
    if (!ctx)
        return rl_error_set(RL_ENOMEM, "sha256: out of memory");
    ctx->md = EVP_MD_CTX_new();
    if (!ctx->md || EVP_DigestInit_ex(ctx->md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx->md);
        free(ctx);
        return rl_error_set(RL_ERR, "sha256: OpenSSL digest initialisation failed");
    }
    *out = ctx;
    return RL_OK;
}

int rl_sha256_update(rl_sha256_ctx *ctx, const void *data, size_t len)
{
    if (len && EVP_DigestUpdate(ctx->md, data, len) != 1)
        return rl_error_set(RL_ERR, "sha256: OpenSSL digest update failed");
    return RL_OK;
}

int rl_sha256_finish(rl_sha256_ctx *ctx, uint8_t out[RL_SHA256_LEN])
{
    if (!ctx)
        return RL_OK;
    int rc = RL_OK;
    unsigned int n = 0;
    if (out && (EVP_DigestFinal_ex(ctx->md, out, &n) != 1 || n != RL_SHA256_LEN))
        rc = rl_error_set(RL_ERR, "sha256: OpenSSL digest finalisation failed");
    EVP_MD_CTX_free(ctx->md);
    free(ctx);
    return rc;
}

int rl_sha256(const void *data, size_t len, uint8_t out[RL_SHA256_LEN])
{
    rl_sha256_ctx *ctx;
    int rc = rl_sha256_begin(&ctx);
    if (rc < 0)
        return rc;
    rc = rl_sha256_update(ctx, data, len);
    if (rc < 0) {
        rl_sha256_finish(ctx, NULL);
        return rc;
    }
    return rl_sha256_finish(ctx, out);
}

int rl_sha256_file(const char *path, uint8_t out[RL_SHA256_LEN], uint64_t *size_out)
{
    uint64_t size = 0;
    int fd = rl_fs_open_input(path, &size); /* a FIFO or /dev/zero is refused, not hashed */
    if (fd < 0)
        return fd;
    rl_sha256_ctx *ctx;
    int rc = rl_sha256_begin(&ctx);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    enum { BLOCK = 1 << 16 };
    unsigned char *block = malloc(BLOCK);
    if (!block) {
        rl_sha256_finish(ctx, NULL);
        close(fd);
        return rl_error_set(RL_ENOMEM, "%s: out of memory", path);
    }
    uint64_t total = 0;
    while (total < size) { /* no further than the size at open: a growing file ends */
        size_t want = size - total < BLOCK ? (size_t)(size - total) : BLOCK;
        ssize_t got = read(fd, block, want);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            rc = rl_error_set_errno(RL_EIO, errno, "%s: read at byte %llu", path,
                                    (unsigned long long)total);
            break;
        }
        if (got == 0)
            break;
        total += (uint64_t)got;
        rc = rl_sha256_update(ctx, block, (size_t)got);
        if (rc < 0)
            break;
    }
    close(fd);
    free(block);
    if (rc < 0) {
        rl_sha256_finish(ctx, NULL);
        return rc;
    }
    if (size_out)
        *size_out = total;
    return rl_sha256_finish(ctx, out);
}

void rl_sha256_hex(const uint8_t digest[RL_SHA256_LEN], char hex[RL_SHA256_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < RL_SHA256_LEN; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[RL_SHA256_HEX_LEN] = '\0';
}

uint32_t rl_crc32(uint32_t crc, const void *data, size_t len)
{
    return libdeflate_crc32(crc, data, len);
}
