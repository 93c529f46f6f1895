/*
 * base/error.h - error reporting for every layer of the library
 * (internal): an mbs_error filled printf-style, and a message buffer of
 * MBS_ERROR_MSG_LEN bytes filled the same way (the data's and the
 * integrator's messages). Includes only the public mbsens/error.h.
 */
#ifndef MBS_BASE_ERROR_H
#define MBS_BASE_ERROR_H

#include "mbsens/error.h"

#if defined(__GNUC__)
#define MBS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MBS_PRINTF(f, a)
#endif

/* printf-style helper that fills an mbs_error (may be NULL) and returns code. */
int mbs_error_set(mbs_error *err, int code, const char *fmt, ...) MBS_PRINTF(3, 4);

/* printf-style: the message into msg (MBS_ERROR_MSG_LEN bytes, truncated);
 * returns code. */
int mbs_fail(char msg[MBS_ERROR_MSG_LEN], int code, const char *fmt, ...) MBS_PRINTF(3, 4);

#endif
