/*
 * test_integrators_manifold.c - the integrators on models with tangent
 * velocities (docs/tangent-space.md §9, §13).
 *
 *   - RK4 on the manifold (RKMK4) is of order 4: on random trees with every
 *     joint type made tangent, the differences between the runs at h, h/2
 *     and h/4 shrink by 2^4 = 16 per halving;
 *   - the tangent run equals the Euler-rate run of the same model (the
 *     state mapped through the velocity map) within the two methods' own
 *     O(h^4) errors, estimated by Richardson's rule from the halving;
 *   - every unit quaternion of a tangent run stays on |p| = 1 to round-off
 *     (no projection);
 *   - a floating-base URDF robot (a1, $MBS_URDF_DIR) simulated 10 s with
 *     RK4 conserves the energy as well in the tangent convention as in the
 *     Euler-rate one (within a factor 2), with the trapezoidal rule to the
 *     same order, its quaternion unit to round-off (skipped without the
 *     robot);
 *   - the trapezoidal rule's Newton iteration converges as fast (maximum
 *     iterations within one of the Euler-rate run's) with the finite-
 *     difference and with the analytical tangent along the manifold;
 *   - the integrators that do not step on the manifold yet refuse tangent
 *     models with a message naming what is missing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/manifold.h"
#include "mbsens/mbsens.h"
#include "random_model.h"
#include "testutil.h"

/* One run of n steps of size h from (q0, v0); the final state in (q, v),
 * the statistics in st. MBS_OK or the integrator's error (printed). */
static int run(const mbs_model *m, const mbs_sim_options *o, const double *q0, const double *v0, double h,
               long n, double *q, double *v, mbs_sim_stats *st)
{
    mbs_error err = { 0 };
    mbs_data *d = mbs_data_create(m, NULL);
    mbs_integrator *it = d ? mbs_integrator_create(m, d, o, &err) : NULL;
    int rc = it ? mbs_integrator_reset(it, o->t0, q0, v0, &err) : (err.code ? err.code : MBS_ERR_NOMEM);
    for (long k = 0; !rc && k < n; k++) rc = mbs_integrator_step(it, h, &err);
    if (rc) {
        fprintf(stderr, "run (h = %g): %s\n", h, err.msg);
    } else {
        memcpy(q, mbs_integrator_q(it), sizeof(double) * (size_t)mbs_model_nq(m));
        memcpy(v, mbs_integrator_qd(it), sizeof(double) * (size_t)mbs_model_nv(m));
        mbs_integrator_stats(it, st);
    }
    mbs_integrator_free(it);
    mbs_data_free(d);
    return rc;
}

/* max |a - b| over [q; v] of the tangent model mt, the Euler-rate state
 * (qe, qde) mapped to it (v = T^+ qde), scaled as mbs_rel_err. */
static double state_diff(const mbs_model *mt, const double *qt, const double *vt, const double *qe,
                         const double *qde)
{
    const int nq = mbs_model_nq(mt), nv = mbs_model_nv(mt);
    double *ve = malloc(sizeof(double) * (size_t)nv);
    mbs_velocity_from_rates(mt, qe, qde, NULL, ve, NULL);
    double e = fmax(mbs_rel_err(qt, qe, nq), mbs_rel_err(vt, ve, nv));
    free(ve);
    return e;
}

/* max |a - b| over [q; v] of two states of one model */
static double diff2(int nq, int nv, const double *qa, const double *va, const double *qb, const double *vb)
{
    return fmax(mbs_rel_err(qa, qb, nq), mbs_rel_err(va, vb, nv));
}

/* A method under test: its options on the tangent and on the Euler-rate
 * model, its order p, and the band of the halving ratio around 2^p. */
typedef struct {
    const char *name;
    mbs_sim_options ot, oe;
    int p;
    double band;
    long n0;   /* the coarsest run: n0 steps */
} method;

/* Order p and agreement with the Euler-rate run on random trees. The runs
 * cover T = 0.2 s at h = T/n for n = n0, 2 n0, 4 n0. */
