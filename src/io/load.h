/*
 * load.h - what the model loaders share (internal; load.c, load_json.c,
 * load_urdf.c). mbs_model_load (load.c) dispatches on the file name to the
 * URDF loader or to the JSON one.
 */
#ifndef MBS_IO_LOAD_H
#define MBS_IO_LOAD_H

#include <stdio.h>

#include "mbsens/model.h"

/* A model file open for reading (load.c), or NULL with MBS_ERR_IO in err:
 * "PATH: is a directory, not a model file", or the system's reason. */
FILE *mbs_model_file_open(const char *path, mbs_error *err);

/* The JSON model in file path (load_json.c); warn (may be NULL) receives
 * the warnings of the lenient policies. NULL with the error in err. */
mbs_model *mbs_model_load_json_file(const char *path, mbs_warning_fn warn, void *warn_user, mbs_error *err);

#endif
