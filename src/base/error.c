/*
 * error.c - error reporting helpers and the library version.
 */
#include <stdarg.h>
#include <stdio.h>

#include "mbsens/mbsens.h"
#include "base/error.h"

int mbs_error_set(mbs_error *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0) err->msg[0] = '\0';
    /* Messages are one line: fold any line break into a space. */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return code;
}

int mbs_fail(char msg[MBS_ERROR_MSG_LEN], int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, MBS_ERROR_MSG_LEN, fmt, ap);
    va_end(ap);
    return code;
}

const char *mbs_status_string(int code)
{
    switch (code) {
    case MBS_OK: return "ok";
    case MBS_ERR_IO: return "input/output error";
    case MBS_ERR_PARSE: return "syntax error";
    case MBS_ERR_MODEL: return "invalid model";
    case MBS_ERR_ARG: return "invalid argument";
    case MBS_ERR_NUMERIC: return "numerical failure";
    case MBS_ERR_UNSUPPORTED: return "not supported";
    case MBS_ERR_NOMEM: return "out of memory";
    default: return "unknown status";
    }
}

const char *mbs_version(void)
{
    return MBSENS_VERSION_STRING;
}
