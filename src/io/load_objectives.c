/*
 * load_objectives.c - the "objectives" section of the JSON model format
 * (docs/model-format.md, docs/sensitivity.md), and the objectives' copy and
 * free.
 *
 *   "objectives": [
 *     { "name": "psi1",
 *       "integral": [ { "point": "bar12.P2", "quantity": "position",
 *                       "reference": [0.5, -2, 0], "weight": 1 } ],
 *       "terminal": [ ... ] } ]
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_objectives.h"
#include "base/error.h"
#include "model/model_util.h"
#include "json_path.h"

typedef struct {
    const char *file;
    mbs_error *err;
    const mbs_model *m;
} octx;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int ofail(octx *c, const char *path, const char *fmt, ...)
{
    char what[MBS_ERROR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mbs_error_set(c->err, MBS_ERR_MODEL, "%s: %s: %s", c->file, path, what);
}

static int check_members(octx *c, json_t *obj, const char *path, const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(key, *a)) ok = 1;
        if (!ok) {
            char list[256] = "";
            size_t len = 0;
            for (const char *const *a = allowed; *a; a++) {
                int n = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *a);
                if (n > 0 && (size_t)n < sizeof list - len) len += (size_t)n;
            }
            return ofail(c, path, "unknown member \"%s\" (allowed: %s)", key, list);
        }
    }
    return MBS_OK;
}

/* A vector of the body by its qualified name or by its own name (the
 * first in the model's order if both match), -1 if none; -2 if memory runs
 * out. */
static int find_vector(const mbs_model *m, int body, const char *name)
{
    size_t len = strlen(m->body[body].name) + strlen(name) + 2;
    char *q = malloc(len);
    if (!q) return -2;
    snprintf(q, len, "%s.%s", m->body[body].name, name);
    int a = mbs_model_find_vector(m, body, name), b = mbs_model_find_vector(m, body, q);
    free(q);
    return a < 0 ? b : b < 0 || a < b ? a : b;
}

/* one reference component: number or function name */
static int ref_component(octx *c, json_t *v, const char *path, double *val, int *func)
{
    if (json_is_number(v)) {
        *val = json_number_value(v);
        *func = -1;
        if (!isfinite(*val)) return ofail(c, path, "reference is not finite");
        return MBS_OK;
    }
    if (json_is_string(v)) {
        *val = 0;
        *func = mbs_model_find_func(c->m, json_string_value(v));
        if (*func < 0) return ofail(c, path, "unknown function \"%s\"", json_string_value(v));
        return MBS_OK;
    }
    return ofail(c, path, "expected a number or the name of a function");
}

/* "coordinate": a name, or an array of three (a vector quantity) */
static int term_coords(octx *c, json_t *jc, const char *path, mbs_objective_term *tm)
{
    char p[640];
    join3(p, sizeof p, path, ".coordinate", "");
    const int arr = json_is_array(jc);
    if (!json_is_string(jc) && !(arr && json_array_size(jc) == 3))
        return ofail(c, p, "expected a coordinate name or an array of three");
    tm->ncoord = arr ? 3 : 1;
    for (int k = 0; k < tm->ncoord; k++) {
        json_t *e = arr ? json_array_get(jc, (size_t)k) : jc;
        char pk[700];
        snprintf(pk, sizeof pk, arr ? "%s[%d]" : "%s", p, k);
        if (!json_is_string(e)) return ofail(c, pk, "expected a coordinate name");
        tm->coord3[k] = mbs_model_find_coord(c->m, json_string_value(e));
        if (tm->coord3[k] < 0) return ofail(c, pk, "unknown coordinate \"%s\"", json_string_value(e));
    }
    tm->coord = tm->coord3[0];
    return MBS_OK;
}

/* What a term measures: exactly one of point, coordinate, body or energy,
 * with its quantity; *n: the size of the quantity (1 or 3). */
