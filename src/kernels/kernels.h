/*
 * kernels.h - the computational kernels and their workspace (internal).
 *
 * Included once per scalar build (see scalar.h): every name goes through
 * MBS_K(), so the double and complex kernels coexist in the test binaries.
 * Per-body arrays have nb+1 entries (0 = ground) with a fixed stride.
 *
 * Notation follows docs/formulations.md (thesis Ch. 2):
 *   r_i    reference point of body i (CoM, global origin, or joint point)
 *   V_i    = [v; w]: material velocity of the body point at r_i, angular velocity
 *   Vd_i   = [a; alpha]: material acceleration of that point, angular acceleration
 *   a_i    = r_h - r_i (h = parent): V_i = B_i V_h + b_i qd_i, B_i = [I, S(a_i); 0, I]
 *   b_i    6 x nq_i joint map at r_i;  bd_i its material time derivative
 *   d_i    = Bd_i V_h + bd_i qd_i:  Vd_i = B_i Vd_h + b_i qdd_i + d_i
 */
#ifdef MBS_COMPLEX
#ifndef MBS_KERNELS_H_CS
#define MBS_KERNELS_H_CS
#define MBS_KERNELS_BODY
#endif
#else
#ifndef MBS_KERNELS_H_D
#define MBS_KERNELS_H_D
#define MBS_KERNELS_BODY
#endif
#endif

#ifdef MBS_KERNELS_BODY
#undef MBS_KERNELS_BODY

#include <stddef.h>
#include <stdint.h>

#include "base/scalar.h"
#include "model/model_impl.h"

#define MBS_BSTRIDE 42   /* 6 x 7: largest joint map */

typedef struct MBS_K(mbs_ws) {
    int nb, nv;
    mbs_ref_point ref;
    /* position level */
    mreal *A;      /* 9: rotation local -> global */
    mreal *o;      /* 3: body frame origin */
    mreal *rG;     /* 3: centre of mass */
    mreal *r;      /* 3: reference point */
    mreal *rj;     /* 3: child joint point */
    mreal *AhJ;    /* 9: A_parent X_p (parent joint frame, global) */
    mreal *a;      /* 3: r_parent - r_i */
    mreal *b;      /* 42: joint map at r_i */
    mreal *J;      /* 9: inertia about the CoM, global axes */
    mreal *th;     /* 4, tangent workspaces only: the rotation tangent th with
                    * dA = [th]x A, and 1 where that form holds (else 0) */
    /* velocity level */
    mreal *V;      /* 6 */
    mreal *ad;     /* 3: d/dt of a (material velocities) */
    mreal *bd;     /* 42 */
    mreal *dv;     /* 6: d_i */
    /* acceleration level */
    mreal *Vd;     /* 6 */
    /* dynamics */
    mreal *Mv;     /* 36: body inertia at r_i */
    mreal *Qv;     /* 6: body force at r_i */
    mreal *F;      /* 6: accumulated wrench at r_i */
    mreal *MS;     /* 36: composite (or articulated) inertia at r_i */
    mreal *U;      /* 42: MS b (6 x nq_i) */
    mreal *Ninv;   /* 49: inverse of b^T MS b (+ Euler completion) */
    mreal *u;      /* 7 per body: joint-space force residuals */
    /* applied loads */
    mreal *xfrc;   /* 15: applied loads: force f (global), torque n (global),
                    * and P = sum_k pbar_k f_k^T (3x3 row-major, local point times
                    * global force), so that the moment of point forces about the
                    * CoM is eps(A P) - (A c) x f, whatever the pose */
    mreal *qfrc;   /* nv: generalized forces (velocity indices) */
    mreal *jac;    /* mbs_jac_size(m): scratch of mbs_rnea_jacobians */
    int *vpar;     /* nv: parent velocity in the tree sparsity of M (the
                    * previous velocity of the joint, else the last one of
                    * the nearest ancestor joint with velocities), -1: none */
    /* Per-state quantities of the constraint tangents (one entry per cut:
     * the entities, G(e), G(0), G(ed) and their non-zero entries), shared
     * by every tangent direction at the same primal state. Each entry holds
     * the bits of the inputs it comes from and is reused only when
     * they equal the present ones (constraint_kernel_d.c): it cannot be
     * stale. Written through the const workspace of mbs_con_kernel_d;
     * NULL: computed per call. Attached by the constraint workspace
     * (mbs_con_cache_attach, constraints/constraint.h); freed with the
     * workspace. */
    struct MBS_K(mbs_con_cache) *ccache;
} MBS_K(mbs_ws);

