/*
 * test_sensitivity_user.c - a program's own objective (mbs_sens_options
 * .objective, a C callback with its partial derivatives) through every
 * method that takes it, against central finite differences of whole runs.
 *
 * g(t, q, qd, qdd, rho) = rho_0 * sum_i q_i^2 + sum_i sin(q_i) qd_i
 *                         + 0.01 sum_i qdd_i^2 + 0.1 rho_1 t
 * depends on every argument, so each partial derivative the methods take
 * from the callback (g_q, g_qd, g_qdd, g_rho) enters the gradient.
 *
 *   - open tree (tests/models/spring_tree.json, spherical, revolute and
 *     cardan joints, parameters of every kind): semi-recursive DDM and DAVM
 *     (trapezoidal), fully recursive DDM (RK4) against fd of the same
 *     discretization; CAVM (CVODES, rtol 1e-10) against the RK4 DDM at a
 *     fine step;
 *   - closed loops (the five-bar): ALI3-P DDM, DAVM and CAVM, Matrix R DDM
 *     and DAVM against fd;
 *   - the model's own objectives are unchanged by the added one (equal to a
 *     run without it); a model without objectives (the double pendulum)
 *     takes the program's alone;
 *   - errors: a callback that fails (its message, non-zero exit), a
 *     non-finite value, the complex step (refused), the optimizer (refused).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mbsens/optimize.h"

typedef struct { int fail_at_call, calls; int nan; } ctx;

static int user_g(void *user, double t, int nq, const double *q, const double *qd, const double *qdd, int np,
                  const double *rho, double *g, double *gq, double *gqd, double *gqdd, double *grho)
{
    ctx *c = user;
    c->calls++;
    if (c->fail_at_call > 0 && c->calls >= c->fail_at_call) return 7;
    const double r0 = np > 0 ? rho[0] : 1, r1 = np > 1 ? rho[1] : 0;
    double s = 0;
    for (int i = 0; i < nq; i++) s += r0 * q[i] * q[i] + sin(q[i]) * qd[i] + 0.01 * qdd[i] * qdd[i];
    *g = s + 0.1 * r1 * t + (c->nan ? NAN : 0);
    if (gq) {
        double sq = 0;
        for (int i = 0; i < nq; i++) {
            gq[i] = 2 * r0 * q[i] + cos(q[i]) * qd[i];
            gqd[i] = sin(q[i]);
            gqdd[i] = 0.02 * qdd[i];
            sq += q[i] * q[i];
        }
        for (int j = 0; j < np; j++) grho[j] = 0;
        if (np > 0) grho[0] = sq;
        if (np > 1) grho[1] = 0.1 * t;
    }
    return 0;
}

static int sens(const mbs_model *m, mbs_sens_options *o, mbs_sens_method meth, mbs_sens_result *r, mbs_error *err)
{
    o->method = meth;
    memset(r, 0, sizeof *r);
    return mbs_sensitivity(m, o, r, err);
}

/* largest relative difference over the objectives' rows (the program's
 * objective last; the model's too, as their paths change with it) */
static double row_err(const mbs_sens_result *a, const mbs_sens_result *b)
{
    const int np = a->nparam;
    double e = 0;
    for (int k = 0; k < a->nobj; k++) {
        e = fmax(e, mbs_rel_err(a->grad + (size_t)k * np, b->grad + (size_t)k * np, np));
        e = fmax(e, fabs(a->psi[k] - b->psi[k]) / fmax(1, fabs(b->psi[k])));
    }
    return e;
}

static void check_method(const char *what, const mbs_model *m, mbs_sens_options *o, mbs_sens_method meth,
                         const mbs_sens_result *ref, double tol)
{
    mbs_sens_result r;
    mbs_error err;
    int rc = sens(m, o, meth, &r, &err);
    CHECK(rc == MBS_OK, "%s %s: %s", what, mbs_sens_method_name(meth), err.msg);
    if (rc) return;
    CHECK(r.nobj == mbs_model_nobjectives(m) + 1, "%s: %d objectives", what, r.nobj);
    const double e = row_err(&r, ref);
    printf("%s, %s: every objective (the program's among them) vs reference %.2e\n", what,
           mbs_sens_method_name(meth), e);
    CHECK(e <= tol, "%s %s: %g > %g", what, mbs_sens_method_name(meth), e, tol);
    mbs_sens_result_free(&r);
}

