/*
 * generate.c - generated benchmark models (see mbsens/generate.h).
 *
 * The document is built with jansson and dumped with two-space indentation.
 * Every value is a deterministic function of (n, joint, floating_base).
 */
#include "mbsens/generate.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINK_LENGTH 0.3
#define LINK_WIDTH 0.04
#define LINK_HEIGHT 0.03

/* Build state: a failed jansson allocation anywhere sets `failed`. */
typedef struct {
    int failed;
} gen;

static int set_error(mbs_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Takes ownership of val (also when obj or val is NULL). */
static void put(gen *g, json_t *obj, const char *key, json_t *val)
{
    if (!val || json_object_set_new(obj, key, val) != 0)
        g->failed = 1;
}

static void push(gen *g, json_t *arr, json_t *val)
{
    if (!val || json_array_append_new(arr, val) != 0)
        g->failed = 1;
}

static json_t *num_array(gen *g, const double *x, int n)
{
    json_t *a = json_array();
    if (!a) {
        g->failed = 1;
        return NULL;
    }
    for (int k = 0; k < n; k++)
        push(g, a, json_real(x[k]));
    return a;
}

static json_t *vec3(gen *g, double x, double y, double z)
{
    const double v[3] = {x, y, z};
    return num_array(g, v, 3);
}

/* Fractional part of k times the golden ratio: well spread in [0, 1). */
static double golden(int k)
{
    double x = k * 0.6180339887498949;
    return x - floor(x);
}

/* Small constant tilt of the inertia axes: rotation by 0.15 rad about the
 * unit vector of (1, 2, 3). Row-major. */
static void tilt_matrix(double R[9])
{
    const double s = sqrt(14.0);
    const double u[3] = {1 / s, 2 / s, 3 / s};
    const double a = 0.15, c = cos(a), sn = sin(a), t = 1 - c;
    R[0] = c + u[0] * u[0] * t;
    R[1] = u[0] * u[1] * t - u[2] * sn;
    R[2] = u[0] * u[2] * t + u[1] * sn;
    R[3] = u[1] * u[0] * t + u[2] * sn;
    R[4] = c + u[1] * u[1] * t;
    R[5] = u[1] * u[2] * t - u[0] * sn;
    R[6] = u[2] * u[0] * t - u[1] * sn;
    R[7] = u[2] * u[1] * t + u[0] * sn;
    R[8] = c + u[2] * u[2] * t;
}

/* Inertia about the CoM of a solid box (length along x) of mass m, turned
 * by R: I = R diag(Ixx, Iyy, Izz) R^T, as [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]. */
static void box_inertia(double m, const double R[9], double out[6])
{
    const double L = LINK_LENGTH, w = LINK_WIDTH, h = LINK_HEIGHT;
    const double d[3] = {m / 12 * (w * w + h * h), m / 12 * (L * L + h * h),
                         m / 12 * (L * L + w * w)};
    double I[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++)
                s += R[3 * i + k] * d[k] * R[3 * j + k];
            I[3 * i + j] = s;
        }
    out[0] = I[0];
    out[1] = I[4];
    out[2] = I[8];
    out[3] = 0.5 * (I[1] + I[3]);
    out[4] = 0.5 * (I[2] + I[6]);
    out[5] = 0.5 * (I[5] + I[7]);
}

static double link_mass(int k)
{
    /* 0.8 .. 1.2 kg, rounded to 0.1 g; distinct for k = 1..256. */
    return round((0.8 + 0.4 * golden(k)) * 1e4) / 1e4;
}

/* Deterministic small joint angle and rate, never zero. */
static double angle0(int k, int j)
{
    double sign = ((k + j) % 2) ? -1.0 : 1.0;
    return sign * (0.15 + 0.1 * sin(1.7 * k + 0.9 * j));
}

static double rate0(int k, int j)
{
    double sign = ((k + j) % 2) ? 1.0 : -1.0;
    return sign * (0.08 + 0.04 * cos(0.8 * k + 1.3 * j));
}

/* Euler parameters p of a rotation by `angle` about `axis` (normalized
 * here), and pdot = 1/2 E(p)^T w for a relative angular velocity w, with
 * E(p) = [-e, e0 I + e~]. E(p) p = 0, so p.pdot = 0 for any w. */
