/*
 * test_kinematic_problems.c - assembly, velocity and acceleration problems
 * of closed-loop models (mbsens/constraints.h).
 *
 *   - shipped loop models: sizes (thesis Table 7.8 for the slider-crank,
 *     also through `mbsens info --json`); the file's initial state closes
 *     the loops at position and velocity level; assembly from perturbed
 *     states returns to it with the fixed coordinates held; the velocity and
 *     acceleration problems give dPhi/dt = 0 and d2Phi/dt2 = 0 to round-off;
 *   - random closed loops (every cut type, drivers): assembly from perturbed
 *     states without fixed coordinates (minimum-norm corrections), then
 *     velocities and accelerations;
 *   - drivers: a crank driven by q = 6 t, a distance driven in time;
 *   - failure: an impossible four-bar names the loop, its bodies and the
 *     residual.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"

static double maxabs(const double *v, int n)
{
    double m = 0;
    for (int k = 0; k < n; k++) m = fabs(v[k]) > m || isnan(v[k]) ? (isnan(v[k]) ? INFINITY : fabs(v[k])) : m;
    return m;
}

/* max |d2Phi/dt2| = |Phi_q qdd - c| over the rows (without the Euler rows
 * when euler_rows is 0: the problem then leaves them to the caller) */
static double accel_residual_rows(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                                  const double *qdd, double t, int euler_rows)
{
    int n = mbs_model_nconstraints(m), nq = mbs_model_nq(m);
    int nr = euler_rows ? n : n - mbs_model_neuler_constraints(m);
    double *J = calloc((size_t)n * nq + 1, 8), *c = calloc((size_t)n + 1, 8), r = 0;
    mbs_constraint_eval(m, d, q, qd, t, NULL, J, NULL, NULL, c);
    for (int i = 0; i < nr; i++) {
        double a = -c[i];
        for (int k = 0; k < nq; k++) a += J[(size_t)i * nq + k] * qdd[k];
        if (fabs(a) > r) r = fabs(a);
    }
    free(J);
    free(c);
    return r;
}

static double accel_residual(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                             double t)
{
    return accel_residual_rows(m, d, q, qd, qdd, t, 1);
}

static int is_fixed(const int *fx, int nf, int k)
{
    for (int i = 0; i < nf; i++)
        if (fx[i] == k) return 1;
    return 0;
}

/* Bounds of the kinematic problems at q (see their uses):
 * phi: after the assembly's Newton stopped at |dq| < tol (the last correction applied), |Phi| <=
 *      |Phi_q| tol plus the rounding of the constraint terms (MBS_ROUNDOFF of the model, relative
 *      to 1 + |Phi_q|: lengths and positions of order one);
 * ro:  the round-off of a backward-stable linear solve's residual, MBS_ROUNDOFF relative to the
 *      size of its terms;
 * smin: the smallest singular value of Phi_q over the free columns (fx, nf fixed): two consistent
 *      configurations near each other differ by at most their violations over it. */
typedef struct { double phi, ro, smin, jmax; } kin_bounds;

