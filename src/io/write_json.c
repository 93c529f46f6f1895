/*
 * write_json.c - an mbs_model as a JSON document (docs/model-format.md),
 * the inverse of load_json.c for what a URDF or a JSON tree model holds:
 * name, gravity, lenient_inertia, bodies (mass, centre of mass, inertia,
 * named points and vectors), joints (explicit joint points and both joint
 * frames as axis/ref pairs, so that no default applies on reloading;
 * q0, qd0), parameters. Numbers are written with 17 significant digits, so
 * a reloaded model has the same numbers (joint frames are re-orthonormalized
 * by the builder: round-off).
 *
 * URDF <limit>/<dynamics> data are written as joint "limit" and "dynamics".
 * Not written: named points of the ground (a JSON file has no ground entry). Models with force elements, time
 * functions, closed loops, drivers, objectives or a simulation section are
 * refused (MBS_ERR_UNSUPPORTED) rather than written incompletely.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mbsens/model.h"
#include "builder.h"
#include "model_impl.h"
#include "model_util.h"

static json_t *vec(const double *v, int n)
{
    json_t *a = json_array();
    for (int k = 0; a && k < n; k++) json_array_append_new(a, json_real(v[k]));
    return a;
}

/* column k of a 3x3 row-major frame */
static json_t *col(const double *X, int k)
{
    double c[3] = { X[k], X[3 + k], X[6 + k] };
    return vec(c, 3);
}

/* the local name of a named point/vector of body b ("body.name" -> "name") */
static const char *local_name(const mbs_model *m, int body, const char *qualified)
{
    size_t n = strlen(m->body[body].name);
    return strncmp(qualified, m->body[body].name, n) == 0 && qualified[n] == '.' ? qualified + n + 1 : qualified;
}

/* a joint point: the name of a named point of the body at the same place
 * in the model vector (so that parameters on it keep moving the joint),
 * else its coordinates */
static json_t *joint_point(const mbs_model *m, int body, int x)
{
    for (int k = 0; k < m->npoint; k++)
        if (m->point[k].body == body && m->point[k].x == x)
            return json_string(local_name(m, body, m->point[k].name));
    return vec(m->x + x, 3);
}

