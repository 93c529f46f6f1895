/*
 * test_bicycle.c - the benchmark bicycle with tire forces
 * (models/bicycle.json, scripts/gen_bicycle.py, docs/models.md).
 *
 *  1. The model holds the Meijaard et al. (2007) data as converted: total
 *     mass 94 kg, the frame's and fork's centres of mass, wheelbase, trail,
 *     steer-axis tilt, wheel radii; it starts at its static equilibrium
 *     (zero accelerations without the torques) rolling at 5 m/s without slip.
 *  2. Self-stability as in the benchmark (stable between about 4.3 and
 *     6.0 m/s with rolling constraints): a lean-rate disturbance dies out at
 *     5.5 m/s and grows at 3 m/s (the bicycle falls).
 *  3. The gradient of the tracking objective with respect to the 32 spline
 *     knots: direct differentiation = discrete adjoint.
 *  4. Optimal control on the first 3 s (10 ms steps): SLSQP from constant
 *     torques reduces the tracking objective more than 10 times.
 * The full 10 s optimal control with horizon continuation is in
 * scripts/optimize_examples.sh (docs/optimization.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mbsens/mbsens.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int coord(const mbs_model *m, const char *name)
{
    for (int k = 0; k < mbs_model_nq(m); k++)
        if (!strcmp(mbs_coord_name(m, k), name)) return k;
    return -1;
}

static void test_data(const mbs_model *m)
{
    CHECK(mbs_model_nq(m) == 9 && mbs_model_nparams(m) == 32 && mbs_model_nobjectives(m) == 3, "sizes");
    double M = 0;
    for (int i = 1; i <= mbs_model_nbodies(m); i++) M += mbs_body_mass(m, i);
    CHECK_CLOSE(M, 94, 8 * MBS_EPS, "total mass (Meijaard: 85 + 4 + 2 + 3)");
    const int nq = mbs_model_nq(m);
    double *q = calloc((size_t)nq, sizeof *q), *qd = calloc((size_t)nq, sizeof *qd);
    double *qdd = calloc((size_t)nq, sizeof *qdd);
    mbs_model_initial_state(m, q, qd);
    /* geometry upright and undeflected: all coordinates but the translations zero */
    double *q0 = calloc((size_t)nq, sizeof *q0);
    mbs_data *d = mbs_data_create(m, NULL);
    mbs_kinematics(m, d, q0, NULL, NULL);
    double r[3];
    /* positions through the tree at q = 0: round-off of the model */
    const double ro = MBS_ROUNDOFF(mbs_model_nbodies(m));
    mbs_body_com(d, mbs_body_find(m, "frame"), r);
    CHECK(fabs(r[0] - 0.3) < ro && fabs(r[1]) < ro && fabs(r[2] - 0.9) < ro, "frame CoM (0.3, 0, 0.9)");
    mbs_body_com(d, mbs_body_find(m, "fork"), r);
    CHECK(fabs(r[0] - 0.9) < ro && fabs(r[2] - 0.7) < ro, "fork CoM (0.9, 0, 0.7)");
    mbs_body_com(d, mbs_body_find(m, "front_wheel"), r);
    CHECK(fabs(r[0] - 1.02) < ro && fabs(r[2] - 0.35) < ro, "front hub: wheelbase 1.02, radius 0.35");
    mbs_body_com(d, mbs_body_find(m, "rear_wheel"), r);
    CHECK(fabs(r[0]) < ro && fabs(r[2] - 0.3) < ro, "rear hub: radius 0.3");
    /* steer axis: tilted back by pi/10, meeting the ground 0.08 (the trail) ahead of the front contact */
    {
        int pt = mbs_point_find(m, "frame.steer");
        double s[3];
        mbs_point_kinematics(m, d, pt, s, NULL, NULL);
        const double lam = M_PI / 10, xg = s[0] + s[2] * tan(lam);
        CHECK(fabs(xg - 1.1) < 2 * ro, "steer axis meets the ground at x = w + c = 1.1: %g", xg);
    }
    /* initial state: static equilibrium on the tires, rolling without slip (without the torques: zero
     * accelerations) */
    double *zero = calloc((size_t)mbs_model_nparams(m), sizeof *zero);
    mbs_model *m0 = mbs_model_with_params(m, zero, NULL);
    mbs_data *d0 = mbs_data_create(m0, NULL);
    mbs_data_set_time(d0, 0);
    CHECK(mbs_forward_dynamics(m0, d0, MBS_FD_SEMI_RECURSIVE, q, qd, NULL, qdd) == MBS_OK, "forward dynamics");
    double amax = 0;
    for (int k = 0; k < nq; k++) amax = fmax(amax, fabs(qdd[k]));
    /* the equilibrium of scripts/gen_bicycle.py (its own fixed point, to round-off) is that of tires
     * whose contact point lies on the rim; the tire element regularizes the rim direction (u.u +
     * 1e-12, force_contact_common.h), which pulls the contact point in by R 5e-13: each tire's load
     * off by K R 5e-13 (K = 6e4 N/m, R <= 0.35 m), acting over levers up to 1.02 m; the accelerations
     * by those generalized forces over the smallest eigenvalue of M (taken twice) */
    {
        double *Mq = calloc((size_t)nq * nq, sizeof *Mq), lmin, lmax;
        mbs_mass_matrix(m0, d0, q, Mq);
        mbs_test_eig_range(Mq, nq, &lmin, &lmax);
        free(Mq);
        const double dF = 6e4 * 0.35 * 5e-13, bound = 2 * 2 * dF * (1 + 1.02) / lmin + ro * 9.81;
        printf("static equilibrium without torques: max |qdd| %.2e (bound %.1e)\n", amax, bound);
        CHECK(amax <= bound, "static equilibrium without torques: max |qdd| %g", amax);
    }
    mbs_data_free(d0);
    mbs_model_free(m0);
    free(zero);
    mbs_data_set_time(d, 0);
    CHECK(mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, NULL, qdd) == MBS_OK, "forward dynamics");
    const int iz = coord(m, "height"), ip = coord(m, "pitch"), ir = coord(m, "rear"), ix = coord(m, "plane.s1");
    printf("initial accelerations: height %.3e m/s^2, pitch %.3e rad/s^2; speed %g m/s, rear spin %g rad/s\n",
           qdd[iz], qdd[ip], qd[ix], qd[ir]);
    /* a = T / (m R), less by the wheels' rotational inertia and the pitch coupling (a few per cent of
     * the 94 kg): 15 % */
    CHECK(qdd[ix] > 0 && fabs(qdd[ix] * 94 * 0.3 - 2) < 0.3, "the 2 N m drive torque accelerates: %g", qdd[ix]);
    CHECK(fabs(qd[ix] - 5) <= 4 * MBS_EPS * 5 && fabs(qd[ir] * 0.3 - 5) <= 8 * MBS_EPS * 5, "5 m/s, rolling (the "
          "file's values, 5 / 0.3 written to 17 digits)");
    mbs_data_free(d);
    free(q); free(qd); free(qdd); free(q0);
}