static kin_bounds bounds_at(const mbs_model *m, mbs_data *d, const double *q, double t, const int *fx, int nf)
{
    const int n = mbs_model_nconstraints(m), nq = mbs_model_nq(m);
    double *J = calloc((size_t)n * nq + 1, 8), *F = calloc((size_t)n * nq + 1, 8), *sv = calloc((size_t)nq + n + 1, 8);
    double *sup = calloc((size_t)nq + n + 1, 8), tol = 0;
    kin_bounds b = { 0, MBS_ROUNDOFF(mbs_model_nbodies(m)), 0, 0 };
    mbs_model_assembly_settings(m, &tol, NULL);
    mbs_constraint_jacobian(m, d, q, t, J);
    int nfree = 0;
    for (int k = 0; k < nq; k++) {
        for (int i = 0; i < n; i++) b.jmax = fmax(b.jmax, fabs(J[(size_t)i * nq + k]));
        if (is_fixed(fx, nf, k)) continue;
        for (int i = 0; i < n; i++) F[(size_t)i * nq + nfree] = J[(size_t)i * nq + k];
        nfree++;
    }
    b.phi = b.jmax * tol + b.ro * (1 + b.jmax);
    const int mn = n < nfree ? n : nfree;
    if (mn > 0 && LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', n, nfree, F, nq, sv, NULL, 1, NULL, 1, sup) == 0)
        b.smin = sv[mn - 1];
    free(J);
    free(F);
    free(sv);
    free(sup);
    return b;
}

static void shipped(void)
{
    static const struct { const char *file; int nq, ncon, ncut, nfixed, rank; } models[] = {
        { "models/fivebar.json", 4, 6, 1, 2, 2 },
        { "models/slider_crank.json", 4, 3, 1, 1, 3 },
        { "models/slider_crank_nospring.json", 4, 3, 1, 1, 3 },
        { "models/fourbar_redundant.json", 3, 6, 1, 1, 2 },
        { "models/quarter_car.json", 9, 7, 2, 2, 7 } };
    mbs_rng rng;
    mbs_rng_seed(&rng, 7);
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        mbs_error err;
        mbs_model *m = mbs_model_load(mbs_test_path(models[i].file), &err);
        CHECK(m != NULL, "%s", err.msg);
        if (!m) continue;
        const char *f = models[i].file;
        const int nq = mbs_model_nq(m), n = mbs_model_nconstraints(m);
        const int *fx;
        const int nf = mbs_model_assembly_fixed(m, &fx);
        CHECK(nq == models[i].nq && n == models[i].ncon && mbs_model_ncuts(m) == models[i].ncut &&
              nf == models[i].nfixed, "%s: %d coordinates, %d constraints, %d cuts, %d fixed", f, nq, n,
              mbs_model_ncuts(m), nf);
        double *q0 = calloc((size_t)nq, 8), *qd0 = calloc((size_t)nq, 8), *q = calloc((size_t)nq, 8);
        double *qd = calloc((size_t)nq, 8), *qdd = calloc((size_t)nq, 8), *phi = calloc((size_t)n + 1, 8);
        double *in = calloc((size_t)nq, 8);
        mbs_model_initial_state(m, q0, qd0);
        mbs_data *d = mbs_data_create(m, &err);
        const kin_bounds b0 = bounds_at(m, d, q0, 0, fx, nf);
        /* the file's state is consistent (assembled, written to 17 digits) */
        CHECK(mbs_constraints(m, d, q0, 0, phi) == MBS_OK && maxabs(phi, n) <= b0.phi, "%s: |Phi(q0)| = %g", f,
              maxabs(phi, n));
        CHECK(mbs_constraint_velocity(m, d, q0, qd0, 0, phi) == MBS_OK &&
              maxabs(phi, n) <= b0.ro * (1 + b0.jmax) * (1 + maxabs(qd0, nq)), "%s: |dPhi/dt(q0, qd0)| = %g", f,
              maxabs(phi, n));
        /* springs unstretched at the start (thesis Tables 7.1, 7.9) */
        mbs_kinematics(m, d, q0, qd0, NULL);
        for (int k = 0; k < mbs_model_nforces(m); k++) {
            const char *fn = mbs_force_name(m, k);
            double L = mbs_force_length(m, d, k), L0 = strcmp(fn, "spring1") == 0 && strstr(f, "fivebar") ? sqrt(5)
                                                   : strcmp(fn, "spring2") == 0 ? sqrt(17) / 2
                                                   : strstr(f, "slider") ? 0.25 : NAN;
            if (!isnan(L0)) CHECK(fabs(L - L0) <= b0.ro * L0, "%s: %s length %.17g, expected %.17g", f, fn, L, L0);
        }
        /* independent equations and mobility (docs/models.md: the DOF column) */
        int rank = -1;
        CHECK(mbs_constraint_rank(m, d, q0, 0, &rank) == MBS_OK && rank == models[i].rank,
              "%s: rank %d, expected %d (mobility %d)", f, rank, models[i].rank, nq - rank);
        for (int trial = 0; trial < 6; trial++) {
            mbs_kin_options opt;
            mbs_kin_options_default(&opt);
            opt.euler_rows = trial % 2;
            /* perturb the free coordinates: assembly returns to q0 (the
             * fixed ones are held at their file values) */
            memcpy(q, q0, (size_t)nq * 8);
            for (int k = 0; k < nq; k++)
                if (!is_fixed(fx, nf, k)) q[k] += mbs_rng_uniform(&rng, -0.05, 0.05);
            mbs_assembly_report rep;
            int rc = mbs_assemble(m, d, q, 0, &opt, &rep);
            CHECK(rc == MBS_OK, "%s: assembly: %s", f, mbs_data_error(d));
            /* Newton from 0.05 away converges quadratically: 10 iterations are plenty */
            const kin_bounds b = bounds_at(m, d, q, 0, fx, nf);
            CHECK(rep.residual <= b.phi && rep.iterations <= 10, "%s: residual %g after %d iterations", f,
                  rep.residual, rep.iterations);
            mbs_constraints(m, d, q, 0, phi);
            CHECK(maxabs(phi, n) <= b.phi, "%s: |Phi| = %g", f, maxabs(phi, n));
            const double dq = (maxabs(phi, n) + b0.phi) * sqrt((double)n) / b.smin;
            CHECK(mbs_rel_err(q, q0, nq) <= dq, "%s: assembled q differs from q0 by %g > %g", f, mbs_rel_err(q, q0, nq),
                  dq);
            /* velocities: random rates on the fixed coordinates, kept */
            for (int k = 0; k < nq; k++) qd[k] = in[k] = mbs_rng_uniform(&rng, -2, 2);
            CHECK(mbs_solve_velocity(m, d, q, qd, 0, &opt) == MBS_OK, "%s: %s", f, mbs_data_error(d));
            mbs_constraint_velocity(m, d, q, qd, 0, phi);
            CHECK(maxabs(phi, n) <= b.ro * (1 + b.jmax) * (1 + maxabs(qd, nq)), "%s: |dPhi/dt| = %g", f,
                  maxabs(phi, n));
            for (int k = 0; k < nf; k++) CHECK(qd[fx[k]] == in[fx[k]], "%s: fixed rate changed", f);
            for (int k = 0; k < nq; k++) qdd[k] = in[k] = mbs_rng_uniform(&rng, -5, 5);
            CHECK(mbs_solve_acceleration(m, d, q, qd, qdd, 0, &opt) == MBS_OK, "%s: %s", f, mbs_data_error(d));
            double ar = accel_residual_rows(m, d, q, qd, qdd, 0, opt.euler_rows);
            CHECK(ar <= b.ro * (1 + b.jmax) * (1 + maxabs(qdd, nq) + maxabs(qd, nq) * maxabs(qd, nq)),
                  "%s: |d2Phi/dt2| = %g", f, ar);
            for (int k = 0; k < nf; k++) CHECK(qdd[fx[k]] == in[fx[k]], "%s: fixed acceleration changed", f);
        }
        /* a large perturbation still assembles (same branch for these) */
        memcpy(q, q0, (size_t)nq * 8);
        for (int k = 0; k < nq; k++)
            if (!is_fixed(fx, nf, k)) q[k] += 0.3 * (k % 2 ? 1 : -1);
        CHECK(mbs_assemble(m, d, q, 0, NULL, NULL) == MBS_OK, "%s: large perturbation: %s", f, mbs_data_error(d));
        mbs_constraints(m, d, q, 0, phi);
        CHECK(maxabs(phi, n) <= bounds_at(m, d, q, 0, fx, nf).phi, "%s: |Phi| = %g", f, maxabs(phi, n));
        mbs_data_free(d);
        free(q0); free(qd0); free(q); free(qd); free(qdd); free(phi); free(in);
        mbs_model_free(m);
    }
}

