/*
 * test_optimize.c - mbs_optimize (src/optimize/optimize.c) on the shipped
 * design problems, with short horizons (the full runs are in
 * scripts/optimize_examples.sh, docs/optimization.md).
 *
 *  1. Options and errors: names, no objectives, bad weights, every
 *     parameter fixed, the automatic choice of the gradient method.
 *  2. Suspension (models/halfcar_step.json, 3 s at 10 ms): L-BFGS on the four
 *     spring and damper parameters reduces the ride objective more than 3.5
 *     times, stops on the projected-gradient test, and at the optimum the
 *     adjoint gradient agrees with central differences of whole
 *     simulations (and both vanish against the initial gradient).
 *  3. Five-bar (models/fivebar.json, 0.5 s at 5 ms, ALI3-P direct
 *     differentiation): the two spring free lengths that minimize psi1 are
 *     those that make the initial configuration a static equilibrium
 *     (psi1 -> 0); L-BFGS, SLSQP and MMA find the same lengths with a small
 *     projected gradient; the finite-difference gradient vanishes there.
 *  4. A failing trial point (a mass parameter whose lower bound admits
 *     non-physical values) is reported and backtracked from, never fatal.
 *  5. Horizon continuation on a small optimal-control problem (pendulum,
 *     spline torque): the time each knot value acts from
 *     (mbs_param_acts_from), one stage per second, psi reduced, warm starts.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "mbsens/mbsens.h"
#include "mbsens/optimize.h"

static int count_iter(void *user, const mbs_opt_iter *it)
{
    int *n = user;
    if (it->iteration > 0) (*n)++;
    return 0;
}

typedef struct {
    int n;
    char last[512];
} msgs;

static void on_msg(void *user, const char *m)
{
    msgs *s = user;
    s->n++;
    snprintf(s->last, sizeof s->last, "%s", m);
}

/* ------------------------------------------------------------------ 1 */

static const char *pendulum_ke =
    "{ \"name\": \"pend\", \"gravity\": [0, -9.81, 0],"
    "  \"bodies\": [ { \"name\": \"link\", \"mass\": 1.0, \"com\": [0.5, 0, 0],"
    "                 \"inertia\": [0.001, 0.02, 0.02, 0, 0, 0] } ],"
    "  \"joints\": [ { \"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"link\","
    "                 \"axis\": [0, 0, 1], \"q0\": [0] } ],"
    "  \"simulation\": { \"dt\": 0.01, \"tf\": 0.5 },"
    "  \"parameters\": [ { \"name\": \"m\", \"value\": 1.0, \"lower\": -1, \"upper\": 10, \"sets\": [\"link.mass\"] } ],"
    "  \"objectives\": [ { \"name\": \"ke\", \"integral\": [ { \"energy\": \"kinetic\", \"squared\": false } ] },"
    "                  { \"name\": \"tip\", \"integral\": [ { \"coordinate\": \"j\", \"reference\": -0.5 } ] } ] }";

