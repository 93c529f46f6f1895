/*
 * mbsens/model.h - the model: bodies, joints, points, parameters.
 *
 * An mbs_model is immutable once loaded; all per-call workspace lives in an
 * mbs_data (mbsens/data.h). Any number of mbs_data may share one model, one
 * per thread.
 *
 * Indexing: body 0 is the ground; moving bodies are 1..n_bodies, stored
 * parent-before-child. Joint i moves body i relative to its parent, so
 * joints are indexed like their child bodies (joint 0 does not exist).
 * Coordinates of joint i are q[coord_offset(i) .. + joint_nq(i) - 1].
 */
#ifndef MBSENS_MODEL_H
#define MBSENS_MODEL_H

#include <stdio.h>
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_model mbs_model;

typedef enum mbs_joint_type {
    MBS_JOINT_FIXED = 0,
    MBS_JOINT_REVOLUTE,
    MBS_JOINT_PRISMATIC,
    MBS_JOINT_CYLINDRICAL,
    MBS_JOINT_CARDAN,
    MBS_JOINT_SPHERICAL,
    MBS_JOINT_PLANAR,
    MBS_JOINT_FLOATING,
    MBS_JOINT_TYPE_COUNT
} mbs_joint_type;

/* The velocities of a joint (mbs_joint_velocities). EULER_RATES: the time
 * derivatives of its coordinates, the Euler-parameter rates included
 * (nv = nq); every joint of every model has these. TANGENT: the
 * tangent-space velocity of a spherical or floating joint (the angular
 * velocity in the child joint frame, and for a floating joint the
 * velocity of the child joint point in the same axes; nv = nq - 1;
 * docs/formulations.md "Tangent velocities"). JSON: "velocities" at the top
 * level and on a joint; URDF: Euler rates. */
typedef enum mbs_velocities {
    MBS_VELOCITIES_EULER_RATES = 0,
    MBS_VELOCITIES_TANGENT = 1
} mbs_velocities;

/* Reference point of the recursive velocity variables V_i = [v; w]. */
typedef enum mbs_ref_point {
    MBS_REF_COM = 0,    /* body centre of mass (thesis RTdyn0) */
    MBS_REF_ORIGIN,     /* body point at the global origin (RTdyn1) */
    MBS_REF_JOINT       /* child point of the body's joint (Kang & Yoon) */
} mbs_ref_point;

/* ---- loading ---- */

/* Load a model from a JSON file (docs/model-format.md). On failure returns
 * NULL and fills err with "file:line:col: ..." or "file: <json path>: ...". */
mbs_model *mbs_model_load(const char *path, mbs_error *err);
/* Same, from a string; `name` is used in messages in place of a file name. */
mbs_model *mbs_model_load_string(const char *json, const char *name, mbs_error *err);
void mbs_model_free(mbs_model *m);

/* Receives one warning (one line, "FILE:LINE: ..." or "FILE: ...") of a
 * loader: accepted but suspicious input, e.g. lenient inertias. */
typedef void (*mbs_warning_fn)(void *user, const char *msg);

/* ---- URDF (src/io/load_urdf.c, docs/model-format.md "URDF") ----
 * A zero-initialized struct (or NULL) gives the defaults. */
typedef struct mbs_urdf_options {
    int floating_base;     /* 1: the root link moves on a floating joint "root_joint" from the
                            * ground; 0 (default): the root link is fixed to the ground */
    int strict_inertia;    /* 1: reject inertias that violate the triangle inequality;
                            * 0 (default): accept them with a warning naming the link */
    mbs_warning_fn warn;   /* warnings; NULL: not reported */
    void *warn_user;
    int balance_inertia;   /* 1 (with strict_inertia = 0): replace such an inertia by the isotropic
                            * one of the same trace (MuJoCo's compiler option balanceinertia) */
    mbs_velocities velocities;   /* of every floating and spherical joint, the floating base included:
                            * MBS_VELOCITIES_EULER_RATES (0, default) or MBS_VELOCITIES_TANGENT
                            * (the angular velocity in the child's axes, and for a floating joint
                            * the body twist: docs/model-format.md "URDF") */
} mbs_urdf_options;

/* Load a URDF file (libxml2). Errors name "file:line: ...". Links become
 * bodies (links joined by fixed joints are merged rigidly into one body;
 * the merged links' frames stay addressable as named points and vectors),
 * joints keep their names, gravity is (0, 0, -9.81). Thread-safe: libxml2
 * is initialized once per process (xmlInitParser, itself thread-safe). */
mbs_model *mbs_model_load_urdf(const char *path, const mbs_urdf_options *opts, mbs_error *err);
/* Same, from the text of a URDF document; `name` (NULL: "<string>") is used
 * in messages in place of a file name, and gives the model's default name. */
mbs_model *mbs_model_load_urdf_string(const char *xml, const char *name, const mbs_urdf_options *opts,
                                      mbs_error *err);