static int term_subject(octx *c, json_t *t, const char *path, mbs_objective_term *tm, int *n)
{
    char p[640];
    json_t *jp = json_object_get(t, "point"), *jc = json_object_get(t, "coordinate");
    json_t *jb = json_object_get(t, "body"), *jq = json_object_get(t, "quantity");
    json_t *je = json_object_get(t, "energy");
    if ((jp != NULL) + (jc != NULL) + (jb != NULL) + (je != NULL) != 1)
        return ofail(c, path, "exactly one of \"point\", \"coordinate\", \"body\" or \"energy\" is required");
    const char *qty = NULL;
    if (jq) {
        if (!json_is_string(jq)) {
            join3(p, sizeof p, path, ".quantity", "");
            return ofail(c, p, "expected a string");
        }
        qty = json_string_value(jq);
    }
    *n = 3;
    if (je) {
        join3(p, sizeof p, path, ".energy", "");
        if (!json_is_string(je) || strcmp(json_string_value(je), "kinetic"))
            return ofail(c, p, "expected \"kinetic\" (the kinetic energy of the system)");
        if (jq) {
            join3(p, sizeof p, path, ".quantity", "");
            return ofail(c, p, "an energy term has no quantity");
        }
        tm->quantity = MBS_OBJQ_KINETIC_ENERGY;
        *n = 1;
    } else if (jp) {
        join3(p, sizeof p, path, ".point", "");
        if (!json_is_string(jp)) return ofail(c, p, "expected a point name \"body.point\"");
        tm->point = mbs_point_find(c->m, json_string_value(jp));
        if (tm->point < 0) return ofail(c, p, "unknown point \"%s\"", json_string_value(jp));
        if (!qty || !strcmp(qty, "position")) tm->quantity = MBS_OBJQ_POINT_POSITION;
        else if (!strcmp(qty, "velocity")) tm->quantity = MBS_OBJQ_POINT_VELOCITY;
        else if (!strcmp(qty, "acceleration")) tm->quantity = MBS_OBJQ_POINT_ACCELERATION;
        else {
            join3(p, sizeof p, path, ".quantity", "");
            return ofail(c, p, "unknown quantity \"%s\" for a point (position, velocity, acceleration)", qty);
        }
    } else if (jc) {
        if (term_coords(c, jc, path, tm)) return c->err ? c->err->code : MBS_ERR_MODEL;
        *n = tm->ncoord;
        if (!qty || !strcmp(qty, "value")) tm->quantity = MBS_OBJQ_COORDINATE;
        else if (!strcmp(qty, "velocity")) tm->quantity = MBS_OBJQ_COORDINATE_VELOCITY;
        else if (!strcmp(qty, "acceleration")) tm->quantity = MBS_OBJQ_COORDINATE_ACCELERATION;
        else if (!strcmp(qty, "force")) tm->quantity = MBS_OBJQ_COORDINATE_FORCE;
        else {
            join3(p, sizeof p, path, ".quantity", "");
            return ofail(c, p, "unknown quantity \"%s\" for a coordinate (value, velocity, acceleration, force)",
                         qty);
        }
    } else {
        join3(p, sizeof p, path, ".body", "");
        if (!json_is_string(jb)) return ofail(c, p, "expected a body name");
        tm->body = mbs_body_find(c->m, json_string_value(jb));
        if (tm->body < 1) return ofail(c, p, "unknown body \"%s\"", json_string_value(jb));
        if (qty && strcmp(qty, "angular_velocity")) {
            join3(p, sizeof p, path, ".quantity", "");
            return ofail(c, p, "unknown quantity \"%s\" for a body (angular_velocity)", qty);
        }
        tm->quantity = MBS_OBJQ_ANGULAR_VELOCITY;
        json_t *jv = json_object_get(t, "vector");
        if (jv) {
            join3(p, sizeof p, path, ".vector", "");
            if (!json_is_string(jv)) return ofail(c, p, "expected the name of a vector of the body");
            tm->vector = find_vector(c->m, tm->body, json_string_value(jv));
            if (tm->vector == -2) return mbs_error_set(c->err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
            if (tm->vector < 0) return ofail(c, p, "body \"%s\" has no vector \"%s\"", c->m->body[tm->body].name, json_string_value(jv));
            *n = 1;
        }
    }
    return MBS_OK;
}

/* The term's reference: one number or function name for a scalar
 * quantity, three for a vector one (default 0). */
static int term_reference(octx *c, json_t *t, const char *path, mbs_objective_term *tm, int scalar)
{
    char p[640];
    json_t *v;
    tm->nref = 1;
    if ((v = json_object_get(t, "reference"))) {
        join3(p, sizeof p, path, ".reference", "");
        if (json_is_array(v)) {
            if (scalar) return ofail(c, p, "the quantity is a scalar: expected one number or function name");
            if (json_array_size(v) != 3) return ofail(c, p, "expected 3 components, got %zu", json_array_size(v));
            tm->nref = 3;
            for (int k = 0; k < 3; k++) {
                char pk[700];
                snprintf(pk, sizeof pk, "%s[%d]", p, k);
                if (ref_component(c, json_array_get(v, (size_t)k), pk, &tm->ref[k], &tm->func[k])) return c->err ? c->err->code : MBS_ERR_MODEL;
            }
        } else {
            if (!scalar) return ofail(c, p, "a vector quantity needs a reference of 3 components");
            if (ref_component(c, v, p, &tm->ref[0], &tm->func[0])) return c->err ? c->err->code : MBS_ERR_MODEL;
        }
    }
    return MBS_OK;
}

static int load_term(octx *c, json_t *t, const char *path, mbs_objective_term *tm)
{
    static const char *const allowed[] = { "point", "coordinate", "body", "energy", "quantity", "component",
                                           "vector", "reference", "weight", "squared", "power", NULL };
    char p[640];
    if (!json_is_object(t)) return ofail(c, path, "expected an object");
    if (check_members(c, t, path, allowed)) return c->err ? c->err->code : MBS_ERR_MODEL;
    memset(tm, 0, sizeof *tm);
    tm->point = tm->coord = tm->body = tm->vector = tm->component = -1;
    tm->func[0] = tm->func[1] = tm->func[2] = -1;
    tm->weight = 1;
    tm->squared = 1;
    tm->power = 2;
    int n = 3;
    int rc = term_subject(c, t, path, tm, &n);
    if (rc) return rc;
    if (json_object_get(t, "vector") && tm->quantity != MBS_OBJQ_ANGULAR_VELOCITY) {
        join3(p, sizeof p, path, ".vector", "");
        return ofail(c, p, "\"vector\" applies to body angular velocities only");
    }
    json_t *v;
    if ((v = json_object_get(t, "component"))) {
        join3(p, sizeof p, path, ".component", "");
        if (n == 1) return ofail(c, p, "the quantity is a scalar: no component");
        if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 2)
            tm->component = (int)json_integer_value(v);
        else if (json_is_string(v) && strlen(json_string_value(v)) == 1 && strchr("xyz", json_string_value(v)[0]))
            tm->component = json_string_value(v)[0] - 'x';
        else
            return ofail(c, p, "expected 0, 1, 2 or \"x\", \"y\", \"z\"");
    }
    if ((v = json_object_get(t, "weight"))) {
        join3(p, sizeof p, path, ".weight", "");
        if (!json_is_number(v) || !isfinite(json_number_value(v))) return ofail(c, p, "expected a finite number");
        tm->weight = json_number_value(v);
    }
    if ((v = json_object_get(t, "squared"))) {
        join3(p, sizeof p, path, ".squared", "");
        if (!json_is_boolean(v)) return ofail(c, p, "expected true or false");
        tm->squared = json_is_true(v);
    }
    if ((v = json_object_get(t, "power"))) {
        join3(p, sizeof p, path, ".power", "");
        if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 2)
            return ofail(c, p, "expected a number >= 2 (the term is weight |e|^power; below 2 it is not "
                         "differentiable where e = 0)");
        if (!tm->squared) return ofail(c, p, "a linear (\"squared\": false) term has no power");
        tm->power = json_number_value(v);
    }
    int scalar = n == 1 || tm->component >= 0;
    if (!tm->squared && !scalar)
        return ofail(c, path, "a linear (\"squared\": false) term needs a scalar quantity: give a \"component\"");
    return term_reference(c, t, path, tm, scalar);
}

