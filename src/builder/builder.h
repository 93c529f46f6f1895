/*
 * builder.h - assembling an mbs_model (internal).
 *
 * All loaders (JSON, the chain generator, later URDF) describe the model
 * through this interface; mbs_builder_finish() checks it (topology, physical
 * validity, names) and produces the immutable mbs_model. Each item carries a
 * `where` string naming its origin in the input (e.g. "model.json: bodies[2]"
 * or "robot.urdf:41"), which error messages quote.
 *
 * Bodies and joints may be added in any order; finish() sorts bodies
 * parent-before-child.
 */
#ifndef MBS_BUILDER_H
#define MBS_BUILDER_H

#include "mbsens/model.h"
#include "mbsens/forces.h"
#include "base/error.h"

typedef struct mbs_builder mbs_builder;

mbs_builder *mbs_builder_new(const char *model_name, const char *source);
void mbs_builder_free(mbs_builder *b);

void mbs_builder_set_gravity(mbs_builder *b, const double g[3]);

/* Inertias whose principal moments violate the triangle inequality
 * (I1 + I2 >= I3): rejected by default (lenient = 0). With lenient = 1 they
 * are accepted, the model keeps accepting them (mbs_model_with_params), and
 * finish() calls warn(user, "WHERE: body NAME: inertia violates ...") once
 * per such body (warn may be NULL). Inertias that are not positive definite
 * are always rejected. */
void mbs_builder_set_inertia_policy(mbs_builder *b, int lenient,
                                    void (*warn)(void *user, const char *msg), void *user);

/* Returns the body handle (>= 1), or a negative status (duplicate name...). */
int mbs_builder_add_body(mbs_builder *b, const char *name, double mass,
                         const double com[3], const double inertia6[6],
                         const char *where, mbs_error *err);
/* Named point on a body (name may be NULL for an anonymous placement point).
 * Returns a point handle >= 0. */
int mbs_builder_add_point(mbs_builder *b, int body, const char *name,
                          const double xyz[3], const char *where, mbs_error *err);
int mbs_builder_add_vector(mbs_builder *b, int body, const char *name,
                           const double xyz[3], const char *where, mbs_error *err);
/* Point and vector handles by body and name (-1 if absent). */
int mbs_builder_find_point(const mbs_builder *b, int body, const char *name);
int mbs_builder_find_body(const mbs_builder *b, const char *name); /* 0 for "ground" */
/* The bodies whose name followed by '.' begins `name` (body names may
 * contain dots: "a.b.c" may be body "a" or "a.b" and what follows), shortest
 * name first: the first max handles into out; returns how many there are. */
size_t mbs_builder_find_body_prefixes(const mbs_builder *b, const char *name, int *out, size_t max);
const char *mbs_builder_body_name(const mbs_builder *b, int body);   /* NULL if invalid */

/* Joint frame on one side: a point handle and two vectors in local
 * coordinates, `axis` and `ref` (ref is made orthogonal to axis and
 * normalized; if ref is NULL or parallel to axis, a perpendicular is
 * chosen). */
typedef struct mbs_joint_side {
    int point;             /* point handle on that body */
    double axis[3];
    double ref[3];
    int has_ref;
} mbs_joint_side;

/* Returns the joint handle (>= 0) or a negative status. q0/qd0 may be NULL
 * (zeros; identity Euler parameters). */
int mbs_builder_add_joint(mbs_builder *b, const char *name, mbs_joint_type type,
                          int parent_body, int child_body,
                          const mbs_joint_side *parent_side,
                          const mbs_joint_side *child_side,
                          const double *q0, int nq0, const double *qd0, int nqd0,
                          const char *where, mbs_error *err);

/* Velocity convention of a spherical or floating joint (mbs_velocities;
 * MBS_VELOCITIES_EULER_RATES unless set; docs/tangent-space.md §1).
 * MBS_ERR_MODEL on another joint type, naming it. */
int mbs_builder_set_joint_velocities(mbs_builder *b, int joint, int velocities, const char *where,
                                     mbs_error *err);
/* Initial velocities of a joint in its convention (n = its nv at finish:
 * checked there), in place of the qd0 of add_joint, which finish maps to a
 * tangent joint's velocities (v = T^+ qdot). */
int mbs_builder_set_joint_v0(mbs_builder *b, int joint, const double *v0, int n, const char *where,
                             mbs_error *err);

/* Design parameter. Targets are added afterwards by name:
 *   "BODY.mass", "BODY.com[k]", "BODY.inertia.xx|yy|zz|xy|xz|yz",
 *   "BODY.POINT[k]" (a named point), "gravity[k]",
 *   "FORCE.stiffness|damping|length|position|value|force[k]|torque[k]",
 *   "FUNC.value|t0|v0|t1|v1|amplitude|frequency|phase|offset|values[k]"
 * (forces and functions must be added before their targets).
 * Returns a parameter handle >= 0. */