/* Normal-equation residual of the velocity (level 1: x = qd, rhs b) or
 * acceleration (level 2: x = qdd, rhs c) problem over the free columns:
 * max_j |sum_i J_ij (J x - rhs)_i| / ((1 + max|J|^2) (1 + max|x|) (1 + max|rhs|)). It is zero for the
 * least-squares solution whether or not the equations can be met. */
static double normal_residual(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *x,
                              double t, const int *fx, int nf, int level)
{
    int n = mbs_model_nconstraints(m), nq = mbs_model_nq(m);
    double *J = calloc((size_t)n * nq + 1, 8), *rhs = calloc((size_t)n + 1, 8), *r = calloc((size_t)n + 1, 8);
    if (level == 1) mbs_constraint_eval(m, d, q, NULL, t, NULL, J, NULL, rhs, NULL);
    else mbs_constraint_eval(m, d, q, qd, t, NULL, J, NULL, NULL, rhs);
    double jm = 0, g = 0;
    for (int i = 0; i < n; i++) {
        r[i] = -rhs[i];
        for (int k = 0; k < nq; k++) {
            r[i] += J[(size_t)i * nq + k] * x[k];
            if (fabs(J[(size_t)i * nq + k]) > jm) jm = fabs(J[(size_t)i * nq + k]);
        }
    }
    for (int k = 0; k < nq; k++) {
        if (is_fixed(fx, nf, k)) continue;
        double gk = 0;
        for (int i = 0; i < n; i++) gk += J[(size_t)i * nq + k] * r[i];
        if (fabs(gk) > g) g = fabs(gk);
    }
    double scale = (1 + jm * jm) * (1 + maxabs(x, nq)) * (1 + maxabs(rhs, n));
    free(J);
    free(rhs);
    free(r);
    return g / scale;
}

