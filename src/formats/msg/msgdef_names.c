/* A string -> index hash for the schema parsers (open addressing, linear probing): IDL
 * symbols, member names checked for duplicates, and array/string types shared by shape,
 * so that parsing a schema is linear in its size rather than quadratic. */
#include "msgdef_internal.h"

#include "runlab/error.h"

#include <stdlib.h>
#include <string.h>

struct msgdef_name_slot {
    char *key; /* owned copy, NUL-terminated; NULL: empty slot */
    size_t len;
    uint64_t hash;
    uint32_t value;
};

static uint64_t hash_of(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix against clustering */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

static struct msgdef_name_slot *find_slot(const msgdef_names *h, const char *key, size_t len,
                                          uint64_t hash)
{
    size_t mask = h->cap - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        struct msgdef_name_slot *s = &h->slots[i];
        if (!s->key || (s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0))
            return s;
    }
}

bool msgdef_names_get(const msgdef_names *h, const char *key, size_t len, uint32_t *value)
{
    if (!h->cap)
        return false;
    const struct msgdef_name_slot *s = find_slot(h, key, len, hash_of(key, len));
    if (!s->key)
        return false;
    if (value)
        *value = s->value;
    return true;
}

static int grow(msgdef_names *h)
{
    size_t ncap = h->cap ? h->cap * 2 : 64;
    if (ncap > SIZE_MAX / sizeof(struct msgdef_name_slot))
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    msgdef_names n = {.slots = calloc(ncap, sizeof *n.slots), .cap = ncap, .n = h->n};
    if (!n.slots)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    for (size_t i = 0; i < h->cap; i++)
        if (h->slots[i].key)
            *find_slot(&n, h->slots[i].key, h->slots[i].len, h->slots[i].hash) = h->slots[i];
    free(h->slots);
    *h = n;
    return RL_OK;
}

int msgdef_names_put(msgdef_names *h, const char *key, size_t len, uint32_t value)
{
    if ((h->n + 1) * 2 > h->cap) {
        int rc = grow(h);
        if (rc < 0)
            return rc;
    }
    uint64_t hash = hash_of(key, len);
    struct msgdef_name_slot *s = find_slot(h, key, len, hash);
    if (s->key) {
        s->value = value;
        return RL_OK;
    }
    char *copy = malloc(len + 1); /* its own copy: the table sits below the builder */
    if (!copy)
        return rl_error_set(RL_ENOMEM, "schema: out of memory");
    memcpy(copy, key, len);
    copy[len] = '\0';
    *s = (struct msgdef_name_slot){.key = copy, .len = len, .hash = hash, .value = value};
    h->n++;
    return RL_OK;
}

void msgdef_names_free(msgdef_names *h)
{
    for (size_t i = 0; i < h->cap; i++)
        free(h->slots[i].key);
    free(h->slots);
    *h = (msgdef_names){0};
}