int main(void)
{
    mbs_error err;
    ctx c = { 0, 0, 0 };
    /* ---- open tree ---- */
    mbs_model *m = mbs_model_load(mbs_test_path("tests/models/spring_tree.json"), &err);
    CHECK(m != NULL, "spring tree: %s", m ? "" : err.msg);
    if (m) {
        mbs_sens_options o = mbs_sens_options_default(m);
        o.sim.tf = 0.2;
        o.sim.dt = 1e-3;
        o.objective = user_g;
        o.objective_user = &c;
        /* the model's objectives are those of a run without the added one */
        mbs_sens_result plain, with, fd;
        mbs_sens_options op = o;
        op.objective = NULL;
        o.sim.formulation = op.sim.formulation = MBS_FD_SEMI_RECURSIVE;
        if (sens(m, &op, MBS_SENS_DDM, &plain, &err) == MBS_OK && sens(m, &o, MBS_SENS_DDM, &with, &err) == MBS_OK) {
            int same = with.nobj == plain.nobj + 1;
            for (int k = 0; same && k < plain.nobj; k++) {
                same = with.psi[k] == plain.psi[k];
                for (int j = 0; same && j < plain.nparam; j++)
                    same = with.grad[k * with.nparam + j] == plain.grad[k * plain.nparam + j];
            }
            CHECK(same, "the model's objectives changed when a program objective was added");
            mbs_sens_result_free(&plain);
            mbs_sens_result_free(&with);
        } else {
            CHECK(0, "spring tree ddm: %s", err.msg);
        }
        o.fd_step = 1e-6;
        if (sens(m, &o, MBS_SENS_FD, &fd, &err) == MBS_OK) {
            check_method("spring tree, semi (trapezoidal)", m, &o, MBS_SENS_DDM, &fd, 1e-6);
            check_method("spring tree, semi (trapezoidal)", m, &o, MBS_SENS_DAVM, &fd, 1e-6);
            mbs_sens_result_free(&fd);
        } else {
            CHECK(0, "spring tree fd: %s", err.msg);
        }
        o.sim.formulation = MBS_FD_RECURSIVE;
        if (sens(m, &o, MBS_SENS_FD, &fd, &err) == MBS_OK) {
            check_method("spring tree, fr (rk4)", m, &o, MBS_SENS_DDM, &fd, 1e-6);
            mbs_sens_result_free(&fd);
        } else {
            CHECK(0, "spring tree fr fd: %s", err.msg);
        }
        /* cavm (continuous) against the rk4 ddm at a fine step */
        mbs_sens_result fine;
        mbs_sens_options of = o;
        of.sim.dt = 2.5e-4;
        if (sens(m, &of, MBS_SENS_DDM, &fine, &err) == MBS_OK) {
            o.sim.rtol = 1e-10;
            o.sim.atol = 1e-12;
            check_method("spring tree, cvodes", m, &o, MBS_SENS_CAVM, &fine, 1e-6);
            mbs_sens_result_free(&fine);
        } else {
            CHECK(0, "spring tree fine ddm: %s", err.msg);
        }
        /* errors */
        o = mbs_sens_options_default(m);
        o.sim.tf = 0.05;
        o.sim.formulation = MBS_FD_SEMI_RECURSIVE;
        o.objective = user_g;
        o.objective_user = &c;
        mbs_sens_result r;
        c.calls = 0;
        c.fail_at_call = 10;
        int rc = sens(m, &o, MBS_SENS_DDM, &r, &err);
        CHECK(rc != MBS_OK && strstr(err.msg, "program's objective") && strstr(err.msg, "returned 7"),
              "a failing callback: %d %s", rc, err.msg);
        if (!rc) mbs_sens_result_free(&r);
        c.fail_at_call = 0;
        c.nan = 1;
        rc = sens(m, &o, MBS_SENS_DAVM, &r, &err);
        CHECK(rc != MBS_OK && strstr(err.msg, "non-finite"), "a NaN objective: %d %s", rc, err.msg);
        if (!rc) mbs_sens_result_free(&r);
        c.nan = 0;
        rc = sens(m, &o, MBS_SENS_CS, &r, &err);
        CHECK(rc == MBS_ERR_UNSUPPORTED && strstr(err.msg, "cs"), "cs refused: %d %s", rc, err.msg);
        if (!rc) mbs_sens_result_free(&r);
        mbs_opt_options oo = mbs_opt_options_default(m);
        oo.sens.objective = user_g;
        mbs_opt_result ores;
        rc = mbs_optimize(m, &oo, &ores, &err);
        CHECK(rc == MBS_ERR_UNSUPPORTED, "optimize refused: %d %s", rc, err.msg);
        if (!rc) mbs_opt_result_free(&ores);
        mbs_model_free(m);
    }
    /* a model without objectives of its own: the program's is the only one */
    m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    CHECK(m != NULL, "double pendulum: %s", m ? "" : err.msg);
    if (m) {
        CHECK(mbs_model_nobjectives(m) == 0, "the double pendulum declares no objectives");
        mbs_sens_options o = mbs_sens_options_default(m);
        o.sim.tf = 0.5;
        o.sim.formulation = MBS_FD_SEMI_RECURSIVE;
        mbs_sens_result fd, r;
        CHECK(sens(m, &o, MBS_SENS_DDM, &r, &err) != MBS_OK && strstr(err.msg, "no objectives"),
              "no objectives at all: %s", err.msg);
        o.objective = user_g;
        o.objective_user = &c;
        if (sens(m, &o, MBS_SENS_FD, &fd, &err) == MBS_OK) {
            CHECK(fd.nobj == 1, "one objective: %d", fd.nobj);
            check_method("double pendulum, only the program's objective", m, &o, MBS_SENS_DDM, &fd, 1e-6);
            check_method("double pendulum, only the program's objective", m, &o, MBS_SENS_DAVM, &fd, 1e-6);
            mbs_sens_result_free(&fd);
        } else {
            CHECK(0, "double pendulum fd: %s", err.msg);
        }
        mbs_model_free(m);
    }
    /* ---- closed loops: the five-bar ---- */
    m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "fivebar: %s", m ? "" : err.msg);
    if (m) {
        const mbs_loop_formulation forms[2] = { MBS_LOOP_ALI3P, MBS_LOOP_MATRIXR };
        for (int f = 0; f < 2; f++) {
            mbs_sens_options o = mbs_sens_options_default(m);
            o.sim.tf = 0.3;
            o.sim.loop = forms[f];
            o.objective = user_g;
            o.objective_user = &c;
            o.fd_step = f == 0 ? 1e-4 : 1e-5;
            o.sim.tolerance = 1e-12;
            mbs_sens_result fd;
            if (sens(m, &o, MBS_SENS_FD, &fd, &err) != MBS_OK) {
                CHECK(0, "fivebar fd: %s", err.msg);
                continue;
            }
            o.sim.tolerance = 1e-10;
            char what[64];
            snprintf(what, sizeof what, "five-bar, %s", mbs_loop_formulation_name(forms[f]));
            /* the finite differences' accuracy: about 1e-5 (ALI3-P: its
             * Newton tolerance over the step), as in test_sensitivity_loops */
            check_method(what, m, &o, MBS_SENS_DDM, &fd, f == 0 ? 1e-4 : 1e-6);
            check_method(what, m, &o, MBS_SENS_DAVM, &fd, f == 0 ? 1e-4 : 1e-6);
            /* the continuous adjoint: O(h^2) from the discrete gradients */
            check_method(what, m, &o, MBS_SENS_CAVM, &fd, 1e-3);
            mbs_sens_result_free(&fd);
        }
        mbs_model_free(m);
    }
    return mbs_test_summary("test_sensitivity_user");
}
