/*
 * model_impl.h - the layout of mbs_model (internal).
 *
 * Every number a kernel reads from the model lives in one flat array x,
 * the "model vector": gravity, masses, centres of mass, inertias, point
 * coordinates, joint frames, vectors. Structures below hold offsets into x.
 * This gives one mechanism for design parameters (a parameter is an affine
 * map into entries of x, see mbs_param_info) and lets the complex-step build
 * of the kernels run on a complex copy of x.
 */
#ifndef MBS_MODEL_IMPL_H
#define MBS_MODEL_IMPL_H

#include "mbsens/model.h"
#include "mbsens/forces.h"
#include "base/hashmap.h"

typedef struct mbs_body_info {
    char *name;
    char *where;           /* origin in the model file, for messages */
    int parent;            /* 0 = ground */
    int first_child;       /* -1 if leaf */
    int next_sibling;      /* -1 if last */
    int nchildren;
    int depth;             /* 0 for ground, 1 for bodies on ground */
    int subtree_end;       /* bodies i .. subtree_end-1 form i's subtree (DFS preorder) */
    int branch;            /* branch id: maximal run of single-child joints */
    int x_mass;            /* x[x_mass] */
    int x_com;             /* x[x_com .. +2], local coordinates */
    int x_inertia;         /* x[x_inertia .. +5]: xx yy zz xy xz yz about the CoM, local axes */
} mbs_body_info;

typedef struct mbs_joint_info {
    char *name;
    char *where;
    mbs_joint_type type;
    int parent;            /* parent body */
    int child;             /* == index of this joint */
    int qoff;              /* first coordinate */
    int voff;              /* first velocity (in v, qd, qdd, tau and the derivative columns) */
    int nq, nv, ndof;      /* coordinates, velocities, degrees of freedom */
    int euler;             /* offset of Euler parameters within the joint's q, -1 if none */
    int quat;              /* offset of the unit quaternion within the joint's q, -1 if none */
    int velocities;        /* mbs_velocities (include/mbsens/model.h) */
    int frame_kind;        /* mbs_frame_kind of the type's ops (joints/joint.h) */
    int x_ppoint;          /* parent joint point, parent-local coordinates (3) */
    int x_cpoint;          /* child joint point, child-local coordinates (3) */
    int x_Xp;              /* parent joint frame, 3x3 row-major: columns axis, ref, axis x ref */
    int x_Xc;              /* child joint frame */
    double q0[7], qd0[7];  /* initial state from the file */
    /* URDF <limit> and <dynamics> (model data, not applied by the dynamics;
     * src/io/load_urdf.c): has_limit = 0 if absent; NaN = not given. */
    int has_limit;
    double lower, upper, effort, velocity;
    int has_dynamics;
    double damping, friction;
} mbs_joint_info;

typedef struct mbs_point_info {
    char *name;            /* qualified: "body.point" */
    int body;
    int x;                 /* x[x .. +2] local coordinates */
} mbs_point_info;

typedef struct mbs_vector_info {
    char *name;            /* qualified: "body.vector" */
    int body;
    int x;                 /* unit vector, local coordinates */
} mbs_vector_info;

/* A force element (docs/model-format.md, "forces"; kernels in src/forces/).
 * Its numbers live in x[x .. x+nx-1]; the x_* fields below point into that
 * block (or at model points), -1 where a field does not apply. */
typedef struct mbs_force_info {
    char *name;
    char *where;
    mbs_force_type type;
    int body[2];           /* spring_damper: bodies of the two ends; body_load: body[0]; else -1 */
    int x_point[2];        /* local point coordinates (3 each) of those ends; body_load at the
                            * CoM points at the body's x_com */
    int joint;             /* joint_spring, joint_force: joint index; else -1 */
    int coord;             /* joint_spring, joint_force: coordinate index in q; else -1 */
    int vel;               /* joint_spring, joint_force: the same coordinate's velocity index (qd, qfrc,
                            * tangent directions); else -1 */
    int x, nx;             /* the element's own numbers in x */
    int x_stiffness;       /* spring_damper, joint_spring */
    int x_damping;         /* spring_damper, joint_spring */
    int x_free;            /* free length (spring_damper) or free coordinate q0 (joint_spring) */
    int x_value;           /* joint_force: magnitude (1); body_load: force (3) */
    int x_torque;          /* body_load: torque (3) */
    int func;              /* time function index, -1 = constant factor 1 */
    int body_axes;         /* body_load: force and torque given in body axes (else global) */
    double eps;            /* spring_damper: length regularization l = sqrt(|d|^2 + eps^2) */
    double l_init;         /* spring_damper: length in the initial configuration */
    int shape;             /* contact_plane: 0 sphere, 1 circle (tire: circle); layout of
                            * their numbers in src/forces/force_contact_common.h */
} mbs_force_info;

