/*
 * mbsens/forces.h - force elements and time functions of a model.
 *
 * Force elements ("forces" in the model file, docs/model-format.md) add
 * their loads to every dynamics evaluation (inverse and forward dynamics)
 * at the time set with mbs_data_set_time(). Time functions ("functions")
 * scale joint forces and body loads. Every number of an element or a
 * function lives in the model vector, so design parameters can set it
 * (targets FORCE.stiffness, FUNC.values[k], ...).
 */
#ifndef MBSENS_FORCES_H
#define MBSENS_FORCES_H

#include "data.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_force_type {
    MBS_FORCE_SPRING_DAMPER = 0, /* point to point: k (l - l0) + c ldot along the line */
    MBS_FORCE_JOINT_SPRING,      /* on one joint coordinate: -k (q - q0) - c qd */
    MBS_FORCE_JOINT_FORCE,       /* on one joint coordinate: value * f(t) */
    MBS_FORCE_BODY_LOAD,         /* force and torque on a body point, times f(t) */
    MBS_FORCE_CONTACT_PLANE,     /* sphere or circle (body) against a plane (ground): smooth
                                  * Kelvin-Voigt normal force with hysteresis damping */
    MBS_FORCE_TIRE,              /* circle-plane contact with a linearized tire friction model */
    MBS_FORCE_TYPE_COUNT
} mbs_force_type;

typedef enum mbs_func_type {
    MBS_FUNC_CONSTANT = 0,       /* value */
    MBS_FUNC_STEP,               /* smooth step from (t0, v0) to (t1, v1) */
    MBS_FUNC_SINE,               /* offset + amplitude sin(2 pi frequency t + phase) */
    MBS_FUNC_SPLINE,             /* cubic spline through knots (t_k, y_k) */
    MBS_FUNC_TYPE_COUNT
} mbs_func_type;

/* ---- force elements ---- */
int mbs_model_nforces(const mbs_model *m);
const char *mbs_force_name(const mbs_model *m, int k);
mbs_force_type mbs_force_type_of(const mbs_model *m, int k);
const char *mbs_force_type_name(mbs_force_type t);   /* "spring_damper", ... */
int mbs_force_type_from_name(const char *name);      /* -1 if unknown */
int mbs_force_find(const mbs_model *m, const char *name); /* -1 if absent */

/* Where element k acts, for drawing it (all in the model's numbers, at
 * the model's parameter values). */
typedef struct mbs_force_geometry {
    int body[2];            /* spring_damper: the bodies of its two ends; body_load,
                             * contact_plane, tire: body[0]; -1 where none */
    double point[2][3];     /* body-local points: the two ends, the load's point, the
                             * sphere or circle centre */
    double radius;          /* contact_plane, tire: sphere or circle radius; else 0 */
    double axis[3];         /* circle axis (body axes); zero for a sphere and other types */
    double plane_point[3];  /* contact_plane, tire: the ground plane (global) */
    double plane_normal[3];
    int joint;              /* joint_spring, joint_force: the joint; else -1 */
} mbs_force_geometry;
int mbs_force_geometry_of(const mbs_model *m, int k, mbs_force_geometry *g);  /* MBS_OK or MBS_ERR_ARG */

/* ---- time functions ---- */
int mbs_model_nfunctions(const mbs_model *m);
const char *mbs_function_name(const mbs_model *m, int k);
mbs_func_type mbs_function_type_of(const mbs_model *m, int k);
const char *mbs_function_type_name(mbs_func_type t); /* "constant", "step", "sine", "spline" */
int mbs_function_type_from_name(const char *name);   /* -1 if unknown */
int mbs_function_find(const mbs_model *m, const char *name);
/* f(t) of function k with the model's values; *dfdt (may be NULL) gets
 * df/dt. NAN if k is out of range. */
double mbs_function_eval(const mbs_model *m, int k, double t, double *dfdt);

/* ---- energy and state of the elements ----
 * These read the positions of the last kinematics or dynamics call on d,
 * which must have been made at the same q. */
/* Potential energy of the springs: sum 1/2 k (l - l0)^2 over spring_damper
 * and 1/2 k (q - q0)^2 over joint_spring elements. With the gravity
 * potential (mbs_potential_energy) and the kinetic energy it gives the total
 * mechanical energy; it is conserved when no damping, joint force, body
 * load or actuation acts. */
double mbs_elastic_energy(const mbs_model *m, const mbs_data *d, const double *q);
/* Current length of spring_damper element k (NAN for other types). */
double mbs_force_length(const mbs_model *m, const mbs_data *d, int k);
/* Index of the first spring_damper whose length has dropped below 1e-6
 * times its initial length (its direction is then ill-defined and its
 * force is regularized to vanish at zero length, see
 * docs/formulations.md), or -1 if none. Callers such as time integrators
 * should report it rather than continue silently. */
int mbs_forces_degenerate(const mbs_model *m, const mbs_data *d);

#ifdef __cplusplus
}
#endif
#endif