static void euler_state(const double axis[3], double angle, const double w[3],
                        double p[4], double pd[4])
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double s = sin(0.5 * angle) / n;
    p[0] = cos(0.5 * angle);
    p[1] = s * axis[0];
    p[2] = s * axis[1];
    p[3] = s * axis[2];
    /* rows of E: [-e1, e0, -e3, e2], [-e2, e3, e0, -e1], [-e3, -e2, e1, e0] */
    const double E[3][4] = {{-p[1], p[0], -p[3], p[2]},
                            {-p[2], p[3], p[0], -p[1]},
                            {-p[3], -p[2], p[1], p[0]}};
    for (int j = 0; j < 4; j++)
        pd[j] = 0.5 * (E[0][j] * w[0] + E[1][j] * w[1] + E[2][j] * w[2]);
}

static const char *joint_type_name(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_FIXED: return "fixed";
    case MBS_JOINT_REVOLUTE: return "revolute";
    case MBS_JOINT_PRISMATIC: return "prismatic";
    case MBS_JOINT_CYLINDRICAL: return "cylindrical";
    case MBS_JOINT_CARDAN: return "cardan";
    case MBS_JOINT_SPHERICAL: return "spherical";
    case MBS_JOINT_PLANAR: return "planar";
    case MBS_JOINT_FLOATING: return "floating";
    default: return "?";
    }
}

static json_t *make_body(gen *g, int k, const double R[9])
{
    json_t *b = json_object();
    double m = link_mass(k), I[6];
    char name[32];
    snprintf(name, sizeof name, "link%d", k);
    box_inertia(m, R, I);
    put(g, b, "name", json_string(name));
    put(g, b, "mass", json_real(m));
    put(g, b, "com", vec3(g, 0.5 * LINK_LENGTH, 0.005, -0.003));
    put(g, b, "inertia", num_array(g, I, 6));
    json_t *pts = json_object();
    put(g, pts, "base", vec3(g, 0, 0, 0));
    put(g, pts, "tip", vec3(g, LINK_LENGTH, 0, 0));
    put(g, b, "points", pts);
    return b;
}

static json_t *make_joint(gen *g, int k, mbs_joint_type type, int floating)
{
    json_t *j = json_object();
    char name[32], parent[32], child[32];
    double q[7], qd[7];
    int nq = 0;
    snprintf(name, sizeof name, "j%d", k);
    snprintf(parent, sizeof parent, "link%d", k - 1);
    snprintf(child, sizeof child, "link%d", k);
    if (k == 1 && floating)
        type = MBS_JOINT_FLOATING;
    put(g, j, "name", json_string(name));
    put(g, j, "type", json_string(joint_type_name(type)));
    put(g, j, "parent", json_string(k == 1 ? "ground" : parent));
    put(g, j, "child", json_string(child));
    if (k == 1)
        put(g, j, "parent_point", vec3(g, 0, 0, 0));
    else
        put(g, j, "parent_point", json_string("tip"));
    put(g, j, "child_point", json_string("base"));

    switch (type) {
    case MBS_JOINT_REVOLUTE:
        if (k % 2)
            put(g, j, "axis", vec3(g, 0, 0, 1));
        else
            put(g, j, "axis", vec3(g, 0, 1, 0));
        q[0] = angle0(k, 0);
        qd[0] = rate0(k, 0);
        nq = 1;
        break;
    case MBS_JOINT_CARDAN:
        put(g, j, "axis", vec3(g, 0, 0, 1));
        put(g, j, "ref", vec3(g, 0, 1, 0));
        for (int c = 0; c < 2; c++) {
            q[c] = angle0(k, c);
            qd[c] = rate0(k, c);
        }
        nq = 2;
        break;
    case MBS_JOINT_SPHERICAL: {
        const double axis[3] = {sin(1.0 * k), cos(1.3 * k), 0.5};
        const double w[3] = {rate0(k, 0), rate0(k, 1), rate0(k, 2)};
        euler_state(axis, 2 * angle0(k, 0), w, q, qd);
        nq = 4;
        break;
    }
    case MBS_JOINT_FLOATING: {
        const double axis[3] = {0, 0, 1};
        const double w[3] = {0.02, -0.01, 0.03};
        euler_state(axis, 0.0, w, q + 3, qd + 3);   /* identity rotation */
        q[0] = 0.1;
        q[1] = -0.2;
        q[2] = 1.0;
        qd[0] = 0.01;
        qd[1] = -0.02;
        qd[2] = 0.03;
        nq = 7;
        break;
    }
    default:
        g->failed = 1;   /* not reached: checked by the caller */
        break;
    }
    put(g, j, "q0", num_array(g, q, nq));
    put(g, j, "qd0", num_array(g, qd, nq));
    return j;
}