int mbs_builder_add_param(mbs_builder *b, const char *name, double value,
                          double lower, double upper, const char *where,
                          mbs_error *err);
int mbs_builder_add_param_target(mbs_builder *b, int param, const char *target,
                                 double scale, double offset, const char *where,
                                 mbs_error *err);

/* ---- time functions and force elements (mbsens/forces.h) ----
 * Handles are returned in the order added (>= 0) or a negative status.
 * Joint elements take a joint handle (mbs_builder_add_joint) and a
 * coordinate index within that joint (not an Euler parameter). */
int mbs_builder_find_joint(const mbs_builder *b, const char *name);      /* -1 if absent */
int mbs_builder_joint_type(const mbs_builder *b, int joint);             /* -1 if invalid */
int mbs_builder_find_function(const mbs_builder *b, const char *name);   /* -1 if absent */
/* numbers: the function's numbers in model-vector order (constant: value;
 * step: t0, v0, t1, v1; sine: amplitude, frequency [Hz], phase, offset;
 * spline: the n knot values, with the n knot times in `times`). n is their
 * count. variant: step 0 cubic / 1 quintic; spline 0 natural / 1 clamped. */
int mbs_builder_add_function(mbs_builder *b, const char *name, mbs_func_type type, int variant,
                             const double *numbers, int n, const double *times,
                             const char *where, mbs_error *err);
/* Between two points (handles; their bodies may be the ground). length
 * NULL: the distance in the initial configuration. */
int mbs_builder_add_spring_damper(mbs_builder *b, const char *name, int point1, int point2,
                                  double stiffness, double damping, const double *length,
                                  const char *where, mbs_error *err);
int mbs_builder_add_joint_spring(mbs_builder *b, const char *name, int joint, int coord,
                                 double stiffness, double damping, double position,
                                 const char *where, mbs_error *err);
/* func: function handle, or -1 for a constant factor 1. */
int mbs_builder_add_joint_force(mbs_builder *b, const char *name, int joint, int coord, double value,
                                int func, const char *where, mbs_error *err);
/* point: a point handle of `body`, or -1 for its centre of mass. force and
 * torque may be NULL (zero); body_axes != 0: they turn with the body. */
int mbs_builder_add_body_load(mbs_builder *b, const char *name, int body, int point,
                              const double force[3], const double torque[3], int body_axes,
                              int func, const char *where, mbs_error *err);
/* Contact elements (src/forces/force_contact_common.h): type
 * MBS_FORCE_CONTACT_PLANE (shape 0 sphere, 1 circle) or MBS_FORCE_TIRE
 * (a circle). point: the centre, a point handle of a moving body. The plane
 * normal and the circle axis (body axes) are normalized here. */
typedef struct mbs_builder_contact {
    int shape;                         /* 0 sphere, 1 circle */
    double stiffness, exponent, hysteresis, radius, smoothing;
    double plane_point[3], plane_normal[3], axis[3];
    double kappa_c, alpha_c, mu_x, mu_y, v0;   /* tire */
    double mu, vs;                     /* contact_plane: friction coefficient, slip speed (m/s) */
} mbs_builder_contact;
int mbs_builder_add_contact(mbs_builder *b, const char *name, mbs_force_type type, int point,
                            const mbs_builder_contact *c, const char *where, mbs_error *err);

/* ---- closed loops, driving constraints, assembly (mbsens/constraints.h) ----
 * Joints may form closed loops; finish() keeps a spanning tree and cuts one
 * joint per independent loop (spherical first, then more coordinates, ties:
 * the later joint). set_joint_cut forces a joint to be cut. */
int mbs_builder_set_joint_cut(mbs_builder *b, int joint, const char *where, mbs_error *err);
/* Driver q - f(t) = 0 on coordinate `coord` of joint `joint` (not an Euler
 * parameter), or |r(point2) - r(point1)| - f(t) = 0. f is function `func`
 * (any kind), or with func = -1 the linear law value + rate t. Returns a
 * driver handle >= 0. */
int mbs_builder_add_coordinate_driver(mbs_builder *b, const char *name, int joint, int coord, int func,
                                      double value, double rate, const char *where, mbs_error *err);
int mbs_builder_add_distance_driver(mbs_builder *b, const char *name, int point1, int point2, int func,
                                    double value, double rate, const char *where, mbs_error *err);
/* Hold coordinate `coord` (-1: all) of a joint in the kinematic problems. */
int mbs_builder_add_assembly_fixed(mbs_builder *b, int joint, int coord, const char *where, mbs_error *err);
/* Newton-Raphson tolerance on |dq|_2 (default 1e-10) and iteration limit (50). */
int mbs_builder_set_assembly(mbs_builder *b, double tol, int max_iter, const char *where, mbs_error *err);

/* Validate and build. The builder can be freed afterwards. NULL on error. */
mbs_model *mbs_builder_finish(mbs_builder *b, mbs_error *err);

#endif
