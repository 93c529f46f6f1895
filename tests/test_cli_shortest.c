/*
 * test_cli_shortest.c - the number formatter of the mbsens command
 * (cli/shortest.c): its integer fast path writes exactly the text of the
 * printf reference (the first of %.15g, %.16g, %.17g that strtod reads back)
 * for doubles of every kind, and that text reads back to the same double;
 * cli_g17 writes exactly the text of printf's "%.17g" and cli_hexa that
 * of "%a" (the sweep's checkpoint) for the same doubles. Text equality is the assertion: no tolerance.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shortest.h"

static long checks, failures;

static void check(double x, const char *what)
{
    char fast[CLI_SHORTEST_LEN], ref[CLI_SHORTEST_LEN];
    int nf = cli_shortest(x, fast), nr = cli_shortest_printf(x, ref);
    checks++;
    if (nf != nr || strcmp(fast, ref) != 0 || (isfinite(x) && strtod(fast, NULL) != x)) {
        if (failures++ < 20) printf("FAILED: %s: %a: '%s' (%d), reference '%s' (%d)\n", what, x, fast, nf, ref, nr);
    }
    nf = cli_g17(x, fast), nr = cli_g17_printf(x, ref);
    checks++;
    if (nf != nr || strcmp(fast, ref) != 0) {
        if (failures++ < 20) printf("FAILED: %s: %a: %%.17g '%s' (%d), printf '%s' (%d)\n", what, x, fast, nf, ref, nr);
    }
    nf = cli_hexa(x, fast), nr = cli_hexa_printf(x, ref);
    checks++;
    if (nf != nr || strcmp(fast, ref) != 0 || (isfinite(x) && strtod(fast, NULL) != x)) {
        if (failures++ < 20) printf("FAILED: %s: %%a '%s' (%d), printf '%s' (%d)\n", what, fast, nf, ref, nr);
    }
}

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

int main(void)
{
    /* edges: zero, subnormals, extremes, powers of two and ten, ties of the
     * decimal rounding, the bounds of the fast path (1e-11 .. 1e16) */
    const double edges[] = { 0.0, -0.0, 5e-324, -5e-324, DBL_MIN, -DBL_MIN, DBL_MAX, -DBL_MAX, DBL_EPSILON,
                             1.0, -1.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 0.5, 1.5, 9.5, 123.456,
                             1e15, 1e16, 1e17, 1e22, 1e23, 9007199254740992.0, 9007199254740993.0,
                             1e-11, 1e-12, 9.999999999999999e-12, 1e-5, 1e-4, 9.9999999999999e-5,
                             0.0001, 0.00010000000000000002, 99999.99999999999, 999999999999999.9,
                             /* ties of the 17th digit (exact 18-digit values ending in 5) */
                             1234567890123456.25, 1234567890123456.75, 1234567890123457.25,
                             1234567890123457.75, -1234567890123456.25, 0.123456789012345625,
                             INFINITY, -INFINITY, NAN };
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) check(edges[k], "edge");
    for (int e = -1074; e <= 1023; e++) {
        check(ldexp(1, e), "power of two");
        check(nextafter(ldexp(1, e), 0), "below a power of two");
        check(nextafter(ldexp(1, e), INFINITY), "above a power of two");
    }
    for (int e = -30; e <= 30; e++) {
        double p = pow(10, e);
        check(p, "power of ten");
        check(nextafter(p, 0), "below a power of ten");
        check(nextafter(p, INFINITY), "above a power of ten");
    }
    for (long i = 0; i < 600000; i++) {
        uint64_t r = next();
        double x;
        switch (i % 4) {
        case 0: memcpy(&x, &r, sizeof x); break;                                          /* any bits */
        case 1: x = ldexp((double)(r >> 11), -53) * pow(10, (int)(next() % 40) - 20); break;   /* decades */
        case 2: x = (double)((int64_t)(r % 2000001) - 1000000) / pow(10, (int)(next() % 12)); break;   /* short decimals */
        default: x = ldexp((double)(r >> 11), -53) * 10 - 5; break;   /* states of a simulation */
        }
        check(x, "random");
    }
    printf("test_cli_shortest: %ld passed, %ld failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
