/*
 * test_call_order.c - a call's result never depends on what was called
 * before on the same mbs_data (docs/api.md, "Call order").
 *
 * Models: every shipped model (models/), the test models that load
 * (tests/models/, tests/urdf/), random trees (every joint type; revolute,
 * prismatic and fixed only, the fast paths; with force elements and
 * parameters of every kind) and random closed loops of every cut type.
 * Calls, each with its own state and its own settings (reference point,
 * frames of the fully recursive FD, time, none or joint or body user
 * loads): every public function that takes an mbs_data (kinematics and
 * every query of it, inverse dynamics, bias forces, mass matrix, forward
 * dynamics with both algorithms, every derivative, parameter derivative
 * and directional derivative with several choices of outputs, the Newton
 * tangents, constraint evaluation, rank and violation, the kinematic
 * problems, a short mbs_simulate with every integrator or loop
 * formulation, the stepper: a reset and steps), the functions that make
 * their own data (mbs_check_derivatives, a short mbs_sensitivity with
 * every method), and the complex-step kernels on a pair of complex
 * workspaces (ID, FD, mass matrix, the all-columns Jacobians, the tangent
 * sweep with force elements, the constraint tangents and their cut cache).
 *
 * Each call is made once on a fresh data (and fresh complex workspaces,
 * and a new integrator): its reference. Then the whole list is called in
 * random seeded orders on ONE data object, ONE pair of complex workspaces
 * and one integrator per variant (reset after other steps), half of the
 * calls after all the scratch was filled with garbage (mbs_data_scribble,
 * src/dynamics/scribble.h; mbs_ws_scribble_cs, mbs_con_cache_scribble_cs;
 * in a simulation also between its steps, from the step callback), and
 * every result (status, outputs, message on failure, statistics) must
 * equal the reference bit for bit.
 * MBS_CALL_ORDER_SEED=N draws other models, states and orders.
 */
#define _POSIX_C_SOURCE 200809L
#define MBS_COMPLEX
#include <complex.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"
#include "mbs_testing.h"

enum { NST = 3 };          /* states per model */
enum { ROUNDS = 2 };       /* random orders of the whole list per model */

/* ------------------------------------------------------------ results */

typedef struct {
    unsigned char *p;
    size_t n, cap;
} blob;

static void put(blob *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = 2 * (b->n + n) + 256;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "out of memory\n"); exit(1); }
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_d(blob *b, const double *v, int n) { put(b, v, sizeof(double) * (size_t)(n > 0 ? n : 0)); }
static void put_i(blob *b, long v) { put(b, &v, sizeof v); }
static void put_c(blob *b, const mreal *v, int n) { put(b, v, sizeof(mreal) * (size_t)(n > 0 ? n : 0)); }

/* the status, and the message when it is a failure */
static void put_rc(blob *b, const char *msg, int rc)
{
    put_i(b, rc);
    if (rc && msg) put(b, msg, strlen(msg) + 1);
}

static void put_stats(blob *b, const mbs_sim_stats *s)
{
    const long l[] = { s->steps, s->outputs, s->iterations, s->iterations_max, s->fevals, s->tangent_evals,
                       s->factorizations, s->error_test_fails, s->projections[0], s->projections[1] };
    const double v[] = { s->iterations_mean, s->energy0, s->energy, s->energy_drift, s->euler_drift,
                         s->violation[0], s->violation[1], s->violation[2] };
    put(b, l, sizeof l);
    put_d(b, v, (int)(sizeof v / sizeof v[0]));
}

/* ------------------------------------------------------------ a model and its inputs */

typedef struct {
    mbs_ws_cs w, dw;
} cs_ws;

typedef struct {
    const mbs_model *m;
    const char *name;
    int nq, np, nx, ncon, nobj, loops;
    double *q[NST], *qd[NST], *qdd[NST], *tau[NST];
    double *dq, *dqd, *dqdd, *drho, *qload;
    double *qa, *qasm, *qdasm;       /* kinematic problems: perturbed, assembled, consistent qd */
    double *out;                     /* the outputs of a call */
    size_t nout;
    blob *sim;                       /* the record of a simulation (its callback) */
    mreal *cx, *cdx, *cq, *cqd, *cqdd, *cdq, *ctau, *cout;
    cs_ws *cw;                       /* the complex workspaces of the present run */
    mbs_integrator *integ[4];        /* the reused data's integrators, one per variant of K_INTEG */
    int scribble_steps;              /* scribble d from the simulation callback */
    uint64_t seed;                   /* of the next scribble */
} ctx;

