/*
 * builder_impl.h - the records of the model builder, shared by its files
 * (internal):
 *   builder.c             the object and the items, recorded by handle in
 *                         input order, each checked as it is added;
 *   finish.c              mbs_builder_finish: the stages that make the model;
 *   finish_topology.c     the spanning tree and the cut joints;
 *   finish_constraints.c  the closed loops, drivers and assembly of the model;
 *   finish_initial.c      the initial configuration (spring lengths, with the
 *                         kernels), the spline moments and the checks.
 */
#ifndef MBS_BUILDER_IMPL_H
#define MBS_BUILDER_IMPL_H

#include <math.h>

#include "builder/builder.h"
#include "base/hashmap.h"
#include "model/model_impl.h"
#include "model/model_util.h"

typedef struct {
    char *name, *where;
    double mass, com[3], inertia[6];
} b_body;

typedef struct {
    int body;
    char *name;            /* NULL: anonymous placement point */
    char *where;
    double xyz[3];
} b_point;

typedef struct {
    int body;
    char *name, *where;
    double xyz[3];         /* unit */
} b_vector;

typedef struct {
    char *name, *where;
    mbs_joint_type type;
    int parent, child;     /* body handles */
    int ppoint, cpoint;    /* point handles */
    double Xp[9], Xc[9];
    double q0[7], qd0[7];  /* qd0: coordinate rates (nq) */
    int cut;               /* marked "cut": true */
    int velocities;        /* mbs_velocities (spherical and floating joints) */
    int has_v0;            /* number of v0 values given (the initial velocities in the joint's
                            * convention), -1: none, qd0 holds them as rates */
    double v0[7];
} b_joint;

/* Driving constraints and the assembly section (mbsens/constraints.h). */
typedef struct {
    char *name, *where;
    int type;              /* mbs_driver_type */
    int joint, coord;      /* coordinate driver: joint handle, coordinate within the joint */
    int point[2];          /* distance driver: point handles */
    int func;              /* function handle, or -1: linear law value + rate t */
    double value, rate;
} b_driver;

typedef struct {
    int joint, coord;      /* coord -1: every coordinate of the joint */
    char *where;
} b_fixed;

/* Time functions and force elements (src/model/force_model.c, src/forces/). */
typedef struct {
    char *name, *where;
    mbs_func_type type;
    int variant;
    int n;                 /* numbers in x */
    double *num;           /* n numbers, x order */
    double *t;             /* spline knot times (n), else NULL */
    double *coef;          /* spline factorization (6 n), else NULL */
} b_func;

typedef struct {
    char *name, *where;
    mbs_force_type type;
    int body[2];           /* body handles (-1 unused) */
    int point[2];          /* point handles; body_load: -1 = the CoM */
    int joint, coord;      /* joint handle, coordinate within the joint */
    int nnum;
    double num[24];        /* the element's numbers, x order */
    int shape;             /* contact_plane: 0 sphere, 1 circle */
    int free_given;        /* spring_damper: length given */
    int func;              /* function handle or -1 */
    int body_axes;
} b_force;

enum { T_GRAVITY, T_MASS, T_COM, T_INERTIA, T_POINT, T_FORCE, T_FUNC };

typedef struct {
    int kind, handle, comp;  /* handle: body (mass, com, inertia) or point */
    double scale, offset;
    char *text, *where;
} b_target;

typedef struct {
    char *name, *where;
    double value, lower, upper;
    int nt, capt;
    b_target *t;
} b_param;

struct mbs_builder {
    char *name, *source;
    double g[3];
    int lenient_inertia;   /* mbs_builder_set_inertia_policy */
    void (*warn)(void *user, const char *msg);
    void *warn_user;
    int nb, capb;          /* body[0] is the ground */
    b_body *body;
    int np, capp;
    b_point *point;
    int nv, capv;
    b_vector *vector;
    int nj, capj;
    b_joint *joint;
    int npar, cappar;
    b_param *param;
    int nfunc, capfunc;
    b_func *func;
    int nforce, capforce;
    b_force *force;
    int ndrv, capdrv;
    b_driver *drv;
    int nfix, capfix;
    b_fixed *fix;
    double asm_tol;        /* 0: default */
    int asm_maxit;
    /* name -> handle (tag 0; points and vectors: tag = body handle) */
    mbs_hashmap body_map, point_map, vector_map, joint_map, func_map, force_map, drv_map, param_map;
    mbs_hashmap target_map;   /* parameter targets set: key target_key(), value the parameter */
};

static inline int finite_n(const double *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

static inline const char *W(const char *where) { return where ? where : "model"; }

static inline int oom(mbs_error *err)
{
    return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory while building the model");
}

/* Topology (finish_topology.c): every body keeps one parent joint (pj,
 * per body handle), the others are cut (cut, per joint: 1). MBS_OK, or the
 * error for a body the ground does not reach, or out of memory. */
int mbs_builder_topology(const mbs_builder *b, int *pj, int *cut, mbs_error *err);

/* What the stages of mbs_builder_finish share (finish.c). Handles are the
 * builder's; final indices the model's (bodies in DFS preorder). */
typedef struct finish_ctx {
    const mbs_builder *b;
    mbs_model *m;
    mbs_error *err;
    const char *src;       /* the model's source, for messages */
    int *pj;               /* per body handle: its parent joint */
    int *order;            /* final index -> body handle */
    int *newidx;           /* body handle -> final index */
    int *cut;              /* per joint: cut to open a closed loop */
    int *point_x;          /* per point handle: offset in x; -1: left out */
    int *porder;           /* the points in x order (handles) */
    int *vorder;           /* the vectors in x order (handles) */
    int npoint, nnamed;    /* points in x, the first nnamed of them named */
    int *free_given;       /* per force element: free length given */
    int off;               /* next offset of x to fill */
    int x_vec0;            /* first vector in x */
    int x_cut0;            /* cut joint frames in x, 18 each */
    int x_drv0;            /* linear driver laws in x, 2 each */
} finish_ctx;

/* m->con: cut joints, their loops, the drivers, the Euler rows, the
 * assembly settings and the row names (finish_constraints.c). Needs the
 * tree and the joints of the model. */
int mbs_builder_finish_constraints(finish_ctx *c);

/* The last stage (finish_initial.c): the spring lengths of the initial
 * configuration (default free lengths), the parameters applied again so
 * that a parameter setting a free length wins, the spline moments, the
 * physical checks, the name index and the inertia warnings. */
int mbs_builder_finish_initial(finish_ctx *c);

#endif
