/*
 * shortest.h - numbers for the CSV and JSON outputs of the mbsens command:
 * the fewest significant digits, 15 to 17, that read back to the same
 * double, written as "%g" writes them.
 */
#ifndef MBS_CLI_SHORTEST_H
#define MBS_CLI_SHORTEST_H

/* Room for any result, with its terminating zero. */
#define CLI_SHORTEST_LEN 32

/* Write x into buf (CLI_SHORTEST_LEN bytes): the text of the first of
 * "%.15g", "%.16g", "%.17g" that strtod reads back to x (non-finite
 * numbers as "%.15g" writes them). Returns the length. */
int cli_shortest(double x, char *buf);
/* The same by printf and strtod (the reference; the slow path). */
int cli_shortest_printf(double x, char *buf);
/* x with 17 significant digits: the text of "%.17g" (the same rounding,
 * half to even on the exact binary value), by the same integer path. */
int cli_g17(double x, char *buf);
/* The same by printf (the reference; the slow path). */
int cli_g17_printf(double x, char *buf);
/* x in hexadecimal floating point: the text of printf's "%a" (read back
 * exactly by strtod), by bit operations for zero and normal numbers. */
int cli_hexa(double x, char *buf);
/* The same by printf (the reference). */
int cli_hexa_printf(double x, char *buf);

#endif
