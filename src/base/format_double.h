/*
 * format_double.h - a double as the shortest decimal text that reads back
 * as the same double (internal; the JSON model writer, and any writer of
 * numbers meant to be read again).
 */
#ifndef MBS_FORMAT_DOUBLE_H
#define MBS_FORMAT_DOUBLE_H

/* Room for any result of mbs_format_double, the NUL included. */
#define MBS_DOUBLE_CHARS 32

/* x in %g style with the fewest significant digits, from 15 to 17, such
 * that strtod gives x back exactly: 0.042 is "0.042", 0.1 + 0.2 is
 * "0.30000000000000004", -0.0 is "-0". Below 15 digits %g already drops
 * the trailing zeros, so a number that needs fewer gets fewer. Non-finite
 * x gives "inf", "-inf" or "nan". Writes at most MBS_DOUBLE_CHARS bytes
 * to buf and returns the length. */
int mbs_format_double(char *buf, double x);

#endif