/* one call: kind, variant, state, settings */
enum {
    K_KIN, K_ID, K_BIAS, K_MASS, K_FD, K_IDD, K_IDP, K_IDDIR, K_FDD, K_FDP, K_FDDIR, K_TAN,
    K_CON, K_ASM, K_VEL, K_ACC, K_SIM, K_INTEG, K_CHECK, K_SENS,
    K_CS_ID, K_CS_FD, K_CS_MASS, K_CS_JAC, K_CS_TAN, K_CS_CON, K_NKINDS
};
static const char *const kind_name[K_NKINDS] = {
    "kinematics+queries", "inverse_dynamics", "bias_forces", "mass_matrix", "forward_dynamics",
    "id_derivatives", "id_param_derivatives", "id_directional", "fd_derivatives", "fd_param_derivatives",
    "fd_directional", "tangent", "constraint_eval+rank+violation", "assemble", "solve_velocity",
    "solve_acceleration", "simulate", "integrator reset+steps", "check_derivatives", "sensitivity", "cs id",
    "cs fd", "cs mass", "cs jacobians", "cs tangent", "cs constraint tangent"
};
static const int kind_variants[K_NKINDS] = {
    1, 1, 1, 1, 2, 4, 1, 2, 8, 2, 2, 2, 1, 1, 1, 1, 4, 4, 1, 5, 1, 1, 1, 1, 1, 1
};

typedef struct {
    int kind, var, st, ref, frames, loads;
    double t;
} op;

static void op_print(const op *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%d (state %d, ref %s, %s frames, t %.3g, loads %d)", kind_name[o->kind], o->var, o->st,
             mbs_ref_point_name((mbs_ref_point)o->ref), o->frames ? "global" : "joint", o->t, o->loads);
}

/* the settings of o on d: everything a call may depend on besides its
 * arguments */
static void apply_settings(const ctx *c, mbs_data *d, const op *o)
{
    mbs_data_set_ref(d, (mbs_ref_point)o->ref);
    mbs_data_set_fr_frames(d, o->frames ? MBS_FR_GLOBAL : MBS_FR_JOINT_FRAMES);
    mbs_data_set_time(d, o->t);
    mbs_data_clear_loads(d);
    if (o->loads == 1) memcpy(mbs_data_joint_load(d), c->qload, sizeof(double) * (size_t)c->nq);
    if (o->loads == 2) {
        const double p[3] = { 0.1, -0.2, 0.3 }, f[3] = { 1, -2, 0.5 }, n[3] = { 0.3, 0.2, -0.1 };
        CHECK(mbs_data_add_body_load(d, 1 + o->st % mbs_model_nbodies(c->m), p, f, n) == MBS_OK, "body load");
    }
}

/* kinematics, then every query of what it left in d */
static void run_kinematics(ctx *c, mbs_data *d, const op *o, blob *b)
{
    const mbs_model *m = c->m;
    const int s = o->st;
    const int rc = mbs_kinematics(m, d, c->q[s], c->qd[s], c->qdd[s]);
    put_rc(b, mbs_data_error(d), rc);
    if (rc) return;
    double v[24];
    const double loc[3] = { 0.1, 0.2, -0.3 };
    for (int i = 0; i <= mbs_model_nbodies(m); i++) {
        mbs_body_pose(d, i, v, v + 9);
        mbs_body_com(d, i, v + 12);
        mbs_body_velocity(d, i, v + 15, v + 18);
        put_d(b, v, 21);
        mbs_body_acceleration(d, i, v, v + 3);
        mbs_body_point(d, i, loc, v + 6, v + 9, v + 12);
        put_d(b, v, 15);
    }
    for (int k = 0; k < mbs_model_npoints(m); k++) {
        mbs_point_kinematics(m, d, k, v, v + 3, v + 6);
        put_d(b, v, 9);
    }
    for (int k = 0; k < mbs_model_nvectors(m); k++) {
        mbs_vector_kinematics(m, d, k, v, v + 3, v + 6);
        put_d(b, v, 9);
    }
    v[0] = mbs_kinetic_energy(m, d);
    v[1] = mbs_potential_energy(m, d);
    v[2] = mbs_elastic_energy(m, d, c->q[s]);
    put_d(b, v, 3);
    for (int k = 0; k < mbs_model_nforces(m); k++) {
        v[0] = mbs_force_length(m, d, k);
        put_d(b, v, 1);
    }
    put_i(b, mbs_forces_degenerate(m, d));
    for (int k = 0; k < mbs_model_noutputs(m); k++) {
        mbs_output out = mbs_model_output(m, k);
        mbs_output_eval(m, d, c->q[s], &out, v);
        put_d(b, v, mbs_output_ncolumns(&out));
    }
}

