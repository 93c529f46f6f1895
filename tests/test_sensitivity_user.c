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
 *     discretization, within the fd's own error (mbs_test_check_fd); CAVM
 *     (CVODES, rtol 1e-10) against the RK4 DDM at a fine step, within their
 *     discretization errors;
 *   - closed loops (the five-bar): ALI3-P DDM, DAVM and CAVM, Matrix R DDM
 *     and DAVM against fd (the CAVM within the DDM's O(h^2) error of it);
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

/* an exact gradient of the discrete run (DDM, DAVM with options o) against central differences of
 * whole runs (fd, options of): within the differences' own error and the tolerance's effect on both
 * (mbs_test_check_fd) */
static void check_method(const char *what, const mbs_model *m, mbs_sens_options *o, mbs_sens_method meth,
                         const mbs_sens_options *of, const mbs_sens_result *fd)
{
    mbs_sens_result r;
    mbs_error err;
    int rc = sens(m, o, meth, &r, &err);
    CHECK(rc == MBS_OK, "%s %s: %s", what, mbs_sens_method_name(meth), err.msg);
    if (rc) return;
    CHECK(r.nobj == mbs_model_nobjectives(m) + 1, "%s: %d objectives", what, r.nobj);
    char label[160];
    snprintf(label, sizeof label, "%s %s", what, mbs_sens_method_name(meth));
    const double w = mbs_test_check_fd(m, o, &r, of, fd, label);
    printf("%s, %s: every objective (the program's among them) vs fd %.2e, within %.0f %% of its bound\n", what,
           mbs_sens_method_name(meth), row_err(&r, fd), 100 * w);
    mbs_sens_result_free(&r);
}

/* the continuous adjoint (options o, method cavm) against a discrete reference ref (options oref) of
 * order p: within the reference's discretization error (mbs_test_sens_order_error), the CAVM's own
 * (its change from h to h/2, second order at least: 1.25 x 4/3), CVODES's local errors summed (steps
 * (rtol + atol) relative to the row) where it integrates, and extra (per entry, may be NULL) */
static void check_cavm(const char *what, const mbs_model *m, mbs_sens_options *o, const mbs_sens_options *oref,
                       const mbs_sens_result *ref, int p, const double *extra)
{
    mbs_sens_result r, r2;
    mbs_error err;
    int rc = sens(m, o, MBS_SENS_CAVM, &r, &err);
    CHECK(rc == MBS_OK, "%s cavm: %s", what, err.msg);
    if (rc) return;
    mbs_sens_options o2 = *o;
    o2.sim.dt = o->sim.dt / 2;
    rc = sens(m, &o2, MBS_SENS_CAVM, &r2, &err);
    CHECK(rc == MBS_OK, "%s cavm at h/2: %s", what, err.msg);
    if (rc) { mbs_sens_result_free(&r); return; }
    const int n = r.nobj * r.nparam;
    double *b = calloc((size_t)n + 1, sizeof *b), worst = 0;
    mbs_test_sens_order_error(m, oref, p, ref, b);
    const double cv = o->sim.loop == MBS_LOOP_NONE ? (double)r.stats.steps * (o->sim.rtol + o->sim.atol) : 0;
    for (int i = 0; i < r.nobj; i++) {
        double scale = 1;
        for (int j = 0; j < r.nparam; j++) scale = fmax(scale, fabs(ref->grad[i * r.nparam + j]));
        for (int j = 0; j < r.nparam; j++) {
            const int k = i * r.nparam + j;
            const double bk = b[k] + 1.25 * 4 / 3 * fabs(r.grad[k] - r2.grad[k]) + cv * scale + (extra ? extra[k] : 0);
            const double d = fabs(r.grad[k] - ref->grad[k]);
            worst = fmax(worst, d / bk);
            CHECK(d <= bk, "%s cavm: objective %d parameter %d: %.12g, reference %.12g (bound %.2e)", what, i, j,
                  r.grad[k], ref->grad[k], bk);
        }
    }
    printf("%s, cavm: every objective vs the discrete reference %.2e, within %.0f %% of its bound\n", what,
           row_err(&r, ref), 100 * worst);
    free(b);
    mbs_sens_result_free(&r);
    mbs_sens_result_free(&r2);
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
        mbs_sens_options ofd = o;
        ofd.method = MBS_SENS_FD;
        if (sens(m, &o, MBS_SENS_FD, &fd, &err) == MBS_OK) {
            check_method("spring tree, semi (trapezoidal)", m, &o, MBS_SENS_DDM, &ofd, &fd);
            check_method("spring tree, semi (trapezoidal)", m, &o, MBS_SENS_DAVM, &ofd, &fd);
            mbs_sens_result_free(&fd);
        } else {
            CHECK(0, "spring tree fd: %s", err.msg);
        }
        o.sim.formulation = ofd.sim.formulation = MBS_FD_RECURSIVE;
        if (sens(m, &o, MBS_SENS_FD, &fd, &err) == MBS_OK) {
            check_method("spring tree, fr (rk4)", m, &o, MBS_SENS_DDM, &ofd, &fd);
            mbs_sens_result_free(&fd);
        } else {
            CHECK(0, "spring tree fr fd: %s", err.msg);
        }
        /* cavm (continuous) against the rk4 ddm at a fine step (second order at least: the spline
         * load's jumps in its third derivative at the knots limit RK4's order) */
        mbs_sens_result fine;
        mbs_sens_options of = o;
        of.sim.dt = 2.5e-4;
        if (sens(m, &of, MBS_SENS_DDM, &fine, &err) == MBS_OK) {
            o.sim.rtol = 1e-10;
            o.sim.atol = 1e-12;
            check_cavm("spring tree, cvodes", m, &o, &of, &fine, 2, NULL);
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
        mbs_sens_options ofd = o;
        ofd.method = MBS_SENS_FD;
        if (sens(m, &o, MBS_SENS_FD, &fd, &err) == MBS_OK) {
            CHECK(fd.nobj == 1, "one objective: %d", fd.nobj);
            check_method("double pendulum, only the program's objective", m, &o, MBS_SENS_DDM, &ofd, &fd);
            check_method("double pendulum, only the program's objective", m, &o, MBS_SENS_DAVM, &ofd, &fd);
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
            mbs_sens_options ofd = o;
            ofd.method = MBS_SENS_FD;
            o.sim.tolerance = 1e-10;
            char what[64];
            snprintf(what, sizeof what, "five-bar, %s", mbs_loop_formulation_name(forms[f]));
            /* the finite differences' accuracy: ALI3-P's psi carries its Newton tolerance over the
             * step (mbs_test_check_fd measures it), as in test_sensitivity_loops */
            check_method(what, m, &o, MBS_SENS_DDM, &ofd, &fd);
            check_method(what, m, &o, MBS_SENS_DAVM, &ofd, &fd);
            /* the continuous adjoint: the discrete gradient's O(h^2) error away from the fd (the DDM's,
             * measured), plus the fd's own error */
            double *efd = calloc((size_t)(fd.nobj * fd.nparam) + 1, sizeof *efd);
            mbs_test_fd_error(m, &ofd, &fd, efd);
            mbs_sens_options od = o;
            od.method = MBS_SENS_DDM;
            mbs_sens_result ddm;
            if (sens(m, &od, MBS_SENS_DDM, &ddm, &err) == MBS_OK) {
                for (int k = 0; k < fd.nobj * fd.nparam; k++) efd[k] += fabs(ddm.grad[k] - fd.grad[k]);
                check_cavm(what, m, &o, &od, &ddm, 2, efd);
                mbs_sens_result_free(&ddm);
            }
            free(efd);
            mbs_sens_result_free(&fd);
        }
        mbs_model_free(m);
    }
    return mbs_test_summary("test_sensitivity_user");
}