static void test_options(void)
{
    CHECK(!strcmp(mbs_opt_algorithm_name(MBS_OPT_MMA), "mma"), "name");
    CHECK(mbs_opt_algorithm_from_name("slsqp") == MBS_OPT_SLSQP, "from name");
    CHECK(mbs_opt_algorithm_from_name("bfgs") == -1, "unknown");
    CHECK(mbs_opt_scaling_from_name("bounds") == MBS_OPT_SCALE_BOUNDS, "scaling");
    mbs_error err;
    mbs_model *m = mbs_model_load_string(pendulum_ke, "pend", &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_opt_options o = mbs_opt_options_default(m);
    CHECK(o.algorithm == MBS_OPT_LBFGS && o.max_iter == 100 && o.auto_method == 1, "defaults");
    /* one parameter, two objectives: direct differentiation */
    mbs_sens_options s = o.sens;
    CHECK(mbs_opt_auto_method(m, &s) == MBS_SENS_DDM, "auto: ddm when objectives >= parameters");
    mbs_opt_result res;
    double w[2] = { 0, 0 };
    o.weights = w;
    CHECK(mbs_optimize(m, &o, &res, &err) == MBS_ERR_ARG && strstr(err.msg, "zero"), "zero weights: %s", err.msg);
    o.weights = NULL;
    o.objective = 2;
    CHECK(mbs_optimize(m, &o, &res, &err) == MBS_ERR_ARG, "objective out of range");
    o.objective = 0;
    int fixed[1] = { 1 };
    o.fixed = fixed;
    CHECK(mbs_optimize(m, &o, &res, &err) == MBS_ERR_ARG && strstr(err.msg, "no free"), "all fixed: %s", err.msg);
    mbs_model_free(m);

    /* no objectives */
    m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        o = mbs_opt_options_default(m);
        CHECK(mbs_optimize(m, &o, &res, &err) == MBS_ERR_ARG && strstr(err.msg, "objectives"), "no objectives: %s",
              err.msg);
        mbs_model_free(m);
    }
    /* many parameters, one objective: the adjoint of the formulation */
    m = mbs_model_load(mbs_test_path("models/halfcar_step.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        s = mbs_sens_options_default(m);
        s.sim.formulation = MBS_FD_SEMI_RECURSIVE;
        CHECK(mbs_opt_auto_method(m, &s) == MBS_SENS_DAVM, "auto: davm (semi)");
        s.sim.formulation = MBS_FD_RECURSIVE;
        CHECK(mbs_opt_auto_method(m, &s) == MBS_SENS_CAVM, "auto: cavm (fr)");
        mbs_model_free(m);
    }
    m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        s = mbs_sens_options_default(m);
        s.sim.loop = MBS_LOOP_NONE;
        CHECK(mbs_opt_auto_method(m, &s) == MBS_SENS_DDM && s.sim.loop == MBS_LOOP_ALI3P, "auto: closed loops");
        mbs_model_free(m);
    }
}

/* ------------------------------------------------------------------ 2 */

