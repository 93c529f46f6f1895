/*
 * mbsens/jacobians.h - frame and point Jacobians, their time derivative
 * times v, the centre of mass and its Jacobian, the centroidal momentum
 * and its matrix (docs/api.md, docs/formulations.md).
 *
 * Every function reads the kinematics held in d: call mbs_kinematics(m, d,
 * q, v, vd) first (or a call that leaves the kinematics in d, as listed in
 * mbsens/kinematics.h). The Jacobians need the positions only; J-dot v,
 * v_G, a_G, h_G and A_G-dot v need the velocities (vd matters for a_G
 * only). The library does not record whether d holds kinematics: on a data
 * no kinematics ran on, the results are meaningless.
 *
 * Matrices are row-major with nv columns (mbs_model_nv), one per velocity
 * in the order of v; column c of J is the velocity the body point has when
 * v = e_c. Vectors and matrices are in world (global) components unless
 * MBS_AXES_LOCAL is asked for. Each returns MBS_OK, or MBS_ERR_ARG for a
 * bad argument (message in mbs_data_error(d)). None allocates.
 */
#ifndef MBSENS_JACOBIANS_H
#define MBSENS_JACOBIANS_H

#include "data.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_axes {
    MBS_AXES_WORLD = 0,   /* world (global) axes */
    MBS_AXES_LOCAL = 1    /* the body's own axes (A_b^T times the world components) */
} mbs_axes;

/* Frame Jacobian of body `body` (1..nb; 0, the ground, gives zeros) at its
 * point P of local coordinates `point` (NULL: the body frame origin):
 * J (6 x nv) with [v_P; omega_b] = J v, linear rows first. The cost is
 * O(depth of the body) after J is zeroed. */
int mbs_frame_jacobian(const mbs_model *m, mbs_data *d, int body, const double point[3], mbs_axes axes,
                       double *J);

/* Point Jacobian of the named point `point` (0..npoints-1, see
 * mbs_point_find): Jp (3 x nv, world axes) with v_P = Jp v. */
int mbs_point_jacobian(const mbs_model *m, mbs_data *d, int point, double *Jp);

/* (dJ/dt) v for the frame of mbs_frame_jacobian: [a_P; alpha_b] = J vd + Jdv.
 * World axes: the classical acceleration of P and the angular acceleration
 * at vd = 0. Local axes: d/dt of the local-axes J times v. */
int mbs_frame_jacobian_dot_v(const mbs_model *m, mbs_data *d, int body, const double point[3], mbs_axes axes,
                             double Jdv[6]);

/* Centre of mass of the whole system: position, velocity, acceleration
 * (any may be NULL). MBS_ERR_MODEL if the total mass is not positive. */
int mbs_com(const mbs_model *m, mbs_data *d, double rG[3], double vG[3], double aG[3]);

/* Jacobian of the centre of mass: JG (3 x nv), v_G = JG v. O(n). */
int mbs_com_jacobian(const mbs_model *m, mbs_data *d, double *JG);

/* Centroidal momentum hG = [linear momentum; angular momentum about G],
 * world axes. */
int mbs_centroidal_momentum(const mbs_model *m, mbs_data *d, double hG[6]);

/* Centroidal momentum matrix AG (6 x nv): hG = AG v. O(n). */
int mbs_centroidal_momentum_matrix(const mbs_model *m, mbs_data *d, double *AG);

/* (dAG/dt) v: dhG/dt = AG vd + AGdv, i.e. dhG/dt at vd = 0. */
int mbs_centroidal_momentum_dot_v(const mbs_model *m, mbs_data *d, double AGdv[6]);

#ifdef __cplusplus
}
#endif
#endif
