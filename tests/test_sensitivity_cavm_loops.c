/*
 * test_sensitivity_cavm_loops.c - continuous adjoint (CAVM) of the
 * closed-loop formulations Matrix R and ALI3-P
 * (src/sensitivity/cavm_loops.c; docs/sensitivity.md
 * "CAVM of the closed-loop formulations").
 *
 * What the CAVM computes is the gradient of the continuous psi (the exact
 * solution of the constrained equations); the DDM and the finite
 * differences differentiate the discrete psi of a 1 ms trapezoidal run.
 * The two differ by the O(h^2) discretization error of the gradient, so:
 *
 * 1. Five-bar (thesis §7.1), 5 s at 1 ms: Tables 7.4-7.6 to 0.1 % for
 *    ALI3-P and Matrix R with both reference points (the thesis's own DDM
 *    and CAVM rows differ from its Reference row by up to 0.05 %); psi
 *    (the formulation's trapezoidal quadrature, as the DDM) as the ODE's
 *    within its discretization error (mbs_test_check_fivebar_psi). ALI3-P
 *    and Matrix R, com and origin: the same continuous gradient (the
 *    adjoint runs on its own RK4 trajectory from the same initial state)
 *    to round-off (mbs_test_sens_roundoff).
 * 2. The continuous limit (five-bar, 1 s): the DDM at 1 ms and 0.5 ms,
 *    Richardson-extrapolated, is the continuous gradient (its remainder
 *    from the extrapolation of 0.5 ms and 0.25 ms); the CAVM at 1 ms and
 *    at 2 ms agree with it within their own error (from their difference)
 *    and that bound lies below the DDM's distance at 1 ms: the accuracy
 *    does not need a finer step than the forward run.
 * 3. Against central finite differences of whole re-simulations (method
 *    fd, the closed-loop path, re-assembly included), Richardson-
 *    extrapolated over the steps h and h/2 in the same way (so that the
 *    references are the continuous gradient): the five-bar and its
 *    variants (configuration-dependent B, a driven crank, a terminal
 *    term), the spatial slider-crank with spring (thesis §7.2: m_CD, k, c,
 *    L0), the redundant four-bar and the quarter car (Euler parameters in
 *    the tree), within the CAVM's, the extrapolation's and the fd's own
 *    errors (each measured); and the CAVM's change from h to h/2 stays
 *    below the fd's discretization error at h.
 * 4. No allocation per step: the number of allocations of a whole run is
 *    the same for 100 and 200 steps (malloc interposed; not under ASan).
 * 5. Parameters that only set numbers of force elements and functions
 *    (spring lengths, a stiffness, 11 knots of a crank-torque spline:
 *    tests/models/fivebar_torque.json) take adjoint products instead of
 *    columns; with a program's objective every parameter takes its column.
 *    The model's objectives' gradients of the two paths agree to round-off
 *    (both formulations), and the CAVM is within the DDM's O(h^2) error of
 *    the DDM.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "alloc_count.h"
#include "sens_loops.h"

static mbs_model *load(const char *name, const char *extra, const char *params)
{
    return mbs_test_load_edited(name, extra, params);
}
static int sens(const mbs_model *m, mbs_loop_formulation f, mbs_sens_method meth, mbs_ref_point ref, double tf,
                double dt, double tol, double fd_step, const mbs_sim_options *base, mbs_sens_result *res)
{
    return mbs_test_sens(m, f, meth, ref, tf, dt, tol, fd_step, base, res);
}
static double row_err(const mbs_sens_result *a, const double *b) { return mbs_test_grad_err(a, b); }

/* ---------------------------------------------------------------- 1. thesis tables */

