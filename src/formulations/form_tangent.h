/*
 * form_tangent.h - the scalar-free entry to the constraint tangents
 * (internal): usable from translation units built with the complex scalar
 * (the complex-step tests), where the double kernel types are not visible.
 */
#ifndef MBS_FORM_TANGENT_H
#define MBS_FORM_TANGENT_H

#include "mbsens/data.h"

/* Tangents of Phi, Phi_q (nc x nv row-major), dPhi/dt and d2Phi/dt2 at
 * (q, qd, qdd) along (dq, dqd, dqdd) and dx in the model vector (any NULL =
 * 0; outputs may be NULL): runs the kinematics and their tangents in d
 * (reference point of d) and mbs_con_kernel_d. */
void mbs_form_constraint_tangent(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                                 const double *qdd, const double *dq, const double *dqd, const double *dqdd,
                                 const double *dx, double *dphi, double *dPhi_q, double *dphid, double *dphidd);

/* The same declarations as in form_impl.h: the residual and constraints at a
 * state and their tangents (the residual's included; see form_core.c). */
void mbs_form_primal(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                     const double *qdd, double *r, double *phi, double *Phi, double *phid, double *phidd);
void mbs_form_tangent(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                      const double *qdd, const double *dq, const double *dqd, const double *dqdd,
                      const double *dx, double *dr, double *dphi, double *dPhi, double *dphid, double *dphidd);

#endif
