/*
 * load_json.c - the JSON model format (docs/model-format.md) with jansson.
 *
 * The document is walked member by member; every object is checked for
 * unknown members, every value for its type, and each message carries the
 * JSON path of the offending item: "model.json: bodies[1].inertia: ...".
 * The model itself is assembled and validated by the builder.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mbsens/model.h"
#include "mbsens/forces.h"
#include "builder/builder.h"
#include "model/model_util.h"
#include "json_path.h"
#include "model/force_model.h"
#include "load_objectives.h"
#include "io/load.h"

#define PATH_LEN 512

typedef struct {
    const char *file;   /* as used in messages */
    mbs_error *err;
    mbs_builder *b;
    int velocities;     /* the model's "velocities" (mbs_velocities) */
} lctx;

/* "<file>: <path>: <what>" */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail(lctx *c, int code, const char *path, const char *fmt, ...)
{
    char what[MBS_ERROR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (path && *path) return mbs_error_set(c->err, code, "%s: %s: %s", c->file, path, what);
    return mbs_error_set(c->err, code, "%s: %s", c->file, what);
}

static const char *json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* Reject members not in the NULL-terminated list `allowed`. */
static int check_members(lctx *c, json_t *obj, const char *path, const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(key, *a) == 0) ok = 1;
        if (!ok) {
            char list[512] = "";
            size_t len = 0;
            for (const char *const *a = allowed; *a; a++) {
                int n = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *a);
                if (n > 0 && (size_t)n < sizeof list - len) len += (size_t)n;
            }
            return fail(c, MBS_ERR_MODEL, path, "unknown member \"%s\" (allowed: %s)", key, list);
        }
    }
    return MBS_OK;
}

static int get_number(lctx *c, json_t *v, const char *path, double *out)
{
    if (!json_is_number(v))
        return fail(c, MBS_ERR_MODEL, path, "expected a number, got %s", json_type_name(v));
    double d = json_number_value(v);
    if (!isfinite(d)) return fail(c, MBS_ERR_MODEL, path, "number is not finite");
    *out = d;
    return MBS_OK;
}

/* Array of exactly n finite numbers. */
static int get_numbers(lctx *c, json_t *v, const char *path, int n, double *out)
{
    if (!json_is_array(v))
        return fail(c, MBS_ERR_MODEL, path, "expected an array of %d numbers, got %s", n, json_type_name(v));
    if (json_array_size(v) != (size_t)n)
        return fail(c, MBS_ERR_MODEL, path, "expected an array of %d numbers, got %zu element%s", n,
                    json_array_size(v), json_array_size(v) == 1 ? "" : "s");
    for (int k = 0; k < n; k++) {
        json_t *e = json_array_get(v, (size_t)k);
        if (!json_is_number(e))
            return fail(c, MBS_ERR_MODEL, path, "expected an array of %d numbers (element %d is %s)", n, k,
                        json_type_name(e));
        out[k] = json_number_value(e);
        if (!isfinite(out[k])) return fail(c, MBS_ERR_MODEL, path, "element %d is not finite", k);
    }
    return MBS_OK;
}

static int get_string(lctx *c, json_t *v, const char *path, const char **out)
{
    if (!json_is_string(v)) return fail(c, MBS_ERR_MODEL, path, "expected a string, got %s", json_type_name(v));
    *out = json_string_value(v);
    return MBS_OK;
}

static int missing(lctx *c, const char *path, const char *member)
{
    return fail(c, MBS_ERR_MODEL, path, "missing required member \"%s\"", member);
}

/* The required member `key` of the object at `path` as a string / a finite number. */
static int req_string(lctx *c, json_t *obj, const char *path, const char *key, const char **out)
{
    char p[PATH_LEN + 32];
    json_t *v = json_object_get(obj, key);
    if (!v) return missing(c, path, key);
    join3(p, sizeof p, path, ".", key);
    return get_string(c, v, p, out);
}

static int req_number(lctx *c, json_t *obj, const char *path, const char *key, double *out)
{
    char p[PATH_LEN + 32];
    json_t *v = json_object_get(obj, key);
    if (!v) return missing(c, path, key);
    join3(p, sizeof p, path, ".", key);
    return get_number(c, v, p, out);
}

/* ---------------------------------------------------------------- bodies */

static int load_inertia(lctx *c, json_t *v, const char *path, double I[6])
{
    static const char *msg = "expected an array of 6 numbers or a 3x3 array";
    if (!json_is_array(v)) return fail(c, MBS_ERR_MODEL, path, "%s, got %s", msg, json_type_name(v));
    size_t n = json_array_size(v);
    if (n == 6) {
        for (size_t k = 0; k < 6; k++) {
            json_t *e = json_array_get(v, k);
            if (!json_is_number(e)) return fail(c, MBS_ERR_MODEL, path, "%s (element %zu is %s)", msg, k,
                                                json_type_name(e));
            I[k] = json_number_value(e);
            if (!isfinite(I[k])) return fail(c, MBS_ERR_MODEL, path, "element %zu is not finite", k);
        }
        return MBS_OK;
    }
    if (n != 3 || !json_is_array(json_array_get(v, 0)))
        return fail(c, MBS_ERR_MODEL, path, "%s, got an array of %zu element%s", msg, n, n == 1 ? "" : "s");
    double J[9];
    for (size_t r = 0; r < 3; r++) {
        json_t *row = json_array_get(v, r);
        if (!json_is_array(row) || json_array_size(row) != 3)
            return fail(c, MBS_ERR_MODEL, path, "%s (row %zu is not an array of 3 numbers)", msg, r);
        for (size_t k = 0; k < 3; k++) {
            json_t *e = json_array_get(row, k);
            if (!json_is_number(e))
                return fail(c, MBS_ERR_MODEL, path, "%s (element [%zu][%zu] is %s)", msg, r, k, json_type_name(e));
            J[3 * r + k] = json_number_value(e);
            if (!isfinite(J[3 * r + k]))
                return fail(c, MBS_ERR_MODEL, path, "element [%zu][%zu] is not finite", r, k);
        }
    }
    double scale = 0;
    for (int k = 0; k < 9; k++)
        if (fabs(J[k]) > scale) scale = fabs(J[k]);
    static const int pr[3][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 } };
    for (int k = 0; k < 3; k++) {
        int a = pr[k][0], b = pr[k][1];
        double u = J[3 * a + b], l = J[3 * b + a];
        if (fabs(u - l) > 1e-9 * scale)
            return fail(c, MBS_ERR_MODEL, path, "inertia matrix is not symmetric: [%d][%d] = %g but [%d][%d] = %g",
                        a, b, u, b, a, l);
    }
    I[0] = J[0];
    I[1] = J[4];
    I[2] = J[8];
    I[3] = 0.5 * (J[1] + J[3]);
    I[4] = 0.5 * (J[2] + J[6]);
    I[5] = 0.5 * (J[5] + J[7]);
    return MBS_OK;
}

/* "points" or "vectors" object of a body. */
static int load_named_vectors(lctx *c, json_t *obj, const char *path, int body, int vectors)
{
    if (!json_is_object(obj))
        return fail(c, MBS_ERR_MODEL, path, "expected an object of named [x, y, z] %s, got %s",
                    vectors ? "vectors" : "points", json_type_name(obj));
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        char p[PATH_LEN], where[PATH_LEN + 64];
        double xyz[3];
        join3(p, sizeof p, path, ".", key);
        join3(where, sizeof where, c->file, ": ", p);
        int rc = get_numbers(c, val, p, 3, xyz);
        if (rc) return rc;
        rc = vectors ? mbs_builder_add_vector(c->b, body, key, xyz, where, c->err)
                     : mbs_builder_add_point(c->b, body, key, xyz, where, c->err);
        if (rc < 0) return rc;
    }
    return MBS_OK;
}

static int load_body(lctx *c, json_t *jb, size_t idx)
{
    static const char *const allowed[] = { "name", "mass", "com", "inertia", "points", "vectors", NULL };
    char path[PATH_LEN], p[PATH_LEN + 32], where[PATH_LEN + 64];
    index_path(path, sizeof path, "bodies", idx);
    join3(where, sizeof where, c->file, ": ", path);
    if (!json_is_object(jb)) return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(jb));
    int rc = check_members(c, jb, path, allowed);
    if (rc) return rc;

    const char *name = NULL;
    if ((rc = req_string(c, jb, path, "name", &name))) return rc;
    json_t *v;

    double mass, com[3] = { 0, 0, 0 }, I[6] = { 0, 0, 0, 0, 0, 0 };
    if ((rc = req_number(c, jb, path, "mass", &mass))) return rc;
    if ((v = json_object_get(jb, "com"))) {
        join3(p, sizeof p, path, ".com", "");
        if ((rc = get_numbers(c, v, p, 3, com))) return rc;
    }
    if ((v = json_object_get(jb, "inertia"))) {
        join3(p, sizeof p, path, ".inertia", "");
        if ((rc = load_inertia(c, v, p, I))) return rc;
    }
    int h = mbs_builder_add_body(c->b, name, mass, com, I, where, c->err);
    if (h < 0) return h;
    if ((v = json_object_get(jb, "points"))) {
        join3(p, sizeof p, path, ".points", "");
        if ((rc = load_named_vectors(c, v, p, h, 0))) return rc;
    }
    if ((v = json_object_get(jb, "vectors"))) {
        join3(p, sizeof p, path, ".vectors", "");
        if ((rc = load_named_vectors(c, v, p, h, 1))) return rc;
    }
    return MBS_OK;
}

/* "ground": { "points": {...}, "vectors": {...} }: named points and vectors
 * of the ground (the mbs_model_to_json of URDF links fixed to the root) */
static int load_ground(lctx *c, json_t *root)
{
    static const char *const allowed[] = { "points", "vectors", NULL };
    json_t *g = json_object_get(root, "ground"), *v;
    if (!g) return MBS_OK;
    if (!json_is_object(g)) return fail(c, MBS_ERR_MODEL, "ground", "expected an object, got %s", json_type_name(g));
    int rc = check_members(c, g, "ground", allowed);
    if (rc) return rc;
    if ((v = json_object_get(g, "points")) && (rc = load_named_vectors(c, v, "ground.points", 0, 0))) return rc;
    if ((v = json_object_get(g, "vectors")) && (rc = load_named_vectors(c, v, "ground.vectors", 0, 1))) return rc;
    return MBS_OK;
}

/* ---------------------------------------------------------------- joints */

