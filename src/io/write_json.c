/*
 * write_json.c - an mbs_model as a JSON document (docs/model-format.md),
 * the inverse of load_json.c: loading the text gives the same model, with
 * the same sizes, names, model vector (bit for bit) and settings.
 *
 * Every section the loader reads is written: name, gravity,
 * lenient_inertia, the ground's named points and vectors, bodies, joints
 * (tree joints in body order, then the cut joints of closed loops, marked
 * "cut" where the model says the user chose them), functions, forces,
 * constraints (drivers), assembly, parameters, simulation, outputs and
 * objectives. Joint frames are written as axis/ref pairs on both sides and
 * joint points by name or coordinates, so that no default applies on
 * reloading; a joint point is a named point when the model's joint uses one
 * (then parameters on it keep moving the joint).
 *
 * Why the reload is exact: numbers are written as the shortest text that
 * reads back as the same double (mbs_format_double; -0 as "-0.0", since a
 * JSON integer has no sign of zero); the builder lays out the model vector
 * from the model's structure, not from the order of the file (builder.c);
 * normalizing an axis or a vector that is already a unit vector to within
 * round-off changes no bit (builder.c, unit_norm); the cut joints come
 * after the tree joints, where they win the ties of the automatic cut
 * choice that they won in the original (builder.c, check_topology).
 *
 * The text: two-space indentation, one member per line, numeric arrays on
 * one line (8 numbers per line when longer), so that diffs are readable.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/model.h"
#include "mbsens/constraints.h"
#include "mbsens/simulate.h"
#include "builder/builder.h"
#include "base/format_double.h"
#include "model/model_impl.h"
#include "joints/joint.h"
#include "model/model_util.h"

/* ---------------------------------------------------------------- text */

/* The document being written. A member is written after a separator and
 * an indentation that depend on whether it is the first of its container. */
typedef struct jw {
    char *s;
    size_t len, cap;
    int failed;            /* out of memory */
    int depth;
    int first;             /* the next member is the first of its container */
    int velocities;        /* -1: every joint as it is; else the convention (mbs_velocities) of every
                            * spherical and floating joint (mbs_model_with_velocities) */
} jw;

static void put_n(jw *w, const char *s, size_t n)
{
    if (w->failed) return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n + 1) cap *= 2;
        char *p = realloc(w->s, cap);
        if (!p) {
            w->failed = 1;
            return;
        }
        w->s = p;
        w->cap = cap;
    }
    memcpy(w->s + w->len, s, n);
    w->len += n;
    w->s[w->len] = '\0';
}

static void put(jw *w, const char *s) { put_n(w, s, strlen(s)); }

static void indent(jw *w)
{
    put(w, "\n");
    for (int k = 0; k < w->depth; k++) put(w, "  ");
}

/* a JSON string: quotes, and escapes for '"', '\\' and control characters */
static void put_string(jw *w, const char *s)
{
    put(w, "\"");
    const char *run = s;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
        put_n(w, run, (size_t)(s - run));
        char esc[8];
        switch (ch) {
        case '"': put(w, "\\\""); break;
        case '\\': put(w, "\\\\"); break;
        case '\n': put(w, "\\n"); break;
        case '\t': put(w, "\\t"); break;
        case '\r': put(w, "\\r"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            put(w, esc);
        }
        run = s + 1;
    }
    put_n(w, run, (size_t)(s - run));
    put(w, "\"");
}

static void put_number(jw *w, double x)
{
    char b[MBS_DOUBLE_CHARS];
    int n = mbs_format_double(b, x);
    if (x == 0 && signbit(x)) put(w, "-0.0");   /* "-0" would read back as the integer 0 */
    else put_n(w, b, (size_t)n);
}

/* Start a member of the current container: separator, new line, "key": . */
static void member(jw *w, const char *key)
{
    if (!w->first) put(w, ",");
    w->first = 0;
    indent(w);
    if (key) {
        put_string(w, key);
        put(w, ": ");
    }
}