/* dynamics and its derivatives: the status, every output */
static void run_dynamics(ctx *c, mbs_data *d, const op *o, blob *b)
{
    const mbs_model *m = c->m;
    const int s = o->st, nq = c->nq, np = c->np;
    const size_t n2 = (size_t)nq * nq;
    const double *q = c->q[s], *qd = c->qd[s], *qdd = c->qdd[s], *tau = c->tau[s];
    double *y = c->out, *A = y + nq, *B = A + n2, *C = B + n2, *P = C + n2;
    const mbs_fd_algorithm alg = (mbs_fd_algorithm)(o->var % 2);
    int rc = MBS_OK, len = 0;
    switch (o->kind) {
    case K_ID: rc = mbs_inverse_dynamics(m, d, q, qd, qdd, y); len = nq; break;
    case K_BIAS: rc = mbs_bias_forces(m, d, q, qd, y); len = nq; break;
    case K_MASS: rc = mbs_mass_matrix(m, d, q, y); len = (int)n2; break;
    case K_FD: rc = mbs_forward_dynamics(m, d, alg, q, qd, tau, y); len = nq; break;
    case K_IDD:
        if (o->var == 3) {   /* in pattern order (mbsens/sparse.h) */
            const int nz = mbs_sparsity_nnz(m, MBS_SPARSITY_ID);
            rc = mbs_inverse_dynamics_derivatives_sparse(m, d, q, qd, qdd, y, A, A + nz);
            len = nq + 2 * nz;
            break;
        }
        rc = mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, o->var == 1 ? NULL : y, o->var == 2 ? NULL : A,
                                              o->var == 1 ? NULL : B);
        len = nq + 2 * (int)n2;
        break;
    case K_IDP: rc = mbs_inverse_dynamics_param_derivatives(m, d, q, qd, qdd, y); len = nq * np; break;
    case K_IDDIR:
        rc = mbs_inverse_dynamics_directional(m, d, q, qd, qdd, c->dq, c->dqd, c->dqdd, o->var ? c->drho : NULL, y);
        len = nq;
        break;
    case K_FDD: {
        const int w = o->var / 2;   /* 0: everything; 1: dqdd/dq alone; 2: qdd and dqdd/dtau; 3: sparse */
        if (w == 3) {
            const int nz = mbs_sparsity_nnz(m, MBS_SPARSITY_FD);
            rc = mbs_forward_dynamics_derivatives_sparse(m, d, alg, q, qd, tau, y, A, A + nz, A + 2 * nz);
            len = nq + 3 * nz;
            break;
        }
        rc = mbs_forward_dynamics_derivatives(m, d, alg, q, qd, tau, w == 1 ? NULL : y, w == 2 ? NULL : A,
                                              w ? NULL : B, w == 1 ? NULL : C);
        len = nq + 3 * (int)n2;
        break;
    }
    case K_FDP: rc = mbs_forward_dynamics_param_derivatives(m, d, alg, q, qd, tau, y, A); len = nq + nq * np; break;
    case K_FDDIR:
        rc = mbs_forward_dynamics_directional(m, d, alg, q, qd, tau, c->dq, c->dqd, c->dqdd, c->drho, y, A);
        len = 2 * nq;
        break;
    case K_TAN:
        rc = (o->var ? mbs_tangent_fd : mbs_tangent_analytic)(NULL, m, d, q, qd, qdd, A, B, P);
        len = nq + 2 * (int)n2;
        break;
    }
    put_rc(b, mbs_data_error(d), rc);
    if (!rc) put_d(b, y, len);
}

/* constraint evaluation (every entry point), rank, violation, and the
 * kinematic problems */
static void run_constraints(ctx *c, mbs_data *d, const op *o, blob *b)
{
    const mbs_model *m = c->m;
    const int s = o->st, nq = c->nq, n = c->ncon;
    const double t = o->t;
    double *y = c->out, *Phi = y + 6 * n, *qw = Phi + (size_t)n * nq;
    int rc, rank = -1;
    switch (o->kind) {
    case K_CON:
        rc = mbs_constraint_eval(m, d, c->q[s], c->qd[s], t, y, Phi, y + n, y + 2 * n, y + 3 * n);
        put_rc(b, mbs_data_error(d), rc);
        put_d(b, y, 4 * n);
        put_d(b, Phi, n * nq);
        put_i(b, mbs_constraints(m, d, c->q[s], t, y));
        put_i(b, mbs_constraint_jacobian(m, d, c->q[s], t, Phi));
        put_i(b, mbs_constraint_velocity(m, d, c->q[s], c->qd[s], t, y + n));
        put_i(b, mbs_constraint_velocity_rhs(m, d, c->q[s], t, y + 2 * n));
        put_i(b, mbs_constraint_acceleration_rhs(m, d, c->q[s], c->qd[s], t, y + 3 * n));
        put_d(b, y, 4 * n);
        put_d(b, Phi, n * nq);
        rc = mbs_constraint_rank(m, d, c->q[s], t, &rank);
        put_rc(b, mbs_data_error(d), rc);
        put_i(b, rank);
        rc = mbs_constraint_violation(m, d, t, c->q[s], c->qd[s], c->qdd[s], y);
        put_rc(b, mbs_data_error(d), rc);
        put_d(b, y, 3);
        return;
    case K_ASM: {
        mbs_assembly_report rep = { 0, 0, 0, 0 };
        memcpy(qw, c->qa, sizeof(double) * (size_t)nq);
        rc = mbs_assemble(m, d, qw, t, NULL, &rep);
        put_rc(b, mbs_data_error(d), rc);
        put_d(b, qw, nq);
        const double r2[2] = { rep.step, rep.residual };
        put_i(b, rep.iterations);
        put_i(b, rep.worst_row);
        put_d(b, r2, 2);
        return;
    }
    case K_VEL:
        memcpy(qw, c->qd[s], sizeof(double) * (size_t)nq);
        rc = mbs_solve_velocity(m, d, c->qasm, qw, t, NULL);
        break;
    default:
        memcpy(qw, c->qdd[s], sizeof(double) * (size_t)nq);
        rc = mbs_solve_acceleration(m, d, c->qasm, c->qdasm, qw, t, NULL);
        break;
    }
    put_rc(b, mbs_data_error(d), rc);
    put_d(b, qw, nq);
}