static int body_ref(lctx *c, json_t *jj, const char *path, const char *member, int *out)
{
    char p[PATH_LEN + 32];
    join3(p, sizeof p, path, ".", member);
    json_t *v = json_object_get(jj, member);
    if (!v) return missing(c, path, member);
    const char *name = NULL;
    int rc = get_string(c, v, p, &name);
    if (rc) return rc;
    int h = mbs_builder_find_body(c->b, name);
    if (h < 0) return fail(c, MBS_ERR_MODEL, p, "unknown body \"%s\" (not in bodies, and not \"ground\")", name);
    *out = h;
    return MBS_OK;
}

/* Point of one joint side: absent (body origin), [x, y, z] or a point name. */
static int side_point(lctx *c, json_t *jj, const char *path, const char *member, int body, const char *bname,
                      int *out)
{
    char p[PATH_LEN + 32], where[PATH_LEN + 96];
    join3(p, sizeof p, path, ".", member);
    join3(where, sizeof where, c->file, ": ", p);
    json_t *v = json_object_get(jj, member);
    if (!v || json_is_array(v)) {
        double xyz[3] = { 0, 0, 0 };
        if (v) {
            int rc = get_numbers(c, v, p, 3, xyz);
            if (rc) return rc;
        }
        int h = mbs_builder_add_point(c->b, body, NULL, xyz, where, c->err);
        if (h < 0) return h;
        *out = h;
        return MBS_OK;
    }
    if (!json_is_string(v))
        return fail(c, MBS_ERR_MODEL, p, "expected an array of 3 numbers or a point name, got %s",
                    json_type_name(v));
    const char *name = json_string_value(v);
    int h = mbs_builder_find_point(c->b, body, name);
    if (h < 0) {
        /* also accept the qualified form "BODY.point" of this body */
        size_t n = strlen(bname);
        if (strncmp(name, bname, n) == 0 && name[n] == '.') h = mbs_builder_find_point(c->b, body, name + n + 1);
    }
    if (h < 0) return fail(c, MBS_ERR_MODEL, p, "unknown point \"%s\": body %s has no point of that name", name,
                           bname);
    *out = h;
    return MBS_OK;
}

/* First present member among names[] (NULL-terminated), as a 3-vector.
 * 1 if found, 0 if none, < 0 on error. */
static int first_vec3(lctx *c, json_t *jj, const char *path, const char *const *names, double out[3])
{
    for (const char *const *n = names; *n; n++) {
        json_t *v = json_object_get(jj, *n);
        if (!v) continue;
        char p[PATH_LEN + 32];
        join3(p, sizeof p, path, ".", *n);
        int rc = get_numbers(c, v, p, 3, out);
        return rc ? rc : 1;
    }
    return 0;
}

/* An array of numbers of any length (q0, qd0), up to 7 values. */
static int get_state(lctx *c, json_t *v, const char *path, int nq, const char *type, double *out, int *n)
{
    if (!json_is_array(v))
        return fail(c, MBS_ERR_MODEL, path, "expected an array of %d numbers, got %s", nq, json_type_name(v));
    size_t len = json_array_size(v);
    if (len != (size_t)nq)
        return fail(c, MBS_ERR_MODEL, path, "expected %d value%s (the coordinates of a %s joint), got %zu", nq,
                    nq == 1 ? "" : "s", type, len);
    int rc = get_numbers(c, v, path, nq, out);
    if (rc) return rc;
    *n = nq;
    return MBS_OK;
}

static int load_dh(lctx *c, json_t *v, const char *path, mbs_joint_type type, int parent, int child,
                   const char *where, mbs_joint_side *ps, mbs_joint_side *cs)
{
    static const char *const allowed[] = { "a", "alpha", "d", "theta", NULL };
    if (!json_is_object(v)) return fail(c, MBS_ERR_MODEL, path, "expected an object {a, alpha, d, theta}, got %s",
                                        json_type_name(v));
    int rc = check_members(c, v, path, allowed);
    if (rc) return rc;
    double val[4];
    for (int k = 0; k < 4; k++) {
        json_t *e = json_object_get(v, allowed[k]);
        if (!e) return missing(c, path, allowed[k]);
        char p[PATH_LEN + 96];
        join3(p, sizeof p, path, ".", allowed[k]);
        if ((rc = get_number(c, e, p, &val[k]))) return rc;
    }
    (void)type;
    const double a = val[0], alpha = val[1], d = val[2], theta = val[3];
    const double ca = cos(alpha), sa = sin(alpha);
    /* Parent side: origin, axis z, ref Rz(theta) x. */
    double origin[3] = { 0, 0, 0 };
    int hp = mbs_builder_add_point(c->b, parent, NULL, origin, where, c->err);
    if (hp < 0) return hp;
    ps->point = hp;
    ps->axis[0] = 0; ps->axis[1] = 0; ps->axis[2] = 1;
    ps->ref[0] = cos(theta); ps->ref[1] = sin(theta); ps->ref[2] = 0;
    ps->has_ref = 1;
    /* Child side: point -Rx(alpha)^T (a, 0, d), axis Rx(alpha)^T z,
     * ref Rx(alpha)^T x = x. Rx(alpha)^T v = (v0, ca v1 + sa v2, -sa v1 + ca v2). */
    double cp[3] = { -a, -(sa * d), -(ca * d) };
    int hc = mbs_builder_add_point(c->b, child, NULL, cp, where, c->err);
    if (hc < 0) return hc;
    cs->point = hc;
    cs->axis[0] = 0; cs->axis[1] = sa; cs->axis[2] = ca;
    cs->ref[0] = 1; cs->ref[1] = 0; cs->ref[2] = 0;
    cs->has_ref = 1;
    return MBS_OK;
}

/* "velocities": "tangent" | "euler_rates" (a string at `path`) into *vel. */
static int velocity_convention(lctx *c, json_t *v, const char *path, int *vel)
{
    const char *s = json_string_value(v);
    if (s && strcmp(s, "tangent") == 0) *vel = MBS_VELOCITIES_TANGENT;
    else if (s && strcmp(s, "euler_rates") == 0) *vel = MBS_VELOCITIES_EULER_RATES;
    else if (s) return fail(c, MBS_ERR_MODEL, path, "unknown velocities \"%s\" (valid: tangent, euler_rates)", s);
    else return fail(c, MBS_ERR_MODEL, path, "expected \"tangent\" or \"euler_rates\", got %s", json_type_name(v));
    return MBS_OK;
}

/* A joint's velocity convention (its "velocities", else the model's for a
 * spherical or floating joint) and its "v0" (the initial velocities in that
 * convention; finish checks their number). */
static int joint_velocities(lctx *c, json_t *jj, const char *path, const char *where, mbs_joint_type type,
                            int joint)
{
    char p[PATH_LEN + 32];
    int rc, vel = MBS_VELOCITIES_EULER_RATES;
    json_t *v = json_object_get(jj, "velocities");
    const int ball = type == MBS_JOINT_SPHERICAL || type == MBS_JOINT_FLOATING;
    join3(p, sizeof p, path, ".velocities", "");
    if (v) {
        if ((rc = velocity_convention(c, v, p, &vel))) return rc;
        if (!ball)
            return fail(c, MBS_ERR_MODEL, p, "joint %s is %s: a velocity convention is chosen only for spherical "
                        "and floating joints", json_string_value(json_object_get(jj, "name")), mbs_joint_type_name(type));
    } else if (ball) {
        vel = c->velocities;
    }
    if (ball && (rc = mbs_builder_set_joint_velocities(c->b, joint, vel, where, c->err))) return rc;
    if ((v = json_object_get(jj, "v0"))) {
        double v0[7];
        join3(p, sizeof p, path, ".v0", "");
        if (!json_is_array(v) || json_array_size(v) > 7)
            return fail(c, MBS_ERR_MODEL, p, "expected an array of the joint's velocities (at most 7 numbers)");
        const int n = (int)json_array_size(v);
        if ((rc = get_numbers(c, v, p, n, v0))) return rc;
        if (json_object_get(jj, "qd0"))
            return fail(c, MBS_ERR_MODEL, p, "give either v0 (the velocities) or qd0 (the coordinate rates)");
        if ((rc = mbs_builder_set_joint_v0(c->b, joint, v0, n, where, c->err))) return rc;
    }
    return MBS_OK;
}

