/*
 * test_check.c - the derivative check's tolerances (src/dynamics/check.c,
 * mbs_check_derivatives):
 *
 *   - on every shipped model (the JSON files in models/) every block is within the
 *     tolerance the check derives at each state (rep.ratio <= 1): 1000 nb
 *     eps for the inverse-dynamics blocks, that plus 2 nv eps kappa(M') for
 *     the blocks that solve with M';
 *   - kappa is that of M completed by p p^T for the Euler parameters: at a
 *     given state it equals the test's own (mbs_test_complete_euler,
 *     mbs_test_cond_spd) to the eigenvalues' round-off (each extreme
 *     eigenvalue within nv eps lambda_max, so kappa within 2 nv eps kappa,
 *     relative);
 *   - a wrong derivative fails: the complex step run on a copy of the
 *     model with one parameter moved by a relative 1e-6
 *     (mbs_check_derivatives_against) puts dtau/dq off by up to the move
 *     (its entries are linear in a length or a mass), measured 1.1e-6, far
 *     above its tolerance (1000 nb eps = 4.4e-13; the test asks for 1e4
 *     times it and 1e-9), while the unmoved copy passes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mbs_testing.h"

static const char *const MODELS[] = { "anchor_lift.json", "bicycle.json", "double_pendulum.json", "fivebar.json",
                                      "fourbar.json", "fourbar_redundant.json", "halfcar_step.json", "human43.json",
                                      "quarter_car.json", "slider_crank.json", "slider_crank_nospring.json",
                                      "arm3.json" };

static mbs_model *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "models/%s", name);
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path(path), &err);
    CHECK(m != NULL, "%s: %s", name, m ? "" : err.msg);
    return m;
}

/* Every block within its derived tolerance; the largest ratio into *w */
static void shipped(const char *name, double *w)
{
    mbs_model *m = load(name);
    if (!m) return;
    mbs_check_report rep;
    mbs_error err;
    CHECK(mbs_check_derivatives(m, 2, 3, MBS_REF_COM, NULL, NULL, &rep, &err) == MBS_OK, "%s: %s", name, err.msg);
    double r = 0;
    for (int b = 0; b < MBS_CHECK_NBLOCKS; b++) {
        CHECK(rep.ratio[b] <= 1, "%s: %s: %g above the tolerance %g", name, mbs_check_block_name(b), rep.worst[b],
              rep.tol[b]);
        r = fmax(r, rep.ratio[b]);
    }
    printf("%-26s kappa(M') %9.2e, dqdd/dq %9.2e (tolerance %9.2e), worst ratio %.2e\n", name, rep.cond,
           rep.worst[MBS_CHECK_DQDD_DQ], rep.tol[MBS_CHECK_DQDD_DQ], r);
    *w = fmax(*w, r);
    mbs_model_free(m);
}

/* At the model's initial state: kappa and the tolerances are the test's */
static void tolerances(const char *name)
{
    mbs_model *m = load(name);
    if (!m) return;
    const int nq = m->nq, nv = m->nv;
    double *q = calloc((size_t)nq, 8), *qd = calloc((size_t)nv, 8), *M = calloc((size_t)nv * nv, 8);
    mbs_data *d = mbs_data_create(m, NULL);
    CHECK(q && qd && M && d, "%s: memory", name);
    mbs_model_initial_state(m, q, qd);
    mbs_normalize_state(m, q, qd);
    CHECK(mbs_mass_matrix(m, d, q, M) == MBS_OK, "%s: M: %s", name, mbs_data_error(d));
    mbs_test_complete_euler(m, q, M);
    const double kappa = mbs_test_cond_spd(M, nv);
    mbs_check_report rep;
    mbs_error err;
    CHECK(mbs_check_derivatives(m, 1, 1, MBS_REF_COM, q, qd, &rep, &err) == MBS_OK, "%s: %s", name, err.msg);
    CHECK(fabs(rep.cond - kappa) <= 2 * nv * MBS_EPS * kappa * kappa, "%s: kappa %.17g, the test's %.17g", name,
          rep.cond, kappa);
    const double ro = 1000.0 * m->nb * MBS_EPS, fd = ro + 2 * nv * MBS_EPS * rep.cond;
    CHECK(rep.tol[MBS_CHECK_DTAU_DQ] == ro && rep.tol[MBS_CHECK_DQDD_DQ] == fd &&
          rep.tol[MBS_CHECK_FR_VS_SEMI] == fd, "%s: tolerances %g, %g, %g (expected %g, %g)", name,
          rep.tol[MBS_CHECK_DTAU_DQ], rep.tol[MBS_CHECK_DQDD_DQ], rep.tol[MBS_CHECK_FR_VS_SEMI], ro, fd);
    mbs_data_free(d);
    mbs_model_free(m);
    free(q); free(qd); free(M);
}

/* The complex step on a copy with parameter k moved by rel: the check
 * passes for rel = 0 and fails on the inverse-dynamics blocks otherwise */
static void wrong_derivative(const char *name, int k, double rel)
{
    mbs_model *m = load(name);
    if (!m) return;
    const int np = mbs_model_nparams(m);
    CHECK(k < np, "%s: parameter %d of %d", name, k, np);
    double *x = calloc((size_t)np + 1, 8);
    for (int j = 0; j < np; j++) x[j] = mbs_param_value(m, j);
    x[k] *= 1 + rel;
    mbs_error err;
    mbs_model *cm = mbs_model_with_params(m, x, &err);
    CHECK(cm != NULL, "%s: moved copy: %s", name, cm ? "" : err.msg);
    mbs_check_report rep;
    CHECK(cm && mbs_check_derivatives_against(m, cm, 2, 5, MBS_REF_COM, NULL, NULL, &rep, &err) == MBS_OK, "%s: %s",
          name, err.msg);
    double r = 0;
    for (int b = 0; b < MBS_CHECK_NBLOCKS; b++) r = fmax(r, rep.ratio[b]);
    if (rel == 0) {
        CHECK(r <= 1, "%s: the unmoved copy passes (worst ratio %g)", name, r);
    } else {
        CHECK(rep.ratio[MBS_CHECK_DTAU_DQ] > 1e4 && rep.worst[MBS_CHECK_DTAU_DQ] > 1e-9,
              "%s: %s moved by %g: dtau/dq %g, tolerance %g: the check must fail", name, mbs_param_name(m, k), rel,
              rep.worst[MBS_CHECK_DTAU_DQ], rep.tol[MBS_CHECK_DTAU_DQ]);
        printf("%s: %s moved by %g: dtau/dq off by %.2e, %.1e times its tolerance: fails\n", name,
               mbs_param_name(m, k), rel, rep.worst[MBS_CHECK_DTAU_DQ], rep.ratio[MBS_CHECK_DTAU_DQ]);
    }
    mbs_model_free(cm);
    mbs_model_free(m);
    free(x);
}

int main(void)
{
    double w = 0;
    for (size_t k = 0; k < sizeof MODELS / sizeof *MODELS; k++) shipped(MODELS[k], &w);
    printf("shipped models: worst error %.3f of the derived tolerance\n", w);
    tolerances("double_pendulum.json");
    tolerances("anchor_lift.json");
    tolerances("human43.json");
    wrong_derivative("double_pendulum.json", 0, 0);
    wrong_derivative("double_pendulum.json", 0, 1e-6);
    return mbs_test_summary("test_check");
}