static void fivebar_thesis(void)
{
    mbs_model *m = load("fivebar", NULL, NULL);
    if (!m) return;
    printf("five-bar, 5 s at 1 ms: CAVM against thesis Tables 7.4-7.6 (Reference row)\n");
    const mbs_loop_formulation fs[2] = { MBS_LOOP_ALI3P, MBS_LOOP_MATRIXR };
    const mbs_ref_point refs[2] = { MBS_REF_COM, MBS_REF_ORIGIN };
    mbs_sens_result res[2][2];
    memset(res, 0, sizeof res);
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 2; k++) {
            mbs_sens_result *r = &res[f][k];
            if (MBS_SANITIZED && f != k) continue;   /* under the sanitizers: ali3p/com and matrixr/origin */
            if (sens(m, fs[f], MBS_SENS_CAVM, refs[k], 5, 1e-3, 1e-10, 0, NULL, r)) continue;
            char title[64];
            snprintf(title, sizeof title, "%s, ref %s", mbs_loop_formulation_name(fs[f]),
                     mbs_ref_point_name(refs[k]));
            mbs_test_print_grad(title, r, 9);
            mbs_test_check_fivebar_psi(m, fs[f], refs[k], 5, 1e-3, r->psi, title);
            double worst = 0;
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 5; j++) {
                    const double g = r->grad[i * 5 + j], e = fabs(g - MBS_FIVEBAR_THESIS[i][j]) / fabs(MBS_FIVEBAR_THESIS[i][j]);
                    if (e > worst) worst = e;
                    /* the thesis's runs, to 4 digits: its own DDM and CAVM rows differ from its Reference
                     * row by up to 0.05 % (221.7, 221.8): 0.1 %, twice that */
                    CHECK(e <= 1e-3, "%s: dpsi%d/d%s = %.6g, thesis %.6g (%.3f %%)", title, i + 1,
                          mbs_param_name(m, j), g, MBS_FIVEBAR_THESIS[i][j], 100 * e);
                }
            }
            printf("    largest deviation from the thesis: %.3f %%\n", 100 * worst);
        }
    /* one continuous gradient for both formulations and both reference points */
    const mbs_sens_result *base = &res[0][0];
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 2; k++) {
            if ((f == 0 && k == 0) || !res[f][k].grad || !base->grad) continue;
            const double e = row_err(&res[f][k], base->grad);
            printf("  %s/%s vs ali3p/com: %.2e\n", mbs_loop_formulation_name(fs[f]), mbs_ref_point_name(refs[k]), e);
            /* the same adjoint run on the same RK4 trajectory: round-off */
            CHECK(e <= mbs_test_sens_roundoff(m, base), "%s/%s vs ali3p/com: %g", mbs_loop_formulation_name(fs[f]),
                  mbs_ref_point_name(refs[k]), e);
        }
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 2; k++) mbs_sens_result_free(&res[f][k]);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- 2. the continuous limit */

/* Richardson extrapolation of a method at steps h and h/2 (second order): (4 g(h/2) - g(h)) / 3, in
 * out; its error, what is left of O(h^3) and beyond, from the extrapolation of h/2 and h/4: 1.25 x
 * 8/7 of their difference (a remainder C h^3 changes by 7/8 of itself), in err; coarse: g(h) */
static int extrapolated(const mbs_model *m, mbs_loop_formulation f, mbs_sens_method meth, double tf, double h,
                        double tol, double fd_step, const mbs_sim_options *base, double *out, double *coarse,
                        double *err)
{
    mbs_sens_result a, b, c;
    memset(&c, 0, sizeof c);
    int rc = sens(m, f, meth, MBS_REF_COM, tf, h, tol, fd_step, base, &a);
    if (!rc) rc = sens(m, f, meth, MBS_REF_COM, tf, 0.5 * h, tol, fd_step, base, &b);
    if (!rc) rc = sens(m, f, meth, MBS_REF_COM, tf, 0.25 * h, tol, fd_step, base, &c);
    if (!rc) {
        const int n = a.nobj * a.nparam;
        for (int k = 0; k < n; k++) {
            out[k] = (4 * b.grad[k] - a.grad[k]) / 3;
            err[k] = 1.25 * 8 / 7 * fabs(out[k] - (4 * c.grad[k] - b.grad[k]) / 3);
            if (coarse) coarse[k] = a.grad[k];
        }
        mbs_sens_result_free(&b);
        mbs_sens_result_free(&c);
    }
    mbs_sens_result_free(&a);
    return rc;
}