/* mbs_model_load() dispatches on the file name: "*.urdf" (any case) loads
 * a URDF with the default options, anything else JSON. This variant also
 * reports the loader's warnings (URDF inertias, JSON "lenient_inertia"). */
mbs_model *mbs_model_load_warn(const char *path, mbs_warning_fn warn, void *warn_user, mbs_error *err);
/* mbs_model_load_string() reporting the loader's warnings. */
mbs_model *mbs_model_load_string_warn(const char *json, const char *name, mbs_warning_fn warn, void *warn_user,
                                      mbs_error *err);

/* The model as a JSON document in the format of docs/model-format.md
 * ("Writing a model"; src/io/write_json.c): every section, so that loading
 * it gives the same model, every name and number bit for bit. Numbers are
 * the shortest text that reads back exactly. malloc'd; NULL on error. */
char *mbs_model_to_json(const mbs_model *m, mbs_error *err);
/* A copy of the model with every spherical and floating joint in the
 * velocity convention `velocities` (docs/tangent-space.md §1), its initial
 * velocities mapped (v = T^+ qdot, qdot = T v); every other joint, body,
 * force and number as in m. Errors as the loader's (for example a joint
 * spring on a coordinate of a joint made tangent). New model; NULL on error. */
mbs_model *mbs_model_with_velocities(const mbs_model *m, mbs_velocities velocities, mbs_error *err);

/* The model as MuJoCo MJCF (src/io/write_mjcf.c; docs/viewer.md "MJCF
 * export" says what carries over). file 0 is the model, `base`.xml; deep
 * chains add files `base`_segK.xml that it includes (name relative to the
 * directory of the model file). Every text is malloc'd; free with
 * mbs_mjcf_free. MBS_OK, or an error (MBS_ERR_UNSUPPORTED names what MJCF
 * cannot express: a floating joint below another body, a cut joint other
 * than spherical, revolute or fixed, a closed loop not assembled in
 * MuJoCo's reference configuration). */
typedef struct mbs_mjcf {
    int nfiles;
    char **name;
    char **text;
    int nfilled;     /* moving bodies given a negligible mass or principal moment (MuJoCo 2.2.2
                      * rejects moving bodies without; ~1e-12 of the model's, see write_mjcf.c) */
} mbs_mjcf;
int mbs_model_to_mjcf(const mbs_model *m, const char *base, mbs_mjcf *out, mbs_error *err);
void mbs_mjcf_free(mbs_mjcf *x);

/* ---- sizes ---- */
int mbs_model_nbodies(const mbs_model *m);      /* moving bodies */
int mbs_model_nq(const mbs_model *m);           /* joint coordinates */
/* Generalized velocities: the length of qd, qdd and tau (v, v-dot and the
 * generalized forces), the rows of the dynamics Jacobians and the columns
 * of their derivatives with respect to q, qd, qdd and tau; the sum of
 * mbs_joint_nv over the joints. nv == nq unless a joint has tangent
 * velocities (mbs_velocities). */
int mbs_model_nv(const mbs_model *m);
int mbs_model_ndof(const mbs_model *m);         /* nq - number of unit quaternions */
int mbs_model_nconstraints(const mbs_model *m); /* loop-closure + driving (0 for trees) */
int mbs_model_npoints(const mbs_model *m);
int mbs_model_nvectors(const mbs_model *m);
int mbs_model_nparams(const mbs_model *m);
const char *mbs_model_name(const mbs_model *m);
const char *mbs_model_source(const mbs_model *m);   /* the file loaded, or NULL */

/* ---- bodies, joints, coordinates ---- */
const char *mbs_body_name(const mbs_model *m, int body);     /* body 0: "ground" */
int mbs_body_parent(const mbs_model *m, int body);
double mbs_body_mass(const mbs_model *m, int body);
int mbs_body_find(const mbs_model *m, const char *name);     /* -1 if absent */
/* Centre of mass (body-local) and inertia about it in body axes
 * (xx yy zz xy xz yz) of body `body`; MBS_OK or MBS_ERR_ARG. */
int mbs_body_inertia(const mbs_model *m, int body, double com[3], double I6[6]);
/* Principal moments lam and axes V (columns; a proper rotation) of a
 * symmetric inertia I6 (xx yy zz xy xz yz), by cyclic Jacobi rotations to
 * round-off: I = V diag(lam) V^T. */
void mbs_inertia_principal_axes(const double I6[6], double lam[3], double V[9]);
const char *mbs_joint_name(const mbs_model *m, int joint);
mbs_joint_type mbs_joint_type_of(const mbs_model *m, int joint);
const char *mbs_joint_type_name(mbs_joint_type t);
int mbs_joint_type_from_name(const char *name);              /* -1 if unknown */
int mbs_joint_nq(const mbs_model *m, int joint);
int mbs_joint_coord_offset(const mbs_model *m, int joint);
const char *mbs_coord_name(const mbs_model *m, int k);       /* "joint" or "joint.e0" etc. */
/* Velocities of joint `joint`: their number (0 for an invalid index), the
 * first one's index in the velocity vectors (-1 for an invalid index; the
 * joints' blocks are in joint order, like the coordinates), and their
 * convention (mbs_velocities, -1 for an invalid index). */