static int load_joint(lctx *c, json_t *jj, size_t idx)
{
    static const char *const allowed[] = { "name", "type", "parent", "child", "parent_point", "child_point",
                                           "axis", "parent_axis", "child_axis", "ref", "parent_ref", "child_ref",
                                           "dh", "q0", "qd0", "v0", "velocities", "cut", "limit", "dynamics",
                                           NULL };
    static const char *const placement[] = { "parent_point", "child_point", "axis", "parent_axis", "child_axis",
                                             "ref", "parent_ref", "child_ref", NULL };
    char path[PATH_LEN], p[PATH_LEN + 32], where[PATH_LEN + 64];
    index_path(path, sizeof path, "joints", idx);
    join3(where, sizeof where, c->file, ": ", path);
    if (!json_is_object(jj)) return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(jj));
    int rc = check_members(c, jj, path, allowed);
    if (rc) return rc;

    const char *name = NULL, *tname = NULL;
    if ((rc = req_string(c, jj, path, "name", &name))) return rc;
    if ((rc = req_string(c, jj, path, "type", &tname))) return rc;
    join3(p, sizeof p, path, ".type", "");
    int t = mbs_joint_type_from_name(tname);
    if (t < 0)
        return fail(c, MBS_ERR_MODEL, p, "unknown joint type \"%s\" (valid: fixed, revolute, prismatic, "
                    "cylindrical, cardan, spherical, planar, floating)", tname);
    mbs_joint_type type = (mbs_joint_type)t;
    int parent, child;
    if ((rc = body_ref(c, jj, path, "parent", &parent))) return rc;
    if ((rc = body_ref(c, jj, path, "child", &child))) return rc;
    const char *pname = json_string_value(json_object_get(jj, "parent"));
    const char *cname = json_string_value(json_object_get(jj, "child"));
    if (child == 0)
        return fail(c, MBS_ERR_MODEL, path, "joint %s: the child cannot be the ground (the ground does not move; "
                    "swap parent and child)", name);
    if (parent == child)
        return fail(c, MBS_ERR_MODEL, path, "joint %s: parent and child are the same body (%s)", name, cname);

    mbs_joint_side ps, cs;
    memset(&ps, 0, sizeof ps);
    memset(&cs, 0, sizeof cs);
    json_t *dh = json_object_get(jj, "dh");
    if (dh) {
        join3(p, sizeof p, path, ".dh", "");
        if (type != MBS_JOINT_REVOLUTE && type != MBS_JOINT_PRISMATIC)
            return fail(c, MBS_ERR_MODEL, p, "dh placement is only for revolute and prismatic joints (this one "
                        "is %s)", tname);
        for (const char *const *n = placement; *n; n++)
            if (json_object_get(jj, *n))
                return fail(c, MBS_ERR_MODEL, p, "dh excludes \"%s\" (give either dh or points and axes)", *n);
        if ((rc = load_dh(c, dh, p, type, parent, child, where, &ps, &cs))) return rc;
    } else {
        if ((rc = side_point(c, jj, path, "parent_point", parent, pname, &ps.point))) return rc;
        if ((rc = side_point(c, jj, path, "child_point", child, cname, &cs.point))) return rc;
        /* Default frames: axis z for the axis-based joints; the body axes
         * (axis x, ref y) for fixed, spherical and floating joints. */
        int identity = type == MBS_JOINT_FIXED || type == MBS_JOINT_SPHERICAL || type == MBS_JOINT_FLOATING;
        const double def[3] = { identity ? 1 : 0, 0, identity ? 0 : 1 };
        static const char *const pax[] = { "parent_axis", "axis", NULL }, *const cax[] = { "child_axis", "axis", NULL };
        static const char *const prf[] = { "parent_ref", "ref", NULL }, *const crf[] = { "child_ref", "ref", NULL };
        rc = first_vec3(c, jj, path, pax, ps.axis);
        if (rc < 0) return rc;
        if (rc == 0) memcpy(ps.axis, def, sizeof def);
        rc = first_vec3(c, jj, path, cax, cs.axis);
        if (rc < 0) return rc;
        if (rc == 0) memcpy(cs.axis, def, sizeof def);
        rc = first_vec3(c, jj, path, prf, ps.ref);
        if (rc < 0) return rc;
        ps.has_ref = rc;
        rc = first_vec3(c, jj, path, crf, cs.ref);
        if (rc < 0) return rc;
        cs.has_ref = rc;
    }

    double q0[7], qd0[7];
    int nq0 = 0, nqd0 = 0;
    int nq = mbs_joint_type_nq(type);
    json_t *jq = json_object_get(jj, "q0"), *jqd = json_object_get(jj, "qd0");
    if (jq) {
        join3(p, sizeof p, path, ".q0", "");
        if ((rc = get_state(c, jq, p, nq, tname, q0, &nq0))) return rc;
    }
    if (jqd) {
        join3(p, sizeof p, path, ".qd0", "");
        if ((rc = get_state(c, jqd, p, nq, tname, qd0, &nqd0))) return rc;
    }
    json_t *jcut = json_object_get(jj, "cut");
    if (jcut && !json_is_boolean(jcut)) {
        join3(p, sizeof p, path, ".cut", "");
        return fail(c, MBS_ERR_MODEL, p, "expected true or false, got %s", json_type_name(jcut));
    }
    const int h = mbs_builder_add_joint(c->b, name, type, parent, child, &ps, &cs, jq ? q0 : NULL, nq0,
                                        jqd ? qd0 : NULL, nqd0, where, c->err);
    if (h < 0) return h;
    if (jcut && json_is_true(jcut) && (rc = mbs_builder_set_joint_cut(c->b, h, where, c->err))) return rc;
    return joint_velocities(c, jj, path, where, type, h);
}

/* ---------------------------------------------------------------- parameters */

static int load_param(lctx *c, json_t *jp, size_t idx)
{
    static const char *const allowed[] = { "name", "value", "lower", "upper", "sets", NULL };
    static const char *const tallowed[] = { "target", "scale", "offset", NULL };
    char path[PATH_LEN], p[PATH_LEN + 32], where[PATH_LEN + 64];
    index_path(path, sizeof path, "parameters", idx);
    join3(where, sizeof where, c->file, ": ", path);
    if (!json_is_object(jp)) return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(jp));
    int rc = check_members(c, jp, path, allowed);
    if (rc) return rc;
    const char *name = NULL;
    json_t *v;
    double value, lower = -INFINITY, upper = INFINITY;
    if ((rc = req_string(c, jp, path, "name", &name))) return rc;
    if ((rc = req_number(c, jp, path, "value", &value))) return rc;
    if ((v = json_object_get(jp, "lower"))) {
        join3(p, sizeof p, path, ".lower", "");
        if ((rc = get_number(c, v, p, &lower))) return rc;
    }
    if ((v = json_object_get(jp, "upper"))) {
        join3(p, sizeof p, path, ".upper", "");
        if ((rc = get_number(c, v, p, &upper))) return rc;
    }
    json_t *sets = json_object_get(jp, "sets");
    if (!sets) return missing(c, path, "sets");
    join3(p, sizeof p, path, ".sets", "");
    if (!json_is_array(sets) || json_array_size(sets) == 0)
        return fail(c, MBS_ERR_MODEL, p, "expected a non-empty array of targets, got %s",
                    json_is_array(sets) ? "an empty array" : json_type_name(sets));
    int h = mbs_builder_add_param(c->b, name, value, lower, upper, where, c->err);
    if (h < 0) return h;
    size_t k;
    json_t *e;
    json_array_foreach(sets, k, e) {
        char tp[PATH_LEN + 64], tw[PATH_LEN + 128], q[PATH_LEN + 96];
        join3(q, sizeof q, path, ".sets", "");
        index_path(tp, sizeof tp, q, k);
        join3(tw, sizeof tw, c->file, ": ", tp);
        const char *target = NULL;
        double scale = 1, offset = 0;
        if (json_is_string(e)) {
            target = json_string_value(e);
        } else if (json_is_object(e)) {
            if ((rc = check_members(c, e, tp, tallowed))) return rc;
            json_t *t = json_object_get(e, "target");
            if (!t) return missing(c, tp, "target");
            join3(q, sizeof q, tp, ".target", "");
            if ((rc = get_string(c, t, q, &target))) return rc;
            if ((t = json_object_get(e, "scale"))) {
                join3(q, sizeof q, tp, ".scale", "");
                if ((rc = get_number(c, t, q, &scale))) return rc;
            }
            if ((t = json_object_get(e, "offset"))) {
                join3(q, sizeof q, tp, ".offset", "");
                if ((rc = get_number(c, t, q, &offset))) return rc;
            }
        } else {
            return fail(c, MBS_ERR_MODEL, tp, "expected a target name or an object {target, scale, offset}, got %s",
                        json_type_name(e));
        }
        rc = mbs_builder_add_param_target(c->b, h, target, scale, offset, tw, c->err);
        if (rc < 0) return rc;
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- functions */

/* Array of at least `min` finite numbers, malloc'd into *out (free it). */
static int get_number_list(lctx *c, json_t *v, const char *path, int min, double **out, int *n)
{
    *out = NULL;
    if (!json_is_array(v))
        return fail(c, MBS_ERR_MODEL, path, "expected an array of numbers, got %s", json_type_name(v));
    size_t len = json_array_size(v);
    if (len < (size_t)min || len > 1000000)
        return fail(c, MBS_ERR_MODEL, path, "expected an array of at least %d numbers, got %zu element%s", min, len,
                    len == 1 ? "" : "s");
    double *a = malloc(len * sizeof *a);
    if (!a) return mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
    for (size_t k = 0; k < len; k++) {
        json_t *e = json_array_get(v, k);
        if (!json_is_number(e) || !isfinite(json_number_value(e))) {
            free(a);
            return fail(c, MBS_ERR_MODEL, path, "element %zu is %s", k,
                        json_is_number(e) ? "not finite" : json_type_name(e));
        }
        a[k] = json_number_value(e);
    }
    *out = a;
    *n = (int)len;
    return MBS_OK;
}

/* Optional (def given) or required number member. */
static int member_number(lctx *c, json_t *obj, const char *path, const char *member, const double *def,
                         double *out)
{
    char p[PATH_LEN + 32];
    json_t *v = json_object_get(obj, member);
    if (!v) {
        if (!def) return missing(c, path, member);
        *out = *def;
        return MBS_OK;
    }
    join3(p, sizeof p, path, ".", member);
    return get_number(c, v, p, out);
}

/* Optional string member among choices[] (NULL-terminated): its index, def if absent. */
static int member_choice(lctx *c, json_t *obj, const char *path, const char *member, const char *const *choices,
                         int def, int *out)
{
    char p[PATH_LEN + 32];
    json_t *v = json_object_get(obj, member);
    *out = def;
    if (!v) return MBS_OK;
    join3(p, sizeof p, path, ".", member);
    const char *s = NULL;
    int rc = get_string(c, v, p, &s);
    if (rc) return rc;
    for (int k = 0; choices[k]; k++)
        if (strcmp(s, choices[k]) == 0) {
            *out = k;
            return MBS_OK;
        }
    char list[256] = "";
    size_t len = 0;
    for (int k = 0; choices[k]; k++) {
        int n = snprintf(list + len, sizeof list - len, "%s\"%s\"", k ? ", " : "", choices[k]);
        if (n > 0 && (size_t)n < sizeof list - len) len += (size_t)n;
    }
    return fail(c, MBS_ERR_MODEL, p, "unknown value \"%s\" (valid: %s)", s, list);
}

static int load_function(lctx *c, json_t *jf, size_t idx)
{
    static const char *const a_const[] = { "name", "type", "value", NULL };
    static const char *const a_step[] = { "name", "type", "t0", "v0", "t1", "v1", "shape", NULL };
    static const char *const a_sine[] = { "name", "type", "amplitude", "frequency", "phase", "offset", NULL };
    static const char *const a_spline[] = { "name", "type", "times", "values", "ends", NULL };
    static const char *const shapes[] = { "cubic", "quintic", NULL };
    static const char *const ends[] = { "natural", "clamped", NULL };
    char path[PATH_LEN], p[PATH_LEN + 32], where[PATH_LEN + 64];
    index_path(path, sizeof path, "functions", idx);
    join3(where, sizeof where, c->file, ": ", path);
    if (!json_is_object(jf)) return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(jf));
    const char *name = NULL, *tname = NULL;
    json_t *v;
    int rc;
    if ((rc = req_string(c, jf, path, "name", &name))) return rc;
    if ((rc = req_string(c, jf, path, "type", &tname))) return rc;
    join3(p, sizeof p, path, ".type", "");
    int type = mbs_function_type_from_name(tname);
    if (type < 0)
        return fail(c, MBS_ERR_MODEL, p, "unknown function type \"%s\" (valid: constant, step, sine, spline)",
                    tname);
    const char *const *allowed = type == MBS_FUNC_CONSTANT ? a_const
                                 : type == MBS_FUNC_STEP   ? a_step
                                 : type == MBS_FUNC_SINE   ? a_sine
                                                           : a_spline;
    if ((rc = check_members(c, jf, path, allowed))) return rc;
    static const double zero = 0;
    double num[4];
    int variant = 0;
    switch (type) {
    case MBS_FUNC_CONSTANT:
        if ((rc = member_number(c, jf, path, "value", NULL, &num[0]))) return rc;
        break;
    case MBS_FUNC_STEP:
        for (int k = 0; k < 4; k++)
            if ((rc = member_number(c, jf, path, allowed[2 + k], NULL, &num[k]))) return rc;
        if (!(num[2] > num[0])) {
            join3(p, sizeof p, path, ".t1", "");
            return fail(c, MBS_ERR_MODEL, p, "t1 (%g) must be greater than t0 (%g)", num[2], num[0]);
        }
        if ((rc = member_choice(c, jf, path, "shape", shapes, 0, &variant))) return rc;
        break;
    case MBS_FUNC_SINE:
        if ((rc = member_number(c, jf, path, "amplitude", NULL, &num[0])) ||
            (rc = member_number(c, jf, path, "frequency", NULL, &num[1])) ||
            (rc = member_number(c, jf, path, "phase", &zero, &num[2])) ||
            (rc = member_number(c, jf, path, "offset", &zero, &num[3])))
            return rc;
        break;
    default: {
        double *t = NULL, *y = NULL;
        int nt = 0, ny = 0;
        if (!(v = json_object_get(jf, "times"))) return missing(c, path, "times");
        join3(p, sizeof p, path, ".times", "");
        if ((rc = get_number_list(c, v, p, 2, &t, &nt))) return rc;
        for (int k = 1; k < nt; k++)
            if (!(t[k] > t[k - 1])) {
                rc = fail(c, MBS_ERR_MODEL, p, "knot times must be strictly increasing (element %d is %g, after %g)",
                          k, t[k], t[k - 1]);
                free(t);
                return rc;
            }
        if (!(v = json_object_get(jf, "values"))) {
            free(t);
            return missing(c, path, "values");
        }
        join3(p, sizeof p, path, ".values", "");
        if ((rc = get_number_list(c, v, p, 2, &y, &ny))) {
            free(t);
            return rc;
        }
        if (ny != nt) {
            free(t);
            free(y);
            return fail(c, MBS_ERR_MODEL, p, "expected %d values (one per knot time), got %d", nt, ny);
        }
        if ((rc = member_choice(c, jf, path, "ends", ends, 0, &variant)) == MBS_OK)
            rc = mbs_builder_add_function(c->b, name, MBS_FUNC_SPLINE, variant, y, ny, t, where, c->err);
        free(t);
        free(y);
        return rc < 0 ? rc : MBS_OK;
    }
    }
    rc = mbs_builder_add_function(c->b, name, (mbs_func_type)type, variant, num, mbs_func_type_nx(type, 0), NULL,
                                  where, c->err);
    return rc < 0 ? rc : MBS_OK;
}

