#include "testutil.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
