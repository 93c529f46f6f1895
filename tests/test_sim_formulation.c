/*
 * test_sim_formulation.c - the closed-loop formulation and its settings in
 * the model file's "simulation" section (docs/model-format.md).
 *
 * The five-bar (models/fivebar.json) with a "simulation" section written by
 * the test:
 *   - every formulation name of `mbsens simulate --formulation` is read into
 *     mbs_sim_options (loop, or the open-tree algorithm), with the settings
 *     penalty, proj_scale, projection, proj_tol, lambda_factor,
 *     tangent_keep, omega, xi, baumgarte; members not given keep the
 *     built-in defaults (those of the command line);
 *   - mbs_simulate with the model's options runs the formulation of the file
 *     and gives the same run as the same options set in code;
 *   - bad values are refused with a one-line message naming the JSON path.
 * The shipped models/fivebar.json chooses ALI3-P with the thesis's settings.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "testutil.h"

static json_t *fivebar_doc(void)
{
    json_error_t je;
    json_t *doc = json_load_file(mbs_test_path("models/fivebar.json"), 0, &je);
    CHECK(doc != NULL, "fivebar.json: %s", je.text);
    return doc;
}

/* The five-bar with "simulation" = the JSON text sim (NULL: none). */
static mbs_model *with_sim(const char *sim, mbs_error *err)
{
    json_t *doc = fivebar_doc();
    if (!doc) return NULL;
    json_object_del(doc, "simulation");
    if (sim) {
        json_error_t je;
        json_t *s = json_loads(sim, 0, &je);
        CHECK(s != NULL, "test JSON %s: %s", sim, je.text);
        json_object_set_new(doc, "simulation", s);
    }
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    mbs_model *m = mbs_model_load_string(text, "fivebar_case.json", err);
    free(text);
    return m;
}

static void good(void)
{
    mbs_error err = { 0, "" };
    const mbs_sim_options def = mbs_sim_options_default();
    /* no section: the defaults, no loop formulation */
    mbs_model *m = with_sim(NULL, &err);
    CHECK(m != NULL, "%s", err.msg);
    if (m) {
        mbs_sim_options o = mbs_model_sim_options(m);
        CHECK(o.loop == MBS_LOOP_NONE && o.penalty == def.penalty && o.proj_scale == def.proj_scale,
              "defaults without a section");
        mbs_model_free(m);
    }
    /* every formulation name */
    static const char *const names[] = { "ali3p", "matrixr", "penalty", "index1" };
    static const mbs_loop_formulation loops[] = { MBS_LOOP_ALI3P, MBS_LOOP_MATRIXR, MBS_LOOP_PENALTY,
                                                  MBS_LOOP_INDEX1 };
    for (int k = 0; k < 4; k++) {
        char sim[128];
        snprintf(sim, sizeof sim, "{\"formulation\": \"%s\"}", names[k]);
        m = with_sim(sim, &err);
        CHECK(m != NULL, "%s: %s", names[k], err.msg);
        if (!m) continue;
        mbs_sim_options o = mbs_model_sim_options(m);
        CHECK(o.loop == loops[k], "%s: loop %d", names[k], (int)o.loop);
        CHECK(o.formulation == def.formulation && o.penalty == def.penalty && o.proj_scale == def.proj_scale &&
              o.projection == def.projection && o.tolerance == def.tolerance && o.tangent_keep == def.tangent_keep,
              "%s: the other settings keep their defaults", names[k]);
        mbs_model_free(m);
    }
    m = with_sim("{\"formulation\": \"semi\"}", &err);
    CHECK(m && mbs_model_sim_options(m).formulation == MBS_FD_SEMI_RECURSIVE &&
          mbs_model_sim_options(m).loop == MBS_LOOP_NONE, "semi: %s", err.msg);
    mbs_model_free(m);
    /* every setting */
    m = with_sim("{\"formulation\": \"ali3p\", \"penalty\": 1e8, \"proj_scale\": 0.5, \"projection\": \"iterative\","
                 " \"proj_tol\": 1e-12, \"lambda_factor\": 0.5, \"tangent_keep\": false, \"omega\": 7, \"xi\": 0.5,"
                 " \"baumgarte\": false, \"tolerance\": 1e-9, \"tf\": 0.2}", &err);
    CHECK(m != NULL, "all settings: %s", err.msg);
    if (m) {
        mbs_sim_options o = mbs_model_sim_options(m);
        CHECK(o.loop == MBS_LOOP_ALI3P && o.penalty == 1e8 && o.proj_scale == 0.5 &&
              o.projection == MBS_PROJ_ITERATIVE && o.proj_tol == 1e-12 && o.lambda_factor == 0.5 &&
              o.tangent_keep == 0 && o.omega == 7 && o.xi == 0.5 && o.baumgarte == 0 && o.tolerance == 1e-9 &&
              o.tf == 0.2, "all settings read");
        mbs_model_free(m);
    }
}

