/*
 * mbsens/kinematics.h - recursive kinematics.
 *
 * mbs_kinematics() runs the base-to-tip recursion for positions,
 * velocities and accelerations of every body; the query functions below
 * then read results for bodies, named points and vectors. All results are
 * in global components.
 */
#ifndef MBSENS_KINEMATICS_H
#define MBSENS_KINEMATICS_H

#include "data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* q (nq), qd and qdd (nq, NULL for zero). Euler parameters must be
 * normalized to 1e-6; see mbs_normalize_state(). Returns MBS_OK, or
 * MBS_ERR_NUMERIC for a non-finite or non-normalized input or a
 * non-finite result (message in mbs_data_error). */
int mbs_kinematics(const mbs_model *m, mbs_data *d, const double *q,
                   const double *qd, const double *qdd);

/* Project a state onto the Euler-parameter manifold: p <- p/|p| and
 * pdot <- pdot - p (p.pdot) for every spherical/floating joint. qd may be
 * NULL. Returns MBS_ERR_NUMERIC if some |p| is zero or not finite. */
int mbs_normalize_state(const mbs_model *m, double *q, double *qd);

/* Euler-parameter rates <-> relative angular velocity of joint `joint`
 * (spherical or floating), in the parent's joint frame:
 *   w = 2 E(p) pdot,   pdot = 1/2 E(p)^T w   (|p| = 1).
 * MBS_OK, or MBS_ERR_NUMERIC if the result is not finite. */
int mbs_euler_omega_from_rates(const double p[4], const double pdot[4], double w[3]);
int mbs_euler_rates_from_omega(const double p[4], const double w[3], double pdot[4]);

/* Unit quaternion [w, x, y, z] (w >= 0) of a rotation matrix (row-major),
 * by the largest-pivot formula (accurate for every rotation). */
void mbs_rotation_quaternion(const double A[9], double quat[4]);

/* Results of the last mbs_kinematics call (also the kinematics that
 * mbs_inverse_dynamics and the integrator leave in d). Those calls check
 * that everything these functions return for the bodies, the named points
 * and vectors, and the energies is finite, or fail with MBS_ERR_NUMERIC
 * naming it ("kinematics: the kinetic energy is not finite (inf)"): after
 * they succeed, these return finite numbers (mbs_body_point, which takes
 * any local coordinates: for those up to 1e15 in magnitude, at states
 * whose q, qd, qdd are up to 1e15 as well). */
void mbs_body_pose(const mbs_data *d, int body, double A[9], double origin[3]);
void mbs_body_com(const mbs_data *d, int body, double r[3]);
/* velocity and acceleration of the CoM, angular velocity and acceleration */
void mbs_body_velocity(const mbs_data *d, int body, double v[3], double w[3]);
void mbs_body_acceleration(const mbs_data *d, int body, double a[3], double alpha[3]);
/* Any body point given in local coordinates. Any output may be NULL. */
void mbs_body_point(const mbs_data *d, int body, const double local[3],
                    double r[3], double v[3], double a[3]);
/* Named points and vectors of the model (any output may be NULL). */
void mbs_point_kinematics(const mbs_model *m, const mbs_data *d, int point,
                          double r[3], double v[3], double a[3]);
void mbs_vector_kinematics(const mbs_model *m, const mbs_data *d, int vec,
                           double u[3], double ud[3], double udd[3]);

double mbs_kinetic_energy(const mbs_model *m, const mbs_data *d);
/* Potential energy of gravity, -sum m g.r_G. */
double mbs_potential_energy(const mbs_model *m, const mbs_data *d);

#ifdef __cplusplus
}
#endif
#endif