/* ---------------------------------------------------------------- forces */

/* One end of an element: body member + point member (a point name of that
 * body, or [x, y, z], default the body origin), or, without the body
 * member, a qualified point "BODY.POINT". Point handle into *out. */
static int force_end(lctx *c, json_t *jf, const char *path, const char *bmember, const char *pmember, int *out)
{
    if (json_object_get(jf, bmember)) {
        int body;
        int rc = body_ref(c, jf, path, bmember, &body);
        if (rc) return rc;
        const char *bname = json_string_value(json_object_get(jf, bmember));
        return side_point(c, jf, path, pmember, body, bname, out);
    }
    char p[PATH_LEN + 32];
    join3(p, sizeof p, path, ".", pmember);
    json_t *v = json_object_get(jf, pmember);
    if (!v) return missing(c, path, bmember);
    if (!json_is_string(v))
        return fail(c, MBS_ERR_MODEL, p, "expected a point name \"BODY.POINT\" (or give \"%s\"), got %s", bmember,
                    json_type_name(v));
    const char *s = json_string_value(v);
    /* body names may contain dots: every body whose name and a dot begin s,
     * shortest name first */
    int few[8], *bodies = few;
    size_t nb = mbs_builder_find_body_prefixes(c->b, s, few, 8);
    if (nb > 8) {
        if (!(bodies = malloc(nb * sizeof *bodies)))
            return mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
        mbs_builder_find_body_prefixes(c->b, s, bodies, nb);
    }
    int h = -1;
    for (size_t k = 0; k < nb && h < 0; k++)
        h = mbs_builder_find_point(c->b, bodies[k], s + strlen(mbs_builder_body_name(c->b, bodies[k])) + 1);
    if (bodies != few) free(bodies);
    if (h >= 0) {
        *out = h;
        return MBS_OK;
    }
    return fail(c, MBS_ERR_MODEL, p, "unknown point \"%s\" (expected \"BODY.POINT\" naming a point of a body, or "
                "give \"%s\" and a point of that body)", s, bmember);
}

/* "joint" and "coordinate" of a joint element: joint handle and coordinate index. */
static int joint_coord(lctx *c, json_t *jf, const char *path, int *joint, int *coord)
{
    char p[PATH_LEN + 32];
    json_t *v = json_object_get(jf, "joint");
    if (!v) return missing(c, path, "joint");
    join3(p, sizeof p, path, ".joint", "");
    const char *jname = NULL;
    int rc = get_string(c, v, p, &jname);
    if (rc) return rc;
    int h = mbs_builder_find_joint(c->b, jname);
    if (h < 0) return fail(c, MBS_ERR_MODEL, p, "unknown joint \"%s\" (not in joints)", jname);
    mbs_joint_type type = (mbs_joint_type)mbs_builder_joint_type(c->b, h);
    int nq = mbs_joint_type_nq(type);
    if (nq == 0) return fail(c, MBS_ERR_MODEL, p, "joint %s is fixed: it has no coordinate", jname);
    char list[256] = "";
    size_t len = 0;
    for (int k = 0; k < nq && nq > 1; k++) {
        int n = snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", mbs_joint_coord_suffix(type, k));
        if (n > 0 && (size_t)n < sizeof list - len) len += (size_t)n;
    }
    int k = -1;
    join3(p, sizeof p, path, ".coordinate", "");
    v = json_object_get(jf, "coordinate");
    if (!v) {
        if (nq > 1)
            return fail(c, MBS_ERR_MODEL, path, "joint %s (%s) has %d coordinates: give \"coordinate\" (%s)", jname,
                        mbs_joint_type_name(type), nq, list);
        k = 0;
    } else if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0 || i >= nq)
            return fail(c, MBS_ERR_MODEL, p, "coordinate index %lld out of range 0..%d of joint %s (%s)", (long long)i,
                        nq - 1, jname, mbs_joint_type_name(type));
        k = (int)i;
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = strlen(jname);
        if (strncmp(s, jname, n) == 0 && s[n] == '.') s += n + 1;   /* "JOINT.SUFFIX" */
        else if (nq == 1 && strcmp(s, jname) == 0) k = 0;
        for (int j = 0; j < nq && k < 0; j++) {
            const char *suf = mbs_joint_coord_suffix(type, j);
            if (suf && strcmp(s, suf) == 0) k = j;
        }
        if (k < 0)
            return fail(c, MBS_ERR_MODEL, p, "joint %s (%s) has no coordinate \"%s\" (%s%s)", jname,
                        mbs_joint_type_name(type), json_string_value(v), nq > 1 ? "valid: " : "its one coordinate is ",
                        nq > 1 ? list : jname);
    } else {
        return fail(c, MBS_ERR_MODEL, p, "expected a coordinate name or index, got %s", json_type_name(v));
    }
    int eu = mbs_joint_type_euler(type);
    if (eu >= 0 && k >= eu && k < eu + 4)
        return fail(c, MBS_ERR_MODEL, v ? p : path,
                    "coordinate %s.%s is an Euler parameter: joint elements act on angles and distances only "
                    "(use a body_load or a spring_damper for rotations of a %s joint)",
                    jname, mbs_joint_coord_suffix(type, k), mbs_joint_type_name(type));
    *joint = h;
    *coord = k;
    return MBS_OK;
}

/* Optional "function": handle or -1. */
static int force_function(lctx *c, json_t *jf, const char *path, int *func)
{
    *func = -1;
    json_t *v = json_object_get(jf, "function");
    if (!v) return MBS_OK;
    char p[PATH_LEN + 32];
    join3(p, sizeof p, path, ".function", "");
    const char *name = NULL;
    int rc = get_string(c, v, p, &name);
    if (rc) return rc;
    *func = mbs_builder_find_function(c->b, name);
    if (*func < 0) return fail(c, MBS_ERR_MODEL, p, "unknown function \"%s\" (not in functions)", name);
    return MBS_OK;
}

/* stiffness (any sign), damping (>= 0), defaults 0. */
static int spring_numbers(lctx *c, json_t *jf, const char *path, double *k, double *d)
{
    static const double zero = 0;
    int rc = member_number(c, jf, path, "stiffness", &zero, k);
    if (rc) return rc;
    if ((rc = member_number(c, jf, path, "damping", &zero, d))) return rc;
    if (*d < 0) {
        char p[PATH_LEN + 32];
        join3(p, sizeof p, path, ".damping", "");
        return fail(c, MBS_ERR_MODEL, p, "damping must be >= 0 (a negative damping feeds energy in), got %g", *d);
    }
    return MBS_OK;
}

/* contact_plane and tire members (docs/model-format.md "Contact and tire
 * forces"; numbers as in src/forces/force_contact_common.h) */