static void jopen(jw *w, const char *key, const char *bracket)
{
    member(w, key);
    put(w, bracket);
    w->depth++;
    w->first = 1;
}

static void jclose(jw *w, const char *bracket)
{
    w->depth--;
    if (!w->first) indent(w);
    put(w, bracket);
    w->first = 0;
}

static void num(jw *w, const char *key, double x)
{
    member(w, key);
    put_number(w, x);
}

static void str(jw *w, const char *key, const char *s)
{
    member(w, key);
    put_string(w, s);
}

static void boolean(jw *w, const char *key, int b)
{
    member(w, key);
    put(w, b ? "true" : "false");
}

static void integer(jw *w, const char *key, long v)
{
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    member(w, key);
    put(w, b);
}

/* [a, b, c] on one line; longer arrays 8 numbers per line */
static void vec(jw *w, const char *key, const double *v, int n)
{
    member(w, key);
    put(w, "[");
    for (int k = 0; k < n; k++) {
        if (k) put(w, ",");
        if (n > 8 && k % 8 == 0) {
            w->depth++;
            indent(w);
            w->depth--;
        } else if (k) {
            put(w, " ");
        }
        put_number(w, v[k]);
    }
    if (n > 8) indent(w);
    put(w, "]");
}

/* ---------------------------------------------------------------- model pieces */

/* What the writer needs to look up: the named point at each model-vector
 * offset, the named points and vectors of each body (grouped, in lookup
 * order), and the joint of each coordinate. */
typedef struct lookup {
    int *point_at;         /* nx: named point whose coordinates start there, -1 */
    int *pfirst, *plist;   /* points of body i: plist[pfirst[i] .. pfirst[i + 1] - 1] */
    int *vfirst, *vlist;   /* vectors, the same */
    int *coord_joint;      /* nq: the joint of each coordinate */
} lookup;

static void lookup_free(lookup *ix)
{
    free(ix->point_at);
    free(ix->pfirst);
    free(ix->plist);
    free(ix->vfirst);
    free(ix->vlist);
    free(ix->coord_joint);
}

/* list[first[b] .. first[b + 1] - 1]: the items k < n with body[k] == b, k
 * ascending (first: nb + 2 entries) */
static void group_by_body(int nb, int n, const int *body, int *first, int *list)
{
    for (int i = 0; i <= nb + 1; i++) first[i] = 0;
    for (int k = 0; k < n; k++) first[body[k] + 1]++;
    for (int i = 0; i <= nb; i++) first[i + 1] += first[i];
    for (int k = 0; k < n; k++) list[first[body[k]]++] = k;   /* first[b] moves to the start of b + 1 */
    for (int i = nb; i > 0; i--) first[i] = first[i - 1];
    first[0] = 0;
}

static int lookup_init(lookup *ix, const mbs_model *m)
{
    memset(ix, 0, sizeof *ix);
    size_t nb2 = (size_t)m->nb + 2;
    ix->point_at = malloc(((size_t)m->nx + 1) * sizeof *ix->point_at);
    ix->pfirst = malloc(nb2 * sizeof *ix->pfirst);
    ix->plist = malloc(((size_t)m->npoint + 1) * sizeof *ix->plist);
    ix->vfirst = malloc(nb2 * sizeof *ix->vfirst);
    ix->vlist = malloc(((size_t)m->nvector + 1) * sizeof *ix->vlist);
    ix->coord_joint = malloc(((size_t)m->nq + 1) * sizeof *ix->coord_joint);
    if (!ix->point_at || !ix->pfirst || !ix->plist || !ix->vfirst || !ix->vlist || !ix->coord_joint) return -1;
    for (int k = 0; k < m->nx; k++) ix->point_at[k] = -1;
    for (int k = m->npoint - 1; k >= 0; k--) ix->point_at[m->point[k].x] = k;
    int *body = malloc(((size_t)(m->npoint > m->nvector ? m->npoint : m->nvector) + 1) * sizeof *body);
    if (!body) return -1;
    for (int k = 0; k < m->npoint; k++) body[k] = m->point[k].body;
    group_by_body(m->nb, m->npoint, body, ix->pfirst, ix->plist);
    for (int k = 0; k < m->nvector; k++) body[k] = m->vector[k].body;
    group_by_body(m->nb, m->nvector, body, ix->vfirst, ix->vlist);
    free(body);
    for (int i = 1; i <= m->nb; i++)
        for (int c = 0; c < m->joint[i].nq; c++) ix->coord_joint[m->joint[i].qoff + c] = i;
    return 0;
}

