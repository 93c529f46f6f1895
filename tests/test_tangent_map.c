/*
 * test_tangent_map.c - tangent velocities against Euler-parameter rates
 * (docs/tangent-space.md §1.1, §13): on random trees with every joint type,
 * the model in Euler rates (mE), its copy with every spherical and floating
 * joint tangent (mbs_model_with_velocities) and a mixed copy (every second
 * such joint tangent), at one configuration q and tangent-side velocities
 * v, vd with qd = T v, qdd = T vd + Tdot v (mbs_rates_from_velocity):
 *   - body poses, twists and accelerations equal;
 *   - tau_v = T^T tau_q(q, qd, qdd) (inverse dynamics), M_v = T^T M_q T;
 *   - forward dynamics, fully recursive and semi-recursive, each reference
 *     point: FD_v(q, v, tau_v) = vd and = T^+ (FD_q(q, qd, tau_q) - Tdot v)
 *     (mbs_velocity_from_rates);
 *   - on trees of the joint-frame kinds (fixed, revolute, prismatic,
 *     spherical, floating), tangent and mixed: the joint-frame fast path of
 *     the fully recursive FD (aba_joint_frames.c) = the global-axes kernels
 *     with each reference point, with tau and joint loads, at v and at zero
 *     velocity, within the round-off bound of test_forward_dynamics.c (the
 *     recursions' and 2 nv eps kappa(M), mbs_test_roundoff_fd; 4 times that
 *     with the origin as reference point, for its lever arms); the
 *     joint-frame M and bias forces h (crba_joint_frames.c) = the global
 *     composite-inertia and Newton-Euler passes within MBS_ROUNDOFF(nb);
 *     the same on random trees plus free bodies (mbs_generate_free_bodies_json);
 *   - kinetic and potential energies equal;
 *   - mbs_velocity_from_rates inverts mbs_rates_from_velocity, and the
 *     conversion back to Euler rates gives nv = nq and the same initial rates;
 *   - the functions not yet written for tangent velocities (constraints,
 *     kinematic problems, the cvodes integrator, sensitivities) return
 *     MBS_ERR_UNSUPPORTED naming the joint (the guards of
 *     docs/tangent-plan.md A4; the ID and FD derivatives, dense and
 *     sparse, and the derivative check are tested in
 *     test_derivatives_tangent.c), and
 *     mbs_normalize_state normalizes a
 *     tangent joint's quaternion without touching its velocities.
 * Tolerances: the recursions' round-off MBS_ROUNDOFF(nb) (1000 nb eps, the
 * bound of today's agreement tests between two recursions on one model) for
 * kinematics, ID, M and energies, which differ only in the operation order
 * and the product by T (|T| <= 1 on every block: R orthogonal, G G^T = I / 4
 * after the factor 1/2); forward dynamics adds the forward error of the
 * solves with M on both sides, 2 nv eps kappa(M) (mbs_test_roundoff_fd of
 * the all-tangent model, kappa times 4 for the rescaling of the quaternion
 * blocks by T: roundoff_fd).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"
#include "mbsens/generate.h"
#include "mbsens/manifold.h"

#define NTREES 300

/* The model with every second spherical or floating joint (in the writer's
 * order) made tangent: "velocities" added to its JSON object. */
static mbs_model *mixed_copy(const mbs_model *m)
{
    mbs_error err = { 0, "" };
    char *js = mbs_model_to_json(m, &err);
    if (!js) return NULL;
    const char *ins = ", \"velocities\": \"tangent\"";
    char *out = malloc(strlen(js) * 2 + 64), *o = out;
    const char *s = js;
    int count = 0;
    while (*s) {
        const char *a = strstr(s, "\"type\": \"spherical\""), *b = strstr(s, "\"type\": \"floating\"");
        const char *hit = !a ? b : !b ? a : a < b ? a : b;
        if (!hit) break;
        const char *end = strchr(hit + 8, '"') + 1;
        end = strchr(end, '"') + 1;
        memcpy(o, s, (size_t)(end - s));
        o += end - s;
        if (count++ % 2 == 0) {
            strcpy(o, ins);
            o += strlen(ins);
        }
        s = end;
    }
    strcpy(o, s);
    mbs_model *c = mbs_model_load_string(out, "mixed", &err);
    CHECK(c != NULL, "mixed copy: %s", err.msg);
    free(js);
    free(out);
    return c;
}

