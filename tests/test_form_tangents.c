/*
 * test_form_tangents.c - variants of the residual's tangent (form_core.c).
 *
 * 1. Chained tangents (mbs_form_tangent_from): a tangent along (dq, 0, 0,
 *    dx), then (dq, dqd, 0, dx) from the velocity level, then (dq, dqd,
 *    dqdd, dx) from the acceleration level equals the full tangent along
 *    (dq, dqd, dqdd, dx), on random trees of every joint type with random
 *    directions in the state and the parameters, and on the closed-loop
 *    models (constraint tangents too).
 *
 * 2. The residual's tangent along parameters that
 * move no kinematic quantity (mbs_form_tangent_dynamic: loads and body terms
 * only, no kinematic sweep) against the full tangent sweep (mbs_form_tangent,
 * itself tested against complex step), and the classification of the
 * parameter kinds (mbs_form_param_dynamic).
 *
 * Random trees of every joint type with parameters of every kind (gravity,
 * mass, CoM, inertia, joint and body points) at random states, and shipped
 * models whose parameters set masses, spring-dampers (free length,
 * stiffness, damping; five-bar, slider-crank, half car) and spline knots
 * of a torque (bicycle).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "model/model_impl.h"
#include "kernels/data.h"
#include "dynamics/derivatives.h"
#include "formulations/form_impl.h"

static double g_worst;
static int g_dynamic, g_kinematic, g_nonzero;

/* every parameter of m at (q, qd, qdd): the dynamic tangent = the full one;
 * kinds[j] (if given): 1 dynamic expected, 0 not, -1 either */
static void compare(const mbs_model *m, const double *q, const double *qd, const double *qdd, const int *kinds,
                    const char *what)
{
    const int n = m->nq, np = mbs_model_nparams(m);
    mbs_data *d = mbs_data_create(m, NULL);
    double *dx = calloc((size_t)m->nx + 1, sizeof(double)), *r = calloc((size_t)n + 1, sizeof(double));
    double *a = calloc((size_t)n + 1, sizeof(double)), *b = calloc((size_t)n + 1, sizeof(double));
    mbs_data_set_time(d, 0.3);
    mbs_form_primal(m, d, 0.3, q, qd, qdd, r, NULL, NULL, NULL, NULL);
    for (int j = 0; j < np; j++) {
        const int dyn = mbs_form_param_dynamic(m, j);
        if (kinds && kinds[j] >= 0)
            CHECK(dyn == kinds[j], "%s: parameter %s classified %s", what, m->param[j].name,
                  dyn ? "dynamic" : "kinematic");
        if (!dyn) { g_kinematic++; continue; }
        g_dynamic++;
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, 0.3, q, qd, qdd, NULL, NULL, NULL, dx, b, NULL, NULL, NULL, NULL);
        mbs_form_tangent_dynamic(m, d, q, qd, dx, a);
        double e = mbs_rel_err(a, b, n), s = 0;
        for (int i = 0; i < n; i++) s += fabs(b[i]);
        /* the same tangent by a shorter sweep: round-off of the model */
        CHECK(e <= MBS_ROUNDOFF(m->nb), "%s: parameter %s: dynamic vs full tangent %g", what, m->param[j].name, e);
        g_nonzero += s > 0;   /* zero where the body cannot move (fixed to the ground) */
        if (e > g_worst) g_worst = e;
    }
    free(dx); free(r); free(a); free(b);
    mbs_data_free(d);
}