/* Random closed loops (every cut type, half with drivers): assembly from
 * perturbed states with minimum-norm corrections (no fixed coordinate),
 * then the velocity and acceleration problems with one or two coordinates
 * given (random values: the equations may then have no exact solution, so
 * the least-squares optimality is checked). */
static void random_loops(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 77);
    int ok = 0, total = 0;
    double worst_pos = 0, worst_vel = 0, worst_acc = 0, ro_max = 0;
    for (int it = 0; it < 80; it++) {
        int nb = 2 + mbs_rng_int(&rng, 6), ncut = 1 + mbs_rng_int(&rng, 2), types[2];
        for (int k = 0; k < ncut; k++) types[k] = (it + 3 * k) % MBS_JOINT_TYPE_COUNT;
        double *qc;
        mbs_model *m = mbs_test_random_loops(&rng, nb, ncut, types, it % 2, &qc);
        CHECK(m != NULL, "model %d", it);
        if (!m) continue;
        const int nq = mbs_model_nq(m), n = mbs_model_nconstraints(m);
        double *q = calloc((size_t)nq + 1, 8), *qd = calloc((size_t)nq + 1, 8), *qdd = calloc((size_t)nq + 1, 8);
        double *phi = calloc((size_t)n + 1, 8);
        mbs_data *d = mbs_data_create(m, NULL);
        mbs_kin_options opt;
        mbs_kin_options_default(&opt);
        opt.nfixed = 0;
        memcpy(q, qc, (size_t)nq * 8);
        for (int k = 0; k < nq; k++) q[k] += mbs_rng_uniform(&rng, -0.02, 0.02);
        total++;
        mbs_assembly_report rep;
        int rc = mbs_assemble(m, d, q, 0, &opt, &rep);
        CHECK(rc == MBS_OK, "model %d: %s", it, mbs_data_error(d));
        if (rc == MBS_OK) {
            ok++;
            mbs_constraints(m, d, q, 0, phi);
            const kin_bounds b = bounds_at(m, d, q, 0, NULL, 0);
            if (maxabs(phi, n) / b.phi > worst_pos) worst_pos = maxabs(phi, n) / b.phi;
            ro_max = fmax(ro_max, b.ro);
            int fx[2], nf = 1 + mbs_rng_int(&rng, 2);
            for (int i = 0; i < nf; i++) fx[i] = mbs_rng_int(&rng, nq);
            opt.fixed = fx;
            opt.nfixed = nf;
            for (int k = 0; k < nq; k++) { qd[k] = mbs_rng_uniform(&rng, -1, 1); qdd[k] = mbs_rng_uniform(&rng, -1, 1); }
            CHECK(mbs_solve_velocity(m, d, q, qd, 0.3, &opt) == MBS_OK, "%s", mbs_data_error(d));
            double v = normal_residual(m, d, q, NULL, qd, 0.3, fx, nf, 1);
            if (v > worst_vel) worst_vel = v;
            CHECK(mbs_solve_acceleration(m, d, q, qd, qdd, 0.3, &opt) == MBS_OK, "%s", mbs_data_error(d));
            double a = normal_residual(m, d, q, qd, qdd, 0.3, fx, nf, 2);
            if (a > worst_acc) worst_acc = a;
        }
        mbs_data_free(d);
        free(q); free(qd); free(qdd); free(phi); free(qc);
        mbs_model_free(m);
    }
    printf("  random loops: %d/%d assembled; worst |Phi| %.3g of its bound; least-squares optimality: velocity "
           "%.3g, acceleration %.3g (relative)\n", ok, total, worst_pos, worst_vel, worst_acc);
    /* positions: |Phi_q| tol and round-off (bounds_at); the normal equations of a least-squares
     * solution by SVD (backward stable) hold to round-off, relative to the size of their terms */
    CHECK(worst_pos <= 1, "position %g of the bound", worst_pos);
    CHECK(worst_vel <= ro_max, "velocity %g", worst_vel);
    CHECK(worst_acc <= ro_max, "acceleration %g", worst_acc);
}