/* the simulation's record of every step, taken through d; then (in the
 * reused data, when asked) garbage in d before the next step */
static int sim_callback(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                        const double *qdd)
{
    ctx *c = user;
    blob *b = c->sim;
    double v[12] = { t, mbs_kinetic_energy(m, d), mbs_potential_energy(m, d), 0 };
    put_d(b, v, 3);
    put_d(b, q, c->nq);
    put_d(b, qd, c->nq);
    put_d(b, qdd, c->nq);
    if (mbs_model_npoints(m) > 0) {
        mbs_point_kinematics(m, d, mbs_model_npoints(m) - 1, v, v + 3, v + 6);
        put_d(b, v, 9);
    }
    if (c->scribble_steps) mbs_data_scribble(d, c->seed++);
    return 0;
}

static const mbs_integrator_type sim_integrator[4] = {
    MBS_INTEGRATOR_TRAPEZOIDAL, MBS_INTEGRATOR_TRAPEZOIDAL, MBS_INTEGRATOR_RK4, MBS_INTEGRATOR_CVODES
};
static const mbs_loop_formulation sim_loop[4] = { MBS_LOOP_ALI3P, MBS_LOOP_MATRIXR, MBS_LOOP_PENALTY, MBS_LOOP_INDEX1 };

/* the model's simulation options, 4 steps, with an integrator (trees) or a
 * loop formulation (closed loops) of its own per variant */
static mbs_sim_options sim_options(const ctx *c, int var, int ref)
{
    mbs_sim_options so = mbs_model_sim_options(c->m);
    so.ref = (mbs_ref_point)ref;
    so.dt = 1e-3;
    so.tf = so.t0 + 4e-3;
    if (c->loops) {
        so.loop = sim_loop[var];
        so.integrator = so.loop == MBS_LOOP_INDEX1 ? MBS_INTEGRATOR_RK4 : MBS_INTEGRATOR_TRAPEZOIDAL;
    } else {
        so.loop = MBS_LOOP_NONE;
        so.integrator = sim_integrator[var];
        so.solver = var == 1 ? MBS_SOLVER_FIXEDPOINT : MBS_SOLVER_NEWTON;
        so.formulation = var == 0 ? MBS_FD_SEMI_RECURSIVE : MBS_FD_RECURSIVE;
        if (var == 0) so.tangent_update = MBS_TANGENT_STEP;   /* a tangent kept across iterations */
    }
    return so;
}

static void run_simulate(ctx *c, mbs_data *d, const op *o, blob *b)
{
    const mbs_sim_options so = sim_options(c, o->var, o->ref);
    mbs_sim_stats st;
    mbs_error err = { 0, "" };
    memset(&st, 0, sizeof st);
    c->sim = b;
    const int rc = mbs_simulate(c->m, d, &so, NULL, NULL, sim_callback, c, &st, &err);
    put_rc(b, err.msg, rc);
    put_stats(b, &st);
}

/* the stepper: a reset to the call's state (trees; closed loops: the
 * model's initial state) and 3 steps, with the reused data's integrator of
 * this variant, else a new one */
static void run_integrator(ctx *c, mbs_data *d, const op *o, blob *b)
{
    const mbs_sim_options so = sim_options(c, o->var, o->ref);
    mbs_error err = { 0, "" };
    mbs_integrator *it = c->integ[o->var], *own = NULL;
    if (!it) it = own = mbs_integrator_create(c->m, d, &so, &err);
    put_rc(b, err.msg, it ? 0 : err.code);
    if (!it) return;
    int rc = mbs_integrator_reset(it, c->loops ? 0 : o->t, c->loops ? NULL : c->q[o->st],
                                  c->loops ? NULL : c->qd[o->st], &err);
    put_rc(b, err.msg, rc);
    for (int k = 0; k < 3 && !rc; k++) {
        rc = mbs_integrator_step(it, so.dt, &err);
        put_rc(b, err.msg, rc);
        const double t = mbs_integrator_time(it);
        put_d(b, &t, 1);
        put_d(b, mbs_integrator_q(it), c->nq);
        put_d(b, mbs_integrator_qd(it), c->nq);
        put_d(b, mbs_integrator_qdd(it), c->nq);
    }
    mbs_sim_stats st;
    mbs_integrator_stats(it, &st);
    put_stats(b, &st);
    mbs_integrator_free(own);
}

/* the functions that make their own data: nothing to leak between calls
 * but global state, which must not exist either */