/* the name of a named point or vector within its body ("body.name" -> "name") */
static const char *local_name(const mbs_model *m, int body, const char *qualified)
{
    return qualified + strlen(m->body[body].name) + 1;
}

/* a point of `body` at x[x]: its local name if a named point of the body is
 * there, else its coordinates */
static void point_member(jw *w, const mbs_model *m, const lookup *ix, const char *key, int body, int x)
{
    int k = ix->point_at[x];
    if (k >= 0 && m->point[k].body == body) str(w, key, local_name(m, body, m->point[k].name));
    else vec(w, key, m->x + x, 3);
}

/* "points" and "vectors" of body i (the ground: i = 0) */
static void body_items(jw *w, const mbs_model *m, const lookup *ix, int i)
{
    if (ix->pfirst[i + 1] > ix->pfirst[i]) {
        jopen(w, "points", "{");
        for (int e = ix->pfirst[i]; e < ix->pfirst[i + 1]; e++) {
            const mbs_point_info *p = &m->point[ix->plist[e]];
            vec(w, local_name(m, i, p->name), m->x + p->x, 3);
        }
        jclose(w, "}");
    }
    if (ix->vfirst[i + 1] > ix->vfirst[i]) {
        jopen(w, "vectors", "{");
        for (int e = ix->vfirst[i]; e < ix->vfirst[i + 1]; e++) {
            const mbs_vector_info *v = &m->vector[ix->vlist[e]];
            vec(w, local_name(m, i, v->name), m->x + v->x, 3);
        }
        jclose(w, "}");
    }
}

static void write_bodies(jw *w, const mbs_model *m, const lookup *ix)
{
    if (ix->pfirst[1] > 0 || ix->vfirst[1] > 0) {
        jopen(w, "ground", "{");
        body_items(w, m, ix, 0);
        jclose(w, "}");
    }
    jopen(w, "bodies", "[");
    for (int i = 1; i <= m->nb; i++) {
        const mbs_body_info *b = &m->body[i];
        jopen(w, NULL, "{");
        str(w, "name", b->name);
        num(w, "mass", m->x[b->x_mass]);
        vec(w, "com", m->x + b->x_com, 3);
        vec(w, "inertia", m->x + b->x_inertia, 6);
        body_items(w, m, ix, i);
        jclose(w, "}");
    }
    jclose(w, "]");
}

/* both sides of a joint: points, and frames as axis/ref pairs */
static void joint_sides(jw *w, const mbs_model *m, const lookup *ix, const int body[2], int x_ppoint, int x_cpoint,
                        int x_Xp, int x_Xc)
{
    static const char *const keys[2][3] = { { "parent_point", "parent_axis", "parent_ref" },
                                            { "child_point", "child_axis", "child_ref" } };
    const int xp[2] = { x_ppoint, x_cpoint }, xX[2] = { x_Xp, x_Xc };
    for (int s = 0; s < 2; s++) {
        const double *X = m->x + xX[s];
        const double axis[3] = { X[0], X[3], X[6] }, ref[3] = { X[1], X[4], X[7] };
        point_member(w, m, ix, keys[s][0], body[s], xp[s]);
        vec(w, keys[s][1], axis, 3);
        vec(w, keys[s][2], ref, 3);
    }
}