char *mbs_model_to_json(const mbs_model *m, mbs_error *err)
{
    if (!m) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_to_json: model is NULL");
        return NULL;
    }
    const char *what = m->nforce ? "force elements" : m->nfunc ? "time functions"
                     : m->con.ncut ? "closed loops" : m->con.ndriver ? "driving constraints"
                     : m->nobj ? "objectives" : m->sim.present || m->sim.noutput ? "a simulation section" : NULL;
    if (what) {
        mbs_error_set(err, MBS_ERR_UNSUPPORTED, "%s: writing a model with %s is not supported yet",
                      m->name ? m->name : "model", what);
        return NULL;
    }
    const double *x = m->x;
    json_t *root = json_object(), *bodies = json_array(), *joints = json_array();
    if (!root || !bodies || !joints) {
        json_decref(root);
        json_decref(bodies);
        json_decref(joints);
        mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_json: out of memory");
        return NULL;
    }
    json_object_set_new(root, "name", json_string(m->name ? m->name : "model"));
    json_object_set_new(root, "gravity", vec(x + m->x_gravity, 3));
    if (m->lenient_inertia) json_object_set_new(root, "lenient_inertia", json_true());
    json_object_set_new(root, "bodies", bodies);
    json_object_set_new(root, "joints", joints);

    for (int i = 1; i <= m->nb; i++) {
        const mbs_body_info *b = &m->body[i];
        json_t *jb = json_object();
        if (!jb) goto oom;
        json_object_set_new(jb, "name", json_string(b->name));
        json_object_set_new(jb, "mass", json_real(x[b->x_mass]));
        json_object_set_new(jb, "com", vec(x + b->x_com, 3));
        json_object_set_new(jb, "inertia", vec(x + b->x_inertia, 6));
        json_t *pts = NULL, *vecs = NULL;
        for (int k = 0; k < m->npoint; k++) {
            if (m->point[k].body != i) continue;
            if (!pts) pts = json_object();
            json_object_set_new(pts, local_name(m, i, m->point[k].name), vec(x + m->point[k].x, 3));
        }
        for (int k = 0; k < m->nvector; k++) {
            if (m->vector[k].body != i) continue;
            if (!vecs) vecs = json_object();
            json_object_set_new(vecs, local_name(m, i, m->vector[k].name), vec(x + m->vector[k].x, 3));
        }
        if (pts) json_object_set_new(jb, "points", pts);
        if (vecs) json_object_set_new(jb, "vectors", vecs);
        json_array_append_new(bodies, jb);

        const mbs_joint_info *j = &m->joint[i];
        json_t *jj = json_object();
        if (!jj) goto oom;
        json_object_set_new(jj, "name", json_string(j->name));
        json_object_set_new(jj, "type", json_string(mbs_joint_type_name(j->type)));
        json_object_set_new(jj, "parent", json_string(m->body[j->parent].name));
        json_object_set_new(jj, "child", json_string(b->name));
        json_object_set_new(jj, "parent_point", j->parent ? joint_point(m, j->parent, j->x_ppoint)
                                                          : vec(x + j->x_ppoint, 3));
        json_object_set_new(jj, "child_point", joint_point(m, i, j->x_cpoint));
        json_object_set_new(jj, "parent_axis", col(x + j->x_Xp, 0));
        json_object_set_new(jj, "parent_ref", col(x + j->x_Xp, 1));
        json_object_set_new(jj, "child_axis", col(x + j->x_Xc, 0));
        json_object_set_new(jj, "child_ref", col(x + j->x_Xc, 1));
        if (j->nq > 0) {
            json_object_set_new(jj, "q0", vec(j->q0, j->nq));
            json_object_set_new(jj, "qd0", vec(j->qd0, j->nq));
        }
        if (j->has_limit) {
            json_t *o = json_object();
            const double v[4] = { j->lower, j->upper, j->effort, j->velocity };
            static const char *const n[4] = { "lower", "upper", "effort", "velocity" };
            for (int k = 0; o && k < 4; k++)
                if (isfinite(v[k])) json_object_set_new(o, n[k], json_real(v[k]));
            json_object_set_new(jj, "limit", o);
        }
        if (j->has_dynamics) {
            json_t *o = json_object();
            if (o && isfinite(j->damping)) json_object_set_new(o, "damping", json_real(j->damping));
            if (o && isfinite(j->friction)) json_object_set_new(o, "friction", json_real(j->friction));
            json_object_set_new(jj, "dynamics", o);
        }
        json_array_append_new(joints, jj);
    }

    if (m->nparam > 0) {
        json_t *params = json_array();
        if (!params) goto oom;
        json_object_set_new(root, "parameters", params);
        for (int k = 0; k < m->nparam; k++) {
            const mbs_param_info *p = &m->param[k];
            json_t *jp = json_object(), *sets = json_array();
            if (!jp || !sets) {
                json_decref(jp);
                json_decref(sets);
                goto oom;
            }
            json_object_set_new(jp, "name", json_string(p->name));
            json_object_set_new(jp, "value", json_real(p->value));
            if (isfinite(p->lower)) json_object_set_new(jp, "lower", json_real(p->lower));
            if (isfinite(p->upper)) json_object_set_new(jp, "upper", json_real(p->upper));
            for (int t = 0; t < p->ntargets; t++) {
                json_t *jt = json_object();
                json_object_set_new(jt, "target", json_string(p->target_name[t]));
                json_object_set_new(jt, "scale", json_real(p->scale[t]));
                json_object_set_new(jt, "offset", json_real(p->offset[t]));
                json_array_append_new(sets, jt);
            }
            json_object_set_new(jp, "sets", sets);
            json_array_append_new(params, jp);
        }
    }

    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!s) {
        mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_json: out of memory");
        return NULL;
    }
    /* a malloc'd copy: the caller frees with free() whatever jansson's allocator */
    char *out = mbs_strdup(s);
    free(s);
    if (!out) mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_json: out of memory");
    return out;

oom:
    json_decref(root);   /* owns bodies and joints */
    mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_json: out of memory");
    return NULL;
}