static void run_own_data(ctx *c, const op *o, blob *b)
{
    mbs_error err = { 0, "" };
    if (o->kind == K_CHECK) {
        mbs_check_report rep;
        memset(&rep, 0, sizeof rep);
        const int rc = mbs_check_derivatives(c->m, 1, 1 + (unsigned long)o->st, (mbs_ref_point)o->ref, NULL, NULL,
                                             &rep, &err);
        put_rc(b, err.msg, rc);
        put_i(b, rep.samples);
        put_d(b, rep.worst, MBS_CHECK_NBLOCKS);
        return;
    }
    mbs_sens_options so = mbs_sens_options_default(c->m);
    so.method = (mbs_sens_method)o->var;
    so.sim.ref = (mbs_ref_point)o->ref;
    so.sim.dt = 1e-3;
    so.sim.tf = so.sim.t0 + 4e-3;
    mbs_sens_result res;
    memset(&res, 0, sizeof res);
    const int rc = mbs_sensitivity(c->m, &so, &res, &err);
    put_rc(b, err.msg, rc);
    if (!rc) {
        put_d(b, res.psi, res.nobj);
        put_d(b, res.grad, res.nobj * res.nparam);
        put_stats(b, &res.stats);
    }
    mbs_sens_result_free(&res);
}

/* ------------------------------------------------------------ complex kernels */

/* primal Newton-Euler in w at the complex state (loads as
 * mbs_data_prepare_loads makes them: force elements only) */
static void cs_primal(ctx *c, mbs_ws_cs *w, const op *o, int level)
{
    const mbs_model *m = c->m;
    mbs_kin_forward_cs(m, c->cx, w, c->cq, c->cqd, c->cqdd, level);
    for (int k = 0; k < 15 * (m->nb + 1); k++) w->xfrc[k] = 0;
    for (int k = 0; k < m->nq; k++) w->qfrc[k] = 0;
    mbs_forces_apply_cs(m, c->cx, w, c->cq, c->cqd, o->t);
    mbs_body_terms_cs(m, c->cx, w);
}

static void run_complex(ctx *c, const op *o, blob *b)
{
    const mbs_model *m = c->m;
    const int nq = c->nq, n = c->ncon, nb = m->nb;
    const size_t n2 = (size_t)nq * nq;
    mbs_ws_cs *w = &c->cw->w, *dw = &c->cw->dw;
    mreal *y = c->cout;
    w->ref = dw->ref = (mbs_ref_point)o->ref;
    for (int k = 0; k < nq; k++) {
        c->cq[k] = c->q[o->st][k] + I * 1e-20 * c->dq[k];
        c->cqd[k] = c->qd[o->st][k] + I * 1e-20 * c->dqd[k];
        c->cqdd[k] = c->qdd[o->st][k];
        c->ctau[k] = c->tau[o->st][k];
    }
    if (o->kind != K_CS_FD) put_i(b, 0);   /* the status: only the articulated-body pass has one */
    switch (o->kind) {
    case K_CS_ID:
        cs_primal(c, w, o, 2);
        mbs_rnea_cs(m, w, y);
        put_c(b, y, nq);
        break;
    case K_CS_FD:
        cs_primal(c, w, o, 1);
        put_i(b, mbs_aba_cs(m, w, c->cq, c->cqd, c->ctau, y));
        put_c(b, y, nq);
        break;
    case K_CS_MASS:
        mbs_kin_forward_cs(m, c->cx, w, c->cq, NULL, NULL, 0);
        mbs_mass_terms_cs(m, c->cx, w);
        mbs_crba_cs(m, w, y);
        put_c(b, y, (int)n2);
        break;
    case K_CS_JAC:
        cs_primal(c, w, o, 2);
        mbs_rnea_cs(m, w, y);
        mbs_rnea_jacobians_cs(m, c->cx, w, c->cq, c->cqd, c->cqdd, 0, y, y + n2, y + 2 * n2);
        put_c(b, y, 3 * (int)n2);
        break;
    case K_CS_TAN:
        cs_primal(c, w, o, 2);
        mbs_rnea_cs(m, w, y);
        mbs_kin_forward_d_cs(m, c->cx, w, c->cdx, dw, c->cq, c->cqd, c->cqdd, c->cdq, c->cdq, c->cdq, 2, 1, nb + 1);
        for (int k = 0; k < 15 * (nb + 1); k++) dw->xfrc[k] = 0;
        for (int k = 0; k < nq; k++) dw->qfrc[k] = 0;
        mbs_forces_apply_d_cs(m, c->cx, w, c->cdx, dw, c->cq, c->cqd, c->cdq, c->cdq, dw->qfrc, o->t);
        mbs_body_terms_d_cs(m, c->cx, w, c->cdx, dw, 1, nb + 1);
        mbs_rnea_d_cs(m, w, dw, dw->qfrc, y, 1, nb + 1);
        put_c(b, y, nq);
        break;
    default:   /* K_CS_CON */
        mbs_kin_forward_cs(m, c->cx, w, c->cq, c->cqd, c->cqdd, 2);
        mbs_kin_forward_d_cs(m, c->cx, w, c->cdx, dw, c->cq, c->cqd, c->cqdd, c->cdq, c->cdq, c->cdq, 2, 1, nb + 1);
        mbs_con_kernel_cs(m, c->cx, w, c->cq, c->cqd, c->cqdd, o->t, y, y + 6 * n, y + n, y + 2 * n, y + 3 * n,
                          y + 4 * n);
        put_c(b, y, 6 * n + n * nq);
        mbs_con_kernel_d_cs(m, c->cx, w, c->cdx, dw, c->cq, c->cqd, c->cqdd, c->cdq, c->cdq, c->cdq, o->t, y,
                            y + 6 * n, y + n, y + 2 * n);
        put_c(b, y, 6 * n + n * nq);
        break;
    }
}

