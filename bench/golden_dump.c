/*
 * golden_dump.c - every result of the core calls, printed exactly, for the
 * bit-for-bit comparison of two builds (scripts/golden.sh). A program, not
 * a test: it asserts nothing; two runs are compared with diff.
 *
 *   golden_dump [MODEL...]
 *
 * For each model file given, then for seeded random trees (every joint
 * type, with parameters of every kind) and seeded random closed loops
 * (every cut type, with drivers and force elements), at seeded states:
 * kinematics of every body, point and vector, the energies, inverse
 * dynamics, bias forces, the mass matrix, forward dynamics by each path
 * (semi-recursive; articulated body in joint frames; in global axes,
 * forced by a body load), the derivatives of inverse and forward dynamics
 * (state, parameters, directional) with the fused 1-DOF pass with and
 * without its AVX2 version, and for closed loops the constraint terms and
 * the kinematic problems. Every number is printed with %a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "random_loops.h"
#include "random_model.h"

/* the switch of the fused 1-DOF pass's AVX2 version (internal) */
int mbs_jac1_set_avx2(mbs_data *d, int on);

static void put(const char *what, const double *v, size_t n)
{
    printf("%s", what);
    for (size_t k = 0; k < n; k++) printf(" %a", v[k]);
    printf("\n");
}

static void put_rc(const char *what, int rc, const mbs_data *d)
{
    if (rc != MBS_OK) printf("%s rc %d: %s\n", what, rc, mbs_data_error(d));
}

typedef struct buf {
    double *q, *qd, *qdd, *tau, *out, *A, *B, *C, *P, *dir, *drho;
} buf;

static int buf_alloc(buf *b, size_t nq, size_t np, size_t nc)
{
    size_t big = (nq + nc + 1) * (nq + np + 1);
    double **all[] = {&b->q, &b->qd, &b->qdd, &b->tau, &b->out, &b->dir, &b->drho};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        if (!(*all[k] = calloc(nq + np + nc + 1, sizeof(double)))) return 0;
    b->A = calloc(big, sizeof(double));
    b->B = calloc(big, sizeof(double));
    b->C = calloc(big, sizeof(double));
    b->P = calloc(big, sizeof(double));
    return b->A && b->B && b->C && b->P;
}

static void buf_free(buf *b)
{
    free(b->q), free(b->qd), free(b->qdd), free(b->tau), free(b->out);
    free(b->A), free(b->B), free(b->C), free(b->P), free(b->dir), free(b->drho);
}

static void dump_kinematics(const mbs_model *m, mbs_data *d, const buf *b)
{
    put_rc("kinematics", mbs_kinematics(m, d, b->q, b->qd, b->qdd), d);
    for (int k = 0; k < mbs_model_nbodies(m); k++) {
        double v[27];
        mbs_body_pose(d, k + 1, v, v + 9);
        mbs_body_com(d, k + 1, v + 12);
        mbs_body_velocity(d, k + 1, v + 15, v + 18);
        mbs_body_acceleration(d, k + 1, v + 21, v + 24);
        put("body", v, 27);
    }
    for (int k = 0; k < mbs_model_npoints(m); k++) {
        double v[9];
        mbs_point_kinematics(m, d, k, v, v + 3, v + 6);
        put("point", v, 9);
    }
    for (int k = 0; k < mbs_model_nvectors(m); k++) {
        double v[9];
        mbs_vector_kinematics(m, d, k, v, v + 3, v + 6);
        put("vector", v, 9);
    }
    double e[2] = {mbs_kinetic_energy(m, d), mbs_potential_energy(m, d)};
    put("energies", e, 2);
}