/* Drivers: the slider-crank's crank driven by q = 6 t (no fixed coordinate),
 * the five-bar's distance B-2 driven linearly with the angle at A held. */
static void drivers(void)
{
    mbs_error err;
    FILE *fp = fopen(mbs_test_path("models/slider_crank_nospring.json"), "rb");
    CHECK(fp != NULL, "slider_crank_nospring.json");
    if (!fp) return;
    char *s = calloc(1 << 16, 1);
    size_t len = fread(s, 1, (1 << 16) - 200, fp);
    fclose(fp);
    s[len] = 0;
    char *a = strstr(s, "\"assembly\"");
    CHECK(a != NULL, "assembly section");
    if (!a) { free(s); return; }
    strcpy(a, "\"constraints\": [ { \"name\": \"crank\", \"type\": \"coordinate\", \"joint\": \"jA\", \"value\": 0, "
              "\"rate\": 6 } ], \"assembly\": { \"fixed\": [] } }\n");
    mbs_model *m = mbs_model_load_string(s, "driven.json", &err);
    free(s);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    CHECK(mbs_model_nconstraints(m) == 4 && mbs_model_ndriver_constraints(m) == 1 &&
          strcmp(mbs_constraint_name(m, 3), "driver crank") == 0, "driver rows");
    double q[4], qd[4], qdd[4] = { 0, 0, 0, 0 }, phi[4];
    mbs_model_initial_state(m, q, qd);
    mbs_data *d = mbs_data_create(m, NULL);
    const double t = 0.25;
    CHECK(mbs_assemble(m, d, q, t, NULL, NULL) == MBS_OK, "%s", mbs_data_error(d));
    /* the driver's row is a row of Phi (unit Jacobian entry): the angle to the |Phi| bound, the rate
     * and acceleration to round-off of the linear problems */
    kin_bounds b = bounds_at(m, d, q, t, NULL, 0);
    CHECK(fabs(q[0] - 6 * t) <= b.phi, "driven crank angle %.17g", q[0]);
    mbs_constraints(m, d, q, t, phi);
    CHECK(maxabs(phi, 4) <= b.phi, "|Phi| %g", maxabs(phi, 4));
    CHECK(mbs_solve_velocity(m, d, q, qd, t, NULL) == MBS_OK, "%s", mbs_data_error(d));
    const double rv = b.ro * (1 + b.jmax) * (1 + maxabs(qd, 4));
    CHECK(fabs(qd[0] - 6) <= rv, "driven crank rate %.17g", qd[0]);
    mbs_constraint_velocity(m, d, q, qd, t, phi);
    CHECK(maxabs(phi, 4) <= rv, "|dPhi/dt| %g", maxabs(phi, 4));
    CHECK(mbs_solve_acceleration(m, d, q, qd, qdd, t, NULL) == MBS_OK, "%s", mbs_data_error(d));
    const double ra = b.ro * (1 + b.jmax) * (1 + maxabs(qdd, 4) + maxabs(qd, 4) * maxabs(qd, 4));
    CHECK(fabs(qdd[0]) <= ra, "driven crank acceleration %g", qdd[0]);
    CHECK(accel_residual(m, d, q, qd, qdd, t) <= ra, "|d2Phi/dt2|");
    mbs_data_free(d);
    mbs_model_free(m);

    /* five-bar: |r2 - rB| = sqrt(17)/2 + 0.1 t, angle at A held */
    fp = fopen(mbs_test_path("models/fivebar.json"), "rb");
    s = calloc(1 << 16, 1);
    len = fp ? fread(s, 1, (1 << 16) - 400, fp) : 0;
    if (fp) fclose(fp);
    s[len] = 0;
    a = strstr(s, "\"assembly\"");
    CHECK(a != NULL, "fivebar assembly section");
    if (a) {
        char *rest = strstr(a, "\"parameters\"");
        char *tail = rest ? strdup(rest) : NULL;
        sprintf(a, "\"constraints\": [ { \"name\": \"dist\", \"type\": \"distance\", \"body1\": \"ground\", "
                   "\"point1\": [1, 0, 0], \"point2\": \"b12.P2\", \"value\": 2.0615528128088303, \"rate\": 0.1 } ], "
                   "\"assembly\": { \"fixed\": [\"jA\"] },\n  %s", tail ? tail : "}");
        free(tail);
        m = mbs_model_load_string(s, "fivebar_driven.json", &err);
        CHECK(m != NULL, "%s", err.msg);
        if (m) {
            double q5[4], qd5[4], qdd5[4] = { 0.5, 0, 0, 0 }, phi5[7], r2[3];
            mbs_model_initial_state(m, q5, qd5);
            d = mbs_data_create(m, NULL);
            CHECK(mbs_assemble(m, d, q5, 1.0, NULL, NULL) == MBS_OK, "%s", mbs_data_error(d));
            mbs_kinematics(m, d, q5, NULL, NULL);
            mbs_point_kinematics(m, d, mbs_point_find(m, "b12.P2"), r2, NULL, NULL);
            double L = sqrt((r2[0] - 1) * (r2[0] - 1) + r2[1] * r2[1] + r2[2] * r2[2]);
            /* the distance row is a row of Phi (a unit gradient): to the |Phi| bound */
            const kin_bounds b5 = bounds_at(m, d, q5, 1.0, NULL, 0);
            CHECK(fabs(L - (2.0615528128088303 + 0.1)) <= b5.phi, "driven distance %.17g", L);
            CHECK(mbs_solve_velocity(m, d, q5, qd5, 1.0, NULL) == MBS_OK, "%s", mbs_data_error(d));
            mbs_constraint_velocity(m, d, q5, qd5, 1.0, phi5);
            CHECK(maxabs(phi5, 7) <= b5.ro * (1 + b5.jmax) * (1 + maxabs(qd5, 4)), "|dPhi/dt| %g", maxabs(phi5, 7));
            CHECK(mbs_solve_acceleration(m, d, q5, qd5, qdd5, 1.0, NULL) == MBS_OK, "%s", mbs_data_error(d));
            CHECK(qdd5[0] == 0.5, "held acceleration");
            CHECK(accel_residual(m, d, q5, qd5, qdd5, 1.0) <=
                      b5.ro * (1 + b5.jmax) * (1 + maxabs(qdd5, 4) + maxabs(qd5, 4) * maxabs(qd5, 4)),
                  "|d2Phi/dt2|");
            mbs_data_free(d);
            mbs_model_free(m);
        }
    }
    free(s);
}