/* objectives[k] into m->obj[k]; names: the objective names so far */
static int load_objective(octx *c, json_t *o, size_t k, mbs_hashmap *names)
{
    static const char *const allowed[] = { "name", "integral", "terminal", NULL };
    mbs_error *err = c->err;
    char path[128], p[256];
    index_path(path, sizeof path, "objectives", k);
    mbs_objective_info *oi = &c->m->obj[k];
    if (!json_is_object(o)) return ofail(c, path, "expected an object");
    if (check_members(c, o, path, allowed)) return err ? err->code : MBS_ERR_MODEL;
    json_t *jn = json_object_get(o, "name");
    if (!jn || !json_is_string(jn) || !json_string_value(jn)[0])
        return ofail(c, path, "\"name\" (a non-empty string) is required");
    if (mbs_hashmap_get(names, 0, json_string_value(jn)) >= 0)
        return ofail(c, path, "duplicate objective name \"%s\"", json_string_value(jn));
    oi->name = mbs_strdup(json_string_value(jn));
    oi->where = mbs_strdup(path);
    json_t *ji = json_object_get(o, "integral"), *jt = json_object_get(o, "terminal");
    if (ji && !json_is_array(ji)) {
        join3(p, sizeof p, path, ".integral", "");
        return ofail(c, p, "expected an array of terms");
    }
    if (jt && !json_is_array(jt)) {
        join3(p, sizeof p, path, ".terminal", "");
        return ofail(c, p, "expected an array of terms");
    }
    size_t ni = ji ? json_array_size(ji) : 0, nt = jt ? json_array_size(jt) : 0;
    if (ni + nt == 0) return ofail(c, path, "an objective needs at least one \"integral\" or \"terminal\" term");
    oi->term = calloc(ni + nt, sizeof *oi->term);
    if (!oi->name || !oi->where || !oi->term || mbs_hashmap_put(names, 0, oi->name, (int)k) != -1)
        return mbs_error_set(err, MBS_ERR_NOMEM, "%s: out of memory", c->file);
    oi->nterm = (int)(ni + nt);
    oi->nintegral = (int)ni;
    for (size_t j = 0; j < ni + nt; j++) {
        char pt[200];
        join3(pt, sizeof pt, path, j < ni ? ".integral" : ".terminal", "");
        index_path(p, sizeof p, pt, j < ni ? j : j - ni);
        if (load_term(c, json_array_get(j < ni ? ji : jt, j < ni ? j : j - ni), p, &oi->term[j]))
            return err ? err->code : MBS_ERR_MODEL;
    }
    return MBS_OK;
}

int mbs_json_load_objectives(json_t *arr, const char *file, mbs_model *m, mbs_error *err)
{
    octx c = { file, err, m };
    if (!arr) return MBS_OK;
    if (!json_is_array(arr)) return ofail(&c, "objectives", "expected an array");
    size_t n = json_array_size(arr);
    if (n == 0) return MBS_OK;
    m->obj = calloc(n, sizeof *m->obj);
    if (!m->obj) return mbs_error_set(err, MBS_ERR_NOMEM, "%s: out of memory", file);
    m->nobj = (int)n;
    mbs_hashmap names = { 0 };
    int rc = MBS_OK;
    for (size_t k = 0; k < n && rc == MBS_OK; k++) rc = load_objective(&c, json_array_get(arr, k), k, &names);
    mbs_hashmap_free(&names);
    return rc;
}