/* T^T x (x: nq, y: nv) */
static void apply_tt(const double *T, int nq, int nv, const double *x, double *y)
{
    for (int k = 0; k < nv; k++) {
        y[k] = 0;
        for (int r = 0; r < nq; r++) y[k] += T[r * nv + k] * x[r];
    }
}

typedef struct worst {
    double kin, id, M, fd, fdq, energy, map, raw;
} worst;

/* The body kinematics of both data, worst relative difference. */
static double compare_bodies(const mbs_model *m, const mbs_data *a, const mbs_data *b)
{
    double w = 0;
    for (int i = 1; i <= mbs_model_nbodies(m); i++) {
        double x[6][9], y[6][9];
        mbs_body_pose(a, i, x[0], x[1]);
        mbs_body_pose(b, i, y[0], y[1]);
        mbs_body_velocity(a, i, x[2], x[3]);
        mbs_body_velocity(b, i, y[2], y[3]);
        mbs_body_acceleration(a, i, x[4], x[5]);
        mbs_body_acceleration(b, i, y[4], y[5]);
        w = fmax(w, mbs_rel_err(x[0], y[0], 9));
        for (int k = 1; k < 6; k++) w = fmax(w, mbs_rel_err(x[k], y[k], 3));
    }
    return w;
}

/* The forward-dynamics round-off bound at q: the recursions' and 2 nv eps
 * kappa(M) (mbs_test_roundoff_fd) of the all-tangent model mT, whose M is
 * positive definite (the Euler-rate M has M p = 0 on every quaternion and
 * is solved with its completion M + p p^T), kappa taken 4 times larger for
 * the Euler-rate blocks of the other side (T = G^T / 2 scales a block by
 * 1/4, docs/tangent-space.md §13). */
static double roundoff_fd(const mbs_model *mT, const double *q)
{
    mbs_data *d = mbs_data_create(mT, NULL);
    const double r = MBS_ROUNDOFF(mbs_model_nbodies(mT));
    const double ro = r + 4 * (mbs_test_roundoff_fd(mT, d, q) - r);
    mbs_data_free(d);
    return ro;
}

