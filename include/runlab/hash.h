/* runlab/hash.h: SHA-256 (OpenSSL libcrypto) of buffers and files, and CRC-32
 * (libdeflate; the IEEE polynomial used by zip, PNG and MCAP). */
#ifndef RUNLAB_HASH_H
#define RUNLAB_HASH_H

#include "runlab/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { RL_SHA256_LEN = 32, RL_SHA256_HEX_LEN = 64 };

/* SHA-256 of `len` bytes at `data` into `out`. Returns RL_OK or RL_ERR (message set). */
RL_API int rl_sha256(const void *data, size_t len, uint8_t out[RL_SHA256_LEN]);

/* SHA-256 of a whole file, read in blocks (constant memory), opened by rl_fs_open_input:
 * anything but a regular file is RL_EINVAL ("PATH: not a regular file") and the bytes hashed
 * stop at the size at open. Returns RL_OK, RL_ENOENT, RL_EINVAL or RL_EIO with the path in the
 * message. Optional `size_out` receives the number of bytes hashed. */
RL_API int rl_sha256_file(const char *path, uint8_t out[RL_SHA256_LEN], uint64_t *size_out);

/* Incremental SHA-256. The context is opaque and owned by the caller: create, update any
 * number of times, finish (which frees it). Not thread-safe per context. */
typedef struct rl_sha256_ctx rl_sha256_ctx;
RL_API int rl_sha256_begin(rl_sha256_ctx **out);
RL_API int rl_sha256_update(rl_sha256_ctx *ctx, const void *data, size_t len);
/* Writes the digest and frees the context. Passing `out` NULL just frees. */
RL_API int rl_sha256_finish(rl_sha256_ctx *ctx, uint8_t out[RL_SHA256_LEN]);

/* Lower-case hex of a digest into `hex` (RL_SHA256_HEX_LEN + 1 bytes, NUL-terminated). */
RL_API void rl_sha256_hex(const uint8_t digest[RL_SHA256_LEN], char hex[RL_SHA256_HEX_LEN + 1]);

/* CRC-32 continuing from `crc` (start with 0). rl_crc32(0, "123456789", 9) == 0xCBF43926. */
RL_API uint32_t rl_crc32(uint32_t crc, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
