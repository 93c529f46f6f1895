/*
 * generate_free_bodies.c - mbs_generate_free_bodies_json: a robot plus n
 * free rigid bodies, the large branched model of the sparse-tree
 * benchmarks (include/mbsens/generate.h).
 *
 * The robot is written by mbs_model_to_json; the bodies and joints are
 * appended to its "bodies" and "joints" arrays, whose layout that writer
 * fixes (two-space indentation: each array ends at the first line "  ]"
 * after its key). Numbers are the shortest text that reads back exactly.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/generate.h"
#include "base/error.h"
#include "base/format_double.h"

/* a growing text; `bad` once an allocation failed */
typedef struct {
    char *s;
    size_t len, cap;
    int bad;
} text;

static void add(text *t, const char *fmt, ...) MBS_PRINTF(2, 3);
static void add(text *t, const char *fmt, ...)
{
    for (int pass = 0; pass < 2 && !t->bad; pass++) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) { t->bad = 1; return; }
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap <= t->len + (size_t)n) cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) { t->bad = 1; return; }
        t->s = s;
        t->cap = cap;
    }
}

/* "[a, b, c]" of n numbers */
static void add_vec(text *t, const double *x, int n)
{
    char buf[MBS_DOUBLE_CHARS];
    add(t, "[");
    for (int k = 0; k < n; k++) {
        mbs_format_double(buf, x[k]);
        add(t, "%s%s", k ? ", " : "", buf);
    }
    add(t, "]");
}

/* Fractional part of k times the golden ratio: well spread in [0, 1). */
static double spread(int k)
{
    const double x = k * 0.6180339887498949;
    return x - floor(x);
}

/* Body k (1-based): a box of a x b x c m (0.1..0.2, 0.08..0.16,
 * 0.06..0.12, rounded to mm) of density 500 kg/m^3, its principal axes
 * along the local ones. */
static void add_body(text *t, int k)
{
    const double a = round(100 + 100 * spread(3 * k)) / 1000, b = round(80 + 80 * spread(3 * k + 1)) / 1000;
    const double c = round(60 + 60 * spread(3 * k + 2)) / 1000, m = 500 * a * b * c;
    const double I[6] = { m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b), 0, 0, 0 };
    char buf[MBS_DOUBLE_CHARS];
    mbs_format_double(buf, m);
    add(t, "    {\n      \"name\": \"free%d\",\n      \"mass\": %s,\n      \"com\": [0, 0, 0],\n      \"inertia\": ", k,
        buf);
    add_vec(t, I, 6);
    add(t, "\n    }");
}

/* Joint k: floating from the ground origin. The body starts on a grid of
 * 0.5 m beside the robot (10 x 10 per layer, layers 0.5 m apart), turned
 * by up to 1 rad about an axis that changes with k, with a small linear and
 * angular velocity: q = (x, y, z, p), qd = (v, pd = 1/2 E(p)^T w) with
 * E(p) = [-e, e0 I + e~], so p.pd = 0. */
static void add_joint(text *t, int k)
{
    double q[7], qd[7];
    const int i = k - 1;
    q[0] = 1 + 0.5 * (i % 10);
    q[1] = -2.25 + 0.5 * (i / 10 % 10);
    q[2] = 0.5 + 0.5 * (i / 100);
    const double u[3] = { sin(1.0 * k), cos(1.3 * k), 0.5 }, nu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    const double th = 2 * spread(5 * k) - 1, s = sin(th / 2) / nu;
    double *p = q + 3;
    p[0] = cos(th / 2);
    for (int j = 0; j < 3; j++) p[j + 1] = s * u[j];
    const double w[3] = { 0.5 * cos(1.3 * k), 0.5 * sin(1.7 * k), 0.3 * cos(0.5 * k) };
    const double E[3][4] = { { -p[1], p[0], -p[3], p[2] }, { -p[2], p[3], p[0], -p[1] }, { -p[3], -p[2], p[1], p[0] } };
    qd[0] = 0.2 * sin(0.7 * k);
    qd[1] = 0.2 * cos(0.9 * k);
    qd[2] = 0.1 * sin(1.1 * k);
    for (int j = 0; j < 4; j++) qd[3 + j] = 0.5 * (E[0][j] * w[0] + E[1][j] * w[1] + E[2][j] * w[2]);
    add(t, "    {\n      \"name\": \"free%d_joint\",\n      \"type\": \"floating\",\n      \"parent\": \"ground\",\n"
        "      \"child\": \"free%d\",\n      \"q0\": ", k, k);
    add_vec(t, q, 7);
    add(t, ",\n      \"qd0\": ");
    add_vec(t, qd, 7);
    add(t, "\n    }");
}

