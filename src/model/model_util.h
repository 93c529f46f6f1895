/*
 * model_util.h - internal helpers around mbs_model (model.c).
 *
 * Shared by the builder, the loaders and mbs_model_with_params():
 * joint-type tables, deep copy, parameter application and the physical
 * checks of the model vector.
 */
#ifndef MBS_MODEL_UTIL_H
#define MBS_MODEL_UTIL_H

#include <stdio.h>

#include "model/model_impl.h"

/* Coordinates / degrees of freedom / offset of the Euler parameters in the
 * joint's q (-1 if none) of a joint type; -1 for an invalid type. */
int mbs_joint_type_nq(mbs_joint_type t);
int mbs_joint_type_ndof(mbs_joint_type t);
int mbs_joint_type_euler(mbs_joint_type t);
/* Suffix of coordinate k of a joint type ("theta1", "e0", ...), or NULL for
 * one-coordinate joints (the coordinate is then named like the joint). */
const char *mbs_joint_coord_suffix(mbs_joint_type t, int k);

/* malloc'd copy of s (NULL if s is NULL or memory runs out). */
char *mbs_strdup(const char *s);

/* Deep copy (NULL if memory runs out). */
mbs_model *mbs_model_copy(const mbs_model *m);

/* Index the names of a finished model (m->names): 0, or -1 if memory runs
 * out. The builder and mbs_model_copy call it. */
int mbs_model_index_names(mbs_model *m);
void mbs_model_names_free(mbs_model *m);
/* Look-ups by name, -1 if absent: a tree joint (1..nb), a coordinate, a
 * time function, a vector of `body` by its qualified name "BODY.NAME". */
int mbs_model_find_joint(const mbs_model *m, const char *name);
int mbs_model_find_coord(const mbs_model *m, const char *name);
int mbs_model_find_func(const mbs_model *m, const char *name);
int mbs_model_find_vector(const mbs_model *m, int body, const char *qualified);

/* Write every parameter target: x[target] = scale * value + offset. */
void mbs_model_apply_params(mbs_model *m);

/* Physical checks on the model vector as it stands (parameters applied):
 * finite gravity, points and vectors; per body finite mass >= 0, finite
 * centre of mass, inertia zero or positive definite with the triangle
 * inequality of principal moments, zero inertia for zero mass.
 * MBS_OK or MBS_ERR_MODEL with "<body where>: body NAME: ..." in err. */
int mbs_model_check_physics(const mbs_model *m, mbs_error *err);

/* Principal moments (ascending) of the symmetric inertia given by its six
 * entries xx yy zz xy xz yz (Jacobi rotations). */
void mbs_inertia_principal(const double I6[6], double lam[3]);

/* Visual geometry (src/model/visual_model.c): free, deep copy (0 or -1). */
void mbs_visuals_free(mbs_model *m);
int mbs_visuals_copy(mbs_model *dst, const mbs_model *src);
/* MJCF <geom>s of the primitive visual shapes of body b (collision shapes
 * of links that have no visual), indented by `indent` spaces; how many. */
int mbs_visual_geoms_mjcf(const mbs_model *m, int b, FILE *f, int indent);

#endif