/* ------------------------------------------------------------ the calls */

static void run_op(ctx *c, mbs_data *d, const op *o, blob *b)
{
    memset(c->out, 0, sizeof(double) * c->nout);
    memset(c->cout, 0, sizeof(mreal) * c->nout);
    apply_settings(c, d, o);
    if (o->kind == K_KIN) run_kinematics(c, d, o, b);
    else if (o->kind <= K_TAN) run_dynamics(c, d, o, b);
    else if (o->kind <= K_ACC) run_constraints(c, d, o, b);
    else if (o->kind == K_SIM) run_simulate(c, d, o, b);
    else if (o->kind == K_INTEG) run_integrator(c, d, o, b);
    else if (o->kind <= K_SENS) run_own_data(c, o, b);
    else run_complex(c, o, b);
}

static int applicable(const ctx *c, int kind)
{
    switch (kind) {
    case K_IDP: case K_FDP: return c->np > 0;
    case K_CON: case K_ASM: case K_VEL: case K_ACC: case K_CS_CON: return c->ncon > 0;
    case K_SENS: return c->nobj > 0 && c->np > 0;
    default: return 1;
    }
}

static double *dalloc(size_t n) { return calloc(n + 1, sizeof(double)); }
static mreal *calloc_c(size_t n) { return calloc(n + 1, sizeof(mreal)); }

/* the states, directions and buffers of model m; qc: a closed configuration
 * (random loops) or NULL (the model's initial state) */
static void ctx_init(ctx *c, const mbs_model *m, const char *name, const double *qc, mbs_rng *r)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    c->name = name;
    c->nq = m->nq;
    c->np = m->nparam;
    c->nx = m->nx;
    c->ncon = mbs_model_nconstraints(m);
    c->nobj = mbs_model_nobjectives(m);
    c->loops = mbs_model_nloop_constraints(m) + mbs_model_ndriver_constraints(m) > 0;
    const size_t nq = (size_t)c->nq, n1 = nq + 1, c1 = (size_t)c->ncon + 1, p1 = (size_t)c->np + 1;
    for (int s = 0; s < NST; s++) {
        c->q[s] = dalloc(nq); c->qd[s] = dalloc(nq); c->qdd[s] = dalloc(nq); c->tau[s] = dalloc(nq);
        mbs_test_random_state(r, m, c->q[s], c->qd[s], c->qdd[s]);
        for (size_t k = 0; k < nq; k++) c->tau[s][k] = mbs_rng_uniform(r, -1, 1);
    }
    c->dq = dalloc(nq); c->dqd = dalloc(nq); c->dqdd = dalloc(nq); c->qload = dalloc(nq);
    c->drho = dalloc((size_t)c->np);
    for (size_t k = 0; k < nq; k++) {
        c->dq[k] = mbs_rng_uniform(r, -1, 1);
        c->dqd[k] = mbs_rng_uniform(r, -1, 1);
        c->dqdd[k] = mbs_rng_uniform(r, -1, 1);
        c->qload[k] = mbs_rng_uniform(r, -1, 1);
    }
    for (int k = 0; k < c->np; k++) c->drho[k] = mbs_rng_uniform(r, -1, 1);
    /* the kinematic problems: near a closed configuration, and its solutions */
    c->qa = dalloc(nq); c->qasm = dalloc(nq); c->qdasm = dalloc(nq);
    if (qc) memcpy(c->qa, qc, sizeof(double) * nq);
    else mbs_model_initial_state(m, c->qa, c->qdasm);
    for (size_t k = 0; k < nq; k++) c->qa[k] += mbs_rng_uniform(r, -1e-2, 1e-2);
    mbs_normalize_state(m, c->qa, NULL);
    memcpy(c->qasm, c->qa, sizeof(double) * nq);
    memcpy(c->qdasm, c->qd[0], sizeof(double) * nq);
    mbs_data *d = mbs_data_create(m, NULL);
    if (d && c->ncon > 0 && mbs_assemble(m, d, c->qasm, 0, NULL, NULL) == MBS_OK)
        mbs_solve_velocity(m, d, c->qasm, c->qdasm, 0, NULL);
    mbs_data_free(d);
    c->nout = 4 * n1 * n1 + n1 * p1 + c1 * n1 + 8 * c1 + 16 * n1 + 64;
    c->out = dalloc(c->nout);
    /* complex: a state direction and a direction of every model number */
    c->cout = calloc_c(c->nout);
    c->cx = calloc_c((size_t)c->nx); c->cdx = calloc_c((size_t)c->nx);
    for (int k = 0; k < c->nx; k++) {
        c->cx[k] = m->x[k] + I * 1e-20 * mbs_rng_uniform(r, -1, 1);
        c->cdx[k] = mbs_rng_uniform(r, -1, 1);
    }
    c->cq = calloc_c(nq); c->cqd = calloc_c(nq); c->cqdd = calloc_c(nq); c->ctau = calloc_c(nq);
    c->cdq = calloc_c(nq);
    for (size_t k = 0; k < nq; k++) c->cdq[k] = c->dq[k];
}

