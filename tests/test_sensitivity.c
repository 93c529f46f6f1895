/*
 * test_sensitivity.c - trajectory sensitivities of open trees.
 *
 *   - tests/models/spring_tree.json (spherical, revolute and cardan joints;
 *     a spring-damper, a joint spring, a spline-driven body load; parameters
 *     of every kind; objectives of every kind): semi-recursive DDM = discrete
 *     adjoint to round-off (both are the exact derivative of the discrete
 *     trapezoidal psi; mbs_test_sens_roundoff), and both = central
 *     differences within the differences' own error (mbs_test_check_fd);
 *     fully recursive DDM = complex step over the RK4 runs to round-off,
 *     and = central differences;
 *     for the reference points com and origin; the same with the spline
 *     read by force elements only and a terminal acceleration term;
 *   - Anderson & Hsu §5: the kinetic energy of the double pendulum over 20 s
 *     and its sensitivity to L1, L2, M_P, M_Q, stable and equal to central
 *     differences;
 *   - spline knots as parameters on a floating body (32 knots): every method
 *     agrees; 100 knots: davm = ddm, cavm = rk4 ddm at a fine step;
 *   - errors: no objectives, unsupported combinations.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "sens_loops.h"

static int run(const mbs_model *m, mbs_sens_options *o, mbs_sens_method meth, mbs_fd_algorithm f,
               mbs_sens_result *r)
{
    mbs_error err;
    o->method = meth;
    o->sim.formulation = f;
    int rc = mbs_sensitivity(m, o, r, &err);
    CHECK(rc == MBS_OK, "%s/%s: %s", mbs_fd_algorithm_name(f), mbs_sens_method_name(meth), err.msg);
    return rc;
}

/* max relative difference over the gradient (scaled per objective) and psi */
static double diff(const mbs_sens_result *a, const mbs_sens_result *b)
{
    double e = mbs_rel_err(a->psi, b->psi, a->nobj);
    for (int k = 0; k < a->nobj; k++) {
        double ek = mbs_rel_err(a->grad + k * a->nparam, b->grad + k * b->nparam, a->nparam);
        if (ek > e) e = ek;
    }
    return e;
}

/* the continuous adjoint (CVODES at rtol, atol) against complex step over RK4 runs (options o): both
 * approximate the ODE's gradient; RK4's error from runs at h/2 and h/4, taken as second order (spline
 * forces have jumps in their third derivative at the knots, which limit RK4's order between them:
 * ratios of 3.4 and 4.9 on the spline bodies), CVODES's local errors summed over its steps
 * (steps (rtol + atol) relative to the gradient) */
static void check_cavm(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *cav,
                       const mbs_sens_result *rk, const char *label)
{
    const int n = rk->nobj * rk->nparam;
    double *e = calloc((size_t)n + 1, sizeof *e), worst = 0;
    mbs_sens_options oc = *o;
    oc.method = MBS_SENS_CS;
    oc.sim.formulation = MBS_FD_RECURSIVE;
    mbs_test_sens_order_error(m, &oc, 2, rk, e);
    const double ct = (double)cav->stats.steps * (o->sim.rtol + o->sim.atol);
    for (int i = 0; i < rk->nobj; i++) {
        double scale = 1;
        for (int j = 0; j < rk->nparam; j++) scale = fmax(scale, fabs(rk->grad[i * rk->nparam + j]));
        for (int j = 0; j < rk->nparam; j++) {
            const int k = i * rk->nparam + j;
            const double d = fabs(cav->grad[k] - rk->grad[k]), bnd = e[k] + ct * scale;
            worst = fmax(worst, d / bnd);
            CHECK(d <= bnd, "%s: cavm vs rk4, objective %d parameter %d: %.12g, %.12g (bound %.2e)", label, i, j,
                  cav->grad[k], rk->grad[k], bnd);
        }
    }
    printf("  %s: cavm vs rk4 within %.0f %% of the bound\n", label, 100 * worst);
    free(e);
}

/* DDM = discrete adjoint (semi-recursive, trapezoidal) and DDM = complex step (fully recursive,
 * RK4) to round-off (mbs_test_sens_roundoff): exact derivatives of the same discrete psi; each =
 * central differences within their error (mbs_test_check_fd) */