static int load_contact(lctx *c, json_t *jf, const char *path, const char *name, mbs_force_type type,
                        const char *where)
{
    static const char *const shapes[] = { "sphere", "circle", NULL };
    static const double one = 1, zero = 0, deps = 1e-4, dv0 = 0.1, dvs = 0.01;
    char p[PATH_LEN + 32];
    mbs_builder_contact ct;
    memset(&ct, 0, sizeof ct);
    int point, rc;
    if ((rc = force_end(c, jf, path, "body", "point", &point))) return rc;
    if (type == MBS_FORCE_CONTACT_PLANE) {
        if (!json_object_get(jf, "shape")) return missing(c, path, "shape");
        if ((rc = member_choice(c, jf, path, "shape", shapes, 0, &ct.shape))) return rc;
    } else {
        ct.shape = 1;
    }
    json_t *v = json_object_get(jf, "axis");
    join3(p, sizeof p, path, ".axis", "");
    if (ct.shape == 1) {
        if (!v) return missing(c, path, "axis");
        if ((rc = get_numbers(c, v, p, 3, ct.axis))) return rc;
    } else if (v) {
        return fail(c, MBS_ERR_MODEL, p, "a sphere has no axis");
    }
    ct.plane_normal[2] = 1;
    if ((v = json_object_get(jf, "plane_point"))) {
        join3(p, sizeof p, path, ".plane_point", "");
        if ((rc = get_numbers(c, v, p, 3, ct.plane_point))) return rc;
    }
    if ((v = json_object_get(jf, "plane_normal"))) {
        join3(p, sizeof p, path, ".plane_normal", "");
        if ((rc = get_numbers(c, v, p, 3, ct.plane_normal))) return rc;
    }
    if ((rc = member_number(c, jf, path, "radius", NULL, &ct.radius)) ||
        (rc = member_number(c, jf, path, "stiffness", NULL, &ct.stiffness)) ||
        (rc = member_number(c, jf, path, "exponent", &one, &ct.exponent)) ||
        (rc = member_number(c, jf, path, "smoothing", &deps, &ct.smoothing)))
        return rc;
    /* hysteresis chi, or restitution e with the reference impact speed v:
     * chi = 3 (1 - e^2) / (4 v) (Lankarani & Nikravesh) */
    int has_chi = json_object_get(jf, "hysteresis") != NULL;
    int has_e = json_object_get(jf, "restitution") != NULL, has_v = json_object_get(jf, "impact_velocity") != NULL;
    if (has_chi && (has_e || has_v))
        return fail(c, MBS_ERR_MODEL, path, "give \"hysteresis\" or \"restitution\" and \"impact_velocity\", not both");
    if (has_e != has_v)
        return fail(c, MBS_ERR_MODEL, path, "\"restitution\" and \"impact_velocity\" go together");
    if ((rc = member_number(c, jf, path, "hysteresis", &zero, &ct.hysteresis))) return rc;
    if (has_e) {
        double e, vi;
        if ((rc = member_number(c, jf, path, "restitution", NULL, &e)) ||
            (rc = member_number(c, jf, path, "impact_velocity", NULL, &vi)))
            return rc;
        if (!(e > 0 && e <= 1)) {
            join3(p, sizeof p, path, ".restitution", "");
            return fail(c, MBS_ERR_MODEL, p, "must be in (0, 1], got %g", e);
        }
        if (!(vi > 0)) {
            join3(p, sizeof p, path, ".impact_velocity", "");
            return fail(c, MBS_ERR_MODEL, p, "must be > 0, got %g", vi);
        }
        ct.hysteresis = 3 * (1 - e * e) / (4 * vi);
    }
    if (type == MBS_FORCE_CONTACT_PLANE &&
        ((rc = member_number(c, jf, path, "friction", &zero, &ct.mu)) ||
         (rc = member_number(c, jf, path, "slip_speed", &dvs, &ct.vs))))
        return rc;
    if (type == MBS_FORCE_TIRE) {
        if ((rc = member_number(c, jf, path, "kappa_c", NULL, &ct.kappa_c)) ||
            (rc = member_number(c, jf, path, "alpha_c", NULL, &ct.alpha_c)) ||
            (rc = member_number(c, jf, path, "mu_x", NULL, &ct.mu_x)) ||
            (rc = member_number(c, jf, path, "mu_y", NULL, &ct.mu_y)) ||
            (rc = member_number(c, jf, path, "speed_regularization", &dv0, &ct.v0)))
            return rc;
    }
    rc = mbs_builder_add_contact(c->b, name, type, point, &ct, where, c->err);
    return rc < 0 ? rc : MBS_OK;
}

/* forces[k] of type spring_damper */
static int load_spring_damper(lctx *c, json_t *jf, const char *path, const char *name, const char *where)
{
    char p[PATH_LEN + 32];
    int p1, p2, rc;
    double k, d, len;
    if ((rc = force_end(c, jf, path, "body1", "point1", &p1)) ||
        (rc = force_end(c, jf, path, "body2", "point2", &p2)) ||
        (rc = spring_numbers(c, jf, path, &k, &d)))
        return rc;
    int has_len = json_object_get(jf, "length") != NULL;
    if (has_len) {
        if ((rc = member_number(c, jf, path, "length", NULL, &len))) return rc;
        if (len < 0) {
            join3(p, sizeof p, path, ".length", "");
            return fail(c, MBS_ERR_MODEL, p, "free length must be >= 0, got %g", len);
        }
    }
    return mbs_builder_add_spring_damper(c->b, name, p1, p2, k, d, has_len ? &len : NULL, where, c->err);
}

/* forces[k] of type body_load */
static int load_body_load(lctx *c, json_t *jf, const char *path, const char *name, const char *where)
{
    static const char *const axes[] = { "global", "body", NULL };
    char p[PATH_LEN + 32];
    int body, point = -1, frame, func, rc;
    double f[3] = { 0, 0, 0 }, n[3] = { 0, 0, 0 };
    if ((rc = body_ref(c, jf, path, "body", &body))) return rc;
    const char *bname = json_string_value(json_object_get(jf, "body"));
    if (body == 0) {
        join3(p, sizeof p, path, ".body", "");
        return fail(c, MBS_ERR_MODEL, p, "a body_load needs a moving body (a load on the ground does nothing)");
    }
    if (json_object_get(jf, "point") && (rc = side_point(c, jf, path, "point", body, bname, &point))) return rc;
    json_t *jfv = json_object_get(jf, "force"), *jtv = json_object_get(jf, "torque");
    if (!jfv && !jtv) return fail(c, MBS_ERR_MODEL, path, "a body_load needs \"force\" or \"torque\" (or both)");
    if (jfv) {
        join3(p, sizeof p, path, ".force", "");
        if ((rc = get_numbers(c, jfv, p, 3, f))) return rc;
    }
    if (jtv) {
        join3(p, sizeof p, path, ".torque", "");
        if ((rc = get_numbers(c, jtv, p, 3, n))) return rc;
    }
    if ((rc = member_choice(c, jf, path, "axes", axes, 0, &frame)) || (rc = force_function(c, jf, path, &func)))
        return rc;
    return mbs_builder_add_body_load(c->b, name, body, point, f, n, frame, func, where, c->err);
}

static int load_force(lctx *c, json_t *jf, size_t idx)
{
    static const char *const a_sd[] = { "name", "type", "body1", "point1", "body2", "point2", "stiffness", "damping",
                                        "length", NULL };
    static const char *const a_js[] = { "name", "type", "joint", "coordinate", "stiffness", "damping", "position",
                                        NULL };
    static const char *const a_jf[] = { "name", "type", "joint", "coordinate", "value", "function", NULL };
    static const char *const a_bl[] = { "name", "type", "body", "point", "force", "torque", "axes", "function",
                                        NULL };
    static const char *const a_cp[] = { "name", "type", "body", "point", "shape", "radius", "axis", "plane_point",
                                        "plane_normal", "stiffness", "exponent", "hysteresis", "restitution",
                                        "impact_velocity", "smoothing", "friction", "slip_speed", NULL };
    static const char *const a_ti[] = { "name", "type", "body", "point", "radius", "axis", "plane_point",
                                        "plane_normal", "stiffness", "exponent", "hysteresis", "restitution",
                                        "impact_velocity", "smoothing", "kappa_c", "alpha_c", "mu_x", "mu_y",
                                        "speed_regularization", NULL };
    char path[PATH_LEN], p[PATH_LEN + 32], where[PATH_LEN + 64];
    index_path(path, sizeof path, "forces", idx);
    join3(where, sizeof where, c->file, ": ", path);
    if (!json_is_object(jf)) return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(jf));
    const char *name = NULL, *tname = NULL;
    int rc;
    if ((rc = req_string(c, jf, path, "name", &name))) return rc;
    if ((rc = req_string(c, jf, path, "type", &tname))) return rc;
    join3(p, sizeof p, path, ".type", "");
    int type = mbs_force_type_from_name(tname);
    if (type < 0)
        return fail(c, MBS_ERR_MODEL, p,
                    "unknown force type \"%s\" (valid: spring_damper, joint_spring, joint_force, body_load, "
                    "contact_plane, tire)", tname);
    const char *const *allowed = type == MBS_FORCE_SPRING_DAMPER ? a_sd
                                 : type == MBS_FORCE_JOINT_SPRING ? a_js
                                 : type == MBS_FORCE_JOINT_FORCE  ? a_jf
                                 : type == MBS_FORCE_CONTACT_PLANE ? a_cp
                                 : type == MBS_FORCE_TIRE         ? a_ti
                                                                  : a_bl;
    if ((rc = check_members(c, jf, path, allowed))) return rc;
    static const double zero = 0, one = 1;
    double k, d, val;
    int joint, coord, func;
    switch (type) {
    case MBS_FORCE_SPRING_DAMPER:
        rc = load_spring_damper(c, jf, path, name, where);
        break;
    case MBS_FORCE_JOINT_SPRING:
        if ((rc = joint_coord(c, jf, path, &joint, &coord)) || (rc = spring_numbers(c, jf, path, &k, &d)) ||
            (rc = member_number(c, jf, path, "position", &zero, &val)))
            return rc;
        rc = mbs_builder_add_joint_spring(c->b, name, joint, coord, k, d, val, where, c->err);
        break;
    case MBS_FORCE_JOINT_FORCE:
        if ((rc = joint_coord(c, jf, path, &joint, &coord)) || (rc = force_function(c, jf, path, &func)))
            return rc;
        if ((rc = member_number(c, jf, path, "value", func >= 0 ? &one : NULL, &val))) return rc;
        rc = mbs_builder_add_joint_force(c->b, name, joint, coord, val, func, where, c->err);
        break;
    case MBS_FORCE_CONTACT_PLANE:
    case MBS_FORCE_TIRE:
        if ((rc = load_contact(c, jf, path, name, (mbs_force_type)type, where))) return rc;
        break;
    default:
        rc = load_body_load(c, jf, path, name, where);
        break;
    }
    return rc < 0 ? rc : MBS_OK;
}