/* Five-bar with the design parameter L_A1 changed (mbs_model_with_params:
 * the copy keeps the loops): re-assembled with the angles at A and 1 held
 * (thesis §7.1), joint point 1 moves to the new length. */
static void fivebar_param(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    const int np = mbs_model_nparams(m), k = mbs_param_find(m, "L_A1");
    CHECK(k >= 0, "L_A1");
    double *v = calloc((size_t)np, 8);
    for (int i = 0; i < np; i++) v[i] = mbs_param_value(m, i);
    v[k] += 0.05;
    mbs_model *m2 = mbs_model_with_params(m, v, &err);
    CHECK(m2 != NULL, "%s", err.msg);
    if (m2) {
        CHECK(mbs_model_ncuts(m2) == 1 && mbs_model_nconstraints(m2) == 6 &&
              strcmp(mbs_constraint_name(m2, 0), "loop jB: point x") == 0, "copy keeps the loop");
        double q[4], qd[4], q0[4], phi[6], r1[3];
        mbs_model_initial_state(m2, q, qd);
        memcpy(q0, q, sizeof q);
        mbs_data *d = mbs_data_create(m2, NULL);
        mbs_constraints(m2, d, q, 0, phi);
        CHECK(maxabs(phi, 6) > 0.01, "the longer bar opens the loop: %g", maxabs(phi, 6));
        mbs_assembly_report rep;
        CHECK(mbs_assemble(m2, d, q, 0, NULL, &rep) == MBS_OK, "%s", mbs_data_error(d));
        CHECK(q[0] == q0[0] && q[1] == q0[1], "angles at A and 1 held");
        mbs_kinematics(m2, d, q, NULL, NULL);
        mbs_point_kinematics(m2, d, mbs_point_find(m2, "A1.P1"), r1, NULL, NULL);
        const double L = 1.4142135623730951 + 0.05;
        /* a point of the first link at its held angle: a few roundings (16 eps L) */
        CHECK(fabs(r1[0] - L * cos(q0[0])) <= 16 * MBS_EPS * L && fabs(r1[1] - L * sin(q0[0])) <= 16 * MBS_EPS * L,
              "point 1 at (%g, %g)", r1[0], r1[1]);
        mbs_constraints(m2, d, q, 0, phi);
        CHECK(maxabs(phi, 6) <= bounds_at(m2, d, q, 0, NULL, 0).phi, "|Phi| %g", maxabs(phi, 6));
        mbs_data_free(d);
        mbs_model_free(m2);
    }
    free(v);
    mbs_model_free(m);
}