/* Allocate / free a workspace for model m (the only allocation). */
int MBS_K(mbs_ws_init)(MBS_K(mbs_ws) *w, const mbs_model *m);
/* The same without the Jacobian scratch (w->jac, which holds nv^2 numbers):
 * for the kinematics (mbs_kin_forward) and nothing that needs w->jac. */
int MBS_K(mbs_ws_init_kinematics)(MBS_K(mbs_ws) *w, const mbs_model *m);
void MBS_K(mbs_ws_free)(MBS_K(mbs_ws) *w);

/* Test hooks (tests/test_call_order.c): garbage in everything that no
 * computation may read before it writes it, so that one that does gives a
 * different result than on a fresh workspace.
 *   mbs_scribble_bytes: n bytes of xorshift64* output from the state *s;
 *   mbs_ws_scribble: every array of w but the constants (nb, nv, ref,
 *     vpar, and, unless ground, the ground's entries: its pose is read as
 *     the parent of the first bodies); the cut cache is scribbled by
 *     mbs_con_cache_scribble (constraints/constraint.h). */
void MBS_K(mbs_scribble_bytes)(void *p, size_t n, uint64_t *s);
void MBS_K(mbs_ws_scribble)(MBS_K(mbs_ws) *w, const mbs_model *m, int ground, uint64_t *s);
/* Zero the kinematic arrays (positions to accelerations) of a tangent
 * workspace: the state of a direction that moves no kinematic quantity. */
void MBS_K(mbs_ws_zero_kinematics)(MBS_K(mbs_ws) *w);

/* Forward kinematics. x is the model vector (m->x or a copy of it in the
 * kernel's scalar type). level 0: positions; 1: + velocities (qd);
 * 2: + accelerations (qdd). qd/qdd may be NULL for zero. */
void MBS_K(mbs_kin_forward)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                            const mreal *q, const mreal *qd, const mreal *qdd, int level);

/* Tangent of mbs_kin_forward along (dq, dqd, dqdd, dx), into dw; w must
 * hold the primal at (q, qd, qdd). Bodies first..last-1 only; parents
 * before `first` count as fixed. See kinematics_derivatives.c. dw->th
 * flags the bodies whose tangent is a rotation tangent dA = [th]x A; for
 * those with revolute and prismatic joints dw->AhJ is not written (no
 * consumer reads it). */
void MBS_K(mbs_kin_forward_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                              const mreal *dx, MBS_K(mbs_ws) *dw,
                              const mreal *q, const mreal *qd, const mreal *qdd,
                              const mreal *dq, const mreal *dqd, const mreal *dqdd,
                              int level, int first, int last);
/* The same from level `from` on (0: all): the tangents of the levels below
 * are those left in dw by a sweep along the same (dq, dx) (and dqd, for
 * from = 2) at the same primal; the velocity (from = 1) or acceleration
 * (from = 2) levels of a new dqd, dqdd are redone over them. */
void MBS_K(mbs_kin_forward_d_from)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                   const mreal *dx, MBS_K(mbs_ws) *dw,
                                   const mreal *q, const mreal *qd, const mreal *qdd,
                                   const mreal *dq, const mreal *dqd, const mreal *dqdd,
                                   int level, int from, int first, int last);

/* Velocity and acceleration levels over positions already in w (a level-0
 * mbs_kin_forward at the same q): afterwards w holds exactly what
 * mbs_kin_forward(q, qd, qdd, 2) leaves. For callers that evaluate at the
 * positions first and learn the velocities later (the closed-loop steppers
 * project them). qd/qdd may be NULL for zero. */
void MBS_K(mbs_kin_velocities)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd,
                               const mreal *qdd);

/* Acceleration pass only (velocity level already done). */
void MBS_K(mbs_kin_accelerations)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *qdd);

/* Body inertia Mv and force Qv at the reference point (gravity, applied
 * loads, gyroscopic terms). Needs velocity-level kinematics. */
void MBS_K(mbs_body_terms)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w);

/* Only M^v (positions suffice); for the mass matrix. */
void MBS_K(mbs_mass_terms)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w);

/* Recursive Newton-Euler: tau = M qdd - Q. Needs level-2 kinematics and
 * body terms. */
void MBS_K(mbs_rnea)(const mbs_model *m, MBS_K(mbs_ws) *w, mreal *tau);

