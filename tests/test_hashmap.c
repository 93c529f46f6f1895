/*
 * test_hashmap.c - the name map of the loaders (src/hashmap.c): every key
 * inserted is found with its value, absent keys are not, a key inserted
 * twice keeps its first value, the tag separates equal strings, look-ups
 * by length and by prefix, growth from an empty map, and a reference
 * model (a linear scan over the same keys) on random names.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/hashmap.h"

#define NKEYS 20000

int main(void)
{
    /* random names over a small alphabet, many sharing prefixes, a fifth of
     * them repeated (the first value wins) */
    static char names[NKEYS][12];
    mbs_rng r;
    mbs_rng_seed(&r, 31);
    for (int k = 0; k < NKEYS; k++) {
        if (k > 0 && mbs_rng_int(&r, 5) == 0) {
            memcpy(names[k], names[mbs_rng_int(&r, k)], sizeof names[k]);
            continue;
        }
        int len = 1 + mbs_rng_int(&r, 10);
        for (int c = 0; c < len; c++) names[k][c] = "ab.c"[mbs_rng_int(&r, 4)];
        names[k][len] = '\0';
    }
    mbs_hashmap m = { 0 };
    int *first = malloc(NKEYS * sizeof *first), bad = 0;
    for (int k = 0; k < NKEYS && first; k++) {
        int j = 0;
        while (strcmp(names[j], names[k]) != 0) j++;   /* reference: the first equal name */
        first[k] = j;
        int rc = mbs_hashmap_put(&m, 7, names[k], k);
        if ((j == k && rc != -1) || (j < k && rc != j)) bad++;
    }
    CHECK(bad == 0, "%d insertions returned the wrong status", bad);
    for (int k = 0; k < NKEYS && first; k++) {
        if (mbs_hashmap_get(&m, 7, names[k]) != first[k]) bad++;
        if (mbs_hashmap_get(&m, 8, names[k]) != -1) bad++;   /* other tag */
    }
    CHECK(bad == 0, "%d look-ups gave the wrong value", bad);
    CHECK(mbs_hashmap_get(&m, 7, "ab.cab.cab.c") == -1 && mbs_hashmap_get(&m, 7, "") == -1 &&
              mbs_hashmap_get(&m, 7, NULL) == -1, "absent keys");

    /* by length, and by prefix */
    mbs_hashmap p = { 0 };
    CHECK(mbs_hashmap_get(&p, 0, "a") == -1, "empty map");
    CHECK(mbs_hashmap_init(&p, 3) == 0, "init");
    CHECK(mbs_hashmap_put(&p, 0, "a", 1) == -1 && mbs_hashmap_put(&p, 0, "a.b", 2) == -1 &&
              mbs_hashmap_put(&p, 0, "a.b.c", 3) == -1 && mbs_hashmap_put(&p, 1, "a", 4) == -1 &&
              mbs_hashmap_put(&p, 0, "", 5) == -1, "put");
    CHECK(mbs_hashmap_get_n(&p, 0, "a.b.c.d", 3) == 2 && mbs_hashmap_get_n(&p, 0, "a.x", 1) == 1 &&
              mbs_hashmap_get_n(&p, 0, "abc", 0) == 5 && mbs_hashmap_get(&p, 1, "a") == 4, "get_n");
    int out[4] = { -1, -1, -1, -1 };
    size_t n = mbs_hashmap_get_prefixes(&p, 0, "a.b.c.d", '.', out, 4);
    CHECK(n == 3 && out[0] == 1 && out[1] == 2 && out[2] == 3, "prefixes of a.b.c.d: %zu", n);
    n = mbs_hashmap_get_prefixes(&p, 0, "a.b.c.d", '.', out, 1);
    CHECK(n == 3 && out[0] == 1, "prefixes, one stored: %zu", n);
    CHECK(mbs_hashmap_get_prefixes(&p, 0, "a.b", '.', out, 4) == 1 && out[0] == 1, "the whole key is no prefix");
    CHECK(mbs_hashmap_get_prefixes(&p, 0, ".a", '.', out, 4) == 1 && out[0] == 5, "the empty prefix");
    CHECK(mbs_hashmap_get_prefixes(&p, 0, "b.a", '.', out, 4) == 0, "no prefix");

    mbs_hashmap_free(&p);
    mbs_hashmap_free(&m);
    mbs_hashmap_free(&m);   /* freeing twice is harmless */
    free(first);
    return mbs_test_summary("test_hashmap");
}
