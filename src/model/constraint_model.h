/*
 * constraint_model.h - closed loops and driving constraints on the model
 * side (internal; constraint_model.c): row counts and names of the cut
 * types, release and deep copy of mbs_model.con.
 */
#ifndef MBS_CONSTRAINT_MODEL_H
#define MBS_CONSTRAINT_MODEL_H

#include "model/model_impl.h"
#include "mbsens/constraints.h"

/* Row r of a cut joint of type t: "point x", "axis y", "cross" ... */
const char *mbs_cut_row_suffix(mbs_joint_type t, int r);

/* Total rows: loop closure + drivers + Euler normalization. */
int mbs_con_nrows(const mbs_model *m);

void mbs_con_model_free(mbs_model *m);
/* Deep copy of m->con into c->con (overwritten); 0, or -1 if memory runs
 * out (c->con is then consistent for mbs_con_model_free). */
int mbs_con_model_copy(mbs_model *c, const mbs_model *m);

#endif
