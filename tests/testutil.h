/*
 * testutil.h - tiny assertion helpers shared by the test programs.
 *
 * Each test program calls the CHECK* macros and ends with
 * `return mbs_test_summary("name");`, which prints "N passed, N failed"
 * and returns non-zero if anything failed.
 */
#ifndef MBS_TESTUTIL_H
#define MBS_TESTUTIL_H

#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "mbsens/mbsens.h"

extern int mbs_test_pass, mbs_test_fail;

#define CHECK(cond, ...) do { \
    if (cond) mbs_test_pass++; \
    else { mbs_test_fail++; fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
           fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_CLOSE(a, b, tol, ...) do { double _a = (a), _b = (b); \
    double _s = fabs(_b) > 1 ? fabs(_b) : 1; \
    if (fabs(_a - _b) <= (tol) * _s) mbs_test_pass++; \
    else { mbs_test_fail++; fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g (tol %g): ", \
           __FILE__, __LINE__, #a, _a, _b, (double)(tol)); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

int mbs_test_summary(const char *name);

/* Deterministic random numbers (xorshift64*). */
typedef struct { uint64_t s; } mbs_rng;
void mbs_rng_seed(mbs_rng *r, uint64_t seed);
double mbs_rng_uniform(mbs_rng *r, double lo, double hi);
int mbs_rng_int(mbs_rng *r, int n); /* 0..n-1 */

/* Path of a file in the source tree ($MBS_SOURCE_DIR/rel); static buffer. */
const char *mbs_test_path(const char *rel);

/* Adds the objectives of `json` (an array as a model file's "objectives",
 * docs/model-format.md) to m, named `label` in messages; a failure is a
 * failed check. MBS_OK or the loader's error. */
int mbs_test_add_objectives(mbs_model *m, const char *json, const char *label);

/* max_k |a_k - b_k| / max(1, max_k |b_k|) */
double mbs_rel_err(const double *a, const double *b, int n);

/* The example robots: $MBS_URDF_DIR, else ../shared/data/example-robot-data
 * relative to the source tree, into dir. 0 if it is a directory, else -1
 * (the caller reports itself skipped). */
int mbs_test_urdf_dir(char *dir, size_t len);

/* mbs_model_to_json of m, reloaded: the same model (mbs_test_same_model,
 * model_compare.h: every size, name and number bit for bit), written again
 * as the same text, and bit for bit the same ID, M and FD at 3 random
 * states (each a CHECK). Returns the worst relative difference of those
 * results (0 when they agree; INFINITY if the model differs). */
double mbs_test_json_round_trip(const mbs_model *m, const char *label, unsigned long seed);

/* The machine epsilon of double (2.2e-16): the unit of round-off bounds. */
#define MBS_EPS DBL_EPSILON

/* Round-off bound for what the recursions compute over a tree of n bodies
 * (or a chain of n steps), relative to the largest entry or to 1: each
 * entry is a sum over at most n bodies of terms that pass through about 50
 * roundings (6D transforms, cross products, 3x3 products) and exceed the
 * result by at most a factor 20 for the models of the tests (masses,
 * inertias, lengths and rates from 0.1 to 10; the random trees draw them
 * there): 1000 n eps, 2.2e-12 for 10 bodies. The same computation done two
 * ways (two recursions, analytical and complex-step derivatives) differs by
 * at most the sum of two such errors; the factor 20 covers that as well. */
#define MBS_ROUNDOFF(n) (1000.0 * (n) * MBS_EPS)

/* The 2-norm condition number of the symmetric positive definite n x n
 * matrix M (row- or column-major alike): the ratio of its extreme
 * eigenvalues (LAPACK dsyev on a copy); INFINITY if it is not positive
 * definite. Forward dynamics solves with M: to the round-off of the
 * recursions (MBS_ROUNDOFF) it adds the forward error of a backward-stable
 * solve, n eps times this, on each side of a comparison. */
double mbs_test_cond_spd(const double *M, int n);
/* Its smallest and largest eigenvalues (0 on failure). */
void mbs_test_eig_range(const double *M, int n, double *lmin, double *lmax);

/* M (nv x nv, row-major, both triangles) at q completed for the Euler
 * parameters: p p^T added on the rates of each Euler quadruple (joints
 * whose velocities are the rates of their coordinates), the matrix M' both
 * forward-dynamics algorithms solve with (M alone is singular along p, its
 * condition number infinite). */
void mbs_test_complete_euler(const mbs_model *m, const double *q, double *M);

/* The round-off bound of forward dynamics (and of what solves with M) at
 * q: MBS_ROUNDOFF of the model plus 2 nv eps kappa(M'(q)) (M' of
 * mbs_test_complete_euler), the forward error of a backward-stable solve on
 * both sides of a comparison. */
double mbs_test_roundoff_fd(const mbs_model *m, mbs_data *d, const double *q);

/* mbs_check_derivatives (analytical against complex step) at `samples`
 * random states drawn here: each inverse-dynamics block within MBS_ROUNDOFF
 * of the model, each forward-dynamics block within mbs_test_roundoff_fd at
 * its state (each a CHECK). Returns the worst error as a fraction of its
 * bound. */
double mbs_test_check_derivatives(const mbs_model *m, int samples, unsigned long seed, const char *label);

/* Two runs of the same discrete equations that differ only in arithmetic
 * (another reference point or recursion, another Newton path or tangent,
 * another solver of the same step equations) differ by what each step's
 * round-off and solver tolerance become along the run. This bounds their
 * difference by T_a + T_b + N G e, every term measured on this run:
 *   T  the tolerance's effect on each run (trapezoidal rule and closed-loop
 *      formulations; 0 for RK4): 1.2 max |x(tol) - x(tol/100)| (how far a
 *      run stopped at tol is from the exact discrete solution; a factor 10
 *      can leave the iteration counts, and the run, unchanged);
 *   e  the per-step difference: from states of a's run (every stride-th
 *      output, about 60 in all), `a` and `b` each take 4 steps; e is the
 *      largest difference after j steps divided by j, as a velocity
 *      (max of |dqd| and |dq| / h), and at least eps max |qd| (the
 *      rounding of the result);
 *   G  the growth of a velocity perturbation along a's run: a run from
 *      qd0 + 1e-7 max(1, |qd0|) (made consistent by the integrator), its
 *      largest |dq|, |dqd|, |dqdd| over the outputs divided by the initial
 *      |dqd| (a perturbation entering later grows no more than one entering
 *      at t0 of a run that is at most as long: G is taken for all of them);
 *   N  the steps: every step's difference adding up in phase, the worst
 *      case (differences of random sign grow like sqrt(N) instead).
 * a and b are fixed-step options (trapezoidal rule, RK4, the closed-loop
 * formulations) with the same dt, t0, tf; q0, qd0 may be NULL (the model's).
 * bound[0], [1], [2] are for q, qd, qdd (max-norms over the outputs).
 * Returns 0, or -1 when a run fails (reported as a CHECK). */
int mbs_test_run_spread(const mbs_model *m, const mbs_sim_options *a, const mbs_sim_options *b, const double *q0,
                        const double *qd0, double bound[3]);

/* A run of order p (2: the trapezoidal rule, the closed-loop formulations;
 * 4: RK4) at step h errs by e(h) = C h^p (1 + O(h)), so the changes
 * x(h) - x(h/2), x(h/2) - x(h/4), ... shrink by a ratio r that tends to 2^p
 * (Richardson), and e(h) is their sum. mbs_test_order_error runs options o
 * at h = o.dt, h/2 and h/4, measures r on q (a CHECK that r > 2^p / 2: the
 * runs converge at about the method's order) and returns 1.25 r'/(r' - 1)
 * |x(h) - x(h/2)|, r' = min(r, 2^p) (the sum for a constant ratio r', and
 * 1.25 for the next order's terms), maxima over the outputs at h: err[0],
 * [1], [2] for q, qd, qdd. q0, qd0 may be NULL. Returns 0 or -1 (a run
 * failed). */
int mbs_test_order_error(const mbs_model *m, const mbs_sim_options *o, int p, const double *q0, const double *qd0,
                         double err[3]);

/* The error of a central-difference gradient of whole simulations
 * (mbs_sensitivity with method fd, relative step h = o->fd_step), against
 * the exact derivative of the discrete run (DDM, adjoints):
 *   - its truncation, O(h^2), and the noise of the simulations over 2h,
 *     O(1/h), show in how the gradient changes when h is halved or doubled:
 *     2 max(|g(h) - g(h/2)|, |g(h) - g(2h)|) (a truncation error c h^2 is
 *     |g(2h) - g(h)| / 3 and 4/3 |g(h) - g(h/2)|);
 *   - the Newton tolerance (trapezoidal rule): where the iteration counts do
 *     not change, the stopping error is a smooth function of the parameters
 *     and biases every step size alike; a run g' that iterates at least
 *     once more per step shows it (tolerance / 100, / 1e3, / 1e4 in turn
 *     until its iterations exceed the run's by its steps or the next does
 *     not converge; / 10, or 10 times the tolerance, where not even / 100
 *     converges): 1.2 |g(h) - g'(h)| (1 / (1 - c), c <= 1/6 the
 *     iteration's contraction). A run at tolerance / 100 alone can take
 *     the same iterations and the same state in most steps (Matrix R,
 *     random loop 43: 216 iterations against 200 over 100 steps; its DDM
 *     changed by 2e-11 of the row where the run at 1e-14 shows 5e-9);
 *   - the round-off of psi, which nearby runs share and the changes above
 *     need not show: each of the N steps rounds psi and the state it
 *     integrates at eps relative: 2 N eps |psi_i| / h_j, h_j the parameter's
 *     absolute step;
 *   - the round-off noise of psi that differs from run to run, amplified
 *     by the run (ALI3-P: the penalty alpha ~ 1e9 times the round-off of
 *     Phi, in every multiplier update and projection; Newton iteration
 *     counts that change with the last bits), which the changes with h
 *     sample only twice: measured on nine runs whose parameters differ by
 *     k 1e-12 relative (k = 0 .. 8), less their smooth change g drho: the
 *     range R_i of psi_i; the two runs of a difference are two more draws,
 *     |n+ - n-| <= 2 R_i (normal noise: the range of nine draws is about
 *     3 sigma, a difference's sd sqrt(2) sigma), so R_i / h_j.
 * err[k] is their sum for each entry (objective x parameter, row-major) of
 * g(h) = fd->grad, computed with options o. Returns 0 or -1 (a run failed;
 * err then INFINITY). */
int mbs_test_fd_error(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *fd, double *err);

/* Two exact derivatives of the same discrete run (DDM, discrete adjoint,
 * complex step) differ by round-off: each of the run's N steps has its
 * Jacobians to MBS_ROUNDOFF of the model, their product N times that:
 * N MBS_ROUNDOFF(bodies), relative to the largest gradient entry of an
 * objective (or 1). */
double mbs_test_sens_roundoff(const mbs_model *m, const mbs_sens_result *r);

/* CHECK every entry of an FD gradient (fd, options o) against an exact one
 * (exact, options oe): |fd - exact| <= mbs_test_fd_error + the tolerance's
 * effect on the exact one (its trajectory is the run at oe's tolerance: a
 * run that iterates once more per step, as above; the DDM of a five-bar driven without
 * fixed coordinates at 1e-10 is 1.5e-8 off the one at 1e-12, 0.1 s) +
 * mbs_test_sens_roundoff of its row. Returns the largest ratio of
 * difference to bound (<= 1: all passed). */
double mbs_test_check_fd(const mbs_model *m, const mbs_sens_options *oe, const mbs_sens_result *exact,
                         const mbs_sens_options *o, const mbs_sens_result *fd, const char *label);

/* The Newton tolerance's effect on a gradient r computed with options o
 * (trapezoidal rule; 0 otherwise), as in mbs_test_fd_error: 1.2 |r - g'|,
 * g' the run that iterates at least once more per step; added to err[k].
 * Returns 0 or -1 (a run failed; err then INFINITY). */
int mbs_test_sens_tolerance_effect(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *r,
                                   double *err);

/* The error of a gradient r computed with options o (method and
 * formulation set), of order p in the step, against the continuous one, as
 * mbs_test_order_error: gradients g at h = o.sim.dt, h/2 and h/4
 * (trapezoidal rule: at the tighter tolerance of
 * mbs_test_sens_tolerance_effect, whose effect does not shrink with h; at
 * h/2 and h/4 / 100, / 10 or the tolerance itself where theirs do not
 * converge), and the round-off noise R of each entry of o's gradient (the
 * range over nine runs at parameters k 1e-12 apart, k = 0 .. 8, less a
 * line in k: the ALI3-P DDM of a random loop scatters by 1.5e-8 of its
 * row at any tolerance, which a single difference samples once). Each of
 * r, g(h), g(h/2) is within R of its smooth value, so err[k] =
 * f (|g(h) - g(h/2)| + 2R) + 1.2 (|r - g(h)| + 2R) + R, f = 1.25 r'/(r' - 1)
 * (r' = min(r, 2^p), r the ratio of successive changes, a CHECK that
 * r > 2^p / 2 unless the changes are at round-off; the second term: r's
 * own tolerance's effect, the third its noise). */
int mbs_test_sens_order_error(const mbs_model *m, const mbs_sens_options *o, int p, const mbs_sens_result *r,
                              double *err);

/* A run recorded at every output: q, qd, qdd (n rows of nq). */
typedef struct { int nq, n, cap; double *t, *q, *qd, *qdd; } mbs_test_traj;
/* mbs_simulate with options o from (q0, qd0) (NULL: the model's),
 * recording every output into tr (freed with mbs_test_traj_free). 0 or the
 * status (a CHECK reports it). */
int mbs_test_traj_run(const mbs_model *m, const mbs_sim_options *o, const double *q0, const double *qd0,
                      mbs_test_traj *tr);
void mbs_test_traj_free(mbs_test_traj *tr);
/* max over the outputs of |a - b| for q, qd, qdd (d[0], [1], [2]);
 * INFINITY if the output counts differ. */
void mbs_test_traj_diff(const mbs_test_traj *a, const mbs_test_traj *b, double d[3]);

#endif