/* An impossible four-bar: ground link 2 m, other links 0.1 + 0.35 + 0.3. */
static void failure(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/fourbar_redundant.json"), &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    FILE *fp = fopen(mbs_test_path("models/fourbar_redundant.json"), "rb");
    char *s = calloc(1 << 16, 1);
    size_t len = fp ? fread(s, 1, (1 << 16) - 1, fp) : 0;
    if (fp) fclose(fp);
    s[len] = 0;
    mbs_model_free(m);
    char *p = strstr(s, "\"parent_point\": [0.4, 0, 0]");
    CHECK(p != NULL, "ground point of jD");
    if (p) memcpy(p, "\"parent_point\": [2.0, 0, 0]", 27);
    m = mbs_model_load_string(s, "impossible.json", &err);
    free(s);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    double q[3], qd[3];
    mbs_model_initial_state(m, q, qd);
    mbs_data *d = mbs_data_create(m, NULL);
    mbs_assembly_report rep;
    int rc = mbs_assemble(m, d, q, 0, NULL, &rep);
    const char *msg = mbs_data_error(d);
    CHECK(rc == MBS_ERR_NUMERIC, "impossible geometry assembled");
    CHECK(strstr(msg, "loop closed by revolute joint jD") && strstr(msg, "bodies ground -> crank -> coupler -> rocker") &&
          strstr(msg, "largest residual") && strstr(msg, "loop jD: point x"), "message: %s", msg);
    CHECK(rep.residual > 0.5, "residual %g", rep.residual);
    char num[64];
    snprintf(num, sizeof num, "%.6g", rep.residual);
    CHECK(strstr(msg, num) != NULL, "message quotes the residual %s: %s", num, msg);
    printf("  impossible four-bar: %s\n", msg);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* `mbsens info --json` reports the sizes of thesis Table 7.8. */
static void cli_info(void)
{
    const char *cli = getenv("MBS_CLI");
    if (!cli) {
        printf("  MBS_CLI not set: mbsens info not checked\n");
        return;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "\"%s\" info \"%s\" --json", cli, mbs_test_path("models/slider_crank.json"));
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "popen");
    if (!p) return;
    char *out = calloc(1 << 16, 1);
    size_t len = fread(out, 1, (1 << 16) - 1, p);
    out[len] = 0;
    CHECK(pclose(p) == 0, "mbsens info failed");
    CHECK(strstr(out, "\"n_coordinates\": 4,") && strstr(out, "\"n_constraints\": 3,"), "info: %.300s", out);
    free(out);
}

int main(void)
{
    shipped();
    random_loops();
    drivers();
    fivebar_param();
    failure();
    cli_info();
    return mbs_test_summary("test_kinematic_problems");
}