/* URDF <limit> and <dynamics> data of a joint (the values given) */
static void joint_data(jw *w, const mbs_joint_info *j)
{
    if (j->has_limit) {
        static const char *const n[4] = { "lower", "upper", "effort", "velocity" };
        const double v[4] = { j->lower, j->upper, j->effort, j->velocity };
        jopen(w, "limit", "{");
        for (int k = 0; k < 4; k++)
            if (isfinite(v[k])) num(w, n[k], v[k]);
        jclose(w, "}");
    }
    if (j->has_dynamics) {
        jopen(w, "dynamics", "{");
        if (isfinite(j->damping)) num(w, "damping", j->damping);
        if (isfinite(j->friction)) num(w, "friction", j->friction);
        jclose(w, "}");
    }
}

/* A joint's initial velocities: "qd0" (the rates) for a joint whose
 * velocities are rates, "velocities": "tangent" and "v0" for a tangent
 * joint, so that the text loads back into the same model. With a
 * convention imposed (w->velocities >= 0), every spherical and floating
 * joint gets "velocities" and its rates qd0 = T(q0) v0, which the loader
 * maps to the velocities of the convention. */
static void joint_velocities(jw *w, const mbs_joint_info *j)
{
    const int ball = j->type == MBS_JOINT_SPHERICAL || j->type == MBS_JOINT_FLOATING;
    if (!ball || (w->velocities < 0 && j->velocities == MBS_VELOCITIES_EULER_RATES)) {
        vec(w, "qd0", j->qd0, j->nq);
        return;
    }
    if (w->velocities < 0) {
        str(w, "velocities", "tangent");
        vec(w, "v0", j->qd0, j->nv);
        return;
    }
    str(w, "velocities", w->velocities == MBS_VELOCITIES_TANGENT ? "tangent" : "euler_rates");
    double T[MBS_JOINT_MAXQ * MBS_JOINT_MAXQ], qd[7] = { 0 };
    const mbs_joint_ops *ops = mbs_joint_ops_of(j->type, j->velocities);
    ops->velocity_map(j->q0, T);
    for (int r = 0; r < j->nq; r++)
        for (int k = 0; k < j->nv; k++) qd[r] += T[r * j->nv + k] * j->qd0[k];
    vec(w, "qd0", qd, j->nq);
}

static void write_joints(jw *w, const mbs_model *m, const lookup *ix)
{
    jopen(w, "joints", "[");
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *j = &m->joint[i];
        const int body[2] = { j->parent, i };
        jopen(w, NULL, "{");
        str(w, "name", j->name);
        str(w, "type", mbs_joint_type_name(j->type));
        str(w, "parent", m->body[j->parent].name);
        str(w, "child", m->body[i].name);
        joint_sides(w, m, ix, body, j->x_ppoint, j->x_cpoint, j->x_Xp, j->x_Xc);
        if (j->nq > 0) {
            vec(w, "q0", j->q0, j->nq);
            joint_velocities(w, j);
        }
        joint_data(w, j);
        jclose(w, "}");
    }
    for (int k = 0; k < m->con.ncut; k++) {
        const mbs_cut_info *c = &m->con.cut[k];
        jopen(w, NULL, "{");
        str(w, "name", c->name);
        str(w, "type", mbs_joint_type_name(c->type));
        str(w, "parent", m->body[c->body[0]].name);
        str(w, "child", m->body[c->body[1]].name);
        joint_sides(w, m, ix, c->body, c->x_ppoint, c->x_cpoint, c->x_Xp, c->x_Xc);
        if (c->user) boolean(w, "cut", 1);
        jclose(w, "}");
    }
    jclose(w, "]");
}

