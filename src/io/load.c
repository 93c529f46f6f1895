/*
 * load.c - mbs_model_load: a model file by its name, "*.urdf" (any case)
 * to the URDF loader (load_urdf.c), anything else to the JSON one
 * (load_json.c); and the opening of a model file both loaders share.
 */
#define _POSIX_C_SOURCE 200809L   /* fileno, fstat */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "mbsens/model.h"
#include "base/error.h"
#include "io/load.h"

/* "*.urdf", any case */
static int is_urdf(const char *path)
{
    static const char ext[] = ".urdf";
    size_t n = strlen(path);
    if (n < 5) return 0;
    for (size_t k = 0; k < 5; k++) {
        char ch = path[n - 5 + k];
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (ch != ext[k]) return 0;
    }
    return 1;
}

mbs_model *mbs_model_load(const char *path, mbs_error *err)
{
    return mbs_model_load_warn(path, NULL, NULL, err);
}

mbs_model *mbs_model_load_warn(const char *path, mbs_warning_fn warn, void *warn_user, mbs_error *err)
{
    if (!path) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_load: path is NULL");
        return NULL;
    }
    if (is_urdf(path)) {
        mbs_urdf_options o = { 0, 0, warn, warn_user, 0, MBS_VELOCITIES_EULER_RATES };
        return mbs_model_load_urdf(path, &o, err);
    }
    return mbs_model_load_json_file(path, warn, warn_user, err);
}

FILE *mbs_model_file_open(const char *path, mbs_error *err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    int e = f ? (fstat(fileno(f), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0) : errno;
    if (e) {
        if (f) fclose(f);
        if (e == EISDIR)
            mbs_error_set(err, MBS_ERR_IO, "%s: is a directory, not a model file", path);
        else
            mbs_error_set(err, MBS_ERR_IO, "%s: cannot read the file (%s)", path, strerror(e));
        return NULL;
    }
    return f;
}