/* Tangents of body terms and of the Newton-Euler recursion (see
 * body_terms_derivatives.c, inverse_dynamics_derivatives.c). */
void MBS_K(mbs_body_terms_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                             const mreal *dx, MBS_K(mbs_ws) *dw, int first, int last);
void MBS_K(mbs_rnea_d)(const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw,
                       const mreal *dqfrc, mreal *dtau, int first, int last);
/* mbs_rnea_d writing (and reading dqfrc at) only the entries of the
 * bodies first..last-1 and of the joints on the path to the root: the
 * others of dtau are left as they are (O(range + depth), not O(nv)). */
void MBS_K(mbs_rnea_d_range)(const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw,
                             const mreal *dqfrc, mreal *dtau, int first, int last);

/* All columns of dtau/dq and dtau/dqd (nv x nv, row-major; either may be
 * NULL) in O(n depth), from a completed mbs_rnea in w at (q, qd, qdd) (any
 * reference point; loads in w->xfrc constant, as user loads are). The
 * Euler-parameter columns k = e + a of dtau/dq receive only the part along
 * the tangent direction e_a - p_a p (exact for |p| = 1): the caller adds
 * p_a (dtau/dq) p; with skip_euler they are left at zero. M (may be NULL)
 * receives the mass matrix, as mbs_crba would. Uses w->jac. See
 * inverse_dynamics_jacobians.c. */
size_t MBS_K(mbs_jac_size)(const mbs_model *m);
void MBS_K(mbs_rnea_jacobians)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                               const mreal *q, const mreal *qd, const mreal *qdd, int skip_euler,
                               mreal *dtau_dq, mreal *dtau_dqd, mreal *M);

/* Where mbs_rnea_jacobians_sparse writes: dtau/dq and dtau/dqd in
 * compressed columns (ptr: nv + 1, ind: the sorted rows of each column,
 * holding at least every row at or below the column (its ancestors, its
 * joint, its subtree); diag[c]: the position of (c, c)) and M in the tree
 * storage (mrow: the rowptr of mbs_model_tree_pattern). */
#ifndef MBS_JAC_PATTERN_DEFINED
#define MBS_JAC_PATTERN_DEFINED
typedef struct mbs_jac_pattern {
    const int *ptr, *ind, *diag, *mrow;
} mbs_jac_pattern;
#endif
/* mbs_rnea_jacobians (Euler columns complete as with skip_euler = 0)
 * with the entries at their positions in sp: the same numbers; every
 * entry of sp not on an ancestor-or-descendant pair is zero. */
void MBS_K(mbs_rnea_jacobians_sparse)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w, const mreal *q,
                                      const mreal *qd, const mreal *qdd, const mbs_jac_pattern *sp,
                                      mreal *dtau_dq, mreal *dtau_dqd, mreal *M);

/* After mbs_rnea_jacobians: the kinematic tangents (dw->A, o, r, V of body
 * b, in the layout of mbs_kin_forward_d) for a unit change of q_k (which =
 * 0; for an Euler parameter, of its tangent part) or of qd_k (which = 1),
 * for a body b below column k (the caller checks). For the tangents of
 * force-element loads (mbs_forces_apply_d). */
void MBS_K(mbs_jac_body_tangent)(const mbs_model *m, const MBS_K(mbs_ws) *w, int k, int which, int b,
                                 MBS_K(mbs_ws) *dw);

/* Mass matrix by composite inertias (nv x nv, row-major). Needs position
 * kinematics and Mv. */
void MBS_K(mbs_crba)(const mbs_model *m, MBS_K(mbs_ws) *w, mreal *M);
/* The same, its lower triangle in the tree storage (mbsens/sparse.h) of
 * the model's pattern (rowptr of mbs_model_tree_pattern; val: its nnz
 * entries), bit for bit the entries of mbs_crba's. */
void MBS_K(mbs_crba_tree)(const mbs_model *m, MBS_K(mbs_ws) *w, const int *rowptr, mreal *val);

/* Fully recursive forward dynamics (articulated bodies). Needs
 * velocity-level kinematics and body terms at (q, qd); tau may be NULL.
 * Writes qdd and the accelerations Vd. Returns 0, or -i if the articulated
 * joint inertia of body i is not positive definite. */
int MBS_K(mbs_aba)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *q,
                   const mreal *qd, const mreal *tau, mreal *qdd);