static void test_suspension(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/halfcar_step.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_opt_options o = mbs_opt_options_default(m);
    o.sens.sim.dt = 0.01;
    o.sens.sim.tf = 3.0;
    o.objective = mbs_objective_find(m, "ride");
    o.max_iter = 40;
    o.pgtol = 1e-7;
    int iters = 0;
    o.callback = count_iter;
    o.callback_user = &iters;
    mbs_opt_result res;
    int rc = mbs_optimize(m, &o, &res, &err);
    CHECK(rc == MBS_OK, "suspension: %s", err.msg);
    if (rc) {
        mbs_model_free(m);
        return;
    }
    printf("suspension: psi %.6e -> %.6e (%.3f times) in %d iterations, %d evaluations, stop %s, |pg| %.2e -> %.2e\n",
           res.psi_initial, res.psi_final, res.psi_initial / res.psi_final, res.iterations, res.evaluations,
           res.stop_reason, res.pg_norm_initial, res.pg_norm);
    printf("  k_f %.2f c_f %.2f k_r %.2f c_r %.2f\n", res.x[0], res.x[1], res.x[2], res.x[3]);
    CHECK(res.method == MBS_SENS_DAVM, "gradient by the discrete adjoint");
    CHECK(res.iterations == iters && iters >= 5, "iterations counted: %d %d", res.iterations, iters);
    /* a property of the problem: at these settings its optimum lies 3.86 times below the start; a stop
     * on the gradient reaches it to O(pgtol^2), far inside 3.5 */
    CHECK(res.psi_final < res.psi_initial / 3.5, "ride objective reduced more than 3.5 times: %g -> %g",
          res.psi_initial, res.psi_final);
    CHECK(!strcmp(res.stop_reason, "pgtol"), "stops on the projected gradient: %s", res.stop_reason);
    CHECK(res.pg_norm_scaled <= o.pgtol, "projected gradient of the scaled problem %g > pgtol", res.pg_norm_scaled);
    /* the problem's optimum lies well inside the bounds */
    for (int j = 0; j < 4; j++)
        CHECK(res.x[j] > 10 * mbs_param_lower(m, j) && res.x[j] < 0.5 * mbs_param_upper(m, j),
              "interior optimum, parameter %d = %g", j, res.x[j]);
    /* gradient at the optimum: adjoint against central differences */
    mbs_model *mo = mbs_model_with_params(m, res.x, &err);
    CHECK(mo != NULL, "optimized model: %s", err.msg);
    if (mo) {
        mbs_sens_options s = res.sens;
        mbs_sens_result ra, rf;
        s.method = MBS_SENS_DAVM;
        CHECK(mbs_sensitivity(mo, &s, &ra, &err) == MBS_OK, "davm: %s", err.msg);
        s.method = MBS_SENS_FD;
        s.fd_step = 1e-5;
        CHECK(mbs_sensitivity(mo, &s, &rf, &err) == MBS_OK, "fd: %s", err.msg);
        const int k = o.objective, np = ra.nparam;
        double worst = 0, gmax = 0;
        for (int j = 0; j < np; j++) {
            /* per unit relative change of the parameter */
            double a = ra.grad[k * np + j] * res.x[j], f = rf.grad[k * np + j] * res.x[j];
            worst = fmax(worst, fabs(a - f));
            gmax = fmax(gmax, fabs(f));
        }
        double g0 = 0;
        for (int j = 0; j < np; j++) g0 = fmax(g0, fabs(res.pg_norm_initial * res.x0[j]));
        printf("  at the optimum: max |x dpsi/dx| fd %.3e, |davm - fd| %.3e (psi %.6e)\n", gmax, worst, ra.psi[k]);
        /* the model copy at x runs the same simulation as the optimizer's last evaluation there */
        CHECK(fabs(ra.psi[k] - res.psi_final) <= mbs_test_sens_roundoff(mo, &ra) * res.psi_final, "psi reproduced");
        /* davm = fd within the fd's own error (mbs_test_check_fd) */
        mbs_sens_options sa = s;
        sa.method = MBS_SENS_DAVM;
        mbs_test_check_fd(mo, &sa, &ra, &s, &rf, "suspension at the optimum");
        /* the stop: the scaled gradient (psi / |psi_start| over rho_j / |rho_j start|) below pgtol, so
         * |x0_j dpsi/drho_j| <= pgtol |psi_start|; the fd's the same to its error */
        double *efd = calloc((size_t)(rf.nobj * np), sizeof *efd), gs = 0, be = 0;
        mbs_test_fd_error(mo, &s, &rf, efd);
        for (int j = 0; j < np; j++) {
            gs = fmax(gs, fabs(rf.grad[k * np + j] * res.x0[j]));
            be = fmax(be, efd[k * np + j] * fabs(res.x0[j]));
        }
        CHECK(gs <= o.pgtol * fabs(res.psi_initial) + be, "fd gradient vanishes at the optimum: %g > %g", gs,
              o.pgtol * fabs(res.psi_initial) + be);
        free(efd);
        mbs_sens_result_free(&ra);
        mbs_sens_result_free(&rf);
        mbs_model_free(mo);
    }
    mbs_opt_result_free(&res);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ 3 */

static void test_fivebar(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    const int np = mbs_model_nparams(m);
    int *fixed = calloc((size_t)np, sizeof *fixed);
    for (int j = 0; j < np; j++) fixed[j] = 1;
    const int j1 = mbs_param_find(m, "L_s1"), j2 = mbs_param_find(m, "L_s2");
    CHECK(j1 >= 0 && j2 >= 0, "parameters");
    if (j1 < 0 || j2 < 0) {
        free(fixed);
        mbs_model_free(m);
        return;
    }
    fixed[j1] = fixed[j2] = 0;
    double L[3][2];
    for (int a = 0; a < 3; a++) {
        mbs_opt_options o = mbs_opt_options_default(m);
        o.sens.sim.loop = MBS_LOOP_ALI3P;
        o.sens.sim.dt = 0.005;
        o.sens.sim.tf = 0.5;
        o.objective = mbs_objective_find(m, "psi1");
        o.fixed = fixed;
        o.algorithm = (mbs_opt_algorithm)a;
        o.max_iter = 40;
        mbs_opt_result res;
        int rc = mbs_optimize(m, &o, &res, &err);
        CHECK(rc == MBS_OK, "five-bar %s: %s", mbs_opt_algorithm_name(o.algorithm), err.msg);
        if (rc) continue;
        printf("five-bar (%s, %s): psi1 %.6e -> %.3e in %d iterations, %d evaluations, stop %s; L_s1 %.10f "
               "L_s2 %.10f, |pg| %.2e -> %.2e\n",
               mbs_opt_algorithm_name(o.algorithm), mbs_sens_method_name(res.method), res.psi_initial,
               res.psi_final, res.iterations, res.evaluations, res.stop_reason, res.x[j1], res.x[j2],
               res.pg_norm_initial, res.pg_norm);
        CHECK(res.method == MBS_SENS_DDM && res.sens.sim.loop == MBS_LOOP_ALI3P, "ddm with ali3p");
        /* psi1 vanishes at the static equilibrium and is quadratic about it: a stop at a scaled
         * gradient or step of 1e-8 (pgtol, xtol) leaves psi at O(1e-16) of psi_start times the
         * Hessian's condition; 1e-10 allows a condition of 1e6 */
        CHECK(res.psi_final < 1e-10 * res.psi_initial, "static equilibrium: psi1 %g", res.psi_final);
        /* a stop on the gradient: below pgtol; on the step (MMA): the gradient the Hessian gives at
         * that step, at most xtol times the initial scaled gradient's size times its condition (1e6) */
        CHECK(res.pg_norm_scaled <= (strcmp(res.stop_reason, "pgtol") ? 1e6 * o.xtol : o.pgtol), "projected "
              "gradient of the scaled problem %g (stop %s)", res.pg_norm_scaled, res.stop_reason);
        for (int j = 0; j < np; j++)
            if (fixed[j]) CHECK(res.x[j] == res.x0[j], "fixed parameter %d unchanged", j);
        L[a][0] = res.x[j1];
        L[a][1] = res.x[j2];
        if (a == 0) {
            /* the finite-difference gradient (whole simulations) vanishes there too */
            mbs_model *mo = mbs_model_with_params(m, res.x, &err);
            mbs_sens_options s = res.sens;
            s.method = MBS_SENS_FD;
            mbs_sens_result rf;
            CHECK(mo && mbs_sensitivity(mo, &s, &rf, &err) == MBS_OK, "fd: %s", err.msg);
            if (mo && rf.grad) {
                const int k = o.objective;
                printf("  fd gradient at the optimum: %.2e %.2e (initial |pg| %.2e)\n", rf.grad[k * np + j1],
                       rf.grad[k * np + j2], res.pg_norm_initial);
                /* stopped at a scaled gradient below pgtol: |x0_j dpsi/drho_j| <= pgtol |psi_start|, the
                 * fd's the same to its error */
                double *efd = calloc((size_t)(rf.nobj * np), sizeof *efd);
                mbs_test_fd_error(mo, &s, &rf, efd);
                for (int j = 0; j < np; j++)
                    if (j == j1 || j == j2)
                        CHECK(fabs(rf.grad[k * np + j] * res.x0[j]) <=
                                  o.pgtol * fabs(res.psi_initial) + efd[k * np + j] * fabs(res.x0[j]),
                              "fd gradient vanishes: parameter %d: %g", j, rf.grad[k * np + j]);
                free(efd);
                mbs_sens_result_free(&rf);
            }
            mbs_model_free(mo);
        }
        mbs_opt_result_free(&res);
    }
    /* the same optimum, located to the stops: xtol 1e-8 on the scaled variables (MMA), the gradient
     * over the Hessian for the others; 1e-6 m is 40 xtol |L| */
    for (int a = 1; a < 3; a++)
        CHECK(fabs(L[a][0] - L[0][0]) < 1e-6 && fabs(L[a][1] - L[0][1]) < 1e-6,
              "same free lengths by %s: %.10f %.10f", mbs_opt_algorithm_name((mbs_opt_algorithm)a), L[a][0], L[a][1]);
    free(fixed);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ 4 */

static void test_failures(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(pendulum_ke, "pend", &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_opt_options o = mbs_opt_options_default(m);
    o.objective = 0;    /* kinetic energy: proportional to the mass, pushes it below zero */
    o.max_iter = 30;
    o.max_failures = 6;
    msgs ms = { 0, "" };
    o.message = on_msg;
    o.message_user = &ms;
    for (int a = 0; a < 3; a++) {
        o.algorithm = (mbs_opt_algorithm)a;
        ms.n = 0;
        mbs_opt_result res;
        int rc = mbs_optimize(m, &o, &res, &err);
        CHECK(rc == MBS_OK, "%s: %s", mbs_opt_algorithm_name(o.algorithm), err.msg);
        if (rc) continue;
        printf("failures (%s): psi %.4e -> %.4e, m %.3e, %d iterations, %d evaluations, %d failed, stop %s\n",
               mbs_opt_algorithm_name(o.algorithm), res.psi_initial, res.psi_final, res.x[0], res.iterations,
               res.evaluations, res.failed_evaluations, res.stop_reason);
        printf("  last message: %s\n", ms.last);
        CHECK(res.failed_evaluations > 0 && ms.n == res.failed_evaluations, "failures reported: %d %d",
              res.failed_evaluations, ms.n);
        CHECK(strstr(ms.last, "mass") != NULL, "the message names the cause: %s", ms.last);
        /* the kinetic energy is proportional to the mass, which the optimizer drives to its valid
         * limit (0): any backtracking run ends far below the start */
        CHECK(res.x[0] > 0 && res.psi_final < 0.2 * res.psi_initial, "backtracked to valid masses: m %g", res.x[0]);
        mbs_opt_result_free(&res);
    }
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ 5 */

static const char *pendulum_ocp =
    "{ \"name\": \"pend_ocp\", \"gravity\": [0, -9.81, 0],"
    "  \"bodies\": [ { \"name\": \"link\", \"mass\": 1.0, \"com\": [0.5, 0, 0],"
    "                 \"inertia\": [0.001, 0.02, 0.02, 0, 0, 0] } ],"
    "  \"joints\": [ { \"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"link\","
    "                 \"axis\": [0, 0, 1], \"q0\": [-1.5707963267948966] } ],"
    "  \"functions\": ["
    "    { \"name\": \"u\", \"type\": \"spline\", \"times\": [0, 0.5, 1, 1.5, 2, 2.5, 3],"
    "      \"values\": [0, 0, 0, 0, 0, 0, 0] },"
    "    { \"name\": \"ref\", \"type\": \"sine\", \"amplitude\": 0.6, \"frequency\": 0.5, \"offset\": -1.5707963267948966 } ],"
    "  \"forces\": [ { \"name\": \"motor\", \"type\": \"joint_force\", \"joint\": \"j\", \"function\": \"u\" } ],"
    "  \"simulation\": { \"dt\": 0.005, \"tf\": 3 },"
    "  \"parameters\": ["
    "    { \"name\": \"u0\", \"value\": 0, \"lower\": -20, \"upper\": 20, \"sets\": [\"u.values[0]\"] },"
    "    { \"name\": \"u1\", \"value\": 0, \"lower\": -20, \"upper\": 20, \"sets\": [\"u.values[1]\"] },"
    "    { \"name\": \"u2\", \"value\": 0, \"lower\": -20, \"upper\": 20, \"sets\": [\"u.values[2]\"] },"
    "    { \"name\": \"u3\", \"value\": 0, \"lower\": -20, \"upper\": 20, \"sets\": [\"u.values[3]\"] },"
    "    { \"name\": \"u4\", \"value\": 0, \"lower\": -20, \"upper\": 20, \"sets\": [\"u.values[4]\"] },"
    "    { \"name\": \"u5\", \"value\": 0, \"lower\": -20, \"upper\": 20, \"sets\": [\"u.values[5]\"] },"
    "    { \"name\": \"u6\", \"value\": 0, \"lower\": -20, \"upper\": 20, \"sets\": [\"u.values[6]\"] } ],"
    "  \"objectives\": [ { \"name\": \"track\", \"integral\": [ { \"coordinate\": \"j\", \"reference\": \"ref\" } ] } ] }";

typedef struct {
    int stages_seen, starts;
    double last_tf;
    int tf_increasing;
} stage_log;

static int on_stage(void *user, const mbs_opt_iter *it)
{
    stage_log *s = user;
    if (it->iteration == 0) {
        s->starts++;
        if (it->tf <= s->last_tf) s->tf_increasing = 0;
        s->last_tf = it->tf;
    }
    if (it->stage + 1 > s->stages_seen) s->stages_seen = it->stage + 1;
    return 0;
}

static void test_continuation(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(pendulum_ocp, "pend_ocp", &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    /* knot value u_j shapes the curve from knot j - 1 on (times 0, 0.5, ...):
     * stored times, compared exactly */
    for (int j = 0; j < 7; j++)
        CHECK(mbs_param_acts_from(m, j) == 0.5 * (j > 0 ? j - 1 : 0), "u%d acts from %g", j,
              mbs_param_acts_from(m, j));
    CHECK(isnan(mbs_param_acts_from(m, 7)) && isnan(mbs_param_acts_from(NULL, 0)), "invalid parameter: NAN");
    mbs_opt_options o = mbs_opt_options_default(m);
    o.sens.sim.formulation = MBS_FD_SEMI_RECURSIVE;
    o.continuation = 1;
    o.max_iter = 25;
    o.scaling = MBS_OPT_SCALE_NONE;
    stage_log sl = { 0, 0, -1, 1 };
    o.callback = on_stage;
    o.callback_user = &sl;
    mbs_opt_result res;
    int rc = mbs_optimize(m, &o, &res, &err);
    CHECK(rc == MBS_OK, "continuation: %s", err.msg);
    if (!rc) {
        printf("continuation: psi %.6e -> %.6e (%.1f times), %d stages, %d iterations, %d evaluations, stop %s\n",
               res.psi_initial, res.psi_final, res.psi_initial / res.psi_final, res.stages, res.iterations,
               res.evaluations, res.stop_reason);
        CHECK(res.method == MBS_SENS_DAVM, "adjoint for 7 knots and 1 objective");
        CHECK(res.stages == 3 && sl.starts == 3 && sl.stages_seen == 3, "stages 1, 2, 3 s: %d %d", res.stages,
              sl.starts);
        /* stages of 1 s added to 1 s: sums of exact numbers */
        CHECK(sl.tf_increasing && sl.last_tf == 3, "horizons grow to tf");
        /* a property of the problem: its optimum tracks 67 times better than the start */
        CHECK(res.psi_final < res.psi_initial / 20, "tracking error reduced 20 times: %g -> %g", res.psi_initial,
              res.psi_final);
        /* the same problem without continuation reaches a comparable optimum */
        mbs_opt_options o2 = o;
        o2.continuation = 0;
        o2.callback = NULL;
        o2.max_iter = 75;
        mbs_opt_result r2;
        CHECK(mbs_optimize(m, &o2, &r2, &err) == MBS_OK, "direct: %s", err.msg);
        if (r2.x) {
            printf("  without continuation: psi %.6e after %d iterations (%s)\n", r2.psi_final, r2.iterations,
                   r2.stop_reason);
            /* the same simulation at the same start */
            CHECK(r2.psi_initial == res.psi_initial, "same start");
            mbs_opt_result_free(&r2);
        }
        mbs_opt_result_free(&res);
    }
    mbs_model_free(m);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void)
{
    void (*tests[])(void) = { test_options, test_suspension, test_fivebar, test_failures, test_continuation };
    const char *names[] = { "options", "suspension", "five-bar", "failures", "continuation" };
    for (int k = 0; k < 5; k++) {
        double t0 = now();
        tests[k]();
        printf("[%s: %.2f s]\n", names[k], now() - t0);
    }
    return mbs_test_summary("test_optimize");
}
