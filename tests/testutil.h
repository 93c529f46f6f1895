/*
 * testutil.h - tiny assertion helpers shared by the test programs.
 *
 * Each test program calls the CHECK* macros and ends with
 * `return mbs_test_summary("name");`, which prints "N passed, N failed"
 * and returns non-zero if anything failed.
 */
#ifndef MBS_TESTUTIL_H
#define MBS_TESTUTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "mbsens/mbsens.h"

extern int mbs_test_pass, mbs_test_fail;

#define CHECK(cond, ...) do { \
    if (cond) mbs_test_pass++; \
    else { mbs_test_fail++; fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
           fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_CLOSE(a, b, tol, ...) do { double _a = (a), _b = (b); \
    double _s = fabs(_b) > 1 ? fabs(_b) : 1; \
    if (fabs(_a - _b) <= (tol) * _s) mbs_test_pass++; \
    else { mbs_test_fail++; fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g (tol %g): ", \
           __FILE__, __LINE__, #a, _a, _b, (double)(tol)); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

int mbs_test_summary(const char *name);

/* Deterministic random numbers (xorshift64*). */
typedef struct { uint64_t s; } mbs_rng;
void mbs_rng_seed(mbs_rng *r, uint64_t seed);
double mbs_rng_uniform(mbs_rng *r, double lo, double hi);
int mbs_rng_int(mbs_rng *r, int n); /* 0..n-1 */

/* Path of a file in the source tree ($MBS_SOURCE_DIR/rel); static buffer. */
const char *mbs_test_path(const char *rel);

/* max_k |a_k - b_k| / max(1, max_k |b_k|) */
double mbs_rel_err(const double *a, const double *b, int n);

/* The example robots: $MBS_URDF_DIR, else ../shared/data/example-robot-data
 * relative to the source tree, into dir. 0 if it is a directory, else -1
 * (the caller reports itself skipped). */
int mbs_test_urdf_dir(char *dir, size_t len);

/* mbs_model_to_json of m, reloaded: the same model (mbs_test_same_model,
 * model_compare.h: every size, name and number bit for bit), written again
 * as the same text, and bit for bit the same ID, M and FD at 3 random
 * states (each a CHECK). Returns the worst relative difference of those
 * results (0 when they agree; INFINITY if the model differs). */
double mbs_test_json_round_trip(const mbs_model *m, const char *label, unsigned long seed);

#endif