static void compare(mbs_rng *rng, const mbs_model *mE, const mbs_model *mV, const mbs_model *mT, worst *w)
{
    const int nq = mbs_model_nq(mE), nv = mbs_model_nv(mV), nb = mbs_model_nbodies(mE);
    CHECK(mbs_model_nq(mV) == nq && mbs_model_nv(mE) == nq, "sizes");
    const size_t n1 = (size_t)nq + 1;
    double *q = calloc(n1, 8), *qd0 = calloc(n1, 8), *qdd0 = calloc(n1, 8), *qd = calloc(n1, 8);
    double *qdd = calloc(n1, 8), *v = calloc(n1, 8), *vd = calloc(n1, 8), *v2 = calloc(n1, 8);
    double *tq = calloc(n1, 8), *tv = calloc(n1, 8), *tt = calloc(n1, 8), *a = calloc(n1, 8);
    double *b = calloc(n1, 8), *T = calloc(n1 * n1, 8), *Mq = calloc(n1 * n1, 8), *Mv = calloc(n1 * n1, 8);
    double *MT = calloc(n1 * n1, 8), *Mm = calloc(n1 * n1, 8);
    mbs_data *dE = mbs_data_create(mE, NULL), *dV = mbs_data_create(mV, NULL);
    /* Euler-rate state (p.pd = 0, p.pdd = -|pd|^2), its velocities, and back */
    mbs_test_random_state(rng, mE, q, qd0, qdd0);
    CHECK(mbs_velocity_from_rates(mV, q, qd0, qdd0, v, vd) == MBS_OK, "velocity_from_rates");
    CHECK(mbs_rates_from_velocity(mV, q, v, vd, qd, qdd) == MBS_OK, "rates_from_velocity");
    w->map = fmax(w->map, fmax(mbs_rel_err(qd, qd0, nq), mbs_rel_err(qdd, qdd0, nq)));
    mbs_velocity_map(mV, q, T);
    const double ro = roundoff_fd(mT, q);
    const double rk = MBS_ROUNDOFF(nb);
    for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
        mbs_data_set_ref(dE, (mbs_ref_point)ref);
        mbs_data_set_ref(dV, (mbs_ref_point)ref);
        CHECK(mbs_kinematics(mE, dE, q, qd, qdd) == MBS_OK, "kin E: %s", mbs_data_error(dE));
        CHECK(mbs_kinematics(mV, dV, q, v, vd) == MBS_OK, "kin V: %s", mbs_data_error(dV));
        w->kin = fmax(w->kin, compare_bodies(mE, dE, dV) / rk);
        double eE[2] = { mbs_kinetic_energy(mE, dE), mbs_potential_energy(mE, dE) };
        double eV[2] = { mbs_kinetic_energy(mV, dV), mbs_potential_energy(mV, dV) };
        w->energy = fmax(w->energy, mbs_rel_err(eV, eE, 2) / rk);
        /* inverse dynamics and mass matrix through T */
        CHECK(mbs_inverse_dynamics(mE, dE, q, qd, qdd, tq) == MBS_OK, "id E: %s", mbs_data_error(dE));
        CHECK(mbs_inverse_dynamics(mV, dV, q, v, vd, tv) == MBS_OK, "id V: %s", mbs_data_error(dV));
        apply_tt(T, nq, nv, tq, tt);
        w->id = fmax(w->id, mbs_rel_err(tv, tt, nv) / rk);
        CHECK(mbs_mass_matrix(mE, dE, q, Mq) == MBS_OK, "M E");
        CHECK(mbs_mass_matrix(mV, dV, q, Mv) == MBS_OK, "M V");
        for (int r = 0; r < nq; r++)
            for (int c = 0; c < nv; c++) {
                MT[r * nv + c] = 0;
                for (int k = 0; k < nq; k++) MT[r * nv + c] += Mq[r * nq + k] * T[k * nv + c];
            }
        for (int r = 0; r < nv; r++)
            for (int c = 0; c < nv; c++) {
                Mm[r * nv + c] = 0;
                for (int k = 0; k < nq; k++) Mm[r * nv + c] += T[k * nv + r] * MT[k * nv + c];
            }
        w->M = fmax(w->M, mbs_rel_err(Mv, Mm, nv * nv) / rk);
        /* forward dynamics: back to vd, and the Euler-rate FD mapped */
        for (int alg = MBS_FD_RECURSIVE; alg <= MBS_FD_SEMI_RECURSIVE; alg++) {
            CHECK(mbs_forward_dynamics(mV, dV, (mbs_fd_algorithm)alg, q, v, tv, a) == MBS_OK, "fd V: %s",
                  mbs_data_error(dV));
            w->fd = fmax(w->fd, mbs_rel_err(a, vd, nv) / ro);
            CHECK(mbs_forward_dynamics(mE, dE, (mbs_fd_algorithm)alg, q, qd, tq, b) == MBS_OK, "fd E: %s",
                  mbs_data_error(dE));
            CHECK(mbs_velocity_from_rates(mV, q, qd, b, v2, tt) == MBS_OK, "map fd");
            w->fdq = fmax(w->fdq, mbs_rel_err(a, tt, nv) / ro);
            w->raw = fmax(w->raw, mbs_rel_err(a, tt, nv));
        }
    }
    mbs_data_free(dE);
    mbs_data_free(dV);
    free(q); free(qd0); free(qdd0); free(qd); free(qdd); free(v); free(vd); free(v2);
    free(tq); free(tv); free(tt); free(a); free(b); free(T); free(Mq); free(Mv); free(MT); free(Mm);
}

