/*
 * hashmap.h - a small open-addressing hash map from keys to ints (internal).
 *
 * A key is a pair (tag, string): an unsigned 64-bit tag and a byte string
 * (NUL-terminated, or given with its length). The loaders use the tag for a
 * scope (the body of a named point) or for integer keys (with the empty
 * string). The map does not copy key strings: they must stay valid, and
 * unchanged, while the map is used. Values are ints >= 0.
 *
 * Linear probing in a power-of-two table kept at most half full; lookups
 * and insertions cost O(1 + key length) on average. A map is
 * zero-initialized (mbs_hashmap m = { 0 }) or set up with mbs_hashmap_init;
 * it grows as needed.
 */
#ifndef MBS_HASHMAP_H
#define MBS_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct mbs_hashmap_slot {
    const char *key;       /* NULL: empty */
    size_t len;
    uint64_t tag;
    uint64_t hash;
    int value;
} mbs_hashmap_slot;

typedef struct mbs_hashmap {
    mbs_hashmap_slot *slot;
    size_t cap;            /* 0 or a power of two */
    size_t n;
} mbs_hashmap;

/* Room for `expected` keys without growing. 0, or -1 if memory runs out. */
int mbs_hashmap_init(mbs_hashmap *m, size_t expected);
void mbs_hashmap_free(mbs_hashmap *m);

/* The value of (tag, key), or -1 if absent. */
int mbs_hashmap_get(const mbs_hashmap *m, uint64_t tag, const char *key);
/* The same for the first len bytes of key (which need not end there). */
int mbs_hashmap_get_n(const mbs_hashmap *m, uint64_t tag, const char *key, size_t len);

/* The values of the keys (tag, P) for every prefix P of key that is
 * followed in key by the separator sep ("a.b.c", '.': "a", "a.b"), shortest
 * first. The first `max` of them go to out[]; returns how many there are.
 * Cost O(strlen(key)) plus the comparison of the keys found. */
size_t mbs_hashmap_get_prefixes(const mbs_hashmap *m, uint64_t tag, const char *key, char sep, int *out,
                                size_t max);

/* Insert (tag, key) -> value unless the key is present. Returns the value
 * already stored for the key (>= 0, the map unchanged), -1 after
 * inserting the key, or -2 if memory ran out (the map unchanged). */
int mbs_hashmap_put(mbs_hashmap *m, uint64_t tag, const char *key, int value);

#endif