/* max over the rows of max_j bound_j / max_j |g_j| (relative, as row_err) */
static double row_bound(const mbs_sens_result *r, const double *bound)
{
    double worst = 0;
    for (int i = 0; i < r->nobj; i++) {
        double e = 0, s = 0;
        for (int j = 0; j < r->nparam; j++) {
            e = fmax(e, bound[i * r->nparam + j]);
            s = fmax(s, fabs(r->grad[i * r->nparam + j]));
        }
        worst = fmax(worst, e / (s > 0 ? s : 1));
    }
    return worst;
}

static void continuous_limit(void)
{
    mbs_model *m = load("fivebar", NULL, NULL);
    if (!m) return;
    const double tf = MBS_SANITIZED ? 0.3 : 1;
    const int n = mbs_model_nobjectives(m) * mbs_model_nparams(m);
    double *ref = calloc((size_t)n, sizeof(double)), *ddm = calloc((size_t)n, sizeof(double));
    double *eref = calloc((size_t)n, sizeof(double)), *ec = calloc((size_t)n, sizeof(double));
    mbs_sens_result c1, c2;
    memset(&c1, 0, sizeof c1);
    memset(&c2, 0, sizeof c2);
    if (!extrapolated(m, MBS_LOOP_MATRIXR, MBS_SENS_DDM, tf, 1e-3, 1e-10, 0, NULL, ref, ddm, eref) &&
        !sens(m, MBS_LOOP_MATRIXR, MBS_SENS_CAVM, MBS_REF_COM, tf, 1e-3, 1e-10, 0, NULL, &c1) &&
        !sens(m, MBS_LOOP_MATRIXR, MBS_SENS_CAVM, MBS_REF_COM, tf, 2e-3, 1e-10, 0, NULL, &c2)) {
        mbs_sens_result d = c1;
        d.grad = ddm;
        const double e1 = row_err(&c1, ref), e2 = row_err(&c2, ref), ed = row_err(&d, ref);
        /* the CAVM's own error, at least second order: at 1 ms 1.25 / 3, at 2 ms 1.25 x 4 / 3 of the
         * change between them; plus the reference's (extrapolated) */
        for (int k = 0; k < n; k++) ec[k] = 1.25 / 3 * fabs(c1.grad[k] - c2.grad[k]) + eref[k];
        const double b1 = row_bound(&c1, ec);
        for (int k = 0; k < n; k++) ec[k] += 1.25 * fabs(c1.grad[k] - c2.grad[k]);
        const double b2 = row_bound(&c2, ec);
        printf("five-bar, %g s: against the extrapolated DDM (1 ms, 0.5 ms): cavm 1 ms %.2e (bound %.1e), cavm 2 ms "
               "%.2e (bound %.1e), ddm 1 ms %.2e\n", tf, e1, b1, e2, b2, ed);
        CHECK(e1 <= b1, "cavm (1 ms) vs the continuous gradient: %g > %g", e1, b1);
        CHECK(e2 <= b2, "cavm (2 ms) vs the continuous gradient: %g > %g", e2, b2);
        /* the CAVM's accuracy at the forward run's step: its bound below the DDM's distance */
        CHECK(b1 < ed && b2 < ed, "cavm (1 ms, 2 ms: %g, %g) not closer to the continuous gradient than ddm (1 ms) "
              "%g", b1, b2, ed);
    }
    free(eref);
    free(ec);
    mbs_sens_result_free(&c1);
    mbs_sens_result_free(&c2);
    free(ref);
    free(ddm);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- 3. finite differences */

/* cavm (at h) against the fd of formulation f extrapolated from h and h/2: within the CAVM's own
 * error (second order at least: 1.25 x 4/3 of its change from h to h/2), the extrapolation's
 * (extrapolated) and the fd's own at h (mbs_test_fd_error), which the extrapolation (4 g(h/2) -
 * g(h)) / 3 takes 5/3 times */
static void cavm_vs_fd(const char *what, const mbs_model *m, mbs_loop_formulation f, double tf, double h,
                       const mbs_sim_options *base)
{
    const int ali = f == MBS_LOOP_ALI3P, n = mbs_model_nobjectives(m) * mbs_model_nparams(m);
    const double step = ali ? 1e-4 : 1e-5;
    double *ref = calloc((size_t)n, sizeof(double)), *fd = calloc((size_t)n, sizeof(double));
    double *eref = calloc((size_t)n, sizeof(double)), *efd = calloc((size_t)n, sizeof(double));
    mbs_sens_result a, c;
    memset(&a, 0, sizeof a);
    memset(&c, 0, sizeof c);
    if (!sens(m, f, MBS_SENS_CAVM, MBS_REF_COM, tf, h, 1e-10, 0, base, &a) &&
        !sens(m, f, MBS_SENS_CAVM, MBS_REF_COM, tf, 0.5 * h, 1e-10, 0, base, &c) &&
        !extrapolated(m, f, MBS_SENS_FD, tf, h, 1e-12, step, base, ref, fd, eref)) {
        mbs_sens_result b = a;
        b.grad = fd;
        const mbs_sens_options of = mbs_test_sens_options(m, f, MBS_SENS_FD, MBS_REF_COM, tf, h, 1e-12, step, base);
        mbs_test_fd_error(m, &of, &b, efd);
        for (int k = 0; k < n; k++) eref[k] += 5.0 / 3 * efd[k] + 1.25 * 4 / 3 * fabs(a.grad[k] - c.grad[k]);
        const double e = row_err(&a, ref), e0 = row_err(&b, ref), bnd = row_bound(&a, eref);
        printf("%s, %s, %g s at %g ms: cavm vs extrapolated fd %.2e (bound %.1e; fd at %g ms: %.2e)\n", what,
               mbs_loop_formulation_name(f), tf, 1e3 * h, e, bnd, 1e3 * h, e0);
        mbs_test_print_grad("cavm", &a, 9);
        b.grad = ref;
        mbs_test_print_grad("fd, extrapolated", &b, 9);
        for (int k = 0; k < n; k++)
            CHECK(fabs(a.grad[k] - ref[k]) <= eref[k], "%s %s: cavm vs fd, entry %d: %.12g, %.12g (bound %.2e)",
                  what, mbs_loop_formulation_name(f), k, a.grad[k], ref[k], eref[k]);
        /* the adjoint's accuracy does not need a finer step: at h/2 the same gradient, to the
         * CAVM's own error bound, far below the fd's discretization error at h */
        const double ec = row_err(&a, c.grad);
        printf("  cavm at %g ms vs %g ms: %.2e\n", 1e3 * h, 0.5e3 * h, ec);
        CHECK(1.25 * 4 / 3 * ec < e0, "%s %s: cavm at h vs h/2 %g, not below the fd's error at h %g", what,
              mbs_loop_formulation_name(f), ec, e0);
    }
    mbs_sens_result_free(&a);
    mbs_sens_result_free(&c);
    free(ref);
    free(fd);
    free(eref);
    free(efd);
}

static void against_fd(void)
{
    const double T = MBS_SANITIZED ? 0.2 : 1;
    mbs_model *m = load("fivebar", NULL, NULL);
    if (m) {
        cavm_vs_fd("five-bar", m, MBS_LOOP_MATRIXR, T, 1e-3, NULL);
        cavm_vs_fd("five-bar", m, MBS_LOOP_ALI3P, T, 1e-3, NULL);
        /* Matrix R on the global coordinates of point 2 (configuration-dependent B) */
        const int p2 = mbs_point_find(m, "b12.P2");
        mbs_dof dofs[2] = { { p2, -1, 0 }, { p2, -1, 1 } };
        mbs_sim_options o = mbs_model_sim_options(m);
        o.dofs = dofs;
        o.ndofs = 2;
        cavm_vs_fd("five-bar (point coordinates as DOF)", m, MBS_LOOP_MATRIXR, 0.5 * T, 1e-3, &o);
        mbs_model_free(m);
    }
    /* terminal terms (the model's objectives replaced): the adjoint's
     * terminal conditions G~_y, G~_rho (through the accelerations for an acceleration term) */
    m = load("fivebar",
             "\"objectives\": ["
             "{\"name\": \"end_pos\", \"integral\": [{\"point\": \"b12.P2\", \"quantity\": \"velocity\"}],"
             " \"terminal\": [{\"point\": \"b12.P2\", \"quantity\": \"position\", \"reference\": [0.5, -2.0, 0.0]}]},"
             "{\"name\": \"end_acc\", \"terminal\": [{\"point\": \"b12.P2\", \"quantity\": \"acceleration\"},"
             " {\"point\": \"b12.P2\", \"quantity\": \"velocity\", \"weight\": 3}]}]",
             NULL);
    if (m) {
        CHECK(mbs_model_nobjectives(m) == 2 && mbs_objective_find(m, "end_acc") == 1, "terminal objectives loaded");
        cavm_vs_fd("five-bar (terminal terms)", m, MBS_LOOP_MATRIXR, 0.5 * T, 1e-3, NULL);
        mbs_model_free(m);
    }

    /* the five-bar with its crank driven by a sine law (amplitude and frequency as parameters) */
    m = load("fivebar",
             "\"functions\": [{\"name\": \"drive\", \"type\": \"sine\", \"amplitude\": 0.4,"
             " \"frequency\": 0.5, \"phase\": 1.5707963267948966, \"offset\": -2.756194490192345}],"
             "\"constraints\": [{\"name\": \"crank\", \"type\": \"coordinate\", \"joint\": \"jA\","
             " \"function\": \"drive\"}]",
             "{\"name\": \"amp\", \"value\": 0.4, \"sets\": [\"drive.amplitude\","
             " {\"target\": \"drive.offset\", \"scale\": -1, \"offset\": -2.356194490192345}]},"
             "{\"name\": \"freq\", \"value\": 0.5, \"sets\": [\"drive.frequency\"]}");
    if (m) {
        cavm_vs_fd("driven five-bar", m, MBS_LOOP_MATRIXR, 0.5 * T, 1e-3, NULL);
        mbs_model_free(m);
    }

    /* the spatial slider-crank with spring: thesis §7.2 objectives and parameters (m_CD, k, c, L0) */
    m = mbs_test_load_sens_case("slider_crank");
    if (m) {
        mbs_sim_options o = mbs_model_sim_options(m);
        o.penalty = 1e10;   /* thesis Table 7.10 */
        o.proj_scale = 1e-4;
        cavm_vs_fd("slider-crank", m, MBS_LOOP_MATRIXR, 0.5 * T, 1e-3, &o);
        cavm_vs_fd("slider-crank", m, MBS_LOOP_ALI3P, 0.5 * T, 1e-3, &o);
        mbs_model_free(m);
    }

    /* redundant constraints (6 loop equations of rank 2) */
    m = mbs_test_load_sens_case("fourbar_redundant");
    if (m) {
        cavm_vs_fd("redundant four-bar", m, MBS_LOOP_MATRIXR, 0.25, 1e-3, NULL);
        mbs_model_free(m);
    }

    /* quarter car: Euler parameters in the tree, two loops */
    m = mbs_test_load_sens_case("quarter_car");
    if (m) {
        cavm_vs_fd("quarter car", m, MBS_LOOP_MATRIXR, MBS_SANITIZED ? 0.1 : 0.3, 1e-3, NULL);
        mbs_model_free(m);
    }
}

/* ---------------------------------------------------------------- 4. no allocation per step */

/* the allocations of a whole run do not depend on its number of steps */
static void allocations(void)
{
    if (!MBS_COUNT_ALLOC) {
        printf("allocation counting: not under AddressSanitizer\n");
        return;
    }
    mbs_model *m = load("fivebar", NULL, NULL);
    if (!m) return;
    const mbs_loop_formulation fs[2] = { MBS_LOOP_ALI3P, MBS_LOOP_MATRIXR };
    for (int f = 0; f < 2; f++) {
        long cnt[2] = { 0, 0 };
        for (int k = 0; k < 2; k++) {
            mbs_sens_result res;
            mbs_alloc_count = 0;
            mbs_alloc_counting = 1;
            int rc = sens(m, fs[f], MBS_SENS_CAVM, MBS_REF_COM, k ? 0.2 : 0.1, 1e-3, 1e-10, 0, NULL, &res);
            mbs_alloc_counting = 0;
            cnt[k] = mbs_alloc_count;
            if (!rc) mbs_sens_result_free(&res);
        }
        printf("%s cavm: %ld allocations and frees over 100 steps, %ld over 200\n", mbs_loop_formulation_name(fs[f]),
               cnt[0], cnt[1]);
        CHECK(cnt[0] == cnt[1] && cnt[0] > 0, "%s cavm: allocations grow with the steps (%ld, %ld)",
              mbs_loop_formulation_name(fs[f]), cnt[0], cnt[1]);
    }
    mbs_model_free(m);
}

static void element_products(void)
{
    mbs_model *m = load("tests/models/fivebar_torque", NULL, NULL);
    if (!m) return;
    const mbs_loop_formulation forms[2] = { MBS_LOOP_ALI3P, MBS_LOOP_MATRIXR };
    for (int f = 0; f < 2; f++) {
        mbs_sens_result a, b, d;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        memset(&d, 0, sizeof d);
        mbs_sens_options o = mbs_sens_options_default(m);
        o.sim.loop = forms[f];
        o.sim.tf = 0.3;
        o.sim.dt = 1e-3;
        o.sim.tolerance = 1e-10;
        o.method = MBS_SENS_CAVM;
        mbs_error err;
        memset(&err, 0, sizeof err);
        int rc = mbs_sensitivity(m, &o, &a, &err);
        CHECK(rc == MBS_OK, "cavm: %s", err.msg);
        o.objective = mbs_test_zero_objective;
        if (rc == MBS_OK) rc = mbs_sensitivity(m, &o, &b, &err);
        CHECK(rc == MBS_OK, "cavm with a program objective: %s", err.msg);
        o.objective = NULL;
        o.method = MBS_SENS_DDM;
        if (rc == MBS_OK) rc = mbs_sensitivity(m, &o, &d, &err);
        CHECK(rc == MBS_OK, "ddm: %s", err.msg);
        if (rc == MBS_OK) {
            const int no = a.nobj, np = a.nparam;
            CHECK(b.nobj == no + 1 && np == 17, "sizes %d %d %d", a.nobj, b.nobj, np);
            double e = 0, ed = 0;
            for (int i = 0; i < no; i++) {
                double s = 0, x = 0, xd = 0;
                for (int j = 0; j < np; j++) s = fmax(s, fabs(b.grad[i * np + j]));
                for (int j = 0; j < np; j++) {
                    x = fmax(x, fabs(a.grad[i * np + j] - b.grad[i * np + j]));
                    xd = fmax(xd, fabs(a.grad[i * np + j] - d.grad[i * np + j]));
                }
                e = fmax(e, x / s);
                ed = fmax(ed, xd / s);
            }
            printf("five-bar with a torque spline, %s, 0.3 s: cavm products vs columns %.2e, cavm vs ddm %.2e "
                   "(%.3f s vs %.3f s)\n", mbs_loop_formulation_name(forms[f]), e, ed, a.wall_seconds,
                   b.wall_seconds);
            /* products and columns: the same adjoint quantities two ways, round-off; the CAVM (the
             * continuous gradient) and the DDM (of the 1 ms run): the DDM's O(h^2) error
             * (mbs_test_sens_order_error) */
            CHECK(e <= mbs_test_sens_roundoff(m, &a), "%s: cavm with products vs columns %g",
                  mbs_loop_formulation_name(forms[f]), e);
            double *eo = calloc((size_t)(no * np), sizeof *eo);
            mbs_test_sens_order_error(m, &o, 2, &d, eo);
            const double bd = row_bound(&d, eo);
            CHECK(ed <= bd, "%s: cavm vs ddm %g > %g", mbs_loop_formulation_name(forms[f]), ed, bd);
            free(eo);
        }
        mbs_sens_result_free(&a);
        mbs_sens_result_free(&b);
        mbs_sens_result_free(&d);
    }
    mbs_model_free(m);
}

int main(void)
{
    fivebar_thesis();
    continuous_limit();
    against_fd();
    allocations();
    element_products();
    return mbs_test_summary("test_sensitivity_cavm_loops");
}