/* The joint-frame passes on mV (the tangent or mixed copy of mE, all of
 * whose joints have a joint-frame kind) against the global-axes kernels at
 * one state drawn on mE and mapped to velocities: the worst FD, M and h
 * differences in units of their bounds into wf[0..2]. */
static void fast_path(mbs_rng *rng, const mbs_model *mE, const mbs_model *mV, double *wf)
{
    const int nq = mbs_model_nq(mE), nv = mbs_model_nv(mV), nb = mbs_model_nbodies(mV);
    const size_t n1 = (size_t)nq + 1;
    double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8), *v = calloc(n1, 8), *vd = calloc(n1, 8);
    double *tau = calloc(n1, 8), *a1 = calloc(n1, 8), *a2 = calloc(n1, 8), *h1 = calloc(n1, 8), *h2 = calloc(n1, 8);
    double *M1 = calloc(n1 * n1, 8), *M2 = calloc(n1 * n1, 8);
    mbs_data *d = mbs_data_create(mV, NULL);
    mbs_test_random_state(rng, mE, q, qd, qdd);
    CHECK(mbs_velocity_from_rates(mV, q, qd, qdd, v, vd) == MBS_OK, "velocity_from_rates");
    for (int k = 0; k < nv; k++) tau[k] = mbs_rng_uniform(rng, -2, 2);
    CHECK(mbs_abajf_usable(d), "joint-frame FD usable on a tree of the joint-frame kinds");
    const double ro = mbs_test_roundoff_fd(mV, d, q), rk = MBS_ROUNDOFF(nb);
    double *jl = mbs_data_joint_load(d);
    for (int vel = 0; vel < 2; vel++) {
        const double *vv = vel ? v : NULL;
        for (int k = 0; k < nv; k++) jl[k] = mbs_rng_uniform(rng, -1, 1);
        mbs_data_set_fr_frames(d, MBS_FR_JOINT_FRAMES);
        CHECK(mbs_forward_dynamics(mV, d, MBS_FD_RECURSIVE, q, vv, tau, a1) == MBS_OK, "fd fast: %s",
              mbs_data_error(d));
        mbs_data_set_fr_frames(d, MBS_FR_GLOBAL);
        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            CHECK(mbs_forward_dynamics(mV, d, MBS_FD_RECURSIVE, q, vv, tau, a2) == MBS_OK, "fd global: %s",
                  mbs_data_error(d));
            const double e = mbs_rel_err(a1, a2, nv), tol = ref == MBS_REF_ORIGIN ? 4 * ro : ro;
            CHECK(e <= tol, "joint frames vs global axes (%s): %g > %g", mbs_ref_point_name((mbs_ref_point)ref), e,
                  tol);
            wf[0] = fmax(wf[0], e / tol);
        }
        mbs_data_set_ref(d, MBS_REF_COM);
        mbs_data_set_fr_frames(d, MBS_FR_JOINT_FRAMES);
    }
    /* M and h */
    CHECK(mbs_mass_matrix(mV, d, q, M1) == MBS_OK, "M: %s", mbs_data_error(d));
    mbs_kin_forward(mV, mV->x, &d->ws, q, NULL, NULL, 0);
    mbs_mass_terms(mV, mV->x, &d->ws);
    mbs_crba(mV, &d->ws, M2);
    const double eM = mbs_rel_err(M1, M2, nv * nv);
    CHECK(eM <= rk, "joint-frame M vs global %g > %g", eM, rk);
    wf[1] = fmax(wf[1], eM / rk);
    mbs_crbajf_bias_forces(mV, d, q, v, h1);
    CHECK(mbs_bias_forces(mV, d, q, v, h2) == MBS_OK, "h: %s", mbs_data_error(d));
    const double eh = mbs_rel_err(h1, h2, nv);
    CHECK(eh <= rk, "joint-frame h vs global %g > %g", eh, rk);
    wf[2] = fmax(wf[2], eh / rk);
    mbs_data_free(d);
    free(q); free(qd); free(qdd); free(v); free(vd); free(tau); free(a1); free(a2); free(h1); free(h2);
    free(M1); free(M2);
}

