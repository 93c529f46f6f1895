/*
 * format_double.c - shortest round-trip text of a double (format_double.h).
 *
 * 17 significant digits always read back exactly (IEEE 754 binary64), so
 * the search is over 15, 16 and 17 digits, each checked with strtod. The
 * formats are fixed strings: a '*' precision sends glibc's printf down a
 * general path that costs several times as much.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/format_double.h"

int mbs_format_double(char *buf, double x)
{
    int n = snprintf(buf, MBS_DOUBLE_CHARS, "%.15g", x);
    if (x != x || strtod(buf, NULL) == x) return n;
    n = snprintf(buf, MBS_DOUBLE_CHARS, "%.16g", x);
    if (strtod(buf, NULL) == x) return n;
    return snprintf(buf, MBS_DOUBLE_CHARS, "%.17g", x);
}