static void write_functions(jw *w, const mbs_model *m)
{
    static const char *const step[4] = { "t0", "v0", "t1", "v1" };
    static const char *const sine[4] = { "amplitude", "frequency", "phase", "offset" };
    if (m->nfunc == 0) return;
    jopen(w, "functions", "[");
    for (int k = 0; k < m->nfunc; k++) {
        const mbs_func_info *f = &m->func[k];
        const double *v = m->x + f->x;
        jopen(w, NULL, "{");
        str(w, "name", f->name);
        str(w, "type", mbs_function_type_name(f->type));
        switch (f->type) {
        case MBS_FUNC_CONSTANT: num(w, "value", v[0]); break;
        case MBS_FUNC_STEP:
            for (int c = 0; c < 4; c++) num(w, step[c], v[c]);
            str(w, "shape", f->variant ? "quintic" : "cubic");
            break;
        case MBS_FUNC_SINE:
            for (int c = 0; c < 4; c++) num(w, sine[c], v[c]);
            break;
        default:
            vec(w, "times", f->t, f->n);
            vec(w, "values", v, f->n);
            str(w, "ends", f->variant ? "clamped" : "natural");
            break;
        }
        jclose(w, "}");
    }
    jclose(w, "]");
}

/* "bodyN" and "pointN" of one end of an element (N = "" or "1", "2") */
static void element_end(jw *w, const mbs_model *m, const lookup *ix, const char *n, int body, int x_point)
{
    char kb[16], kp[16];
    snprintf(kb, sizeof kb, "body%s", n);
    snprintf(kp, sizeof kp, "point%s", n);
    str(w, kb, m->body[body].name);
    point_member(w, m, ix, kp, body, x_point);
}

/* "joint" and "coordinate" (lookup within the joint) of coordinate q */
static void joint_coordinate(jw *w, const mbs_model *m, const lookup *ix, int q)
{
    const mbs_joint_info *j = &m->joint[ix->coord_joint[q]];
    str(w, "joint", j->name);
    integer(w, "coordinate", q - j->qoff);
}

static void write_contact(jw *w, const mbs_model *m, const lookup *ix, const mbs_force_info *f)
{
    const double *v = m->x + f->x;   /* numbers as in src/forces/force_contact_common.h */
    element_end(w, m, ix, "", f->body[0], f->x_point[0]);
    if (f->type == MBS_FORCE_CONTACT_PLANE) str(w, "shape", f->shape ? "circle" : "sphere");
    num(w, "radius", v[3]);
    if (f->shape) vec(w, "axis", v + 11, 3);
    vec(w, "plane_point", v + 5, 3);
    vec(w, "plane_normal", v + 8, 3);
    num(w, "stiffness", v[0]);
    num(w, "exponent", v[1]);
    num(w, "hysteresis", v[2]);
    num(w, "smoothing", v[4]);
    if (f->type == MBS_FORCE_CONTACT_PLANE && (v[14] != 0 || v[15] != 0.01)) {   /* else the defaults */
        num(w, "friction", v[14]);
        num(w, "slip_speed", v[15]);
    }
    if (f->type == MBS_FORCE_TIRE) {
        static const char *const tire[5] = { "kappa_c", "alpha_c", "mu_x", "mu_y", "speed_regularization" };
        for (int c = 0; c < 5; c++) num(w, tire[c], v[14 + c]);
    }
}

static void write_force(jw *w, const mbs_model *m, const lookup *ix, const mbs_force_info *f)
{
    const double *v = m->x + f->x;
    switch (f->type) {
    case MBS_FORCE_SPRING_DAMPER:
        element_end(w, m, ix, "1", f->body[0], f->x_point[0]);
        element_end(w, m, ix, "2", f->body[1], f->x_point[1]);
        num(w, "stiffness", v[0]);
        num(w, "damping", v[1]);
        num(w, "length", v[2]);
        break;
    case MBS_FORCE_JOINT_SPRING:
        joint_coordinate(w, m, ix, f->coord);
        num(w, "stiffness", v[0]);
        num(w, "damping", v[1]);
        num(w, "position", v[2]);
        break;
    case MBS_FORCE_JOINT_FORCE:
        joint_coordinate(w, m, ix, f->coord);
        num(w, "value", v[0]);
        if (f->func >= 0) str(w, "function", m->func[f->func].name);
        break;
    case MBS_FORCE_CONTACT_PLANE:
    case MBS_FORCE_TIRE:
        write_contact(w, m, ix, f);
        break;
    default:   /* body_load */
        str(w, "body", m->body[f->body[0]].name);
        if (f->x_point[0] != m->body[f->body[0]].x_com) point_member(w, m, ix, "point", f->body[0], f->x_point[0]);
        vec(w, "force", v, 3);
        vec(w, "torque", v + 3, 3);
        str(w, "axes", f->body_axes ? "body" : "global");
        if (f->func >= 0) str(w, "function", m->func[f->func].name);
        break;
    }
}