typedef struct {
    int lean;
    double t_early, t_late, early, late;
} lean_peak;

static int on_step(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                   const double *qdd)
{
    (void)m; (void)d; (void)qd; (void)qdd;
    lean_peak *p = user;
    const double a = fabs(q[p->lean]);
    if (t < p->t_early) p->early = fmax(p->early, a);
    if (t >= p->t_late) p->late = fmax(p->late, a);
    return a > 0.5;   /* falling: stop (beyond, the free handlebar spins round) */
}

/* Peak |lean| in [0, 2) s and in [4, 5] s after a lean-rate kick of 0.3 rad/s at speed v. */
static void stability(const mbs_model *m, double v, double *early, double *late)
{
    const int nq = mbs_model_nq(m), np = mbs_model_nparams(m);
    double *vals = calloc((size_t)np, sizeof *vals);
    mbs_error err;
    mbs_model *m0 = mbs_model_with_params(m, vals, &err);   /* no torques */
    double *q = calloc((size_t)nq, sizeof *q), *qd = calloc((size_t)nq, sizeof *qd);
    mbs_model_initial_state(m, q, qd);
    qd[coord(m, "plane.s1")] = v;
    qd[coord(m, "rear")] = v / 0.3;
    qd[coord(m, "front")] = v / 0.35;
    qd[coord(m, "lean")] = 0.3;
    mbs_sim_options o = mbs_model_sim_options(m);
    o.dt = 0.005;
    o.tf = 5;
    o.tangent = mbs_tangent_analytic;
    mbs_data *d = mbs_data_create(m0, NULL);
    lean_peak p = { coord(m, "lean"), 2.0, 4.0, 0, 0 };
    int rc = mbs_simulate(m0, d, &o, q, qd, on_step, &p, NULL, &err);
    CHECK(rc >= 0, "simulation at %g m/s: %s", v, err.msg);
    if (rc > 0) p.late = INFINITY;   /* stopped: fallen */
    *early = p.early;
    *late = p.late;
    mbs_data_free(d);
    mbs_model_free(m0);
    free(vals); free(q); free(qd);
}