/* the chain against the full tangent at a random state and direction */
static double chain_vs_full(mbs_rng *rng, const mbs_model *m)
{
    const int n = m->nq, nc = mbs_model_nconstraints(m), np = mbs_model_nparams(m);
    const size_t N = (size_t)n + 1, C = (size_t)nc + 1;
    mbs_data *d = mbs_data_create(m, NULL);
    double *q = calloc(N, 8), *qd = calloc(N, 8), *qdd = calloc(N, 8), *dq = calloc(N, 8), *dqd = calloc(N, 8);
    double *dqdd = calloc(N, 8), *dx = calloc((size_t)m->nx + 1, 8), *dxj = calloc((size_t)m->nx + 1, 8);
    double *r = calloc(N, 8), *a = calloc(N, 8), *b = calloc(N, 8);
    double *pa = calloc(C, 8), *pb = calloc(C, 8), *Pa = calloc(C * N, 8), *Pb = calloc(C * N, 8);
    mbs_test_random_state(rng, m, q, qd, qdd);
    for (int k = 0; k < n; k++) {
        dq[k] = mbs_rng_uniform(rng, -1, 1);
        dqd[k] = mbs_rng_uniform(rng, -1, 1);
        dqdd[k] = mbs_rng_uniform(rng, -1, 1);
    }
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dxj);
        const double c = mbs_rng_uniform(rng, -1, 1);
        for (int k = 0; k < m->nx; k++) dx[k] += c * dxj[k];
    }
    mbs_data_set_time(d, 0.3);
    mbs_form_primal(m, d, 0.3, q, qd, qdd, r, NULL, NULL, NULL, NULL);
    mbs_form_tangent(m, d, 0.3, q, qd, qdd, dq, dqd, dqdd, dx, b, NULL, Pb, NULL, pb);
    mbs_form_tangent(m, d, 0.3, q, qd, qdd, dq, NULL, NULL, dx, NULL, NULL, NULL, NULL, NULL);
    mbs_form_tangent_from(m, d, 0.3, q, qd, qdd, dq, dqd, NULL, dx, 1, NULL, NULL, NULL, NULL, NULL);
    mbs_form_tangent_from(m, d, 0.3, q, qd, qdd, dq, dqd, dqdd, dx, 2, a, NULL, Pa, NULL, pa);
    double e = fmax(mbs_rel_err(a, b, n), fmax(mbs_rel_err(pa, pb, nc), mbs_rel_err(Pa, Pb, nc * n)));
    free(q); free(qd); free(qdd); free(dq); free(dqd); free(dqdd); free(dx); free(dxj); free(r); free(a); free(b);
    free(pa); free(pb); free(Pa); free(Pb);
    mbs_data_free(d);
    return e;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 20261126);
    {
        double worst = 0;
        for (int tree = 0; tree < 100; tree++) {
            mbs_model *m = mbs_test_random_tree_p(&rng, 1 + tree % 7, 0, 1);
            CHECK(m != NULL, "random tree %d", tree);
            if (!m) continue;
            worst = fmax(worst, chain_vs_full(&rng, m));
            mbs_model_free(m);
        }
        static const char *loops[] = { "models/fivebar.json", "models/slider_crank.json", "models/quarter_car.json",
                                       "models/fourbar_redundant.json" };
        for (size_t k = 0; k < sizeof loops / sizeof loops[0]; k++) {
            mbs_error err;
            mbs_model *m = mbs_model_load(mbs_test_path(loops[k]), &err);
            CHECK(m != NULL, "%s: %s", loops[k], err.msg);
            if (!m) continue;
            for (int s = 0; s < 5; s++) worst = fmax(worst, chain_vs_full(&rng, m));
            mbs_model_free(m);
        }
        printf("chained tangents vs the full tangent: worst relative difference %.2e\n", worst);
        /* the same sweeps chained or in one pass: round-off of the shipped loops (up to 10 bodies) */
        CHECK(worst <= MBS_ROUNDOFF(10), "chained tangents: %g", worst);
    }
    /* random trees: gravity, mass and inertia parameters are dynamic; CoM and
     * point coordinates move the kinematics */
    for (int tree = 0; tree < 60; tree++) {
        mbs_model *m = mbs_test_random_tree_p(&rng, 1 + tree % 6, 0, 1);
        CHECK(m != NULL, "random tree %d", tree);
        if (!m) continue;
        const int n = m->nq, np = mbs_model_nparams(m);
        double *q = calloc((size_t)n + 1, 8), *qd = calloc((size_t)n + 1, 8), *qdd = calloc((size_t)n + 1, 8);
        int *kinds = calloc((size_t)np + 1, sizeof(int));
        for (int j = 0; j < np; j++) {
            const char *nm = m->param[j].name;
            /* names of random_model.c: g_y gravity, m mass, I inertia; c CoM, L and P points */
            kinds[j] = strchr("gmI", nm[0]) ? 1 : strchr("cLP", nm[0]) ? 0 : -1;
        }
        mbs_test_random_state(&rng, m, q, qd, qdd);
        compare(m, q, qd, qdd, kinds, "random tree");
        free(q); free(qd); free(qdd); free(kinds);
        mbs_model_free(m);
    }
    const int tree_dynamic = g_dynamic, tree_kinematic = g_kinematic;
    printf("random trees: %d dynamic (%d with a non-zero tangent) and %d kinematic parameters\n", tree_dynamic,
           g_nonzero, tree_kinematic);
    CHECK(g_nonzero > 0.9 * tree_dynamic, "non-zero dynamic tangents: %d of %d", g_nonzero, tree_dynamic);
    CHECK(tree_dynamic > 100 && tree_kinematic > 100, "both kinds covered: %d %d", tree_dynamic, tree_kinematic);

    /* shipped models with force-element parameters */
    static const char *models[] = { "models/fivebar.json", "models/slider_crank.json", "models/halfcar_step.json", "models/bicycle.json" };
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        mbs_error err;
        mbs_model *m = mbs_model_load(mbs_test_path(models[k]), &err);
        CHECK(m != NULL, "%s: %s", models[k], err.msg);
        if (!m) continue;
        const int n = m->nq;
        double *q = calloc((size_t)n + 1, 8), *qd = calloc((size_t)n + 1, 8), *qdd = calloc((size_t)n + 1, 8);
        mbs_test_random_state(&rng, m, q, qd, qdd);
        const int before = g_dynamic;
        compare(m, q, qd, qdd, NULL, models[k]);
        CHECK(g_dynamic > before, "%s: no dynamic parameter", models[k]);
        free(q); free(qd); free(qdd);
        mbs_model_free(m);
    }
    /* the five-bar's split: spring free lengths and the mass are dynamic, the
     * CoM coordinate and the bar length move the kinematics */
    {
        mbs_error err;
        mbs_model *m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
        CHECK(m != NULL, "fivebar: %s", err.msg);
        if (m) {
            static const int expect[] = { 1, 1, 1, 0, 0 };
            CHECK(mbs_model_nparams(m) == 5, "fivebar parameters");
            for (int j = 0; j < 5 && j < mbs_model_nparams(m); j++)
                CHECK(mbs_form_param_dynamic(m, j) == expect[j], "fivebar %s", m->param[j].name);
            mbs_model_free(m);
        }
    }
    printf("dynamic vs full tangent: worst relative difference %.2e over %d parameters\n", g_worst, g_dynamic);
    return mbs_test_summary("test_form_tangents");
}
