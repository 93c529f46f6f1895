/*
 * jacobians_1dof.h - the fused inverse-dynamics Jacobians for trees of
 * revolute, prismatic and fixed joints (jacobians_1dof.c; internal).
 */
#ifndef MBS_ID_DERIVATIVES_LOCAL_H
#define MBS_ID_DERIVATIVES_LOCAL_H

#include "kernels/data.h"

/* Set-up at data creation (constants from m->x; 0 or -1 out of memory). */
int mbs_jac1_create(mbs_data *d, const mbs_model *m);
void mbs_jac1_free(mbs_data *d);
/* Test hook (mbs_data_scribble): garbage in the per-call workspace (the
 * zeros outside the Jacobians' pattern that the FD solves rely on kept). */
void mbs_jac1_scribble(mbs_data *d, uint64_t *s);
/* Every joint fixed, revolute or prismatic, no force elements, no user
 * body loads, and d created for m. */
int mbs_jac1_usable(const mbs_model *m, const mbs_data *d);
/* The same with force elements allowed: the pass then leaves their loads
 * out (the rigid-body inverse dynamics with gravity and the user's joint
 * loads), for differences in which the element loads cancel. */
int mbs_jac1_rigid_usable(const mbs_model *m, const mbs_data *d);
/* The entry loops run with AVX2/FMA where the processor has them (chosen
 * at set-up); on = 0 forces the SSE2/scalar loops (tests). Returns the
 * previous setting. */
int mbs_jac1_set_avx2(mbs_data *d, int on);
/* tau = ID(q, qd, qdd) (user joint loads included), dtau/dq, dtau/dqd and
 * the mass matrix M, row-major nv x nv; any output may be NULL, qd and qdd
 * too (zero). No allocation; leaves nothing in d->ws. Returns 0, or -1 if
 * an output entry is not finite. */
int mbs_jac1_id_jacobians(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                         const double *qdd, double *tau, double *dtau_dq, double *dtau_dqd, double *M);

/* The pass in steps, for the forward-dynamics derivatives (mbs_jac1_usable
 * only):
 *   mbs_jac1_fd_begin runs the pass at (q, qd, qdd) (qdd NULL: zero) and
 *     gives tau = ID (user joint loads included; at qdd = 0 the bias b)
 *     and M (either may be NULL); -1 if an entry of them is not finite;
 *   mbs_jac1_fd_move moves the pass by dqdd (after a begin at qdd = 0: by
 *     the qdd the caller solved from M qdd = tau - b; the changes add up)
 *     and adds the change of ID to tau (NULL: not wanted);
 *   mbs_jac1_fd_jacobians returns dtau/dq and dtau/dqd at the pass's
 *     (q, qd, qdd) side by side, rows *ld apart (row r: the nv entries of
 *     dtau_r/dq, zeros up to *ld / 2, then those of dtau_r/dqd, zeros),
 *     a workspace of d valid until the next call; *bad = -1 if an entry
 *     is not finite, else 0.
 * No allocation. */
int mbs_jac1_fd_begin(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                     double *tau, double *M);
void mbs_jac1_fd_move(const mbs_model *m, mbs_data *d, const double *dqdd, double *tau);
const double *mbs_jac1_fd_jacobians(const mbs_model *m, mbs_data *d, int *bad, int *ld);
/* x = M^-1 x with the tree-sparse factor M = L^T L (row-major; row k of L
 * on k and its ancestor coordinates; src/dynamics/fd_derivatives.c, fd_factor). */
void mbs_jac1_fd_factor_solve(const mbs_model *m, mbs_data *d, const double *H, double *x);
/* After mbs_jac1_fd_jacobians, with the tree-sparse factor M = L^T L (row k
 * of L on k and its ancestor coordinates; row-major nv x nv):
 * Xq = -M^-1 dtau/dq, Xqd = -M^-1 dtau/dqd and Xtau = M^-1 (any NULL:
 * skipped), by triangular solves that follow the tree's sparsity. Returns
 * -1 if an entry of the results may not be finite (their sum is not), else 0. */
int mbs_jac1_fd_solve(const mbs_model *m, mbs_data *d, const double *L, double *Xq, double *Xqd, double *Xtau);

#endif