static void check_order(const method *meth)
{
    mbs_rng r;
    mbs_rng_seed(&r, 2111);
    const double P = (double)(1 << meth->p), band = meth->band;
    double worst_ratio = 0, worst_agree = 0, worst_quat = 0;
    for (int trial = 0; trial < 4; trial++) {
        /* every joint type, at least one spherical or floating joint */
        mbs_model *me = NULL, *mt = NULL;
        mbs_error err = { 0 };
        for (int tries = 0; tries < 20 && !mt; tries++) {
            me = mbs_test_random_tree(&r, 5, 0);
            mt = me ? mbs_model_with_velocities(me, MBS_VELOCITIES_TANGENT, &err) : NULL;
            if (mt && mbs_model_nv(mt) < mbs_model_nq(mt)) break;
            mbs_model_free(mt);
            mbs_model_free(me);
            mt = me = NULL;
        }
        CHECK(mt != NULL, "trial %d: no random tree with a tangent joint: %s", trial, err.msg);
        if (!mt) continue;
        const int nq = mbs_model_nq(me), nvt = mbs_model_nv(mt), nve = mbs_model_nv(me);
        double *buf = calloc((size_t)(8 * nq + 8 * nq), sizeof(double));
        double *q0 = buf, *qd0 = q0 + nq, *v0 = qd0 + nq, *qt[3], *vt[3], *qe[3], *qde[3];
        for (int k = 0; k < 3; k++) {
            qt[k] = v0 + nq + (size_t)k * 4 * nq;
            vt[k] = qt[k] + nq;
            qe[k] = vt[k] + nq;
            qde[k] = qe[k] + nq;
        }
        mbs_test_random_state(&r, me, q0, qd0, NULL);
        mbs_velocity_from_rates(mt, q0, qd0, NULL, v0, NULL);
        const double T = 0.2;
        int ok = 1;
        mbs_sim_stats st, ste;
        double quat = 0;
        for (int k = 0; k < 3 && ok; k++) {
            long n = meth->n0 << k;
            ok = !run(mt, &meth->ot, q0, v0, T / (double)n, n, qt[k], vt[k], &st) &&
                 !run(me, &meth->oe, q0, qd0, T / (double)n, n, qe[k], qde[k], &ste);
            CHECK(ok, "%s trial %d: runs at n = %ld", meth->name, trial, n);
            if (ok && !(st.euler_drift <= quat)) quat = st.euler_drift;
            if (ok && meth->ot.integrator == MBS_INTEGRATOR_TRAPEZOIDAL && meth->ot.solver == MBS_SOLVER_NEWTON) {
                /* the same equations, Newton along the manifold converges as fast */
                printf("%s trial %d n = %ld: iterations mean %.3f max %d, Euler rates %.3f max %d\n", meth->name,
                       trial, n, st.iterations_mean, st.iterations_max, ste.iterations_mean, ste.iterations_max);
                CHECK(abs(st.iterations_max - ste.iterations_max) <= 1, "%s trial %d: max iterations %d, %d",
                      meth->name, trial, st.iterations_max, ste.iterations_max);
            }
        }
        if (ok) {
            /* Richardson: y_h - y_{h/2} = (1 - 2^-p) C h^p + O(h^(p+1)); the ratio
             * of two successive differences is 2^p (1 + O(h)). With h = T/n0 (5 ms
             * for the trapezoidal rule, 2.5 ms for RK4, whose O(h^5) term has the
             * larger constant) and the rates of the random trees (up to about 10
             * rad/s, products of order 0.05 per step) the O(h) term stays within
             * the method's band (+-15 %) */
            double dt1 = diff2(nq, nvt, qt[0], vt[0], qt[1], vt[1]);
            double dt2 = diff2(nq, nvt, qt[1], vt[1], qt[2], vt[2]);
            double de1 = diff2(nq, nve, qe[0], qde[0], qe[1], qde[1]);
            double de2 = diff2(nq, nve, qe[1], qde[1], qe[2], qde[2]);
            double rt = dt1 / dt2, re = de1 / de2;
            printf("%s trial %d: tangent |y_h - y_h/2| %.3e, %.3e (ratio %.2f); Euler rates %.3e, %.3e (ratio %.2f)\n",
                   meth->name, trial, dt1, dt2, rt, de1, de2, re);
            CHECK(rt > P / band && rt < P * band, "%s trial %d: tangent ratio %.3f (order %d: %g)", meth->name, trial,
                  rt, meth->p, P);
            CHECK(re > P / band && re < P * band, "%s trial %d: Euler-rate ratio %.3f (order %d: %g)", meth->name,
                  trial, re, meth->p, P);
            double rdev = fabs(log(rt / P)) / log(band);
            if (rdev > worst_ratio) worst_ratio = rdev;
            /* each run's error at h/2^k is estimated by (y_{h/2^(k-1)} - y_{h/2^k})
             * / (2^p - 1) (Richardson); the two runs solve one ODE, so they differ by
             * at most the sum of their errors; factor 2 for the estimate's own O(h) */
            for (int k = 1; k < 3; k++) {
                double dk = k == 1 ? dt1 : dt2, ek = k == 1 ? de1 : de2;
                double bound = 2 * (dk + ek) / (P - 1);
                double agree = state_diff(mt, qt[k], vt[k], qe[k], qde[k]);
                printf("%s trial %d: n = %ld tangent - Euler-rate run %.3e, bound %.3e\n", meth->name, trial,
                       meth->n0 << k, agree, bound);
                CHECK(agree <= bound, "%s trial %d n = %ld: tangent and Euler-rate runs differ by %.3e > %.3e",
                      meth->name, trial, meth->n0 << k, agree, bound);
                if (agree / bound > worst_agree) worst_agree = agree / bound;
            }
            /* |p| = 1 to round-off: each step multiplies by a unit quaternion
             * (about 10 roundings of relative size eps), at most 4 n0 steps whose
             * errors add up: 10 x 4 n0 eps */
            double qb = 10 * 4 * (double)meth->n0 * MBS_EPS;
            CHECK(quat <= qb, "%s trial %d: ||p| - 1| reached %.3e > %.3e", meth->name, trial, quat, qb);
            if (quat / qb > worst_quat) worst_quat = quat / qb;
        }
        free(buf);
        mbs_model_free(mt);
        mbs_model_free(me);
    }
    printf("%s: worst |log(ratio / %g)| %.2f of log %g; agreement %.2f of its bound; |p| %.2f of its bound\n",
           meth->name, P, worst_ratio, band, worst_agree, worst_quat);
}