/* ---------------------------------------------------------------- document */

/* ---------------------------------------------------------------- constraints, assembly */

/* Time law of a driver: "function", or "value" (required) and "rate" (default 0). */
static int driver_law(lctx *c, json_t *jc, const char *path, int *func, double *value, double *rate)
{
    int rc = force_function(c, jc, path, func);
    if (rc) return rc;
    *value = *rate = 0;
    if (*func >= 0) {
        if (json_object_get(jc, "value") || json_object_get(jc, "rate"))
            return fail(c, MBS_ERR_MODEL, path, "give either \"function\" or \"value\" and \"rate\", not both");
        return MBS_OK;
    }
    static const double zero = 0;
    if ((rc = member_number(c, jc, path, "value", NULL, value))) return rc;
    return member_number(c, jc, path, "rate", &zero, rate);
}

static int load_constraint(lctx *c, json_t *jc, size_t idx)
{
    static const char *const a_coord[] = { "name", "type", "joint", "coordinate", "function", "value", "rate",
                                           NULL };
    static const char *const a_dist[] = { "name", "type", "body1", "point1", "body2", "point2", "function", "value",
                                          "rate", NULL };
    char path[PATH_LEN], p[PATH_LEN + 32], where[PATH_LEN + 64];
    index_path(path, sizeof path, "constraints", idx);
    join3(where, sizeof where, c->file, ": ", path);
    if (!json_is_object(jc)) return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(jc));
    const char *name = NULL, *tname = NULL;
    int rc = req_string(c, jc, path, "name", &name);
    if (rc) return rc;
    if ((rc = req_string(c, jc, path, "type", &tname))) return rc;
    join3(p, sizeof p, path, ".type", "");
    int func;
    double value, rate;
    if (strcmp(tname, "coordinate") == 0) {
        if ((rc = check_members(c, jc, path, a_coord))) return rc;
        int joint, coord;
        if ((rc = joint_coord(c, jc, path, &joint, &coord))) return rc;
        if ((rc = driver_law(c, jc, path, &func, &value, &rate))) return rc;
        rc = mbs_builder_add_coordinate_driver(c->b, name, joint, coord, func, value, rate, where, c->err);
    } else if (strcmp(tname, "distance") == 0) {
        if ((rc = check_members(c, jc, path, a_dist))) return rc;
        int p1, p2;
        if ((rc = force_end(c, jc, path, "body1", "point1", &p1))) return rc;
        if ((rc = force_end(c, jc, path, "body2", "point2", &p2))) return rc;
        if ((rc = driver_law(c, jc, path, &func, &value, &rate))) return rc;
        rc = mbs_builder_add_distance_driver(c->b, name, p1, p2, func, value, rate, where, c->err);
    } else {
        return fail(c, MBS_ERR_MODEL, p, "unknown constraint type \"%s\" (valid: coordinate, distance; closed "
                    "loops need no entry here: list the joints, and mark one \"cut\": true to choose the cut)",
                    tname);
    }
    return rc < 0 ? rc : MBS_OK;
}

/* "assembly": { "fixed": [JOINT or JOINT.SUFFIX ...], "tolerance", "max_iterations" } */
static int load_assembly(lctx *c, json_t *root)
{
    static const char *const allowed[] = { "fixed", "tolerance", "max_iterations", NULL };
    json_t *a = json_object_get(root, "assembly");
    if (!a) return MBS_OK;
    const char *path = "assembly";
    char p[PATH_LEN + 32], where[PATH_LEN + 64];
    if (!json_is_object(a)) return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(a));
    int rc = check_members(c, a, path, allowed);
    if (rc) return rc;
    json_t *fx = json_object_get(a, "fixed");
    if (fx) {
        if (!json_is_array(fx))
            return fail(c, MBS_ERR_MODEL, "assembly.fixed", "expected an array of joint or coordinate names, got %s",
                        json_type_name(fx));
        for (size_t k = 0; k < json_array_size(fx); k++) {
            index_path(p, sizeof p, "assembly.fixed", k);
            join3(where, sizeof where, c->file, ": ", p);
            const char *s = NULL;
            if ((rc = get_string(c, json_array_get(fx, k), p, &s))) return rc;
            int joint = mbs_builder_find_joint(c->b, s), coord = -1;
            if (joint < 0) {
                /* JOINT.SUFFIX (joint names may contain dots: try every split) */
                for (const char *d = strrchr(s, '.'); d && joint < 0; d = NULL) {
                    char jn[PATH_LEN];
                    size_t n = (size_t)(d - s);
                    if (n >= sizeof jn) break;
                    memcpy(jn, s, n);
                    jn[n] = '\0';
                    int h = mbs_builder_find_joint(c->b, jn);
                    if (h < 0) break;
                    mbs_joint_type t = (mbs_joint_type)mbs_builder_joint_type(c->b, h);
                    for (int i = 0; i < mbs_joint_type_nq(t); i++) {
                        const char *suf = mbs_joint_coord_suffix(t, i);
                        if (suf && strcmp(suf, d + 1) == 0) {
                            joint = h;
                            coord = i;
                        }
                    }
                }
            }
            if (joint < 0)
                return fail(c, MBS_ERR_MODEL, p, "unknown joint or coordinate \"%s\" (a joint name, or JOINT.SUFFIX "
                            "such as j2.theta)", s);
            rc = mbs_builder_add_assembly_fixed(c->b, joint, coord, where, c->err);
            if (rc < 0) return rc;
        }
    }
    double tol = 1e-10, maxit = 50;
    const double dtol = 1e-10, dmax = 50;
    if ((rc = member_number(c, a, path, "tolerance", &dtol, &tol))) return rc;
    if ((rc = member_number(c, a, path, "max_iterations", &dmax, &maxit))) return rc;
    if (maxit != floor(maxit) || maxit < 1 || maxit > 1e6)
        return fail(c, MBS_ERR_MODEL, "assembly.max_iterations", "expected an integer >= 1, got %g", maxit);
    return mbs_builder_set_assembly(c->b, tol, (int)maxit, c->file, c->err);
}

