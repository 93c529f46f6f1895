/*
 * hashmap.c - open-addressing hash map from (tag, string) keys to ints
 * (see hashmap.h).
 */
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"

/* 64-bit FNV-1a over the key bytes (incremental: the state after a prefix
 * is the hash of that prefix), then the tag and the MurmurHash3 finalizer,
 * so that the low bits used for the table index depend on every input bit. */
#define FNV_BASIS UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

static uint64_t hash_finish(uint64_t h, uint64_t tag)
{
    h ^= tag * UINT64_C(0x9e3779b97f4a7c15);
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

static uint64_t hash_key(uint64_t tag, const char *key, size_t len)
{
    uint64_t h = FNV_BASIS;
    for (size_t k = 0; k < len; k++) h = (h ^ (unsigned char)key[k]) * FNV_PRIME;
    return hash_finish(h, tag);
}

/* Table size for n keys: a power of two >= 2 n, at least 16. */
static size_t table_size(size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    return cap;
}

int mbs_hashmap_init(mbs_hashmap *m, size_t expected)
{
    m->n = 0;
    m->cap = table_size(expected);
    m->slot = calloc(m->cap, sizeof *m->slot);
    if (!m->slot) {
        m->cap = 0;
        return -1;
    }
    return 0;
}

void mbs_hashmap_free(mbs_hashmap *m)
{
    if (!m) return;
    free(m->slot);
    m->slot = NULL;
    m->cap = m->n = 0;
}

/* The slot holding (tag, key), or the empty slot where it would go. */
static mbs_hashmap_slot *probe(const mbs_hashmap *m, uint64_t h, uint64_t tag, const char *key, size_t len)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        mbs_hashmap_slot *s = &m->slot[i];
        if (!s->key) return s;
        if (s->hash == h && s->tag == tag && s->len == len && memcmp(s->key, key, len) == 0) return s;
    }
}

int mbs_hashmap_get_n(const mbs_hashmap *m, uint64_t tag, const char *key, size_t len)
{
    if (!m || m->n == 0 || !key) return -1;
    const mbs_hashmap_slot *s = probe(m, hash_key(tag, key, len), tag, key, len);
    return s->key ? s->value : -1;
}

int mbs_hashmap_get(const mbs_hashmap *m, uint64_t tag, const char *key)
{
    return key ? mbs_hashmap_get_n(m, tag, key, strlen(key)) : -1;
}

size_t mbs_hashmap_get_prefixes(const mbs_hashmap *m, uint64_t tag, const char *key, char sep, int *out,
                                size_t max)
{
    size_t found = 0;
    if (!m || m->n == 0 || !key) return 0;
    uint64_t h = FNV_BASIS;
    for (size_t k = 0; key[k]; k++) {
        if (key[k] == sep) {
            const mbs_hashmap_slot *s = probe(m, hash_finish(h, tag), tag, key, k);
            if (s->key) {
                if (found < max) out[found] = s->value;
                found++;
            }
        }
        h = (h ^ (unsigned char)key[k]) * FNV_PRIME;
    }
    return found;
}

static int grow(mbs_hashmap *m)
{
    mbs_hashmap g;
    if (mbs_hashmap_init(&g, m->n + 1) != 0) return -1;
    for (size_t i = 0; i < m->cap; i++) {
        const mbs_hashmap_slot *s = &m->slot[i];
        if (s->key) *probe(&g, s->hash, s->tag, s->key, s->len) = *s;
    }
    g.n = m->n;
    free(m->slot);
    *m = g;
    return 0;
}

int mbs_hashmap_put(mbs_hashmap *m, uint64_t tag, const char *key, int value)
{
    if (!key) return -2;
    size_t len = strlen(key);
    uint64_t h = hash_key(tag, key, len);
    if (m->cap > 0) {
        const mbs_hashmap_slot *s = probe(m, h, tag, key, len);
        if (s->key) return s->value;
    }
    if (2 * (m->n + 1) > m->cap && grow(m) != 0) return -2;
    mbs_hashmap_slot *s = probe(m, h, tag, key, len);
    s->key = key;
    s->len = len;
    s->tag = tag;
    s->hash = h;
    s->value = value;
    m->n++;
    return -1;
}