static void write_forces(jw *w, const mbs_model *m, const lookup *ix)
{
    if (m->nforce == 0) return;
    jopen(w, "forces", "[");
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *f = &m->force[k];
        jopen(w, NULL, "{");
        str(w, "name", f->name);
        str(w, "type", mbs_force_type_name(f->type));
        write_force(w, m, ix, f);
        jclose(w, "}");
    }
    jclose(w, "]");
}

static void write_constraints(jw *w, const mbs_model *m, const lookup *ix)
{
    const mbs_model_con *con = &m->con;
    if (con->ndriver > 0) {
        jopen(w, "constraints", "[");
        for (int k = 0; k < con->ndriver; k++) {
            const mbs_driver_info *d = &con->driver[k];
            jopen(w, NULL, "{");
            str(w, "name", d->name);
            if (d->type == MBS_DRIVER_COORDINATE) {
                str(w, "type", "coordinate");
                joint_coordinate(w, m, ix, d->coord);
            } else {
                str(w, "type", "distance");
                element_end(w, m, ix, "1", d->body[0], d->x_point[0]);
                element_end(w, m, ix, "2", d->body[1], d->x_point[1]);
            }
            if (d->func >= 0) {
                str(w, "function", m->func[d->func].name);
            } else {
                num(w, "value", m->x[d->x]);
                num(w, "rate", m->x[d->x + 1]);
            }
            jclose(w, "}");
        }
        jclose(w, "]");
    }
    if (con->nfixed == 0 && con->tol == 1e-10 && con->max_iter == 50) return;
    jopen(w, "assembly", "{");
    if (con->nfixed > 0) {
        jopen(w, "fixed", "[");
        for (int k = 0; k < con->nfixed; k++) str(w, NULL, m->coord_name[con->fixed[k]]);
        jclose(w, "]");
    }
    num(w, "tolerance", con->tol);
    integer(w, "max_iterations", con->max_iter);
    jclose(w, "}");
}

static void write_parameters(jw *w, const mbs_model *m)
{
    if (m->nparam == 0) return;
    jopen(w, "parameters", "[");
    for (int k = 0; k < m->nparam; k++) {
        const mbs_param_info *p = &m->param[k];
        jopen(w, NULL, "{");
        str(w, "name", p->name);
        num(w, "value", p->value);
        if (isfinite(p->lower)) num(w, "lower", p->lower);
        if (isfinite(p->upper)) num(w, "upper", p->upper);
        jopen(w, "sets", "[");
        for (int t = 0; t < p->ntargets; t++) {
            if (p->scale[t] == 1 && p->offset[t] == 0 && !signbit(p->offset[t])) {
                str(w, NULL, p->target_name[t]);
                continue;
            }
            jopen(w, NULL, "{");
            str(w, "target", p->target_name[t]);
            num(w, "scale", p->scale[t]);
            num(w, "offset", p->offset[t]);
            jclose(w, "}");
        }
        jclose(w, "]");
        jclose(w, "}");
    }
    jclose(w, "]");
}