/* m without gravity: its JSON text with the gravity [0, 0, 0], reloaded
 * (NULL if the text does not hold the URDF loader's gravity). */
static mbs_model *without_gravity(const mbs_model *m, mbs_error *err)
{
    static const char g[] = "\"gravity\": [0, 0, -9.81]";
    char *js = mbs_model_to_json(m, err), *at = js ? strstr(js, g) : NULL;
    mbs_model *r = NULL;
    if (at) {
        memset(at + strlen(g) - 6, ' ', 5);   /* "-9.81" -> "    0" */
        at[strlen(g) - 2] = '0';
        r = mbs_model_load_string(js, mbs_model_name(m), err);
    }
    free(js);
    return r;
}

/* a1 on a floating base tumbling in space for 10 s (no gravity, contact or
 * damping: the energy, all kinetic, is a constant of the motion; with
 * gravity the free fall would make kinetic and potential energy of 6e4 J
 * whose round-off, 1e-9 J, hides the integration error), by the method
 * at h = 4 ms and 2 ms, in both conventions from the same motion. */
static void check_a1_energy(const method *meth)
{
    char dir[4096], path[8192];
    if (mbs_test_urdf_dir(dir, sizeof dir) != 0) {
        printf("a1 energy: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return;
    }
    snprintf(path, sizeof path, "%s/a1.urdf", dir);
    mbs_urdf_options uo = { 1, 0, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
    mbs_error err = { 0 };
    mbs_model *mu = mbs_model_load_urdf(path, &uo, &err);
    mbs_model *me = mu ? without_gravity(mu, &err) : NULL;
    mbs_model_free(mu);
    mbs_model *mt = me ? mbs_model_with_velocities(me, MBS_VELOCITIES_TANGENT, &err) : NULL;
    CHECK(mt != NULL, "a1: %s", err.msg);
    if (!mt) {
        mbs_model_free(me);
        return;
    }
    const int nq = mbs_model_nq(me), nv = mbs_model_nv(mt);
    double *buf = calloc((size_t)(6 * nq), sizeof(double));
    double *q0 = buf, *qd0 = q0 + nq, *v0 = qd0 + nq, *q = v0 + nq, *v = q + nq;
    mbs_model_initial_state(me, q0, qd0);
    for (int k = 0; k < nv; k++) v0[k] = 0.8 * sin(1.3 * k + 0.4);   /* a tumbling base, swinging legs */
    mbs_rates_from_velocity(mt, q0, v0, NULL, qd0, NULL);
    mbs_sim_options ot = meth->ot, oe = meth->oe;
    ot.tf = oe.tf = 10;
    const double P = (double)(1 << meth->p), band = meth->band;
    double drift[2][2], quat[2] = { 0, 0 };
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
        const double h = 4e-3 / (1 << k);
        const long n = lround(ot.tf / h);
        mbs_sim_stats st, ste;
        ok = !run(mt, &ot, q0, v0, h, n, q, v, &st);
        CHECK(ok, "a1 tangent run h = %g", h);
        ok = ok && !run(me, &oe, q0, qd0, h, n, q, v, &ste);
        CHECK(ok, "a1 Euler-rate run h = %g", h);
        if (!ok) break;
        drift[k][0] = st.energy_drift;
        drift[k][1] = ste.energy_drift;
        quat[k] = st.euler_drift;
        printf("a1 10 s, %s h = %g: energy %.6g J, drift tangent %.3e, Euler rates %.3e (ratio %.3f); "
               "tangent ||p| - 1| %.2e, %ld steps\n", meth->name, h, st.energy0, drift[k][0], drift[k][1],
               drift[k][0] / drift[k][1], quat[k], n);
        /* the same state: the same energy to round-off (MBS_ROUNDOFF over the 13 bodies) */
        CHECK(fabs(st.energy0 - ste.energy0) <= MBS_ROUNDOFF(13) * fabs(st.energy0),
              "a1: initial energies %.17g, %.17g", st.energy0, ste.energy0);
        /* RK4 as well as the Euler-rate run: two O(h^4)-consistent
         * discretizations of one ODE, whose error constants differ by a factor
         * of order 1 (docs/tangent-space.md §13: 2). The trapezoidal rule's
         * constants differ by more (the chart at the predictor against the
         * projected Euler parameters): asserted below, the same order and a
         * ratio that does not change with h */
        if (meth->p == 4)
            CHECK(drift[k][0] <= 2 * drift[k][1], "a1 %s h = %g: energy drift tangent %.3e > 2 x Euler rates %.3e",
                  meth->name, h, drift[k][0], drift[k][1]);
        /* unit quaternion without projection: about 10 roundings per step
         * (exp and product), accumulating like a random walk over n steps */
        const double qb = 10 * sqrt((double)n) * MBS_EPS;
        CHECK(quat[k] <= qb, "a1 %s h = %g: tangent ||p| - 1| reached %.3e > %.3e", meth->name, h, quat[k], qb);
        printf("a1 %s h = %g: drift ratio %.2f of 2, ||p| - 1| %.2f of %.2e\n", meth->name, h,
               drift[k][0] / drift[k][1] / 2, quat[k] / qb, qb);
    }
    /* both drifts are the O(h^p) error of the method, not a trend: halving h
     * divides them by 2^p (1 + O(h)), within the band of the order test (at
     * h = 2 ms the round-off floor of the energy, 1e-13 J, is below 1e-1 of
     * the RK4 drift) */
    for (int c = 0; ok && c < 2; c++) {
        double ratio = drift[0][c] / drift[1][c];
        printf("a1 %s %s: drift ratio h / (h/2) %.2f\n", meth->name, c ? "Euler rates" : "tangent", ratio);
        CHECK(ratio > P / band && ratio < P * band, "a1 %s %s: drift ratio %.3f (order %d: %g)", meth->name,
              c ? "Euler rates" : "tangent", ratio, meth->p, P);
    }
    /* the two drifts in a fixed proportion: both the O(h^p) error of their
     * discretization, neither a trend; the proportion moves by O(h) between
     * h and h/2, within the band */
    if (ok) {
        double r0 = drift[0][0] / drift[0][1], r1 = drift[1][0] / drift[1][1];
        printf("a1 %s: drift tangent / Euler rates %.3f at h, %.3f at h/2\n", meth->name, r0, r1);
        CHECK(r0 / r1 > 1 / band && r0 / r1 < band, "a1 %s: drift proportion %.3f at h, %.3f at h/2", meth->name,
              r0, r1);
    }
    free(buf);
    mbs_model_free(mt);
    mbs_model_free(me);
}

/* The integrator that is created with o on m fails with MBS_ERR_UNSUPPORTED
 * and a message holding `what` and the joint's name. */
static void check_refused(const mbs_model *m, const mbs_sim_options *o, const char *what, const char *label)
{
    mbs_error err = { 0 };
    mbs_data *d = mbs_data_create(m, NULL);
    mbs_integrator *it = mbs_integrator_create(m, d, o, &err);
    CHECK(it == NULL && err.code == MBS_ERR_UNSUPPORTED, "%s: not refused (code %d)", label, err.code);
    CHECK(strstr(err.msg, what) && strstr(err.msg, "with tangent velocities"), "%s: message '%s'", label, err.msg);
    printf("%s: %s\n", label, err.msg);
    mbs_integrator_free(it);
    mbs_data_free(d);
}

/* What does not step on the manifold yet says so. */
static void check_refusals(void)
{
    /* a ball-jointed bar and a pendulum joined by a cut spherical joint */
    static const char loop[] =
        "{\"name\": \"loop\", \"velocities\": \"tangent\", \"bodies\": ["
        "{\"name\": \"a\", \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [0.01, 0.1, 0.1, 0, 0, 0]},"
        "{\"name\": \"b\", \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [0.01, 0.1, 0.1, 0, 0, 0]}],"
        "\"joints\": ["
        "{\"name\": \"ja\", \"type\": \"spherical\", \"parent\": \"ground\", \"child\": \"a\","
        " \"parent_point\": [0, 0, 0], \"child_point\": [0, 0, 0]},"
        "{\"name\": \"jb\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"b\","
        " \"parent_point\": [0, 1, 0], \"child_point\": [0, 0, 0], \"axis\": [0, 0, 1]},"
        "{\"name\": \"jc\", \"type\": \"spherical\", \"parent\": \"a\", \"child\": \"b\","
        " \"parent_point\": [1, 0, 0], \"child_point\": [1, 0, 0], \"cut\": true}]}";
    mbs_error err = { 0 };
    mbs_model *ml = mbs_model_load_string(loop, "loop", &err);
    CHECK(ml != NULL, "loop model: %s", err.msg);
    mbs_sim_options o = mbs_sim_options_default();
    if (ml) {
        o.integrator = MBS_INTEGRATOR_RK4;
        o.loop = MBS_LOOP_INDEX1;
        check_refused(ml, &o, "integrators on closed loops", "closed loops, rk4");
    }
    mbs_model_free(ml);

    mbs_rng r;
    mbs_rng_seed(&r, 5);
    mbs_model *me = mbs_test_random_tree(&r, 3, (1u << MBS_JOINT_FLOATING) | (1u << MBS_JOINT_REVOLUTE));
    mbs_model *mt = me ? mbs_model_with_velocities(me, MBS_VELOCITIES_TANGENT, &err) : NULL;
    CHECK(mt != NULL && mbs_model_nv(mt) < mbs_model_nq(mt), "random tree: %s", err.msg);
    if (mt) {
        o = mbs_sim_options_default();
        o.integrator = MBS_INTEGRATOR_CVODES;
        check_refused(mt, &o, "integrator cvodes", "cvodes");
    }
    mbs_model_free(mt);
    mbs_model_free(me);
}

int main(void)
{
    check_refusals();
    method rk4 = { "rk4", mbs_sim_options_default(), mbs_sim_options_default(), 4, 1.15, 80 };
    rk4.ot.integrator = rk4.oe.integrator = MBS_INTEGRATOR_RK4;
    check_order(&rk4);
    /* the trapezoidal rule: Newton with the fd tangent along the manifold
     * (the Euler-rate run with its analytic tangent: the same solution to
     * the tolerance), and the fixed point */
    method trap = { "trapezoidal newton", mbs_sim_options_default(), mbs_sim_options_default(), 2, 1.15, 40 };
    trap.ot.tangent = mbs_tangent_fd;
    trap.ot.tolerance = trap.oe.tolerance = 1e-12;
    check_order(&trap);
    /* Newton with the analytical tangent along the manifold (the default) */
    method tran = trap;
    tran.name = "trapezoidal newton analytic";
    tran.ot.tangent = NULL;
    check_order(&tran);
    method fp = trap;
    fp.name = "trapezoidal fixedpoint";
    fp.ot.solver = fp.oe.solver = MBS_SOLVER_FIXEDPOINT;
    fp.ot.tangent = NULL;
    check_order(&fp);
    check_a1_energy(&rk4);
    check_a1_energy(&fp);
    return mbs_test_summary("test_integrators_manifold");
}