static void compare_all(const mbs_model *m, double tf, double dt, mbs_ref_point ref)
{
    mbs_sens_options o = mbs_sens_options_default(m);
    o.sim.tf = tf;
    o.sim.dt = dt;
    o.sim.ref = ref;
    mbs_sens_options os = o, of = o;
    os.sim.formulation = MBS_FD_SEMI_RECURSIVE;
    of.sim.formulation = MBS_FD_RECURSIVE;
    mbs_sens_options ose = os, ofe = of;   /* the exact runs' */
    ose.method = MBS_SENS_DDM;
    ofe.method = MBS_SENS_DDM;
    mbs_sens_result ddm, davm, fd, fr, cs, frfd;
    if (run(m, &o, MBS_SENS_DDM, MBS_FD_SEMI_RECURSIVE, &ddm)) return;
    if (run(m, &o, MBS_SENS_DAVM, MBS_FD_SEMI_RECURSIVE, &davm)) return;
    if (run(m, &o, MBS_SENS_FD, MBS_FD_SEMI_RECURSIVE, &fd)) return;
    if (run(m, &o, MBS_SENS_DDM, MBS_FD_RECURSIVE, &fr)) return;
    if (run(m, &o, MBS_SENS_CS, MBS_FD_RECURSIVE, &cs)) return;
    if (run(m, &o, MBS_SENS_FD, MBS_FD_RECURSIVE, &frfd)) return;
    char label[160];
    snprintf(label, sizeof label, "%s, ref %s", mbs_model_name(m), mbs_ref_point_name(ref));
    const double e1 = diff(&ddm, &davm), e3 = diff(&fr, &cs);
    const double r1 = mbs_test_sens_roundoff(m, &ddm), r3 = mbs_test_sens_roundoff(m, &fr);
    const double w2 = mbs_test_check_fd(m, &ose, &ddm, &os, &fd, label);
    const double w4 = mbs_test_check_fd(m, &ofe, &fr, &of, &frfd, label);
    printf("%s: semi ddm vs davm %.2e (bound %.1e), vs fd within %.0f %% of its error; fr ddm vs cs %.2e (bound "
           "%.1e), vs fd within %.0f %%\n", label, e1, r1, 100 * w2, e3, r3, 100 * w4);
    CHECK(e1 <= r1, "semi ddm vs davm: %g", e1);
    CHECK(e3 <= r3, "fr ddm vs cs: %g", e3);
    /* the continuous adjoint differentiates the ODE, not a discretization: it agrees with the RK4
     * gradients (at a quarter of the step) to the accuracy of both */
    mbs_sens_result cav, fine;
    o.sim.rtol = 1e-10;
    o.sim.atol = 1e-12;
    o.sim.dt = dt / 4;
    if (!run(m, &o, MBS_SENS_CAVM, MBS_FD_RECURSIVE, &cav) && !run(m, &o, MBS_SENS_CS, MBS_FD_RECURSIVE, &fine)) {
        check_cavm(m, &o, &cav, &fine, label);
        mbs_sens_result_free(&cav);
        mbs_sens_result_free(&fine);
    }
    mbs_sens_result *all[] = { &ddm, &davm, &fd, &fr, &cs, &frfd };
    for (int k = 0; k < 6; k++) mbs_sens_result_free(all[k]);
}