static void write_simulation(jw *w, const mbs_model *m)
{
    if (!m->sim.present) return;
    const mbs_sim_options *o = &m->sim.options;
    jopen(w, "simulation", "{");
    str(w, "formulation", o->loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(o->loop)
                                                    : mbs_fd_algorithm_name(o->formulation));
    str(w, "ref", mbs_ref_point_name(o->ref));
    str(w, "integrator", mbs_integrator_name(o->integrator));
    str(w, "solver", mbs_nl_solver_name(o->solver));
    str(w, "cvodes_method", mbs_cvodes_method_name(o->cvodes_method));
    str(w, "tangent_update", mbs_tangent_update_name(o->tangent_update));
    if (o->tangent == mbs_tangent_fd) str(w, "tangent", "fd");
    if (o->tangent == mbs_tangent_analytic) str(w, "tangent", "analytic");
    str(w, "projection", mbs_projection_name(o->projection));
    const double nums[] = { o->t0, o->dt, o->tf, o->tolerance, o->rtol, o->atol, o->penalty, o->proj_scale,
                            o->proj_tol, o->lambda_factor, o->omega, o->xi };
    static const char *const names[] = { "t0", "dt", "tf", "tolerance", "rtol", "atol", "penalty", "proj_scale",
                                         "proj_tol", "lambda_factor", "omega", "xi" };
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) num(w, names[k], nums[k]);
    integer(w, "max_iterations", o->max_iterations);
    integer(w, "cvodes_max_steps", o->cvodes_max_steps);
    boolean(w, "project", o->project);
    boolean(w, "tangent_keep", o->tangent_keep);
    boolean(w, "baumgarte", o->baumgarte);
    jclose(w, "}");
}

static void write_outputs(jw *w, const mbs_model *m)
{
    static const char *const q[3] = { "position", "velocity", "acceleration" };
    if (m->sim.noutput == 0) return;
    jopen(w, "outputs", "[");
    for (int k = 0; k < m->sim.noutput;) {
        const mbs_output *o = &m->sim.output[k];
        if (o->kind == MBS_OUTPUT_ENERGY) {
            str(w, NULL, "energy");
            k++;
            continue;
        }
        if (o->kind == MBS_OUTPUT_FORCE) {
            jopen(w, NULL, "{");
            jopen(w, "coordinate", "[");
            for (int c = 0; c < o->ncoord; c++) str(w, NULL, m->coord_name[o->coord[c]]);
            jclose(w, "]");
            str(w, "quantity", "force");
            jclose(w, "}");
            k++;
            continue;
        }
        if (o->kind == MBS_OUTPUT_POSE) {   /* written back as the "poses" member: one per body */
            jopen(w, NULL, "{");
            str(w, "body", m->body[o->body].name);
            jclose(w, "}");
            k++;
            continue;
        }
        /* one entry for the consecutive outputs of a point */
        jopen(w, NULL, "{");
        str(w, "point", m->point[o->point].name);
        jopen(w, "quantities", "[");
        for (; k < m->sim.noutput && m->sim.output[k].kind != MBS_OUTPUT_ENERGY &&
               m->sim.output[k].kind != MBS_OUTPUT_POSE && m->sim.output[k].kind != MBS_OUTPUT_FORCE &&
               m->sim.output[k].point == o->point; k++)
            str(w, NULL, q[m->sim.output[k].kind]);
        jclose(w, "]");
        jclose(w, "}");
    }
    jclose(w, "]");
}

static void write_term(jw *w, const mbs_model *m, const mbs_objective_term *t)
{
    static const char *const qn[] = { "position", "velocity", "acceleration", "value", "velocity", "acceleration",
                                      "force", "angular_velocity" };
    jopen(w, NULL, "{");
    switch (t->quantity) {
    case MBS_OBJQ_POINT_POSITION:
    case MBS_OBJQ_POINT_VELOCITY:
    case MBS_OBJQ_POINT_ACCELERATION: str(w, "point", m->point[t->point].name); break;
    case MBS_OBJQ_COORDINATE:
    case MBS_OBJQ_COORDINATE_VELOCITY:
    case MBS_OBJQ_COORDINATE_ACCELERATION:
    case MBS_OBJQ_COORDINATE_FORCE:
        if (t->ncoord == 1) {
            str(w, "coordinate", m->coord_name[t->coord]);
            break;
        }
        jopen(w, "coordinate", "[");
        for (int c = 0; c < 3; c++) str(w, NULL, m->coord_name[t->coord3[c]]);
        jclose(w, "]");
        break;
    case MBS_OBJQ_ANGULAR_VELOCITY:
        str(w, "body", m->body[t->body].name);
        if (t->vector >= 0) str(w, "vector", m->vector[t->vector].name);
        break;
    default: str(w, "energy", "kinetic"); break;
    }
    if (t->quantity != MBS_OBJQ_KINETIC_ENERGY) str(w, "quantity", qn[t->quantity]);
    if (t->component >= 0) integer(w, "component", t->component);
    num(w, "weight", t->weight);
    boolean(w, "squared", t->squared);
    if (t->squared && t->power != 2) num(w, "power", t->power);
    if (t->nref == 3) {
        jopen(w, "reference", "[");
        for (int c = 0; c < 3; c++) {
            if (t->func[c] >= 0) str(w, NULL, m->func[t->func[c]].name);
            else num(w, NULL, t->ref[c]);
        }
        jclose(w, "]");
    } else if (t->func[0] >= 0) {
        str(w, "reference", m->func[t->func[0]].name);
    } else if (t->ref[0] != 0 || signbit(t->ref[0])) {
        num(w, "reference", t->ref[0]);
    }
    jclose(w, "}");
}