/* The file's formulation runs, and equals the same options set in code. */
static void runs(void)
{
    mbs_error err = { 0, "" };
    mbs_model *m = with_sim("{\"formulation\": \"matrixr\", \"tf\": 0.1, \"penalty\": 1e8}", &err);
    mbs_model *m0 = with_sim(NULL, &err);
    CHECK(m && m0, "%s", err.msg);
    if (!m || !m0) {
        mbs_model_free(m);
        mbs_model_free(m0);
        return;
    }
    mbs_data *d = mbs_data_create(m, NULL), *d0 = mbs_data_create(m0, NULL);
    mbs_sim_stats st, st0;
    int rc = mbs_simulate(m, d, NULL, NULL, NULL, NULL, NULL, &st, &err);
    CHECK(rc == MBS_OK, "file's formulation: %s", err.msg);
    mbs_sim_options o = mbs_model_sim_options(m0);
    o.loop = MBS_LOOP_MATRIXR;
    o.tf = 0.1;
    o.penalty = 1e8;
    rc = mbs_simulate(m0, d0, &o, NULL, NULL, NULL, NULL, &st0, &err);
    CHECK(rc == MBS_OK, "options in code: %s", err.msg);
    CHECK(st.steps == 100 && st.steps == st0.steps && st.energy == st0.energy && st.iterations == st0.iterations,
          "file and code: %ld/%ld steps, energy %.17g/%.17g", st.steps, st0.steps, st.energy, st0.energy);
    /* without a formulation (file or code) a closed-loop model is refused, naming the choices */
    rc = mbs_simulate(m0, d0, NULL, NULL, NULL, NULL, NULL, &st0, &err);
    CHECK(rc != MBS_OK && strstr(err.msg, "ali3p|matrixr|penalty|index1"), "refused without: %s", err.msg);
    mbs_data_free(d);
    mbs_data_free(d0);
    mbs_model_free(m);
    mbs_model_free(m0);
}

static void bad(int line, const char *sim, const char *path, const char *what)
{
    mbs_error err = { 0, "" };
    mbs_model *m = with_sim(sim, &err);
    CHECK(m == NULL, "line %d: accepted %s", line, sim);
    mbs_model_free(m);
    CHECK(err.code == MBS_ERR_MODEL, "line %d: status %d: %s", line, err.code, err.msg);
    CHECK(strstr(err.msg, path) != NULL && strstr(err.msg, what) != NULL && !strchr(err.msg, '\n'),
          "line %d: message lacks \"%s\" / \"%s\": %s", line, path, what, err.msg);
    if (getenv("MBS_TEST_VERBOSE")) printf("line %d: %s\n", line, err.msg);
}

static void bad_input(void)
{
    bad(__LINE__, "{\"formulation\": \"ali3\"}", "simulation.formulation", "fr, semi, ali3p, matrixr, penalty or index1");
    bad(__LINE__, "{\"formulation\": \"none\"}", "simulation.formulation", "unknown value \"none\"");
    bad(__LINE__, "{\"formulation\": 3}", "simulation.formulation", "string");
    bad(__LINE__, "{\"penalty\": 0}", "simulation.penalty", "must be > 0");
    bad(__LINE__, "{\"penalty\": \"big\"}", "simulation.penalty", "expected a number");
    bad(__LINE__, "{\"proj_scale\": -1}", "simulation.proj_scale", "must be > 0");
    bad(__LINE__, "{\"projection\": \"exact\"}", "simulation.projection", "penalty or iterative");
    bad(__LINE__, "{\"proj_tol\": -1e-9}", "simulation.proj_tol", "must be >= 0");
    bad(__LINE__, "{\"lambda_factor\": 1.5}", "simulation.lambda_factor", "must be in [0, 1]");
    bad(__LINE__, "{\"omega\": -1}", "simulation.omega", "must be >= 0");
    bad(__LINE__, "{\"xi\": -0.5}", "simulation.xi", "must be >= 0");
    bad(__LINE__, "{\"tangent_keep\": 1}", "simulation.tangent_keep", "expected true or false");
    bad(__LINE__, "{\"baumgarte\": \"yes\"}", "simulation.baumgarte", "expected true or false");
    bad(__LINE__, "{\"alpha\": 1e9}", "simulation", "alpha");
}

/* The shipped five-bar chooses ALI3-P with the thesis's settings (Table 7.2). */
static void shipped(void)
{
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    mbs_sim_options o = mbs_model_sim_options(m);
    CHECK(o.loop == MBS_LOOP_ALI3P && o.penalty == 1e9 && o.proj_scale == 1 && o.projection == MBS_PROJ_PENALTY &&
          o.tolerance == 1e-10 && o.dt == 1e-3, "models/fivebar.json: ali3p, alpha 1e9, varsigma 1, 1 ms");
    mbs_model_free(m);
}

int main(void)
{
    good();
    runs();
    bad_input();
    shipped();
    return mbs_test_summary("sim_formulation");
}