static void dump_dynamics(const mbs_model *m, mbs_data *d, const buf *b)
{
    const size_t nq = (size_t)mbs_model_nq(m);
    put_rc("id", mbs_inverse_dynamics(m, d, b->q, b->qd, b->qdd, b->out), d);
    put("id", b->out, nq);
    put_rc("bias", mbs_bias_forces(m, d, b->q, b->qd, b->out), d);
    put("bias", b->out, nq);
    put_rc("mass", mbs_mass_matrix(m, d, b->q, b->A), d);
    put("mass", b->A, nq * nq);
    for (int alg = 0; alg < 2; alg++) {
        put_rc("fd", mbs_forward_dynamics(m, d, (mbs_fd_algorithm)alg, b->q, b->qd, b->tau, b->out), d);
        put(mbs_fd_algorithm_name((mbs_fd_algorithm)alg), b->out, nq);
    }
    /* a body load takes the articulated-body algorithm off the joint-frame path */
    const double pt[3] = {0.01, -0.02, 0.03}, f[3] = {0.5, -0.25, 0.125}, mo[3] = {-0.1, 0.2, 0.3};
    if (mbs_model_nbodies(m) > 0) {
        put_rc("load", mbs_data_add_body_load(d, mbs_model_nbodies(m), pt, f, mo), d);
        put_rc("fd", mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, b->q, b->qd, b->tau, b->out), d);
        put("fr_load", b->out, nq);
        mbs_data_clear_loads(d);
    }
}

static void dump_derivatives(const mbs_model *m, mbs_data *d, const buf *b)
{
    const size_t nq = (size_t)mbs_model_nq(m), np = (size_t)mbs_model_nparams(m);
    for (int avx = 1; avx >= 0; avx--) {
        mbs_jac1_set_avx2(d, avx);
        put_rc("did", mbs_inverse_dynamics_derivatives(m, d, b->q, b->qd, b->qdd, b->out, b->A, b->B), d);
        put("tau", b->out, nq);
        put("dtau_dq", b->A, nq * nq);
        put("dtau_dqd", b->B, nq * nq);
        for (int alg = 0; alg < 2; alg++) {
            put_rc("dfd", mbs_forward_dynamics_derivatives(m, d, (mbs_fd_algorithm)alg, b->q, b->qd, b->tau,
                                                           b->out, b->A, b->B, b->C), d);
            put("qdd", b->out, nq);
            put("dqdd_dq", b->A, nq * nq);
            put("dqdd_dqd", b->B, nq * nq);
            put("dqdd_dtau", b->C, nq * nq);
        }
    }
    mbs_jac1_set_avx2(d, 1);
    if (np > 0) {
        put_rc("didp", mbs_inverse_dynamics_param_derivatives(m, d, b->q, b->qd, b->qdd, b->P), d);
        put("dtau_drho", b->P, nq * np);
        for (int alg = 0; alg < 2; alg++) {
            put_rc("dfdp", mbs_forward_dynamics_param_derivatives(m, d, (mbs_fd_algorithm)alg, b->q, b->qd,
                                                                   b->tau, b->out, b->P), d);
            put("dqdd_drho", b->P, nq * np);
        }
    }
    put_rc("iddir", mbs_inverse_dynamics_directional(m, d, b->q, b->qd, b->qdd, b->dir, b->dir, b->dir,
                                                     np ? b->drho : NULL, b->out), d);
    put("iddir", b->out, nq);
    for (int alg = 0; alg < 2; alg++) {
        put_rc("fddir", mbs_forward_dynamics_directional(m, d, (mbs_fd_algorithm)alg, b->q, b->qd, b->tau, b->dir,
                                                         b->dir, b->dir, np ? b->drho : NULL, b->C, b->out), d);
        put("fddir", b->out, nq);
    }
}