static void write_objectives(jw *w, const mbs_model *m)
{
    if (m->nobj == 0) return;
    jopen(w, "objectives", "[");
    for (int k = 0; k < m->nobj; k++) {
        const mbs_objective_info *o = &m->obj[k];
        jopen(w, NULL, "{");
        str(w, "name", o->name);
        if (o->nintegral > 0) {
            jopen(w, "integral", "[");
            for (int t = 0; t < o->nintegral; t++) write_term(w, m, &o->term[t]);
            jclose(w, "]");
        }
        if (o->nterm > o->nintegral) {
            jopen(w, "terminal", "[");
            for (int t = o->nintegral; t < o->nterm; t++) write_term(w, m, &o->term[t]);
            jclose(w, "]");
        }
        jclose(w, "}");
    }
    jclose(w, "]");
}

/* The model as JSON text, with the velocity convention `velocities` (-1:
 * as they are) on every spherical and floating joint. */
static char *model_to_json(const mbs_model *m, int velocities, mbs_error *err)
{
    lookup ix;
    jw w = { NULL, 0, 0, 0, 0, 1, velocities };
    if (lookup_init(&ix, m) != 0) {
        lookup_free(&ix);
        mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_json: out of memory");
        return NULL;
    }
    put(&w, "{");
    w.depth = 1;
    str(&w, "name", m->name ? m->name : "model");
    vec(&w, "gravity", m->x + m->x_gravity, 3);
    if (m->lenient_inertia) boolean(&w, "lenient_inertia", 1);
    write_bodies(&w, m, &ix);
    write_joints(&w, m, &ix);
    write_functions(&w, m);
    write_forces(&w, m, &ix);
    write_constraints(&w, m, &ix);
    write_parameters(&w, m);
    write_simulation(&w, m);
    write_outputs(&w, m);
    write_objectives(&w, m);
    jclose(&w, "}");
    put(&w, "\n");
    lookup_free(&ix);
    if (w.failed) {
        free(w.s);
        mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_to_json: out of memory");
        return NULL;
    }
    return w.s;
}

char *mbs_model_to_json(const mbs_model *m, mbs_error *err)
{
    if (!m) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_to_json: model is NULL");
        return NULL;
    }
    return model_to_json(m, -1, err);
}

mbs_model *mbs_model_with_velocities(const mbs_model *m, mbs_velocities velocities, mbs_error *err)
{
    if (!m) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_with_velocities: model is NULL");
        return NULL;
    }
    if (velocities != MBS_VELOCITIES_EULER_RATES && velocities != MBS_VELOCITIES_TANGENT) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_with_velocities: invalid convention %d", (int)velocities);
        return NULL;
    }
    char *text = model_to_json(m, (int)velocities, err);
    if (!text) return NULL;
    mbs_model *c = mbs_model_load_string(text, m->name ? m->name : "model", err);
    free(text);
    return c;
}