static json_t *make_parameters(gen *g)
{
    json_t *params = json_array();

    json_t *m1 = json_object();
    put(g, m1, "name", json_string("m1"));
    put(g, m1, "value", json_real(link_mass(1)));
    put(g, m1, "lower", json_real(0.1));
    put(g, m1, "upper", json_real(10.0));
    json_t *sets = json_array();
    push(g, sets, json_string("link1.mass"));
    put(g, m1, "sets", sets);
    push(g, params, m1);

    json_t *L1 = json_object();
    put(g, L1, "name", json_string("L1"));
    put(g, L1, "value", json_real(LINK_LENGTH));
    put(g, L1, "lower", json_real(0.1));
    put(g, L1, "upper", json_real(1.0));
    sets = json_array();
    push(g, sets, json_string("link1.tip[0]"));
    json_t *com = json_object();
    put(g, com, "target", json_string("link1.com[0]"));
    put(g, com, "scale", json_real(0.5));
    push(g, sets, com);
    put(g, L1, "sets", sets);
    push(g, params, L1);
    return params;
}

char *mbs_generate_chain_json(int n, mbs_joint_type joint, int floating_base,
                              mbs_error *err)
{
    if (n < MBS_GENERATE_CHAIN_MIN_LINKS || n > MBS_GENERATE_CHAIN_MAX_LINKS) {
        set_error(err, MBS_ERR_ARG, "chain: number of links %d out of range [%d, %d]", n,
                  MBS_GENERATE_CHAIN_MIN_LINKS, MBS_GENERATE_CHAIN_MAX_LINKS);
        return NULL;
    }
    if (joint != MBS_JOINT_REVOLUTE && joint != MBS_JOINT_CARDAN &&
        joint != MBS_JOINT_SPHERICAL) {
        set_error(err, MBS_ERR_ARG,
                  "chain: unsupported joint type '%s' (expected revolute, cardan or spherical)",
                  joint_type_name(joint));
        return NULL;
    }

    gen g = {0};
    char name[64], desc[256];
    double R[9];
    tilt_matrix(R);
    snprintf(name, sizeof name, "chain_%s_%d%s", joint_type_name(joint), n,
             floating_base ? "_floating" : "");
    snprintf(desc, sizeof desc,
             "Generated spatial chain: %d links (0.3 m boxes), %s joints%s.", n,
             joint_type_name(joint),
             floating_base ? ", floating base" : "");

    json_t *root = json_object();
    put(&g, root, "name", json_string(name));
    put(&g, root, "description", json_string(desc));
    put(&g, root, "gravity", vec3(&g, 0, 0, -9.81));
    json_t *bodies = json_array(), *joints = json_array();
    put(&g, root, "bodies", bodies);
    put(&g, root, "joints", joints);
    for (int k = 1; k <= n && !g.failed; k++) {
        push(&g, bodies, make_body(&g, k, R));
        push(&g, joints, make_joint(&g, k, joint, floating_base));
    }
    put(&g, root, "parameters", make_parameters(&g));

    char *text = NULL;
    if (!g.failed) {
        const size_t flags = JSON_INDENT(2) | JSON_REAL_PRECISION(15);
        size_t len = json_dumpb(root, NULL, 0, flags);
        if (len > 0 && (text = malloc(len + 2)) != NULL) {
            if (json_dumpb(root, text, len, flags) == len) {
                text[len] = '\n';
                text[len + 1] = '\0';
            } else {
                free(text);
                text = NULL;
            }
        }
    }
    json_decref(root);
    if (!text)
        set_error(err, MBS_ERR_NOMEM, "chain: out of memory");
    else if (err) {
        err->code = MBS_OK;
        err->msg[0] = '\0';
    }
    return text;
}
