/* load_objectives.h - the parser of the JSON "objectives" section (internal). */
#ifndef MBS_LOAD_OBJECTIVES_H
#define MBS_LOAD_OBJECTIVES_H

#include <jansson.h>

#include "model/objective_model.h"

/* Parse the "objectives" array (may be NULL: none) of the document of
 * `file` into m->obj. Errors name the JSON path. */
int mbs_json_load_objectives(json_t *arr, const char *file, mbs_model *m, mbs_error *err);

#endif
