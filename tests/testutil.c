#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "model_compare.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mbs_test_pass = 0, mbs_test_fail = 0;

int mbs_test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, mbs_test_pass, mbs_test_fail);
    if (mbs_test_pass == 0 && mbs_test_fail == 0) {
        printf("%s: no check was executed\n", name);
        return 1;
    }
    return mbs_test_fail ? 1 : 0;
}

void mbs_rng_seed(mbs_rng *r, uint64_t seed) { r->s = seed * 2685821657736338717ULL + 88172645463325252ULL; if (!r->s) r->s = 1; }

static uint64_t next(mbs_rng *r)
{
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}

double mbs_rng_uniform(mbs_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next(r) >> 11) * (1.0 / 9007199254740992.0));
}

int mbs_rng_int(mbs_rng *r, int n) { return (int)(next(r) % (uint64_t)n); }

const char *mbs_test_path(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("MBS_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
    return buf;
}

double mbs_rel_err(const double *a, const double *b, int n)
{
    double scale = 1, err = 0;
    for (int k = 0; k < n; k++) if (fabs(b[k]) > scale) scale = fabs(b[k]);
    for (int k = 0; k < n; k++) { double e = fabs(a[k] - b[k]); if (e > err || isnan(e)) err = isnan(e) ? INFINITY : e; }
    return err / scale;
}

int mbs_test_urdf_dir(char *dir, size_t len)
{
    const char *env = getenv("MBS_URDF_DIR");
    if (env && *env)
        snprintf(dir, len, "%s", env);
    else
        snprintf(dir, len, "%s", mbs_test_path("../shared/data/example-robot-data"));
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* mbs_model_to_json, reloaded: the same model (mbs_test_same_model), the
 * same text when written again, and bit for bit the same ID, M and FD at
 * random states. Returns the worst relative difference of those. */
double mbs_test_json_round_trip(const mbs_model *m, const char *label, unsigned long seed)
{
    mbs_error err = { 0, "" };
    char *json = mbs_model_to_json(m, &err);
    CHECK(json != NULL, "%s: to_json: %s", label, err.msg);
    if (!json) return INFINITY;
    mbs_model *m2 = mbs_model_load_string(json, label, &err);
    CHECK(m2 != NULL, "%s: reloading the JSON: %s", label, err.msg);
    if (!m2) {
        free(json);
        return INFINITY;
    }
    char *json2 = mbs_model_to_json(m2, &err);
    CHECK(json2 && strcmp(json, json2) == 0, "%s: the reloaded model is written differently", label);
    free(json);
    free(json2);
    const int nq = mbs_model_nq(m);
    if (mbs_test_same_model(m, m2, label) != 0) {
        mbs_model_free(m2);
        return INFINITY;
    }
    double worst = 0;
    if (mbs_model_nq(m2) == nq) {
        mbs_data *d1 = mbs_data_create(m, &err), *d2 = mbs_data_create(m2, &err);
        size_t n = (size_t)nq;
        double *q = malloc(n * sizeof *q), *qd = malloc(n * sizeof *qd), *qdd = malloc(n * sizeof *qdd);
        double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b);
        mbs_rng rng;
        mbs_rng_seed(&rng, seed);
        for (int s = 0; s < 3; s++) {
            for (int k = 0; k < nq; k++) {
                q[k] = mbs_rng_uniform(&rng, -2, 2);
                qd[k] = mbs_rng_uniform(&rng, -2, 2);
                qdd[k] = mbs_rng_uniform(&rng, -2, 2);
            }
            mbs_normalize_state(m, q, qd);
            double e;
            mbs_inverse_dynamics(m, d1, q, qd, qdd, a);
            mbs_inverse_dynamics(m2, d2, q, qd, qdd, b);
            e = mbs_rel_err(b, a, nq);
            CHECK(memcmp(a, b, (size_t)nq * sizeof *a) == 0, "%s: ID differs by %g after the round trip", label, e);
            if (e > worst) worst = e;
            mbs_mass_matrix(m, d1, q, a);
            mbs_mass_matrix(m2, d2, q, b);
            e = mbs_rel_err(b, a, nq * nq);
            CHECK(memcmp(a, b, (size_t)nq * nq * sizeof *a) == 0, "%s: M differs by %g after the round trip", label,
                  e);
            if (e > worst) worst = e;
            int r1 = mbs_forward_dynamics(m, d1, MBS_FD_RECURSIVE, q, qd, qdd, a);
            int r2 = mbs_forward_dynamics(m2, d2, MBS_FD_RECURSIVE, q, qd, qdd, b);
            CHECK(r1 == MBS_OK && r2 == MBS_OK, "%s: FD failed", label);
            e = mbs_rel_err(b, a, nq);
            CHECK(memcmp(a, b, (size_t)nq * sizeof *a) == 0, "%s: FD differs by %g after the round trip", label, e);
            if (e > worst) worst = e;
        }
        free(q); free(qd); free(qdd); free(a); free(b);
        mbs_data_free(d1);
        mbs_data_free(d2);
    }
    mbs_model_free(m2);
    return worst;
}