int main(void)
{
    mbs_error err;
    /* ---- every joint, force and parameter kind ---- */
    mbs_model *m = mbs_model_load(mbs_test_path("tests/models/spring_tree.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        compare_all(m, 0.3, 0.005, MBS_REF_COM);
        compare_all(m, 0.3, 0.005, MBS_REF_ORIGIN);
        mbs_model_free(m);
    }
    /* ---- the same with the spline read by force elements only (its knots
     * on the adjoints' one-scalar-per-spline path, next to general and
     * element parameters) and a terminal term in the accelerations (the
     * adjoints' dFD/drho products at tF and t0) ---- */
    m = mbs_test_load_edited("tests/models/spring_tree",
                             "\"objectives\": ["
                             "{ \"name\": \"pos\", \"integral\": [ { \"point\": \"b2.tip\", \"reference\": [0.8, 0, 0] } ] },"
                             "{ \"name\": \"acc\", \"integral\": [ { \"point\": \"b2.tip\", \"quantity\": \"acceleration\", \"component\": \"z\" } ],"
                             "  \"terminal\": [ { \"coordinate\": \"r\", \"quantity\": \"velocity\" },"
                             "                  { \"point\": \"b2.tip\", \"quantity\": \"acceleration\", \"component\": \"z\" } ] },"
                             "{ \"name\": \"spin\", \"integral\": [ { \"body\": \"b3\", \"quantity\": \"angular_velocity\", \"vector\": \"up\" } ] } ]",
                             NULL);
    if (m) {
        compare_all(m, 0.3, 0.005, MBS_REF_COM);
        mbs_model_free(m);
    }
    /* ---- the two discretizations converge to the same gradient: the
     * trapezoidal rule is second order, RK4 fourth, so the difference of
     * their gradients falls by ~4 when the step is halved ---- */
    m = mbs_model_load(mbs_test_path("tests/models/spring_tree.json"), &err);
    if (m) {
        double e[2];
        for (int k = 0; k < 2; k++) {
            mbs_sens_options o = mbs_sens_options_default(m);
            o.sim.tf = 0.3;
            o.sim.dt = k ? 0.0025 : 0.005;
            mbs_sens_result a, b;
            if (run(m, &o, MBS_SENS_DDM, MBS_FD_SEMI_RECURSIVE, &a) || run(m, &o, MBS_SENS_DDM, MBS_FD_RECURSIVE, &b))
                break;
            e[k] = diff(&a, &b);
            mbs_sens_result_free(&a);
            mbs_sens_result_free(&b);
        }
        printf("trapezoidal vs rk4 gradient: %.3e (h = 5 ms), %.3e (2.5 ms), ratio %.2f\n", e[0], e[1], e[0] / e[1]);
        CHECK(e[0] / e[1] > 3.5 && e[0] / e[1] < 4.5, "second-order convergence of the gradient: ratio %g", e[0] / e[1]);
        mbs_model_free(m);
    }
    /* ---- Anderson & Hsu: kinetic energy of the double pendulum, 20 s ---- */
    m = mbs_model_load(mbs_test_path("tests/models/double_pendulum_ke.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        mbs_sens_options o = mbs_sens_options_default(m);
        o.sim.tf = 20;
        o.sim.dt = 2e-3;
        mbs_sens_result a, b, c, d;
        mbs_sens_options os = o, of = o;
        os.sim.formulation = MBS_FD_SEMI_RECURSIVE;
        of.sim.formulation = MBS_FD_RECURSIVE;
        mbs_sens_options ose = os, ofe = of;
        ose.method = MBS_SENS_DDM;
        ofe.method = MBS_SENS_DDM;
        if (!run(m, &o, MBS_SENS_DDM, MBS_FD_SEMI_RECURSIVE, &a) && !run(m, &o, MBS_SENS_FD, MBS_FD_SEMI_RECURSIVE, &b) &&
            !run(m, &o, MBS_SENS_DDM, MBS_FD_RECURSIVE, &c) && !run(m, &o, MBS_SENS_FD, MBS_FD_RECURSIVE, &d)) {
            double e1 = diff(&a, &b), e2 = diff(&c, &d);
            printf("double pendulum, 20 s: int T dt = %.6f, T(20) = %.6f; dpsi/d[L1 L2 M_P M_Q] = [%.5f %.5f %.5f %.5f]; "
                   "ddm vs fd: semi %.2e, fr %.2e\n", a.psi[0], a.psi[1], a.grad[0], a.grad[1], a.grad[2], a.grad[3], e1, e2);
            /* stable over the 20 s: the DDM gradients are those of central differences of the whole runs
             * (within the differences' own error) */
            mbs_test_check_fd(m, &ose, &a, &os, &b, "double pendulum semi");
            mbs_test_check_fd(m, &ofe, &c, &of, &d, "double pendulum fr");
            for (int k = 0; k < 8; k++) CHECK(isfinite(a.grad[k]), "finite gradient %g", a.grad[k]);
            /* energy is conserved: the final kinetic energy is at most the potential energy the two 2 m
             * links can lose from their start (2 g 4) */
            CHECK(a.psi[1] >= 0 && a.psi[1] < 2 * 9.81 * 4, "T(20) = %g", a.psi[1]);
            mbs_sens_result_free(&a); mbs_sens_result_free(&b); mbs_sens_result_free(&c); mbs_sens_result_free(&d);
        }
        mbs_model_free(m);
    }
    /* ---- spline knots on a floating body ---- */
    char *js = mbs_generate_spline_body_json(32, 0.5, &err);
    m = js ? mbs_model_load_string(js, "spline_body_32", &err) : NULL;
    free(js);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        CHECK(mbs_model_nparams(m) == 32, "32 knot parameters");
        compare_all(m, 0.5, 0.005, MBS_REF_COM);
        mbs_model_free(m);
    }
    /* ---- the sweep model at p = 100 knots (knots 5 ms apart): the discrete
     * adjoint is the DDM's gradient, the continuous adjoint (knot gradients
     * from its own quadrature, not CVODES's) the RK4 gradient at a fine step ---- */
    js = mbs_generate_spline_body_json(100, 0.5, &err);
    m = js ? mbs_model_load_string(js, "spline_body_100", &err) : NULL;
    free(js);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        mbs_sens_options o = mbs_sens_options_default(m);
        o.sim.tf = 0.5;
        o.sim.dt = 1e-3;
        mbs_sens_result ddm, davm, fr, cav;
        if (!run(m, &o, MBS_SENS_DDM, MBS_FD_SEMI_RECURSIVE, &ddm) && !run(m, &o, MBS_SENS_DAVM, MBS_FD_SEMI_RECURSIVE, &davm)) {
            double e = diff(&ddm, &davm), r = mbs_test_sens_roundoff(m, &ddm);
            printf("spline_body_100: semi ddm vs davm %.2e (bound %.1e)\n", e, r);
            CHECK(e <= r, "p = 100: semi ddm vs davm: %g", e);
            mbs_sens_result_free(&ddm);
            mbs_sens_result_free(&davm);
        }
        o.sim.dt = 2.5e-4;
        o.sim.rtol = 1e-10;
        o.sim.atol = 1e-12;
        if (!run(m, &o, MBS_SENS_DDM, MBS_FD_RECURSIVE, &fr) && !run(m, &o, MBS_SENS_CAVM, MBS_FD_RECURSIVE, &cav)) {
            double e = diff(&fr, &cav);
            printf("spline_body_100: cavm (rtol 1e-10) vs fr ddm (rk4, 0.25 ms) %.2e\n", e);
            o.method = MBS_SENS_DDM;
            check_cavm(m, &o, &cav, &fr, "spline_body_100");
            mbs_sens_result_free(&fr);
            mbs_sens_result_free(&cav);
        }
        mbs_model_free(m);
    }
    /* ---- errors ---- */
    m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    if (m) {
        mbs_sens_options o = mbs_sens_options_default(m);
        mbs_sens_result r;
        int rc = mbs_sensitivity(m, &o, &r, &err);
        CHECK(rc == MBS_ERR_ARG && strstr(err.msg, "no objectives"), "no objectives: %d %s", rc, err.msg);
        mbs_model_free(m);
    }
    m = mbs_model_load(mbs_test_path("tests/models/double_pendulum_ke.json"), &err);
    if (m) {
        mbs_sens_options o = mbs_sens_options_default(m);
        o.method = MBS_SENS_DAVM;
        o.sim.formulation = MBS_FD_RECURSIVE;
        mbs_sens_result r;
        int rc = mbs_sensitivity(m, &o, &r, &err);
        CHECK(rc == MBS_ERR_UNSUPPORTED && strstr(err.msg, "semi"), "davm with fr: %d %s", rc, err.msg);
        o.method = MBS_SENS_CS;
        o.sim.formulation = MBS_FD_SEMI_RECURSIVE;
        rc = mbs_sensitivity(m, &o, &r, &err);
        CHECK(rc == MBS_ERR_UNSUPPORTED && strstr(err.msg, "fr"), "cs with semi: %d %s", rc, err.msg);
        mbs_model_free(m);
    }
    return mbs_test_summary("sensitivity");
}
