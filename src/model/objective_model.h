/*
 * objective_model.h - objective functions as part of the model (internal):
 * copy and free (objective_model.c; the parser of the JSON "objectives"
 * section is io/load_objectives.h).
 */
#ifndef MBS_OBJECTIVE_MODEL_H
#define MBS_OBJECTIVE_MODEL_H

#include "model/model_impl.h"

void mbs_objectives_free(mbs_model *m);
/* Deep copy of src's objectives into dst (dst->obj must be NULL); 0 or -1. */
int mbs_objectives_copy(mbs_model *dst, const mbs_model *src);

#endif