static void ctx_free(ctx *c)
{
    for (int s = 0; s < NST; s++) { free(c->q[s]); free(c->qd[s]); free(c->qdd[s]); free(c->tau[s]); }
    free(c->dq); free(c->dqd); free(c->dqdd); free(c->qload); free(c->drho);
    free(c->qa); free(c->qasm); free(c->qdasm); free(c->out);
    free(c->cout); free(c->cx); free(c->cdx); free(c->cq); free(c->cqd); free(c->cqdd); free(c->ctau);
    free(c->cdq);
}

static int cs_init(cs_ws *w, const mbs_model *m)
{
    if (mbs_ws_init_cs(&w->w, m) != 0 || mbs_ws_init_cs(&w->dw, m) != 0) return -1;
    /* the cut caches, as the workspaces of an mbs_data have them */
    return mbs_con_cache_attach_cs(&w->w, m) == 0 && mbs_con_cache_attach_cs(&w->dw, m) == 0 ? 0 : -1;
}

static void cs_free(cs_ws *w)
{
    mbs_ws_free_cs(&w->w);
    mbs_ws_free_cs(&w->dw);
}

/* ------------------------------------------------------------ one model */

static long ncalls, nscribbled;
static long nref[K_NKINDS][2];   /* reference calls per kind: succeeded, failed */

/* the list of calls of model c: every kind and variant that applies, each
 * twice with its own state and settings (the whole-run calls once) */
static int make_ops(const ctx *c, mbs_rng *r, op *ops)
{
    int n = 0;
    for (int k = 0; k < K_NKINDS; k++) {
        if (!applicable(c, k)) continue;
        const int reps = k == K_CHECK || k == K_SIM || k == K_SENS ? 1 : 2;
        for (int v = 0; v < kind_variants[k]; v++)
            for (int rep = 0; rep < reps; rep++) {
                op *o = &ops[n++];
                o->kind = k;
                o->var = v;
                o->st = mbs_rng_int(r, NST);
                o->ref = mbs_rng_int(r, 3);
                o->frames = mbs_rng_int(r, 2);
                o->loads = mbs_rng_int(r, 3);
                o->t = mbs_rng_uniform(r, 0, 1);
                if (k == K_INTEG) o->ref = v % 3;   /* the integrator's, set at its creation */
            }
    }
    return n;
}

/* ops in random orders on one data (and one pair of complex workspaces),
 * half of them after garbage, each against its reference */
static void replay(ctx *c, mbs_rng *r, const op *ops, int n, blob *ref)
{
    mbs_data *d = mbs_data_create(c->m, NULL);
    cs_ws cw;
    const int ok = d && cs_init(&cw, c->m) == 0;
    CHECK(ok, "%s: data", c->name);
    if (!ok) return;
    c->cw = &cw;
    for (int v = 0; v < 4; v++) {
        const mbs_sim_options so = sim_options(c, v, v % 3);
        c->integ[v] = mbs_integrator_create(c->m, d, &so, NULL);
    }
    int *order = calloc((size_t)n, sizeof(int)), prev = -1;
    blob b = { NULL, 0, 0 };
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < n; k++) order[k] = k;
        for (int k = n - 1; k > 0; k--) {
            const int j = mbs_rng_int(r, k + 1), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < n; k++) {
            const op *o = &ops[order[k]];
            const int scribble = mbs_rng_int(r, 2);
            if (scribble) {
                mbs_data_scribble(d, c->seed);
                uint64_t s = c->seed++ | 1;
                mbs_ws_scribble_cs(&cw.w, c->m, 0, &s);
                mbs_ws_scribble_cs(&cw.dw, c->m, 1, &s);
                mbs_con_cache_scribble_cs(&cw.w, c->m, &s);
                mbs_con_cache_scribble_cs(&cw.dw, c->m, &s);
                nscribbled++;
            }
            c->scribble_steps = o->kind == K_SIM && mbs_rng_int(r, 2);
            b.n = 0;
            run_op(c, d, o, &b);
            ncalls++;
            const blob *e = &ref[order[k]];
            size_t at = 0;
            while (at < b.n && at < e->n && b.p[at] == e->p[at]) at++;
            char what[160], before[160] = "nothing";
            op_print(o, what, sizeof what);
            if (prev >= 0) op_print(&ops[prev], before, sizeof before);
            CHECK(b.n == e->n && at == b.n,
                  "%s: %s differs from a fresh data's (byte %zu of %zu/%zu) after %s%s%s", c->name, what, at, b.n,
                  e->n, before, scribble ? ", scribbled" : "", c->scribble_steps ? ", scribbled steps" : "");
            prev = order[k];
        }
    }
    for (int v = 0; v < 4; v++) {
        mbs_integrator_free(c->integ[v]);
        c->integ[v] = NULL;
    }
    free(b.p);
    free(order);
    cs_free(&cw);
    mbs_data_free(d);
}