/* Hybrid dynamics: the same with the velocities v where presc[v] != 0
 * prescribed (presc NULL: none; never an Euler parameter): qdd[v] is
 * given there and kept, the others are solved for, and frc[v] receives
 * the generalized force (M' qdd - Q)_v the prescribed motion needs
 * (frc: nv, written at the prescribed velocities only). The factors left
 * in w are then those of the free velocities: mbs_aba_solve does not
 * apply to them. */
int MBS_K(mbs_aba_prescribed)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd,
                              const mreal *tau, const unsigned char *presc, mreal *qdd, mreal *frc);

/* Solve M' y = r with the factors of the last mbs_aba (s: scratch). */
void MBS_K(mbs_aba_solve)(const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *s,
                          const mreal *r, mreal *y);

/* Objective integrands (objectives.c): the integral (terminal = 0) or
 * terminal (terminal = 1) part of objective k at the state of w (level-2
 * kinematics at q, qd, qdd) and time t, and its tangent along the
 * direction in dw (tangent kinematics), dq, dqd, dqdd and dx. tau: the
 * inverse dynamics at the state and dtau its tangent (read by coordinate
 * force terms only; NULL where the objectives have none). */
mreal MBS_K(mbs_objective_integrand)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                     int k, int terminal, const mreal *q, const mreal *qd,
                                     const mreal *qdd, const mreal *tau, mreal t);
mreal MBS_K(mbs_objective_integrand_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                       const mreal *dx, const MBS_K(mbs_ws) *dw, int k, int terminal,
                                       const mreal *q, const mreal *qd, const mreal *qdd, const mreal *tau,
                                       const mreal *dq, const mreal *dqd, const mreal *dqdd, const mreal *dtau,
                                       mreal t);

/* Frame Jacobians, the centre of mass and the centroidal momentum
 * (jacobians.c), read from the kinematics in w (positions for the
 * Jacobians; velocities for J-dot v and the momentum). pl: local point of
 * the body (NULL: its origin); local: 1 for body axes, 0 for world axes.
 *   mbs_frame_jac: J (6 x nv, row-major, rows [v_P; w_b]); O(depth) after
 *     zeroing J.
 *   mbs_frame_jac_dot_v: (d/dt J) v, the 6 rows of J.
 *   mbs_com_kin: returns the total mass; r_G, v_G, a_G (any may be NULL).
 *   mbs_com_subtrees: per body i, MBS_COM_SUB numbers at sub + MBS_COM_SUB i:
 *     the subtree's mass, first moment about G (3) and inertia about G in
 *     world axes (9); O(n).
 *   mbs_centroidal_columns: A_G (6 x nv) and J_G (3 x nv), either NULL, from
 *     those subtrees; mt the total mass.
 *   mbs_centroidal_momentum_k: h_G = [linear; angular about G], world axes.
 *   mbs_centroidal_momentum_dot_v_k: dh_G/dt at zero velocity derivatives;
 *     a0: scratch of 6 (nb + 1) numbers (the accelerations at zero qdd). */
#define MBS_COM_SUB 13
void MBS_K(mbs_frame_jac)(const mbs_model *m, const MBS_K(mbs_ws) *w, int body, const mreal *pl, int local,
                          mreal *J);
void MBS_K(mbs_frame_jac_dot_v)(const mbs_model *m, const MBS_K(mbs_ws) *w, int body, const mreal *pl,
                                int local, mreal out[6]);
mreal MBS_K(mbs_com_kin)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, mreal rG[3], mreal vG[3],
                         mreal aG[3]);
void MBS_K(mbs_com_subtrees)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, const mreal rG[3],
                             mreal *sub);
void MBS_K(mbs_centroidal_columns)(const mbs_model *m, const MBS_K(mbs_ws) *w, const mreal rG[3], mreal mt,
                                   const mreal *sub, mreal *AG, mreal *JG);
void MBS_K(mbs_centroidal_momentum_k)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                      const mreal rG[3], mreal h[6]);
void MBS_K(mbs_centroidal_momentum_dot_v_k)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                            const mreal rG[3], mreal *a0, mreal dh[6]);

/* Convenience used by tests: everything for inverse dynamics at (q, qd, qdd),
 * with the loads already in w->xfrc / w->qfrc. */
void MBS_K(mbs_inverse_dynamics_x)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                                   const mreal *q, const mreal *qd, const mreal *qdd,
                                   mreal *tau);

#endif