static int load_array(lctx *c, json_t *root, const char *member, int required, int nonempty,
                      int (*item)(lctx *, json_t *, size_t))
{
    json_t *v = json_object_get(root, member);
    if (!v) return required ? missing(c, "", member) : MBS_OK;
    if (!json_is_array(v))
        return fail(c, MBS_ERR_MODEL, member, "expected an array, got %s", json_type_name(v));
    if (nonempty && json_array_size(v) == 0)
        return fail(c, MBS_ERR_MODEL, member, "expected a non-empty array");
    size_t k;
    json_t *e;
    json_array_foreach(v, k, e) {
        int rc = item(c, e, k);
        if (rc) return rc;
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- simulation */

/* One of the names accepted by from_name(), or an error listing them. */
static int get_enum(lctx *c, json_t *obj, const char *member, int (*from_name)(const char *),
                    const char *choices, int *out)
{
    json_t *v = json_object_get(obj, member);
    if (!v) return MBS_OK;
    char path[PATH_LEN];
    join3(path, sizeof path, "simulation.", member, "");
    const char *s = NULL;
    int rc = get_string(c, v, path, &s);
    if (rc) return rc;
    int k = from_name(s);
    if (k < 0) return fail(c, MBS_ERR_MODEL, path, "unknown value \"%s\" (expected %s)", s, choices);
    *out = k;
    return MBS_OK;
}

/* A number > 0 (or >= lo when positive == 0). */
static int get_sim_number(lctx *c, json_t *obj, const char *member, int positive, double *out)
{
    json_t *v = json_object_get(obj, member);
    if (!v) return MBS_OK;
    char path[PATH_LEN];
    join3(path, sizeof path, "simulation.", member, "");
    double x = 0;
    int rc = get_number(c, v, path, &x);
    if (rc) return rc;
    if (positive && !(x > 0)) return fail(c, MBS_ERR_MODEL, path, "must be > 0, got %g", x);
    *out = x;
    return MBS_OK;
}

/* "fd" (mbs_tangent_fd) or "analytic" (mbs_tangent_analytic, the default). */
static int tangent_from_name(const char *name)
{
    if (!strcmp(name, "fd")) return 0;
    if (!strcmp(name, "analytic")) return 1;
    return -1;
}

/* "formulation": fr | semi (forward dynamics; no loop formulation), or a
 * closed-loop formulation (FORM_LOOP + mbs_loop_formulation), the names of
 * `mbsens simulate --formulation`. */
#define FORM_LOOP 100
static int sim_formulation_from_name(const char *name)
{
    int k = mbs_fd_algorithm_from_name(name);
    if (k >= 0) return k;
    k = mbs_loop_formulation_from_name(name);
    return k > 0 ? FORM_LOOP + k : -1;
}

/* A boolean member of "simulation" (0/1 into *out). */
static int get_sim_bool(lctx *c, json_t *obj, const char *member, int *out)
{
    json_t *v = json_object_get(obj, member);
    if (!v) return MBS_OK;
    char path[PATH_LEN];
    join3(path, sizeof path, "simulation.", member, "");
    if (!json_is_boolean(v)) return fail(c, MBS_ERR_MODEL, path, "expected true or false, got %s", json_type_name(v));
    *out = json_is_true(v);
    return MBS_OK;
}

/* A number in [lo, hi] (hi = INFINITY: finite and >= lo). */
static int get_sim_range(lctx *c, json_t *obj, const char *member, double lo, double hi, double *out)
{
    json_t *v = json_object_get(obj, member);
    if (!v) return MBS_OK;
    char path[PATH_LEN];
    join3(path, sizeof path, "simulation.", member, "");
    double x = 0;
    int rc = get_number(c, v, path, &x);
    if (rc) return rc;
    if (!(x >= lo && x <= hi)) {
        if (isinf(hi)) return fail(c, MBS_ERR_MODEL, path, "must be >= %g, got %g", lo, x);
        return fail(c, MBS_ERR_MODEL, path, "must be in [%g, %g], got %g", lo, hi, x);
    }
    *out = x;
    return MBS_OK;
}

static int load_sim_options(lctx *c, json_t *s, mbs_sim_options *o)
{
    static const char *const allowed[] = { "formulation", "ref", "integrator", "solver", "cvodes_method", "t0", "dt",
                                           "tf", "tolerance", "max_iterations", "rtol", "atol", "cvodes_max_steps",
                                           "project", "tangent_update", "tangent", "penalty", "proj_scale",
                                           "projection", "proj_tol", "lambda_factor", "tangent_keep", "omega", "xi",
                                           "baumgarte", NULL };
    if (!json_is_object(s))
        return fail(c, MBS_ERR_MODEL, "simulation", "expected an object, got %s", json_type_name(s));
    int rc = check_members(c, s, "simulation", allowed);
    int e;
    if (rc) return rc;
    e = -1;
    if ((rc = get_enum(c, s, "formulation", sim_formulation_from_name,
                       "fr, semi, ali3p, matrixr, penalty or index1", &e)))
        return rc;
    if (e >= FORM_LOOP) o->loop = (mbs_loop_formulation)(e - FORM_LOOP);
    else if (e >= 0) o->formulation = (mbs_fd_algorithm)e;
    /* the closed-loop settings (as `mbsens simulate --penalty, --proj-scale, --projection`) */
    e = (int)o->projection;
    if ((rc = get_enum(c, s, "projection", mbs_projection_from_name, "penalty or iterative", &e))) return rc;
    o->projection = (mbs_projection)e;
    if ((rc = get_sim_number(c, s, "penalty", 1, &o->penalty)) ||
        (rc = get_sim_number(c, s, "proj_scale", 1, &o->proj_scale)) ||
        (rc = get_sim_range(c, s, "proj_tol", 0, INFINITY, &o->proj_tol)) ||
        (rc = get_sim_range(c, s, "lambda_factor", 0, 1, &o->lambda_factor)) ||
        (rc = get_sim_range(c, s, "omega", 0, INFINITY, &o->omega)) ||
        (rc = get_sim_range(c, s, "xi", 0, INFINITY, &o->xi)) ||
        (rc = get_sim_bool(c, s, "tangent_keep", &o->tangent_keep)) ||
        (rc = get_sim_bool(c, s, "baumgarte", &o->baumgarte)))
        return rc;
    e = (int)o->ref;
    if ((rc = get_enum(c, s, "ref", mbs_ref_point_from_name, "com, origin or joint", &e))) return rc;
    o->ref = (mbs_ref_point)e;
    e = (int)o->integrator;
    if ((rc = get_enum(c, s, "integrator", mbs_integrator_from_name, "trapezoidal, rk4 or cvodes", &e))) return rc;
    o->integrator = (mbs_integrator_type)e;
    e = (int)o->solver;
    if ((rc = get_enum(c, s, "solver", mbs_nl_solver_from_name, "newton or fixedpoint", &e))) return rc;
    o->solver = (mbs_nl_solver)e;
    e = (int)o->cvodes_method;
    if ((rc = get_enum(c, s, "cvodes_method", mbs_cvodes_method_from_name, "bdf or adams", &e))) return rc;
    o->cvodes_method = (mbs_cvodes_method)e;
    e = (int)o->tangent_update;
    if ((rc = get_enum(c, s, "tangent_update", mbs_tangent_update_from_name, "iteration or step", &e))) return rc;
    o->tangent_update = (mbs_tangent_update)e;
    e = -1;   /* absent: the default (NULL, the analytical tangent) */
    if ((rc = get_enum(c, s, "tangent", tangent_from_name, "fd or analytic", &e))) return rc;
    if (e >= 0) o->tangent = e ? mbs_tangent_analytic : mbs_tangent_fd;
    if ((rc = get_sim_number(c, s, "t0", 0, &o->t0)) || (rc = get_sim_number(c, s, "dt", 1, &o->dt)) ||
        (rc = get_sim_number(c, s, "tf", 0, &o->tf)) || (rc = get_sim_number(c, s, "tolerance", 1, &o->tolerance)) ||
        (rc = get_sim_number(c, s, "rtol", 1, &o->rtol)) || (rc = get_sim_number(c, s, "atol", 1, &o->atol)))
        return rc;
    if (!(o->tf >= o->t0))
        return fail(c, MBS_ERR_MODEL, "simulation.tf", "must be >= t0 = %g, got %g", o->t0, o->tf);
    static const char *const ints[] = { "max_iterations", "cvodes_max_steps" };
    for (int k = 0; k < 2; k++) {
        json_t *v = json_object_get(s, ints[k]);
        if (!v) continue;
        char path[PATH_LEN];
        join3(path, sizeof path, "simulation.", ints[k], "");
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000000)
            return fail(c, MBS_ERR_MODEL, path, "expected an integer between 1 and 1e9");
        if (k == 0) o->max_iterations = (int)json_integer_value(v);
        else o->cvodes_max_steps = (long)json_integer_value(v);
    }
    json_t *v = json_object_get(s, "project");
    if (v) {
        if (!json_is_boolean(v))
            return fail(c, MBS_ERR_MODEL, "simulation.project", "expected true or false, got %s", json_type_name(v));
        o->project = json_is_true(v);
    }
    return MBS_OK;
}

/* One more output; the array grows by doubling (cap: its capacity). */
static int add_output(lctx *c, mbs_model *m, size_t *cap, mbs_output_kind kind, int point)
{
    if ((size_t)m->sim.noutput == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        mbs_output *o = realloc(m->sim.output, sizeof *o * nc);
        if (!o) return fail(c, MBS_ERR_NOMEM, "outputs", "out of memory");
        m->sim.output = o;
        *cap = nc;
    }
    mbs_output *o = m->sim.output;
    o[m->sim.noutput].kind = kind;
    o[m->sim.noutput].point = kind == MBS_OUTPUT_POSE || kind == MBS_OUTPUT_FORCE ? -1 : point;
    o[m->sim.noutput].body = kind == MBS_OUTPUT_POSE ? point : -1;
    o[m->sim.noutput].ncoord = 0;
    o[m->sim.noutput].coord[0] = o[m->sim.noutput].coord[1] = o[m->sim.noutput].coord[2] = -1;
    m->sim.noutput++;
    return MBS_OK;
}

/* { "coordinate": NAME or [NAME, NAME, NAME], "quantity": "force" }: the
 * generalized forces of inverse dynamics at those coordinates */
static int load_force_output(lctx *c, json_t *e, const char *path, mbs_model *m, size_t *cap)
{
    static const char *const allowed[] = { "coordinate", "quantity", NULL };
    char p[PATH_LEN + 32];
    int rc = check_members(c, e, path, allowed);
    if (rc) return rc;
    json_t *jq = json_object_get(e, "quantity"), *jc = json_object_get(e, "coordinate");
    join3(p, sizeof p, path, ".quantity", "");
    if (!jq) return missing(c, path, "quantity");
    if (!json_is_string(jq) || strcmp(json_string_value(jq), "force"))
        return fail(c, MBS_ERR_MODEL, p, "expected \"force\" (a coordinate's output is its generalized force; "
                    "the coordinates themselves are columns of every run)");
    join3(p, sizeof p, path, ".coordinate", "");
    const int arr = json_is_array(jc);
    if (!json_is_string(jc) && !(arr && json_array_size(jc) >= 1 && json_array_size(jc) <= 3))
        return fail(c, MBS_ERR_MODEL, p, "expected a coordinate name or an array of 1 to 3");
    const int n = arr ? (int)json_array_size(jc) : 1;
    int coord[3];
    for (int k = 0; k < n; k++) {
        json_t *jk = arr ? json_array_get(jc, (size_t)k) : jc;
        char pk[PATH_LEN + 48];
        snprintf(pk, sizeof pk, arr ? "%s[%d]" : "%s", p, k);
        const char *name = NULL;
        if ((rc = get_string(c, jk, pk, &name))) return rc;
        if ((coord[k] = mbs_model_find_coord(m, name)) < 0)
            return fail(c, MBS_ERR_MODEL, pk, "unknown coordinate \"%s\"", name);
    }
    if ((rc = add_output(c, m, cap, MBS_OUTPUT_FORCE, -1))) return rc;
    mbs_output *o = &m->sim.output[m->sim.noutput - 1];
    o->ncoord = n;
    memcpy(o->coord, coord, sizeof coord);
    return MBS_OK;
}

/* "outputs": [ "energy", "poses", { "point": "body.point", "quantities": [...] },
 * { "body": "name" }, ... ]; "poses": the pose of every moving body */
static int load_outputs(lctx *c, json_t *arr, mbs_model *m)
{
    static const char *const allowed[] = { "point", "quantities", NULL };
    static const char *const qnames[] = { "position", "velocity", "acceleration" };
    if (!json_is_array(arr))
        return fail(c, MBS_ERR_MODEL, "outputs", "expected an array, got %s", json_type_name(arr));
    size_t k, cap = 0;
    json_t *e;
    json_array_foreach(arr, k, e) {
        char path[PATH_LEN];
        index_path(path, sizeof path, "outputs", k);
        int rc;
        if (json_is_string(e)) {
            const int poses = strcmp(json_string_value(e), "poses") == 0;
            if (strcmp(json_string_value(e), "energy") != 0 && !poses)
                return fail(c, MBS_ERR_MODEL, path, "unknown output \"%s\" (expected \"energy\", \"poses\" or an "
                            "object {\"point\": \"body.point\", \"quantities\": [...]} or {\"body\": \"name\"})",
                            json_string_value(e));
            for (int b = 1; poses && b <= m->nb; b++)
                if ((rc = add_output(c, m, &cap, MBS_OUTPUT_POSE, b))) return rc;
            if (!poses && (rc = add_output(c, m, &cap, MBS_OUTPUT_ENERGY, -1))) return rc;
            continue;
        }
        if (json_is_object(e) && json_object_get(e, "body")) {
            static const char *const body_allowed[] = { "body", NULL };
            if ((rc = check_members(c, e, path, body_allowed))) return rc;
            char bpath[PATH_LEN + 16];
            snprintf(bpath, sizeof bpath, "%s.body", path);
            const char *bname = NULL;
            if ((rc = get_string(c, json_object_get(e, "body"), bpath, &bname))) return rc;
            int b = mbs_body_find(m, bname);
            if (b < 0) return fail(c, MBS_ERR_MODEL, bpath, "unknown body \"%s\"", bname);
            if ((rc = add_output(c, m, &cap, MBS_OUTPUT_POSE, b))) return rc;
            continue;
        }
        if (json_is_object(e) && json_object_get(e, "coordinate")) {
            if ((rc = load_force_output(c, e, path, m, &cap))) return rc;
            continue;
        }
        if (!json_is_object(e))
            return fail(c, MBS_ERR_MODEL, path, "expected \"energy\" or an object {\"point\", \"quantities\"}, got %s",
                        json_type_name(e));
        if ((rc = check_members(c, e, path, allowed))) return rc;
        json_t *p = json_object_get(e, "point");
        if (!p) return missing(c, path, "point");
        char ppath[PATH_LEN + 16];
        join3(ppath, sizeof ppath, path, ".point", "");
        const char *pname = NULL;
        if ((rc = get_string(c, p, ppath, &pname))) return rc;
        int point = mbs_point_find(m, pname);
        if (point < 0) return fail(c, MBS_ERR_MODEL, ppath, "unknown point \"%s\" (expected \"body.point\")", pname);
        json_t *q = json_object_get(e, "quantities");
        if (!q) {
            if ((rc = add_output(c, m, &cap, MBS_OUTPUT_POSITION, point))) return rc;
            continue;
        }
        join3(ppath, sizeof ppath, path, ".quantities", "");
        if (!json_is_array(q) || json_array_size(q) == 0)
            return fail(c, MBS_ERR_MODEL, ppath, "expected a non-empty array of position, velocity, acceleration");
        size_t j;
        json_t *qn;
        json_array_foreach(q, j, qn) {
            int kind = -1;
            for (int t = 0; t < 3; t++)
                if (json_is_string(qn) && strcmp(json_string_value(qn), qnames[t]) == 0) kind = t;
            if (kind < 0)
                return fail(c, MBS_ERR_MODEL, ppath, "element %zu: expected position, velocity or acceleration", j);
            if ((rc = add_output(c, m, &cap, (mbs_output_kind)kind, point))) return rc;
        }
    }
    return MBS_OK;
}

/* The "simulation" and "outputs" sections, after the model is built (point
 * names are resolved against it). */
static int load_simulation(lctx *c, json_t *root, mbs_model *m)
{
    json_t *s = json_object_get(root, "simulation");
    m->sim.options = mbs_sim_options_default();
    int rc;
    if (s) {
        if ((rc = load_sim_options(c, s, &m->sim.options))) return rc;
        m->sim.present = 1;
    }
    json_t *o = json_object_get(root, "outputs");
    if (o && (rc = load_outputs(c, o, m))) return rc;
    return MBS_OK;
}

/* Joint "limit" {lower, upper, effort, velocity} and "dynamics" {damping,
 * friction}: URDF data kept with the model, not applied by the dynamics
 * (docs/model-format.md "URDF"). Set on the finished model by joint name. */
static int load_joint_data(lctx *c, json_t *root, mbs_model *m)
{
    static const char *const lim[] = { "lower", "upper", "effort", "velocity", NULL };
    static const char *const dyn[] = { "damping", "friction", NULL };
    json_t *arr = json_object_get(root, "joints"), *jj;
    size_t idx;
    json_array_foreach(arr, idx, jj) {
        json_t *jl = json_object_get(jj, "limit"), *jd = json_object_get(jj, "dynamics");
        if (!jl && !jd) continue;
        int i = mbs_model_find_joint(m, json_string_value(json_object_get(jj, "name")));
        mbs_joint_info *ji = i > 0 ? &m->joint[i] : NULL;
        if (ji) ji->lower = ji->upper = ji->effort = ji->velocity = ji->damping = ji->friction = NAN;
        for (int w = 0; w < 2; w++) {
            json_t *o = w ? jd : jl;
            if (!o) continue;
            char path[PATH_LEN], p[PATH_LEN + 32];
            snprintf(path, sizeof path, "joints[%zu].%s", idx, w ? "dynamics" : "limit");
            if (!json_is_object(o))
                return fail(c, MBS_ERR_MODEL, path, "expected an object, got %s", json_type_name(o));
            int rc = check_members(c, o, path, w ? dyn : lim);
            if (rc) return rc;
            double tmp, *dst_l[4], *dst_d[2];
            if (ji) {
                dst_l[0] = &ji->lower; dst_l[1] = &ji->upper; dst_l[2] = &ji->effort; dst_l[3] = &ji->velocity;
                dst_d[0] = &ji->damping; dst_d[1] = &ji->friction;
            } else {
                dst_l[0] = dst_l[1] = dst_l[2] = dst_l[3] = dst_d[0] = dst_d[1] = &tmp;   /* cut joint */
            }
            const char *const *names = w ? dyn : lim;
            for (int k = 0; names[k]; k++) {
                json_t *v = json_object_get(o, names[k]);
                if (!v) continue;
                join3(p, sizeof p, path, ".", names[k]);
                if ((rc = get_number(c, v, p, w ? dst_d[k] : dst_l[k]))) return rc;
            }
            if (ji && w) ji->has_dynamics = 1;
            if (ji && !w) ji->has_limit = 1;
        }
    }
    return MBS_OK;
}

static mbs_model *load_document(json_t *root, const char *file, mbs_warning_fn warn, void *warn_user,
                                mbs_error *err)
{
    static const char *const allowed[] = { "name", "description", "gravity", "bodies", "joints", "parameters",
                                           "functions", "forces", "simulation", "outputs", "objectives",
                                           "lenient_inertia", "constraints", "assembly", "ground", "velocities",
                                           NULL };
    static const char *const reserved[] = { NULL };
    lctx c = { file, err, NULL, MBS_VELOCITIES_EULER_RATES };
    if (!json_is_object(root)) {
        fail(&c, MBS_ERR_MODEL, "", "a model must be a JSON object, got %s", json_type_name(root));
        return NULL;
    }
    for (const char *const *r = reserved; *r; r++)
        if (json_object_get(root, *r)) {
            fail(&c, MBS_ERR_UNSUPPORTED, *r, "%s is not supported yet", *r);
            return NULL;
        }
    if (check_members(&c, root, "(top level)", allowed)) return NULL;

    /* default model name: the file name without directory and extension */
    char defname[256];
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    snprintf(defname, sizeof defname, "%s", base);
    char *dot = strrchr(defname, '.');
    if (dot && dot != defname) *dot = '\0';
    const char *name = defname;
    json_t *v;
    if ((v = json_object_get(root, "name")) && get_string(&c, v, "name", &name)) return NULL;
    if ((v = json_object_get(root, "description")) && !json_is_string(v)) {
        fail(&c, MBS_ERR_MODEL, "description", "expected a string, got %s", json_type_name(v));
        return NULL;
    }
    double g[3] = { 0, 0, -9.81 };
    if ((v = json_object_get(root, "gravity")) && get_numbers(&c, v, "gravity", 3, g)) return NULL;
    if ((v = json_object_get(root, "velocities")) && velocity_convention(&c, v, "velocities", &c.velocities))
        return NULL;

    c.b = mbs_builder_new(name, file);
    if (!c.b) {
        mbs_error_set(err, MBS_ERR_NOMEM, "%s: out of memory", file);
        return NULL;
    }
    mbs_builder_set_gravity(c.b, g);
    if ((v = json_object_get(root, "lenient_inertia"))) {
        if (!json_is_boolean(v)) {
            fail(&c, MBS_ERR_MODEL, "lenient_inertia", "expected true or false, got %s", json_type_name(v));
            mbs_builder_free(c.b);
            return NULL;
        }
        mbs_builder_set_inertia_policy(c.b, json_is_true(v), warn, warn_user);
    }
    mbs_model *m = NULL;
    if (load_ground(&c, root) == MBS_OK && load_array(&c, root, "bodies", 1, 1, load_body) == MBS_OK &&
        load_array(&c, root, "joints", 1, 0, load_joint) == MBS_OK &&
        load_array(&c, root, "functions", 0, 0, load_function) == MBS_OK &&
        load_array(&c, root, "forces", 0, 0, load_force) == MBS_OK &&
        load_array(&c, root, "constraints", 0, 0, load_constraint) == MBS_OK &&
        load_assembly(&c, root) == MBS_OK &&
        load_array(&c, root, "parameters", 0, 0, load_param) == MBS_OK)
        m = mbs_builder_finish(c.b, err);
    if (m && load_joint_data(&c, root, m) != MBS_OK) {
        mbs_model_free(m);
        m = NULL;
    }
    if (m && load_simulation(&c, root, m) != MBS_OK) {
        mbs_model_free(m);
        m = NULL;
    }
    if (m && mbs_json_load_objectives(json_object_get(root, "objectives"), file, m, err) != MBS_OK) {
        mbs_model_free(m);
        m = NULL;
    }
    mbs_builder_free(c.b);
    return m;
}

static const int JSON_FLAGS = JSON_REJECT_DUPLICATES;

mbs_model *mbs_model_load_json_file(const char *path, mbs_warning_fn warn, void *warn_user, mbs_error *err)
{
    FILE *f = mbs_model_file_open(path, err);
    if (!f) return NULL;
    json_error_t je;
    json_t *root = json_loadf(f, JSON_FLAGS, &je);
    const int read_error = ferror(f) ? errno : 0;
    fclose(f);
    if (read_error) {
        json_decref(root);
        mbs_error_set(err, MBS_ERR_IO, "%s: cannot read the file (%s)", path, strerror(read_error));
        return NULL;
    }
    if (!root) {
        enum json_error_code code = json_error_code(&je);
        if (code == json_error_out_of_memory)
            mbs_error_set(err, MBS_ERR_NOMEM, "%s: out of memory", path);
        else
            mbs_error_set(err, MBS_ERR_PARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return NULL;
    }
    mbs_model *m = load_document(root, path, warn, warn_user, err);
    json_decref(root);
    return m;
}

mbs_model *mbs_model_load_string(const char *json, const char *name, mbs_error *err)
{
    return mbs_model_load_string_warn(json, name, NULL, NULL, err);
}

mbs_model *mbs_model_load_string_warn(const char *json, const char *name, mbs_warning_fn warn, void *warn_user,
                                      mbs_error *err)
{
    if (!name) name = "<string>";
    if (!json) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_load_string: json is NULL");
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loads(json, JSON_FLAGS, &je);
    if (!root) {
        if (json_error_code(&je) == json_error_out_of_memory)
            mbs_error_set(err, MBS_ERR_NOMEM, "%s: out of memory", name);
        else
            mbs_error_set(err, MBS_ERR_PARSE, "%s:%d:%d: %s", name, je.line, je.column, je.text);
        return NULL;
    }
    mbs_model *m = load_document(root, name, warn, warn_user, err);
    json_decref(root);
    return m;
}