/* The status is MBS_ERR_UNSUPPORTED and the message names a tangent joint. */
static void expect_guard(const char *what, int rc, const char *msg)
{
    CHECK(rc == MBS_ERR_UNSUPPORTED, "%s: status %d (%s)", what, rc, msg);
    CHECK(strstr(msg, "not yet implemented for joint 'j") && strstr(msg, "with tangent velocities"),
          "%s: message \"%s\"", what, msg);
}

/* Every guarded entry point on one tangent model (docs/model-format.md). */
static void guards(const mbs_model *m)
{
    mbs_error err = { 0, "" };
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    double *q = calloc((size_t)nq, 8), *v = calloc((size_t)nv, 8), *out = calloc((size_t)nv, 8);
    mbs_model_initial_state(m, q, v);
    mbs_data *d = mbs_data_create(m, NULL);
    expect_guard("constraints", mbs_constraints(m, d, q, 0, out), mbs_data_error(d));
    expect_guard("assembly", mbs_assemble(m, d, q, 0, NULL, NULL), mbs_data_error(d));
    expect_guard("velocity problem", mbs_solve_velocity(m, d, q, v, 0, NULL), mbs_data_error(d));
    mbs_sim_options so = mbs_model_sim_options(m);
    so.tf = so.t0 + 0.01;
    so.integrator = MBS_INTEGRATOR_CVODES;
    expect_guard("simulate with cvodes", mbs_simulate(m, d, &so, NULL, NULL, NULL, NULL, NULL, &err), err.msg);
    mbs_sens_options se = mbs_sens_options_default(m);
    mbs_sens_result res;
    expect_guard("sensitivity", mbs_sensitivity(m, &se, &res, &err), err.msg);
    mbs_sens_result_free(&res);
    /* the state: the quaternion normalized, the velocities untouched */
    for (int k = 0; k < nq; k++) q[k] *= 2;
    for (int k = 0; k < nv; k++) v[k] = k + 1;
    CHECK(mbs_normalize_state(m, q, v) == MBS_OK, "normalize");
    for (int j = 1; j <= mbs_model_nbodies(m); j++) {
        if (mbs_joint_velocities(m, j) != MBS_VELOCITIES_TANGENT) continue;
        const double *p = q + mbs_joint_coord_offset(m, j) + (mbs_joint_nq(m, j) == 7 ? 3 : 0);
        CHECK(fabs(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3] - 1) <= 4 * MBS_EPS, "|p| = 1");
    }
    for (int k = 0; k < nv; k++) CHECK(v[k] == k + 1, "v untouched");
    mbs_data_free(d);
    free(q); free(v); free(out);
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2111);
    worst w = { 0, 0, 0, 0, 0, 0, 0, 0 };
    int ntangent = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *mE = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 12), 0);
        CHECK(mE != NULL, "tree");
        if (!mE) continue;
        mbs_error err = { 0, "" };
        mbs_model *mT = mbs_model_with_velocities(mE, MBS_VELOCITIES_TANGENT, &err);
        CHECK(mT != NULL, "tangent copy: %s", err.msg);
        mbs_model *mX = mixed_copy(mE);
        mbs_model *mB = mT ? mbs_model_with_velocities(mT, MBS_VELOCITIES_EULER_RATES, &err) : NULL;
        CHECK(mB != NULL && mbs_model_nv(mB) == mbs_model_nq(mB), "back to Euler rates: %s", err.msg);
        if (mT) {
            for (int j = 1; j <= mbs_model_nbodies(mT); j++)
                ntangent += mbs_joint_velocities(mT, j) == MBS_VELOCITIES_TANGENT;
            compare(&rng, mE, mT, mT, &w);
            if (mbs_model_nv(mT) < mbs_model_nq(mT) && tree % 10 == 0) guards(mT);
            mbs_test_json_round_trip(mT, "tangent copy", 5);
        }
        if (mX && mT) compare(&rng, mE, mX, mT, &w);
        mbs_model_free(mB);
        mbs_model_free(mX);
        mbs_model_free(mT);
        mbs_model_free(mE);
    }
    CHECK(ntangent > NTREES, "tangent joints drawn: %d", ntangent);
    /* the joint-frame passes on trees of their kinds, tangent and mixed */
    const unsigned fast_types = (1u << MBS_JOINT_FIXED) | (1u << MBS_JOINT_REVOLUTE) | (1u << MBS_JOINT_PRISMATIC) |
                                (1u << MBS_JOINT_SPHERICAL) | (1u << MBS_JOINT_FLOATING);
    double wf[3] = { 0, 0, 0 };
    int nfast = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *mE = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 12), fast_types);
        mbs_error err = { 0, "" };
        mbs_model *mT = mE ? mbs_model_with_velocities(mE, MBS_VELOCITIES_TANGENT, &err) : NULL;
        mbs_model *mX = mE ? mixed_copy(mE) : NULL;
        CHECK(mT != NULL && mX != NULL, "tree and its copies: %s", err.msg);
        if (mT && mX) {
            nfast += mbs_model_nv(mT) < mbs_model_nq(mT);
            fast_path(&rng, mE, mT, wf);
            fast_path(&rng, mE, mX, wf);
        }
        mbs_model_free(mX);
        mbs_model_free(mT);
        mbs_model_free(mE);
    }
    /* and with 1 to 4 free bodies added (floating joints from the ground
     * that carry one body each: the closed-form blocks of the mass matrix) */
    for (int t = 0; t < 30; t++) {
        mbs_error e = { 0, "" };
        mbs_model *r = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 6), fast_types);
        char *text = r ? mbs_generate_free_bodies_json(r, 1 + mbs_rng_int(&rng, 4), &e) : NULL;
        mbs_model *mE = text ? mbs_model_load_string(text, "free bodies", &e) : NULL;
        mbs_model *mT = mE ? mbs_model_with_velocities(mE, MBS_VELOCITIES_TANGENT, &e) : NULL;
        mbs_model *mX = mE ? mixed_copy(mE) : NULL;
        CHECK(mT != NULL && mX != NULL, "random tree plus free bodies: %s", e.msg);
        if (mT && mX) {
            nfast++;
            fast_path(&rng, mE, mT, wf);
            fast_path(&rng, mE, mX, wf);
        }
        mbs_model_free(mX);
        mbs_model_free(mT);
        mbs_model_free(mE);
        mbs_model_free(r);
        free(text);
    }
    CHECK(nfast > NTREES / 2, "trees with tangent joints on the fast path: %d", nfast);
    printf("joint-frame passes on %d trees with tangent joints (tangent and mixed), worst / bound: "
           "FD vs global axes %.3g, M %.3g, h %.3g\n", nfast, wf[0], wf[1], wf[2]);
    if (getenv("MBS_TEST_VERBOSE")) printf("raw fd mapped rel err: %.3g\n", w.raw);
    printf("tangent joints %d; worst / bound: kinematics %.3g, energies %.3g, ID %.3g, M %.3g, "
           "FD %.3g, FD mapped %.3g; rates round trip %.3g\n",
           ntangent, w.kin, w.energy, w.id, w.M, w.fd, w.fdq, w.map);
    CHECK(w.kin <= 1, "kinematics %g", w.kin);
    CHECK(w.energy <= 1, "energies %g", w.energy);
    CHECK(w.id <= 1, "inverse dynamics %g", w.id);
    CHECK(w.M <= 1, "mass matrix %g", w.M);
    CHECK(w.fd <= 1, "forward dynamics %g", w.fd);
    CHECK(w.fdq <= 1, "forward dynamics mapped %g", w.fdq);
    /* the rates round trip: a product by T and T^+ of unit-size blocks (a few ulp) */
    CHECK(w.map <= 64 * MBS_EPS, "rates round trip %g", w.map);
    return mbs_test_summary("test_tangent_map");
}
