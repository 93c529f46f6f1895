/* data.h - the layout of mbs_data (internal). */
#ifndef MBS_DATA_IMPL_H
#define MBS_DATA_IMPL_H

#include <stdint.h>

#include "mbsens/data.h"
#include "mbsens/sparse.h"
#include "base/error.h"
#include "kernels/kernels.h"
#include "model/state.h"

struct mbs_data {
    const mbs_model *model;
    int nv;
    mbs_ws ws;             /* kernel workspace (double) */
    mbs_ws dws;            /* tangents (derivatives), same layout */
    /* Scratch: dx, dbuf, jacs, scratch, the workspaces ws and dws, and the
     * per-call workspaces of con, fdl and idl. No call reads what an earlier public call left
     * there (zeros included: a routine that needs them writes them), so
     * that a result never depends on the calls made before on the data
     * (mbs_data_scribble, scribble.h; tests/test_call_order.c). The one
     * exception is documented in the API: the queries of kinematics.h read
     * the kinematics the last pass left in ws. Within one call the routines
     * share blocks as their comments say (dbuf: src/dynamics/id_derivatives.c, fd_derivatives.c). */
    double *dx;            /* direction in the model vector, nx */
    double *dbuf;          /* 6 nv doubles for directional work */
    double *scratch;       /* nv*nv + 4 nv doubles for dense solves */
    double *xload;         /* user body loads, 15 per body (layout of ws.xfrc) */
    double *qload;         /* user joint loads, nv */
    double *jacs;          /* MBS_COM_SUB (nb + 1): subtree sums and accelerations of
                            * src/dynamics/jacobians.c */
    double time;           /* time at which force elements are evaluated */
    struct mbs_con_ws *con; /* constraints and kinematic problems (kinematic_problems.c) */
    struct mbs_abajf *fdl;   /* joint-frame forward dynamics: constants and workspace
                            * (aba_joint_frames.c) */
    struct mbs_jac1 *idl;   /* fused ID Jacobians for 1-DOF trees (jacobians_1dof.c) */
    struct mbs_dsparse *dsp; /* derivatives in pattern order (dynamics/derivatives_sparse.h) */
    int has_body_load;     /* a user body load is set (cleared by the next clear) */
    int fr_global;         /* mbs_data_set_fr_frames(MBS_FR_GLOBAL) */
    int x_moderate;        /* every number of the model at most 1e15 in magnitude
                            * (mbs_data_kinematics_results, src/kernels/results.c) */
    char err[MBS_ERROR_MSG_LEN];
};

/* Set the data's error message: mbs_data_fail(d, code, fmt, ...) returns code. */
#define mbs_data_fail(d, ...) mbs_fail((d)->err, __VA_ARGS__)
/* Kernel loads for this evaluation: ws.xfrc/qfrc = user loads + force
 * elements (src/forces/) at d->time. Needs velocity-level kinematics in
 * d->ws at (q, qd), which joint elements also read (qd may be NULL). */
void mbs_data_prepare_loads(const mbs_model *m, mbs_data *d, const double *q, const double *qd);

/* mbs_forward_dynamics without the state checks (integrator stages and
 * iterates are slightly off |p| = 1; the completed equations are defined
 * there), always by the global-axes kernels: leaves in d->ws the
 * kinematics, body terms and factors that the derivatives and the
 * formulations read afterwards. Non-finite results are still reported. */
int mbs_fd_in_workspace(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                     const double *qd, const double *tau, double *qdd);

/* The Euler-parameter completion of the forward dynamics
 * (forward_dynamics.c): rhs' = rhs - sum_k P_k (P_k^T rhs + |pd_k|^2) and,
 * if M or tp is given, M' = M + sum_k P_k P_k^T (M dense row-major, both
 * triangles; tp: the lower triangle of M in its tree storage). */
void mbs_fd_euler_completion(const mbs_model *m, const double *q, const double *qd, double *rhs, double *M,
                             const mbs_tree_pattern *tp);

/* The fully recursive forward dynamics of mbs_fd_in_workspace with the
 * velocities v where presc[v] != 0 prescribed (mbs_aba_prescribed):
 * qdd[v] given there, frc[v] the generalized force (M' qdd - Q)_v they
 * need. Leaves the kinematics and body terms in d->ws (the factors are
 * those of the free velocities). */
int mbs_fd_prescribed_in_workspace(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                                   const double *tau, const unsigned char *presc, double *qdd, double *frc);

/* The joint-frame articulated-body forward dynamics (aba_joint_frames.c):
 * set-up at data creation (constants from m->x), and the fast path of
 * mbs_forward_dynamics(MBS_FD_RECURSIVE) when mbs_abajf_usable(d): joints
 * fixed, revolute, prismatic, spherical or floating, no force elements, no
 * user body loads. Leaves nothing in d->ws. Returns 0 or -i (joint i's
 * articulated inertia not positive definite). */
int mbs_abajf_create(mbs_data *d, const mbs_model *m);
void mbs_abajf_free(mbs_data *d);
/* Test hook (mbs_data_scribble): garbage in the per-call workspace. */
void mbs_abajf_scribble(mbs_data *d, uint64_t *s);
int mbs_abajf_usable(const mbs_data *d);
int mbs_abajf_forward_dynamics(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                             const double *tau, double *qdd);

/* The mass matrix and the bias forces in joint frames
 * (crba_joint_frames.c, on the constants and workspace of the joint-frame
 * forward dynamics; leave nothing in d->ws). The mass matrix when
 * mbs_crbajf_usable(d) (every joint has a frame kind): dense row-major
 * (tree 0) or the lower triangle in the tree storage of the model's
 * pattern (tree 1, mbsens/sparse.h), the same numbers; it returns the sum
 * of the lower triangle's entries, finite when they all are (a result
 * check). The bias forces h = ID(q, qd, 0) when mbs_abajf_usable(d) as
 * well; qd not NULL. mbs_crbajf_is_tree_pattern: p is the model's tree
 * pattern (mbs_model_is_tree_pattern, against the copy the data holds). */
int mbs_crbajf_usable(const mbs_data *d);
int mbs_crbajf_is_tree_pattern(const mbs_data *d, const mbs_tree_pattern *p);
double mbs_crbajf_mass_matrix(const mbs_model *m, mbs_data *d, const double *q, int tree, double *M);
void mbs_crbajf_bias_forces(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double *h);
/* The model's tree pattern when the tree factorization of M costs less
 * than an eighth of the dense Cholesky (sum over rows of (ancestors)^2 / 2
 * against nq^3 / 6 multiply-adds), else NULL; for mbs_crbajf_usable(d). */
const mbs_tree_pattern *mbs_crbajf_tree(const mbs_data *d);

/* qdd only, no state checks: the joint-frame path when it applies
 * (alg = MBS_FD_RECURSIVE, mbs_abajf_usable), else mbs_fd_in_workspace; then
 * d->ws holds nothing the caller may read. For callers that want the
 * accelerations alone (the public mbs_forward_dynamics, the ODE
 * integrators). With Euler parameters off |p| = 1 the two paths differ at
 * the order of ||p|^2 - 1|. */
int mbs_fd_accelerations(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q, const double *qd,
               const double *tau, double *qdd);

/* Finite values and normalized Euler parameters (NULL vectors skipped):
 * mbs_state_check with the data's message. */
static inline int mbs_data_check_state(mbs_data *d, const double *q, const double *qd, const double *qdd)
{
    return mbs_state_check(d->model, q, qd, qdd, d->err);
}

#endif
