/*
 * mbsens/error.h - error reporting.
 *
 * Functions that can fail take an `mbs_error *` (may be NULL) and return
 * MBS_OK (0) or a negative status. The message names the place (file and
 * line:column, or the JSON path of the offending item) and what is wrong.
 *
 * No call hands back a NaN or an infinity as a result: a result that is
 * not finite (an overflow at a huge state) makes the call return
 * MBS_ERR_NUMERIC with a message naming the result and its entry
 * ("inverse dynamics: tau[theta1] is not finite (-nan)"), in the
 * mbs_error or, for calls on an mbs_data, in mbs_data_error().
 */
#ifndef MBSENS_ERROR_H
#define MBSENS_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MBS_OK = 0,
    MBS_ERR_IO = -1,        /* file cannot be read or written */
    MBS_ERR_PARSE = -2,     /* syntax error in a model file */
    MBS_ERR_MODEL = -3,     /* model is syntactically fine but invalid */
    MBS_ERR_ARG = -4,       /* bad argument to an API function */
    MBS_ERR_NUMERIC = -5,   /* singular matrix, non-convergence, NaN */
    MBS_ERR_UNSUPPORTED = -6,
    MBS_ERR_NOMEM = -7
};

#define MBS_ERROR_MSG_LEN 1024

typedef struct mbs_error {
    int code;                       /* one of the values above */
    char msg[MBS_ERROR_MSG_LEN];    /* human-readable, one line */
} mbs_error;

/* Human-readable name of a status code. */
const char *mbs_status_string(int code);

#ifdef __cplusplus
}
#endif
#endif