/* A time function. Its numbers live in x[x .. x+nx-1]: constant [value],
 * step [t0, v0, t1, v1], sine [amplitude, frequency, phase, offset],
 * spline [y_0 .. y_{n-1}] (knot values). Spline knot times are fixed (not in
 * x): the spline is linear in the knot values, with a times-only
 * factorization precomputed at load (src/kernels/functions.c). */
typedef struct mbs_func_info {
    char *name;
    char *where;
    mbs_func_type type;
    int variant;           /* step: 0 cubic, 1 quintic; spline: 0 natural, 1 clamped */
    int x, nx;
    int n;                 /* spline: knots (= nx) */
    double *t;             /* spline: knot times, n, strictly increasing */
    double *coef;          /* spline: 6 per knot: a, c', piv, R-, R0, R+ (see functions.c) */
    double *mom;           /* spline: f''(t_k) at the values in xm (mbs_forces_prepare), n */
    const double *xm;      /* spline: the model vector mom belongs to (its model's x) */
} mbs_func_info;

/* Closed loops (src/model/constraint_model.c, src/constraints/, docs/formulations.md
 * "Closed loops"). A cut joint closes a loop of the spanning tree: it has no
 * coordinates and is replaced by loop-closure equations between its two
 * joint frames. Its frames live in x like those of tree joints. */
typedef struct mbs_cut_info {
    char *name;
    char *where;
    mbs_joint_type type;
    int body[2];           /* parent-side and child-side bodies as written in the file (0 = ground) */
    int x_ppoint;          /* parent-side joint point, body[0]-local coordinates (3) */
    int x_cpoint;          /* child-side joint point, body[1]-local coordinates (3) */
    int x_Xp;              /* parent-side joint frame, 3x3 row-major: columns axis, ref, axis x ref */
    int x_Xc;              /* child-side joint frame */
    int user;              /* marked "cut": true in the model file */
    int row, nrows;        /* its rows in the constraint vector */
    int nloop;             /* number of bodies in its loop */
    int *loop;             /* the loop: body[0] up to the common ancestor, then down to body[1] */
} mbs_cut_info;

/* A driving (rheonomic) constraint: coordinate q_k - f(t) = 0, or distance
 * |r2 - r1| - f(t) = 0 between two body points. f is a time function of the
 * model (func >= 0) or the linear law f = x[x] + x[x + 1] t. */
typedef struct mbs_driver_info {
    char *name;
    char *where;
    int type;              /* mbs_driver_type (mbsens/constraints.h) */
    int coord;             /* coordinate driver: index in q; else -1 */
    int body[2];           /* distance driver: bodies of the two points; else -1 */
    int x_point[2];        /* distance driver: local coordinates of the points (3 each) */
    int func;              /* time function index, or -1 for the linear law */
    int x;                 /* linear law: value and rate in x[x], x[x + 1]; else -1 */
    int row;               /* its row in the constraint vector */
} mbs_driver_info;

/* Everything about constraints. Rows of the constraint vector: loop closure
 * (cut joints in order), then drivers, then one Euler-parameter
 * normalization per spherical or floating tree joint (in body order). */
typedef struct mbs_model_con {
    int ncut;
    mbs_cut_info *cut;
    int ndriver;
    mbs_driver_info *driver;
    int nloop_rows;        /* sum of cut[k].nrows */
    int *euler_joint;      /* n_euler: the joint of each normalization row */
    char **row_name;       /* one per row: "loop j4: point x", "driver d1", "euler j2" */
    /* "assembly" section: coordinates held fixed by the kinematic problems */
    int nfixed;
    int *fixed;            /* indices in q */
    double tol;            /* Newton-Raphson tolerance on |dz|_2 */
    int max_iter;
} mbs_model_con;

/* A design parameter rho sets model entries x[target[k]] = scale[k] * rho + offset[k]. */
typedef struct mbs_param_info {
    char *name;
    double value, lower, upper;
    int ntargets;
    int *target;
    double *scale;
    double *offset;
    char **target_name;    /* as written in the model file */
} mbs_param_info;

/* The "simulation" and "outputs" sections of a model file (src/integrators,
 * docs/model-format.md). Zero (present = 0, no outputs) for models that
 * have none: mbs_model_sim_options() then gives the built-in defaults. */
#include "mbsens/simulate.h"
typedef struct mbs_model_sim {
    int present;               /* the file has a "simulation" section */
    mbs_sim_options options;   /* built-in defaults overridden by the section */
    int noutput;
    mbs_output *output;        /* the "outputs" section, in file order */
} mbs_model_sim;

/* An objective function (src/kernels/objectives.c, docs/sensitivity.md):
 *   psi = integral over [t0, tF] of sum(integral terms) dt + sum(terminal terms at tF)
 * Each term is weight * |e|^power (squared; power 2 unless given) or
 * weight * e (linear, scalar e), with e = quantity - reference. */
