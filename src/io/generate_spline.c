/*
 * generate_spline.c - mbs_generate_spline_body_json: the model of the
 * parameter-count sweep of the sensitivity methods (include/mbsens/generate.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mbsens/generate.h"
#include "base/error.h"

/* append with bounds: returns 0, or -1 when the buffer is full */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int put(char **p, char *end, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*p, (size_t)(end - *p), fmt, ap);
    va_end(ap);
    if (n < 0 || n >= end - *p) return -1;
    *p += n;
    return 0;
}

/* The knot values sample one profile of the normalized time s = t / tf,
 * u(s) = 1 + 0.5 sin(4 pi s) (two periods), whatever the knot count: the
 * maneuver is the same for every p (to the spline's interpolation error,
 * 2e-4 at 32 knots), as in the thesis's sweep, where the splines are held
 * constant, so that the sweep measures the cost of more parameters and not
 * of a harder motion. */
static double knot_value(int k, int nknots)
{
    const double s = (double)k / (nknots - 1);
    return 1 + 0.5 * sin(4 * 3.14159265358979323846 * s);
}

char *mbs_generate_spline_body_json(int nknots, double tf, mbs_error *err)
{
    if (nknots < 2 || nknots > 100000) {
        mbs_error_set(err, MBS_ERR_ARG, "generate spline: knots must be in [2, 100000] (got %d)", nknots);
        return NULL;
    }
    if (!(tf > 0) || !isfinite(tf)) {
        mbs_error_set(err, MBS_ERR_ARG, "generate spline: tf must be positive (got %g)", tf);
        return NULL;
    }
    size_t cap = 4096 + (size_t)nknots * 160;
    char *s = malloc(cap), *p = s, *end = s + cap;
    if (!s) {
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    int bad = put(&p, end, "{\n  \"name\": \"spline_body_%d\",\n", nknots) ||
              put(&p, end, "%s",
                  "  \"description\": \"A free rigid body pushed by a spline-shaped force and torque in body axes; "
                  "the spline's knot values are the design parameters (sensitivity sweep).\",\n"
                  "  \"gravity\": [0, 0, -9.81],\n"
                  "  \"bodies\": [ { \"name\": \"box\", \"mass\": 2, \"inertia\": [0.05, 0.08, 0.11, 0.002, 0, 0.001],\n"
                  "      \"points\": { \"nose\": [0.3, 0.05, 0] } } ],\n"
                  "  \"joints\": [ { \"name\": \"free\", \"type\": \"floating\", \"parent\": \"ground\", \"child\": \"box\",\n"
                  "      \"q0\": [0, 0, 1, 1, 0, 0, 0], \"qd0\": [0.1, 0, 0.5, 0, 0.2, -0.1, 0.3] } ],\n"
                  "  \"functions\": [ { \"name\": \"u\", \"type\": \"spline\", \"times\": [");
    for (int k = 0; k < nknots && !bad; k++)
        bad = put(&p, end, "%s%.17g", k ? ", " : "", tf * k / (nknots - 1));
    bad = bad || put(&p, end, "%s", "], \"values\": [");
    for (int k = 0; k < nknots && !bad; k++) bad = put(&p, end, "%s%.17g", k ? ", " : "", knot_value(k, nknots));
    bad = bad || put(&p, end, "%s",
                     "] } ],\n  \"forces\": [ { \"name\": \"thrust\", \"type\": \"body_load\", \"body\": \"box\", \"point\": \"nose\",\n"
                     "      \"force\": [0, 2, 15], \"torque\": [0.1, 0, 0], \"axes\": \"body\", \"function\": \"u\" } ],\n"
                     "  \"parameters\": [");
    for (int k = 0; k < nknots && !bad; k++)
        bad = put(&p, end, "%s\n    { \"name\": \"u%d\", \"value\": %.17g, \"sets\": [ \"u.values[%d]\" ] }",
                  k ? "," : "", k, knot_value(k, nknots), k);
    bad = bad || put(&p, end,
                     " ],\n  \"objectives\": [\n"
                     "    { \"name\": \"track\", \"integral\": [ { \"point\": \"box.nose\", \"reference\": [0.3, 0.2, 1.2] } ] },\n"
                     "    { \"name\": \"spin\", \"integral\": [ { \"body\": \"box\", \"quantity\": \"angular_velocity\" } ] } ],\n"
                     "  \"simulation\": { \"tf\": %.17g, \"dt\": 0.001 }\n}\n", tf);
    if (bad) {
        free(s);
        mbs_error_set(err, MBS_ERR_NOMEM, "generate spline: text too long");
        return NULL;
    }
    return s;
}
