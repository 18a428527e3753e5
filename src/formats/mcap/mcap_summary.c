/* The summary section of a complete MCAP file, reached through its footer alone: where it
 * lies (checked against the file's size and the summary CRC) and its Statistics record.
 * Nothing before the summary is read, so asking a 1 GB bag for its message counts costs a
 * few kilobytes; a file without an intact summary is an answer, never a reason to scan. */
#include "mcap_internal.h"

#include "runlab/error.h"
#include "runlab/hash.h"

#include <string.h>

int rl_mcap_summary_find(const uint8_t *data, size_t len, int verify_crc, size_t *start,
                         size_t *end)
{
    /* Footer record and closing magic; the summary CRC covers the summary and the footer
     * up to (excluding) the CRC field itself. */
    const size_t tail = RL_MCAP_RECORD_PREFIX + RL_MCAP_FOOTER_BODY + RL_MCAP_MAGIC_LEN;
    const size_t crc_field = 4;
    *start = *end = 0;
    if (!data || len < RL_MCAP_MAGIC_LEN || memcmp(data, rl_mcap_magic, RL_MCAP_MAGIC_LEN) != 0)
        return rl_error_set(RL_EPARSE, "byte 0: not an MCAP file (no leading magic)");
    if (len < RL_MCAP_MAGIC_LEN + tail ||
        memcmp(data + len - RL_MCAP_MAGIC_LEN, rl_mcap_magic, RL_MCAP_MAGIC_LEN) != 0)
        return rl_error_set(RL_ETRUNCATED,
                            "byte %zu: no footer: the file does not end with a Footer record "
                            "and the closing magic (not written to the end)",
                            len);
    size_t fpos = len - tail;
    const uint8_t *f = data + fpos;
    if (f[0] != RL_MCAP_OP_FOOTER || mcap_rd64(f + 1) != RL_MCAP_FOOTER_BODY)
        return rl_error_set(RL_EPARSE,
                            "byte %zu: no footer: opcode 0x%02x with body length %llu before "
                            "the closing magic (a Footer is 0x02 with %d bytes)",
                            fpos, f[0], (unsigned long long)mcap_rd64(f + 1),
                            (int)RL_MCAP_FOOTER_BODY);
    rl_mcap_record fr;
    if (rl_mcap_record_parse(RL_MCAP_OP_FOOTER, f + RL_MCAP_RECORD_PREFIX, RL_MCAP_FOOTER_BODY,
                             &fr) < 0)
        return rl_error_prefix(RL_EPARSE, "byte %zu", fpos);
    uint64_t s = fr.u.footer.summary_start;
    if (s == 0)
        return 0;
    if (s < RL_MCAP_MAGIC_LEN || s > fpos)
        return rl_error_set(RL_EPARSE,
                            "byte %zu: Footer record: summary_start %llu outside the file's "
                            "records (%d..%zu)",
                            fpos, (unsigned long long)s, (int)RL_MCAP_MAGIC_LEN, fpos);
    if (verify_crc && fr.u.footer.summary_crc != 0) {
        size_t covered = fpos + RL_MCAP_RECORD_PREFIX + RL_MCAP_FOOTER_BODY - crc_field - (size_t)s;
        uint32_t crc = rl_crc32(0, data + s, covered);
        if (crc != fr.u.footer.summary_crc)
            return rl_error_set(RL_ECRC,
                                "byte %llu: summary CRC mismatch: stored %u, computed %u",
                                (unsigned long long)s, (unsigned)fr.u.footer.summary_crc,
                                (unsigned)crc);
    }
    *start = (size_t)s;
    *end = fpos;
    return 1;
}

int rl_mcap_summary_statistics(const uint8_t *data, size_t len, int verify_crc,
                               rl_mcap_statistics *out)
{
    memset(out, 0, sizeof *out);
    size_t pos, end;
    int rc = rl_mcap_summary_find(data, len, verify_crc, &pos, &end);
    if (rc <= 0)
        return rc;
    rl_mcap_record rec;
    while ((rc = rl_mcap_records_next(data, end, &pos, &rec)) == 1)
        if (rec.opcode == RL_MCAP_OP_STATISTICS) {
            *out = rec.u.statistics;
            return 1;
        }
    return rc; /* 0: the summary holds no Statistics record */
}
