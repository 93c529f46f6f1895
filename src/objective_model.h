/*
 * objective_model.h - objective functions as part of the model (internal):
 * loading from the JSON "objectives" section, copy and free.
 */
#ifndef MBS_OBJECTIVE_MODEL_H
#define MBS_OBJECTIVE_MODEL_H

#include <jansson.h>
#include "model_impl.h"

/* Parse the "objectives" array (may be NULL: none) of the document of
 * `file` into m->obj. Errors name the JSON path. */
int mbs_json_load_objectives(json_t *arr, const char *file, mbs_model *m, mbs_error *err);

void mbs_objectives_free(mbs_model *m);
/* Deep copy of src's objectives into dst (dst->obj must be NULL); 0 or -1. */
int mbs_objectives_copy(mbs_model *dst, const mbs_model *src);

#endif