static void test_stability(const mbs_model *m)
{
    double e5, l5, e3, l3;
    stability(m, 5.5, &e5, &l5);
    stability(m, 3, &e3, &l3);
    printf("lean-rate kick: 5.5 m/s peak |lean| %.4f rad in [0, 2) s, %.4f in [4, 5] s; 3 m/s: %.4f, %.4f (inf: fell "
           "beyond 0.5 rad)\n", e5, l5, e3, l3);
    /* qualitative (the Whipple bicycle is self-stable from about 4.3 to 6 m/s, Meijaard et al.): the
     * disturbance dies out at 5.5 m/s and grows at 3 m/s; the factors only separate decay from growth */
    CHECK(l5 < 0.4 * e5, "self-stable at 5.5 m/s (the disturbance dies out)");
    CHECK(l3 > 3 * e3, "unstable at 3 m/s (falls)");
}

static void test_gradient(const mbs_model *m)
{
    mbs_sens_options o = mbs_sens_options_default(m);
    o.sim.tf = 1.0;
    o.sim.dt = 0.01;
    mbs_sens_result r[2];
    mbs_error err;
    o.method = MBS_SENS_DDM;
    int ok = mbs_sensitivity(m, &o, &r[0], &err) == MBS_OK;
    CHECK(ok, "ddm: %s", err.msg);
    o.method = MBS_SENS_DAVM;
    ok = ok && mbs_sensitivity(m, &o, &r[1], &err) == MBS_OK;
    CHECK(ok, "davm: %s", err.msg);
    if (!ok) return;
    const int n = r[0].nobj * r[0].nparam;
    printf("gradient over 1 s, 32 knots: |ddm - davm| / |ddm| = %.2e\n", mbs_rel_err(r[1].grad, r[0].grad, n));
    double s = 0;
    for (int k = 0; k < n; k++) s = fmax(s, fabs(r[0].grad[k]));
    double e = 0;
    for (int k = 0; k < n; k++) e = fmax(e, fabs(r[1].grad[k] - r[0].grad[k]));
    CHECK(s > 0 && e <= mbs_test_sens_roundoff(m, &r[0]) * s, "ddm = davm: %g of %g", e, s);
    mbs_sens_result_free(&r[0]);
    mbs_sens_result_free(&r[1]);
}

static void test_ocp(const mbs_model *m)
{
    mbs_opt_options o = mbs_opt_options_default(m);
    o.sens.sim.tf = 3.0;
    o.sens.sim.dt = 0.01;
    o.objective = mbs_objective_find(m, "track");
    o.scaling = MBS_OPT_SCALE_NONE;
    o.algorithm = MBS_OPT_SLSQP;   /* reaches 10x in fewer evaluations than L-BFGS here (12 vs 20 iterations) */
    o.max_iter = 20;
    mbs_opt_result res;
    mbs_error err;
    int rc = mbs_optimize(m, &o, &res, &err);
    CHECK(rc == MBS_OK, "optimal control: %s", err.msg);
    if (rc) return;
    printf("optimal control over 3 s: psi %.6e -> %.6e (%.1f times) in %d iterations, %d evaluations (%s), "
           "stop %s\n", res.psi_initial, res.psi_final, res.psi_initial / res.psi_final, res.iterations,
           res.evaluations, mbs_sens_method_name(res.method), res.stop_reason);
    CHECK(res.method == MBS_SENS_DAVM, "adjoint for 32 knots");
    CHECK(res.psi_final < res.psi_initial / 10, "tracking objective reduced more than 10 times");
    CHECK(res.failed_evaluations == 0, "no failed simulation");
    mbs_opt_result_free(&res);
}

int main(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/bicycle.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (m) {
        test_data(m);
        test_stability(m);
        test_gradient(m);
        test_ocp(m);
        mbs_model_free(m);
    }
    return mbs_test_summary("test_bicycle");
}