/* the n bodies (which = 0) or joints (1), each item after ",\n" or, for the
 * first of an empty array, "\n" */
static void add_items(text *t, int n, int which, int first)
{
    for (int k = 1; k <= n; k++) {
        add(t, k == 1 && first ? "\n" : ",\n");
        if (which == 0) add_body(t, k);
        else add_joint(t, k);
    }
}

/* the robot's JSON with the items spliced into its two arrays and
 * "_free_bodies_N" appended to its name; MBS_OK, or an error of the writer */
static int splice(text *t, const mbs_model *robot, int n, mbs_error *err)
{
    char *r = mbs_model_to_json(robot, err);
    if (!r) return err ? err->code : MBS_ERR_NOMEM;
    const char *key[2] = { "\n  \"bodies\": [", "\n  \"joints\": [" };
    const char *name = strstr(r, "\n  \"name\": \""), *at = name ? strchr(name + 1, '\n') : NULL;
    if (!at || at[-1] != ',' || at[-2] != '"') {
        free(r);
        return mbs_error_set(err, MBS_ERR_MODEL, "free bodies: the robot's JSON has no top-level name");
    }
    add(t, "%.*s_free_bodies_%d\",", (int)(at - 2 - r), r, n);
    for (int w = 0; w < 2; w++) {
        const char *open = strstr(at, key[w]), *in = open ? open + strlen(key[w]) : NULL;
        const char *close = !in ? NULL : *in == ']' ? in : strstr(in, "\n  ]");
        if (!close) {
            free(r);
            return mbs_error_set(err, MBS_ERR_MODEL, "free bodies: the robot's JSON has no top-level %s array",
                                 w ? "joints" : "bodies");
        }
        add(t, "%.*s", (int)(close - at), at);
        add_items(t, n, w, close == in);
        if (*close == ']') add(t, "\n  ");
        at = close;
    }
    add(t, "%s", at);
    free(r);
    return MBS_OK;
}

/* MBS_OK if none of the names the bodies and joints take is the robot's */
static int names_free(const mbs_model *robot, int n, mbs_error *err)
{
    char name[32];
    for (int k = 1; k <= n; k++) {
        snprintf(name, sizeof name, "free%d", k);
        if (mbs_body_find(robot, name) >= 0)
            return mbs_error_set(err, MBS_ERR_ARG, "free bodies: the robot has a body named '%s'", name);
    }
    for (int j = 1; j <= mbs_model_nbodies(robot); j++) {
        const char *s = mbs_joint_name(robot, j);
        int k = 0, end = 0;
        if (s && sscanf(s, "free%d_joint%n", &k, &end) == 1 && s[end] == '\0' && k >= 1 && k <= n)
            return mbs_error_set(err, MBS_ERR_ARG, "free bodies: the robot has a joint named '%s'", s);
    }
    return MBS_OK;
}

char *mbs_generate_free_bodies_json(const mbs_model *robot, int n, mbs_error *err)
{
    if (n < 1 || n > MBS_GENERATE_FREE_BODIES_MAX) {
        mbs_error_set(err, MBS_ERR_ARG, "free bodies: number of bodies %d out of range [1, %d]", n,
                      MBS_GENERATE_FREE_BODIES_MAX);
        return NULL;
    }
    text t = { NULL, 0, 0, 0 };
    if (robot) {
        if (names_free(robot, n, err) || splice(&t, robot, n, err)) {
            free(t.s);
            return NULL;
        }
    } else {
        add(&t, "{\n  \"name\": \"free_bodies_%d\",\n  \"description\": \"Generated: %d free rigid bodies (boxes "
            "on floating joints).\",\n  \"gravity\": [0, 0, -9.81],\n  \"bodies\": [", n, n);
        add_items(&t, n, 0, 1);
        add(&t, "\n  ],\n  \"joints\": [");
        add_items(&t, n, 1, 1);
        add(&t, "\n  ]\n}\n");
    }
    if (t.bad) {
        free(t.s);
        mbs_error_set(err, MBS_ERR_NOMEM, "free bodies: out of memory");
        return NULL;
    }
    if (err) {
        err->code = MBS_OK;
        err->msg[0] = '\0';
    }
    return t.s;
}
