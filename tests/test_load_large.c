/*
 * test_load_large.c - large models load, and go through mbs_model_to_json
 * and back unchanged (tests/large_models.c, 20 000 bodies each): a chain
 * that uses every kind of name look-up of the JSON format, a ladder of
 * 19 998 closed loops (the automatic cut choice), and a URDF chain with
 * merged sensor links.
 *
 * Nothing is timed (bench/bench_load.c measures); the test is there for
 * the complexity: a loader that became quadratic again would take minutes
 * here under the sanitizers and hit the CTest time-out (it took 15 s for
 * 10 000 bodies in the sanitizer build before the loaders used name maps).
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "large_models.h"
#include "model_compare.h"

#define N 20000

/* write, reload, the same model */
static void round_trip(const mbs_model *m, const char *label)
{
    mbs_error err;
    char *json = mbs_model_to_json(m, &err);
    CHECK(json != NULL, "%s: %s", label, err.msg);
    mbs_model *m2 = json ? mbs_model_load_string(json, label, &err) : NULL;
    CHECK(m2 != NULL, "%s: reloading: %s", label, json ? err.msg : "");
    if (m2) CHECK(mbs_test_same_model(m, m2, label) == 0, "%s: the reloaded model differs", label);
    mbs_model_free(m2);
    free(json);
}

int main(void)
{
    mbs_error err;
    char *text = mbs_large_full_json(N);
    mbs_model *m = mbs_model_load_string(text, "full.json", &err);
    free(text);
    CHECK(m != NULL, "full: %s", m ? "" : err.msg);
    if (m) {
        CHECK(mbs_model_nbodies(m) == N && mbs_model_npoints(m) == 4 * N && mbs_model_nvectors(m) == N &&
                  mbs_model_nparams(m) == N && mbs_model_nforces(m) == 2 * N - 1 && mbs_model_nobjectives(m) == 1,
              "full: sizes");
        CHECK(mbs_point_find(m, "link12345.side") >= 0 && mbs_param_find(m, "m20000") == N - 1, "full: names");
        round_trip(m, "full");
        mbs_model_free(m);
    }

    text = mbs_large_ladder_json(N);
    m = mbs_model_load_string(text, "ladder.json", &err);
    free(text);
    CHECK(m != NULL, "ladder: %s", m ? "" : err.msg);
    if (m) {
        int rungs = 0;
        for (int k = 0; k < mbs_model_ncuts(m); k++) rungs += mbs_cut_name(m, k)[0] == 'r';
        CHECK(mbs_model_nbodies(m) == N && mbs_model_ncuts(m) == N - 2 && rungs == N - 2,
              "ladder: %d cuts, %d of them rungs", mbs_model_ncuts(m), rungs);
        round_trip(m, "ladder");
        mbs_model_free(m);
    }

    text = mbs_large_chain_urdf(N);
    m = mbs_model_load_urdf_string(text, "chain.urdf", NULL, &err);
    free(text);
    CHECK(m != NULL, "urdf: %s", m ? "" : err.msg);
    if (m) {
        CHECK(mbs_model_nbodies(m) == N && mbs_model_npoints(m) == N / 10 && mbs_model_nvectors(m) == 3 * N / 10,
              "urdf: sizes %d %d %d", mbs_model_nbodies(m), mbs_model_npoints(m), mbs_model_nvectors(m));
        round_trip(m, "urdf");
        mbs_model_free(m);
    }
    return mbs_test_summary("test_load_large");
}