typedef enum mbs_objective_quantity {
    MBS_OBJQ_POINT_POSITION = 0,
    MBS_OBJQ_POINT_VELOCITY,
    MBS_OBJQ_POINT_ACCELERATION,
    MBS_OBJQ_COORDINATE,
    MBS_OBJQ_COORDINATE_VELOCITY,
    MBS_OBJQ_COORDINATE_ACCELERATION,
    MBS_OBJQ_COORDINATE_FORCE,    /* the generalized force of inverse dynamics, tau = M qdd - Q:
                                   * what the coordinate's driver, loop constraints or actuator
                                   * supply (for a coordinate driver, minus its multiplier) */
    MBS_OBJQ_ANGULAR_VELOCITY,
    MBS_OBJQ_KINETIC_ENERGY       /* of the whole system (scalar) */
} mbs_objective_quantity;

typedef struct mbs_objective_term {
    mbs_objective_quantity quantity;
    int point;             /* point index (point quantities), else -1 */
    int coord;             /* coordinate index (coordinate quantities), else -1 */
    int ncoord;            /* coordinate quantities: 1, or 3 (a vector of coord3's) */
    int coord3[3];
    int body;              /* body (angular velocity), else -1 */
    int vector;            /* angular velocity: project on this body vector (-1: global axes) */
    int component;         /* 0..2: one component of a vector quantity; -1: all */
    int squared;           /* 1: weight |e|^power, 0: weight e (scalar only) */
    double power;          /* >= 2; 2 unless the file gives one */
    double weight;
    int nref;              /* 1 or 3 reference values (components used) */
    double ref[3];         /* constant reference, where func[k] < 0 */
    int func[3];           /* time function per component, -1 for the constant */
} mbs_objective_term;

typedef struct mbs_objective_info {
    char *name;
    char *where;
    int nterm;             /* integral terms first, then terminal ones */
    int nintegral;
    mbs_objective_term *term;
} mbs_objective_info;

/* The names of a finished model, for the name look-ups (model.c:
 * mbs_model_index_names, mbs_body_find, mbs_point_find, ...). Keys are the
 * model's own strings; where two items have the same name (qualified point
 * names "a.b" + "c" and "a" + "b.c", coordinate names) the first one wins.
 * Vectors are keyed by (body, qualified name). */
typedef struct mbs_model_names {
    mbs_hashmap body, joint, point, vector, coord, param, func;
} mbs_model_names;

/* Visual and collision geometry of a URDF link (src/model/visual_model.c), fixed
 * to a body; model data, never read by the dynamics. */
typedef struct mbs_visual_info {
    int body;
    mbs_visual_shape shape;
    double size[3];
    double R[9], p[3];     /* shape frame in the body frame */
    double rgba[4];        /* rgba[3] < 0: not given */
    int collision;
    char *mesh;            /* as written in the file */
    char *link;
} mbs_visual_info;

struct mbs_model {
    char *name;
    char *source;          /* the file loaded, or NULL */
    int nb;                /* moving bodies; arrays below have nb+1 entries, 0 = ground */
    int nq, ndof;
    int nx;
    double *x;             /* the model vector */
    int x_gravity;         /* x[x_gravity .. +2] */
    mbs_body_info *body;
    mbs_joint_info *joint; /* joint[i] moves body[i]; joint[0] unused */
    char **coord_name;     /* nq */
    char **vel_name;       /* nv: the coordinate's name for rates; J.vx .. J.wz for tangent velocities */
    int npoint;
    mbs_point_info *point;
    int nvector;
    mbs_vector_info *vector;
    int nparam;
    mbs_param_info *param;
    mbs_model_sim sim;     /* simulation defaults and requested outputs */
    int n_euler;           /* number of Euler-parameter quadruples */
    int nv;                /* velocities: the sum of the joints' nv */
    int n_quat;            /* number of unit quaternions in q */
    int nbranch;
    int *branch_first;     /* first (closest to root) body of each branch */
    int *branch_last;      /* last body of each branch */
    int max_depth;
    int lenient_inertia;   /* accept inertias violating the triangle inequality
                            * (mbs_builder_set_inertia_policy: URDF, JSON "lenient_inertia") */
    int nforce;
    mbs_force_info *force; /* force elements, in file order */
    int nfunc;
    mbs_func_info *func;   /* time functions, in file order */
    mbs_model_con con;     /* closed loops, drivers, assembly settings */
    int nobj;
    mbs_objective_info *obj; /* objective functions, in file order */
    mbs_model_names names;
    int nvisual;
    mbs_visual_info *visual; /* URDF visual and collision geometry */
};

/* Names of the inertia entries, in model-vector order. */
extern const char *const mbs_inertia_entry_names[6];

#endif