static void dump_constraints(const mbs_model *m, mbs_data *d, buf *b)
{
    const size_t nq = (size_t)mbs_model_nq(m), nc = (size_t)mbs_model_nconstraints(m);
    if (nc == 0) return;
    const double t = 0.125;
    put_rc("ceval", mbs_constraint_eval(m, d, b->q, b->qd, t, b->out, b->A, b->B, b->C, b->P), d);
    put("phi", b->out, nc);
    put("Phi_q", b->A, nc * nq);
    put("phid", b->B, nc);
    put("b", b->C, nc);
    put("c", b->P, nc);
    mbs_assembly_report rep;
    memset(&rep, 0, sizeof rep);
    put_rc("assemble", mbs_assemble(m, d, b->q, t, NULL, &rep), d);
    printf("assemble %d %a %a %d\n", rep.iterations, rep.step, rep.residual, rep.worst_row);
    put("q", b->q, nq);
    put_rc("velocity", mbs_solve_velocity(m, d, b->q, b->qd, t, NULL), d);
    put("qd", b->qd, nq);
    put_rc("acceleration", mbs_solve_acceleration(m, d, b->q, b->qd, b->qdd, t, NULL), d);
    put("qdd", b->qdd, nq);
}

/* the state: seeded, Euler parameters normalized */
static void state(const mbs_model *m, unsigned seed, buf *b)
{
    const int nq = mbs_model_nq(m), np = mbs_model_nparams(m);
    unsigned s = seed;
    for (int k = 0; k < nq + np; k++) {
        double u[5];
        for (int j = 0; j < 5; j++) {
            s = s * 1103515245u + 12345u;
            u[j] = (double)(s >> 8) / 16777216.0 * 2 - 1;
        }
        if (k < nq) b->q[k] = u[0], b->qd[k] = u[1], b->qdd[k] = u[2], b->tau[k] = u[3], b->dir[k] = u[4];
        else b->drho[k - nq] = u[0];
    }
    mbs_normalize_state(m, b->q, b->qd);
}

static int dump(const char *name, const mbs_model *m)
{
    printf("== %s nq %d\n", name, mbs_model_nq(m));
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    buf b;
    memset(&b, 0, sizeof b);
    int ok = d && buf_alloc(&b, (size_t)mbs_model_nq(m), (size_t)mbs_model_nparams(m),
                            (size_t)mbs_model_nconstraints(m));
    if (!ok) {
        printf("data: %s\n", d ? "out of memory" : err.msg);
    } else {
        for (unsigned seed = 1; seed <= 2; seed++) {
            for (int ref = 0; ref < 3; ref++) {
                mbs_data_set_ref(d, (mbs_ref_point)ref);
                printf("-- seed %u ref %s\n", seed, mbs_ref_point_name((mbs_ref_point)ref));
                state(m, seed, &b);
                dump_kinematics(m, d, &b);
                dump_dynamics(m, d, &b);
                dump_derivatives(m, d, &b);
                dump_constraints(m, d, &b);
            }
        }
    }
    buf_free(&b);
    mbs_data_free(d);
    return ok;
}

int main(int argc, char **argv)
{
    int ok = 1;
    for (int k = 1; k < argc; k++) {
        mbs_error err;
        mbs_model *m = mbs_model_load(argv[k], &err);
        if (!m) {
            printf("== %s: %s\n", argv[k], err.msg);
            continue;
        }
        ok &= dump(argv[k], m);
        mbs_model_free(m);
    }
    mbs_rng r;
    mbs_rng_seed(&r, 20261127);
    for (int k = 0; k < 6; k++) {
        char name[64];
        mbs_model *m = mbs_test_random_tree_p(&r, 2 + 2 * k, 0, 1);
        snprintf(name, sizeof name, "random tree %d", k);
        if (m) ok &= dump(name, m);
        mbs_model_free(m);
    }
    for (int k = 0; k < MBS_JOINT_TYPE_COUNT; k++) {
        char name[64];
        int cut = k == MBS_JOINT_FIXED ? MBS_JOINT_REVOLUTE : k;
        double *qc = NULL;
        mbs_test_loops_options o = {.drivers = k % 2, .q0 = 1, .elements = 1, .horizon = 1, .fixed = 0};
        mbs_model *m = mbs_test_random_loops_ex(&r, 3 + k % 3, 1, &cut, &o, &qc);
        snprintf(name, sizeof name, "random loop %d", k);
        if (m) ok &= dump(name, m);
        mbs_model_free(m);
        free(qc);
    }
    return ok ? 0 : 1;
}
