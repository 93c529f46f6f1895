/*
 * mbsens/data.h - per-thread workspace and results.
 *
 * An mbs_data holds every array the kinematics and dynamics routines use,
 * allocated once by mbs_data_create(). The routines in mbsens/kinematics.h
 * and mbsens/dynamics.h never allocate. Several mbs_data may share one
 * mbs_model concurrently.
 */
#ifndef MBSENS_DATA_H
#define MBSENS_DATA_H

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_data mbs_data;

mbs_data *mbs_data_create(const mbs_model *m, mbs_error *err);
void mbs_data_free(mbs_data *d);

/* Reference point of the recursive velocity variables (default MBS_REF_COM).
 * Physical results do not depend on it; it selects the formulation. */
void mbs_data_set_ref(mbs_data *d, mbs_ref_point ref);
mbs_ref_point mbs_data_ref(const mbs_data *d);
const char *mbs_ref_point_name(mbs_ref_point ref);   /* "com", "origin", "joint" */
int mbs_ref_point_from_name(const char *name);       /* -1 if unknown */

/* Frames of the fully recursive forward dynamics (mbs_forward_dynamics with
 * MBS_FD_RECURSIVE); same accelerations to round-off either way.
 *   MBS_FR_JOINT_FRAMES (default): every body in its own joint frame
 *     (Featherstone's local form: body inertias and joint axes constant,
 *     about half the cost) on trees of fixed, revolute, prismatic,
 *     spherical and floating joints without force elements or body loads;
 *     other models take the global-axes form;
 *   MBS_FR_GLOBAL: always the global-axes articulated-body algorithm with
 *     the data's reference point (com, origin or joint: Kang & Yoon's
 *     choice), which the joint-frame form does not use. */
typedef enum mbs_fr_frames { MBS_FR_JOINT_FRAMES = 0, MBS_FR_GLOBAL } mbs_fr_frames;
void mbs_data_set_fr_frames(mbs_data *d, mbs_fr_frames frames);
mbs_fr_frames mbs_data_fr_frames(const mbs_data *d);

/* Time at which time-dependent loads are evaluated (default 0). */
void mbs_data_set_time(mbs_data *d, double t);
double mbs_data_time(const mbs_data *d);

/* The message of the last failed call on this data ("" if none). */
const char *mbs_data_error(const mbs_data *d);

/* ---- applied loads (inputs, kept until cleared) ----
 * External wrenches on bodies and generalized forces on coordinates, as in
 * Zhakatayev et al.: every body may carry an external load. */
void mbs_data_clear_loads(mbs_data *d);
/* Add a force f (global components) acting at the body point with local
 * coordinates `point` (NULL: the centre of mass) and a torque n (global
 * components, may be NULL). */
int mbs_data_add_body_load(mbs_data *d, int body, const double point[3],
                           const double f[3], const double n[3]);
/* Generalized forces applied on the joint coordinates (length nq). Writable. */
double *mbs_data_joint_load(mbs_data *d);

#ifdef __cplusplus
}
#endif
#endif