int mbs_joint_nv(const mbs_model *m, int joint);
int mbs_joint_vel_offset(const mbs_model *m, int joint);
int mbs_joint_velocities(const mbs_model *m, int joint);
/* Name of velocity k (0 <= k < nv; NULL outside): a joint whose velocities
 * are the rates of its coordinates names them like its coordinates
 * (mbs_coord_name); a tangent joint "J.vx", "J.vy", "J.vz" (floating), then
 * "J.wx", "J.wy", "J.wz". */
const char *mbs_vel_name(const mbs_model *m, int k);
/* URDF <limit> and <dynamics> of joint `joint`, kept as model data and not
 * applied by the dynamics (JSON: joint members "limit", "dynamics").
 * lim = lower, upper, effort, velocity; dyn = damping, friction; NaN where
 * not given. Return 1 if the joint has such data, 0 if not, -1 if the
 * joint index is invalid. */
int mbs_joint_limit(const mbs_model *m, int joint, double lim[4]);
int mbs_joint_dynamics(const mbs_model *m, int joint, double dyn[2]);
/* Geometry of joint `joint`: its point on the parent body (parent-local)
 * and on the child (child-local), and the joint frames on both sides
 * (3x3 row-major, columns: axis, reference direction, axis x ref). Any
 * output may be NULL. MBS_OK or MBS_ERR_ARG. */
int mbs_joint_frames(const mbs_model *m, int joint, double Pp[3], double Xp[9], double Pc[3], double Xc[9]);
/* Initial coordinates (nq) and velocities (nv) from the model file. */
void mbs_model_initial_state(const mbs_model *m, double *q, double *qd);
void mbs_model_gravity(const mbs_model *m, double g[3]);

/* ---- named points and vectors ---- */
const char *mbs_point_name(const mbs_model *m, int k);        /* "body.point" */
int mbs_point_body(const mbs_model *m, int k);
int mbs_point_find(const mbs_model *m, const char *qualified_name);
const char *mbs_vector_name(const mbs_model *m, int k);
int mbs_vector_body(const mbs_model *m, int k);

/* ---- visual geometry (URDF <visual> and <collision>; model data that the
 * dynamics never reads) ---- */
typedef enum mbs_visual_shape {
    MBS_VISUAL_BOX = 0,     /* size: edge lengths along the shape frame's x, y, z */
    MBS_VISUAL_CYLINDER,    /* size: radius, length (axis: the shape frame's z) */
    MBS_VISUAL_SPHERE,      /* size: radius */
    MBS_VISUAL_MESH         /* size: scale along x, y, z; file name in `mesh` */
} mbs_visual_shape;

typedef struct mbs_visual {
    int body;               /* the body it is fixed to (0: ground) */
    mbs_visual_shape shape;
    double size[3];
    double R[9], p[3];      /* shape frame in the body frame: r_body = R r_shape + p */
    double rgba[4];         /* colour; rgba[3] < 0 where the file gives none */
    int collision;          /* 1: a <collision> element, 0: a <visual> one */
    const char *mesh;       /* MBS_VISUAL_MESH: file name as written (package://, file://
                             * or relative to the URDF file), else NULL */
    const char *link;       /* the URDF link it belongs to */
} mbs_visual;

int mbs_model_nvisuals(const mbs_model *m);
/* Shape k (0 .. nvisuals-1) into *v (pointers owned by the model): MBS_OK
 * or MBS_ERR_ARG. */
int mbs_model_visual(const mbs_model *m, int k, mbs_visual *v);

/* ---- design parameters ---- */
const char *mbs_param_name(const mbs_model *m, int k);
double mbs_param_value(const mbs_model *m, int k);
double mbs_param_lower(const mbs_model *m, int k);
double mbs_param_upper(const mbs_model *m, int k);
int mbs_param_find(const mbs_model *m, const char *name);
/* The time from which parameter k can act on a run: a spline knot value y_j
 * (j > 0) shapes the curve from knot j - 1 on, so a parameter that sets
 * only knot values gets the smallest t_{j-1} of its targets (t_0 for y_0);
 * one that sets anything else acts from the start, -HUGE_VAL. NAN for an
 * invalid k. (The cubic spline is not local: y_j still moves the curve a
 * little before t_{j-1}; this is where its own interval begins.) */
double mbs_param_acts_from(const mbs_model *m, int k);
/* A copy of the model with parameter values replaced (length nparams).
 * Used by optimizers and finite-difference checks. */
mbs_model *mbs_model_with_params(const mbs_model *m, const double *values, mbs_error *err);

/* Print a human-readable summary. */
void mbs_model_print(const mbs_model *m, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