static void test_model(const mbs_model *m, const char *name, const double *qc, mbs_rng *r)
{
    ctx c;
    ctx_init(&c, m, name, qc, r);
    c.seed = (uint64_t)mbs_rng_int(r, 1 << 30) + 1;
    int most = 0;
    for (int k = 0; k < K_NKINDS; k++) most += 2 * kind_variants[k];
    op *ops = calloc((size_t)most, sizeof *ops);
    const int n = make_ops(&c, r, ops);
    /* every call on a fresh data and fresh complex workspaces */
    blob *ref = calloc((size_t)n, sizeof *ref);
    for (int k = 0; k < n; k++) {
        mbs_data *d = mbs_data_create(m, NULL);
        cs_ws cw;
        const int ok = d && cs_init(&cw, m) == 0;
        CHECK(ok, "%s: data", name);
        if (!ok) {
            mbs_data_free(d);
            break;
        }
        c.cw = &cw;
        run_op(&c, d, &ops[k], &ref[k]);
        long rc = 0;
        memcpy(&rc, ref[k].p, sizeof rc);
        nref[ops[k].kind][rc != 0]++;
        cs_free(&cw);
        mbs_data_free(d);
    }
    replay(&c, r, ops, n, ref);
    for (int k = 0; k < n; k++) free(ref[k].p);
    free(ref);
    free(ops);
    ctx_free(&c);
}

/* ------------------------------------------------------------ the models */

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* every file of dir (relative to the source tree) ending in ext that loads;
 * must: every one must load */
static void test_dir(const char *dir, const char *ext, int must, mbs_rng *r)
{
    char path[1024], *names[256];
    int n = 0;
    DIR *dp = opendir(mbs_test_path(dir));
    CHECK(dp != NULL, "%s: cannot open", dir);
    if (!dp) return;
    for (struct dirent *e; (e = readdir(dp)) != NULL && n < 256;) {
        const size_t l = strlen(e->d_name), le = strlen(ext);
        if (l > le && !strcmp(e->d_name + l - le, ext)) names[n++] = strdup(e->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        mbs_error err = { 0, "" };
        mbs_model *m = mbs_model_load(mbs_test_path(path), &err);
        if (must) CHECK(m != NULL, "%s: %s", path, err.msg);
        if (m) test_model(m, path, NULL, r);
        mbs_model_free(m);
        free(names[k]);
    }
}

/* random trees: every joint type; revolute, prismatic and fixed only (the
 * fast paths); with force elements and parameters of every kind */
static void test_random_trees(mbs_rng *r)
{
    const unsigned rigid = (1u << MBS_JOINT_REVOLUTE) | (1u << MBS_JOINT_PRISMATIC) | (1u << MBS_JOINT_FIXED);
    char name[64];
    for (int it = 0; it < 6; it++) {
        mbs_model *m;
        double *qc = NULL;
        if (it < 4) {
            m = mbs_test_random_tree_p(r, 2 + it, it % 2 ? rigid : 0, 1);
        } else {
            mbs_test_loops_options o = { 0, 1, 1, 1.0, 0 };
            m = mbs_test_random_loops_ex(r, 3 + it, 0, NULL, &o, &qc);
        }
        snprintf(name, sizeof name, "random tree %d", it);
        CHECK(m != NULL, "%s", name);
        if (m) test_model(m, name, NULL, r);
        mbs_model_free(m);
        free(qc);
    }
}

/* random closed loops: two cuts of every type in turn, drivers and force
 * elements on every other, closed at the initial state with a choice of
 * fixed coordinates (so that they assemble and simulate) */
static void test_random_loops(mbs_rng *r)
{
    char name[64];
    for (int it = 0; it < 4; it++) {
        int types[2] = { (2 * it + 1) % MBS_JOINT_TYPE_COUNT, (2 * it + 2) % MBS_JOINT_TYPE_COUNT };
        mbs_test_loops_options o = { it % 2, 1, (it + 1) % 2, 1.0, 1 };
        double *qc = NULL;
        mbs_model *m = mbs_test_random_loops_ex(r, 3 + it, 1 + it % 2, types, &o, &qc);
        snprintf(name, sizeof name, "random loops %d", it);
        CHECK(m != NULL, "%s", name);
        if (m) test_model(m, name, qc, r);
        mbs_model_free(m);
        free(qc);
    }
}

int main(void)
{
    mbs_rng r;
    const char *env = getenv("MBS_CALL_ORDER_SEED");   /* other orders and states, for exploration */
    mbs_rng_seed(&r, env ? strtoull(env, NULL, 10) : 14);
    test_dir("models", ".json", 1, &r);
    test_dir("tests/models", ".json", 0, &r);
    test_dir("tests/urdf", ".urdf", 0, &r);
    test_random_trees(&r);
    test_random_loops(&r);
    printf("test_call_order: %ld calls compared with a fresh data's, %ld after garbage\n", ncalls, nscribbled);
    for (int k = 0; k < K_NKINDS; k++) {
        printf("  %-32s %4ld succeeded, %3ld failed (on a fresh data too)\n", kind_name[k], nref[k][0], nref[k][1]);
        CHECK(nref[k][0] > 0, "%s never succeeded: the comparison would be of failures only", kind_name[k]);
    }
    return mbs_test_summary("test_call_order");
}
