/*
 * model.c - accessors, copy, printing and re-parameterization of mbs_model.
 * (Loading is in src/io/, assembling and validation in src/builder/.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/model.h"
#include "model/model_impl.h"
#include "model/constraint_model.h"
#include "model/model_util.h"
#include "base/error.h"
#include "model/force_model.h"
#include "model/objective_model.h"

const char *const mbs_inertia_entry_names[6] = { "xx", "yy", "zz", "xy", "xz", "yz" };

/* ---------------------------------------------------------------- joint types */

static const struct {
    const char *name;
    int nq, ndof, euler;
    const char *suffix[7];
} joint_types[MBS_JOINT_TYPE_COUNT] = {
    [MBS_JOINT_FIXED] = { "fixed", 0, 0, -1, { NULL } },
    [MBS_JOINT_REVOLUTE] = { "revolute", 1, 1, -1, { NULL } },
    [MBS_JOINT_PRISMATIC] = { "prismatic", 1, 1, -1, { NULL } },
    [MBS_JOINT_CYLINDRICAL] = { "cylindrical", 2, 2, -1, { "s", "theta" } },
    [MBS_JOINT_CARDAN] = { "cardan", 2, 2, -1, { "theta1", "theta2" } },
    [MBS_JOINT_SPHERICAL] = { "spherical", 4, 3, 0, { "e0", "e1", "e2", "e3" } },
    [MBS_JOINT_PLANAR] = { "planar", 3, 3, -1, { "s1", "s2", "theta" } },
    [MBS_JOINT_FLOATING] = { "floating", 7, 6, 3, { "x", "y", "z", "e0", "e1", "e2", "e3" } },
};

static int type_ok(mbs_joint_type t) { return (int)t >= 0 && t < MBS_JOINT_TYPE_COUNT; }

const char *mbs_joint_type_name(mbs_joint_type t)
{
    return type_ok(t) ? joint_types[t].name : "unknown";
}

int mbs_joint_type_from_name(const char *name)
{
    if (!name) return -1;
    for (int t = 0; t < MBS_JOINT_TYPE_COUNT; t++)
        if (strcmp(name, joint_types[t].name) == 0) return t;
    return -1;
}

int mbs_joint_type_nq(mbs_joint_type t) { return type_ok(t) ? joint_types[t].nq : -1; }
int mbs_joint_type_ndof(mbs_joint_type t) { return type_ok(t) ? joint_types[t].ndof : -1; }
int mbs_joint_type_euler(mbs_joint_type t) { return type_ok(t) ? joint_types[t].euler : -1; }

const char *mbs_joint_coord_suffix(mbs_joint_type t, int k)
{
    if (!type_ok(t) || k < 0 || k >= joint_types[t].nq || joint_types[t].nq == 1) return NULL;
    return joint_types[t].suffix[k];
}

char *mbs_strdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *r = malloc(n);
    if (r) memcpy(r, s, n);
    return r;
}

/* ---------------------------------------------------------------- lifetime */

void mbs_model_free(mbs_model *m)
{
    if (!m) return;
    if (m->body)
        for (int i = 0; i <= m->nb; i++) { free(m->body[i].name); free(m->body[i].where); }
    if (m->joint)
        for (int i = 0; i <= m->nb; i++) { free(m->joint[i].name); free(m->joint[i].where); }
    if (m->coord_name)
        for (int k = 0; k < m->nq; k++) free(m->coord_name[k]);
    if (m->vel_name)
        for (int k = 0; k < m->nv; k++) free(m->vel_name[k]);
    if (m->point)
        for (int k = 0; k < m->npoint; k++) free(m->point[k].name);
    if (m->vector)
        for (int k = 0; k < m->nvector; k++) free(m->vector[k].name);
    if (m->param)
        for (int k = 0; k < m->nparam; k++) {
            mbs_param_info *p = &m->param[k];
            free(p->name);
            free(p->target);
            free(p->scale);
            free(p->offset);
            if (p->target_name)
                for (int t = 0; t < p->ntargets; t++) free(p->target_name[t]);
            free(p->target_name);
        }
    free(m->sim.output);
    mbs_model_names_free(m);
    mbs_forces_free(m);
    mbs_con_model_free(m);
    mbs_objectives_free(m);
    mbs_visuals_free(m);
    free(m->body);
    free(m->joint);
    free(m->coord_name);
    free(m->vel_name);
    free(m->point);
    free(m->vector);
    free(m->param);
    free(m->branch_first);
    free(m->branch_last);
    free(m->x);
    free(m->name);
    free(m->source);
    free(m);
}

/* Copy n elements of size sz (NULL source or n == 0 gives a NULL copy). */
static void *dup_array(const void *src, size_t n, size_t sz, int *fail)
{
    if (!src || n == 0) return NULL;
    void *r = malloc(n * sz);
    if (!r) { *fail = 1; return NULL; }
    memcpy(r, src, n * sz);
    return r;
}

static char *dup_str(const char *s, int *fail)
{
    if (!s) return NULL;
    char *r = mbs_strdup(s);
    if (!r) *fail = 1;
    return r;
}

/* long-function: one deep copy per pointer field of struct mbs_model, in
 * the order of the struct. */
mbs_model *mbs_model_copy(const mbs_model *m)
{
    if (!m) return NULL;
    mbs_model *c = malloc(sizeof *c);
    if (!c) return NULL;
    *c = *m;
    /* Detach every pointer first so that mbs_model_free is safe on failure. */
    c->name = c->source = NULL;
    c->x = NULL;
    c->body = NULL;
    c->joint = NULL;
    c->coord_name = NULL;
    c->vel_name = NULL;
    c->point = NULL;
    c->vector = NULL;
    c->param = NULL;
    c->sim.output = NULL;
    c->branch_first = c->branch_last = NULL;
    c->force = NULL;
    c->func = NULL;
    c->nforce = c->nfunc = 0;
    memset(&c->con, 0, sizeof c->con);
    c->obj = NULL;
    c->nobj = 0;
    memset(&c->names, 0, sizeof c->names);
    c->visual = NULL;
    c->nvisual = 0;
    int fail = 0;
    size_t nb1 = (size_t)m->nb + 1;

    c->name = dup_str(m->name, &fail);
    c->source = dup_str(m->source, &fail);
    c->x = dup_array(m->x, (size_t)m->nx, sizeof *m->x, &fail);
    c->branch_first = dup_array(m->branch_first, (size_t)m->nbranch, sizeof(int), &fail);
    c->branch_last = dup_array(m->branch_last, (size_t)m->nbranch, sizeof(int), &fail);
    if (fail) goto oom;

    c->body = dup_array(m->body, nb1, sizeof *m->body, &fail);
    if (fail) goto oom;
    for (size_t i = 0; i < nb1; i++) c->body[i].name = c->body[i].where = NULL;
    for (size_t i = 0; i < nb1; i++) {
        c->body[i].name = dup_str(m->body[i].name, &fail);
        c->body[i].where = dup_str(m->body[i].where, &fail);
    }
    if (fail) goto oom;

    c->joint = dup_array(m->joint, nb1, sizeof *m->joint, &fail);
    if (fail) goto oom;
    for (size_t i = 0; i < nb1; i++) c->joint[i].name = c->joint[i].where = NULL;
    for (size_t i = 0; i < nb1; i++) {
        c->joint[i].name = dup_str(m->joint[i].name, &fail);
        c->joint[i].where = dup_str(m->joint[i].where, &fail);
    }
    if (fail) goto oom;

    if (m->nq > 0) {
        c->coord_name = calloc((size_t)m->nq, sizeof *c->coord_name);
        if (!c->coord_name) goto oom;
        for (int k = 0; k < m->nq; k++) c->coord_name[k] = dup_str(m->coord_name[k], &fail);
        if (fail) goto oom;
    }
    if (m->nv > 0) {
        c->vel_name = calloc((size_t)m->nv, sizeof *c->vel_name);
        if (!c->vel_name) goto oom;
        for (int k = 0; k < m->nv; k++) c->vel_name[k] = dup_str(m->vel_name[k], &fail);
        if (fail) goto oom;
    }

    c->point = dup_array(m->point, (size_t)m->npoint, sizeof *m->point, &fail);
    if (fail) goto oom;
    for (int k = 0; k < m->npoint; k++) c->point[k].name = NULL;
    for (int k = 0; k < m->npoint; k++) c->point[k].name = dup_str(m->point[k].name, &fail);
    if (fail) goto oom;

    c->vector = dup_array(m->vector, (size_t)m->nvector, sizeof *m->vector, &fail);
    if (fail) goto oom;
    for (int k = 0; k < m->nvector; k++) c->vector[k].name = NULL;
    for (int k = 0; k < m->nvector; k++) c->vector[k].name = dup_str(m->vector[k].name, &fail);
    if (fail) goto oom;

    c->param = dup_array(m->param, (size_t)m->nparam, sizeof *m->param, &fail);
    if (fail) goto oom;
    for (int k = 0; k < m->nparam; k++) {
        mbs_param_info *p = &c->param[k];
        p->name = NULL;
        p->target = NULL;
        p->scale = p->offset = NULL;
        p->target_name = NULL;
    }
    for (int k = 0; k < m->nparam; k++) {
        const mbs_param_info *s = &m->param[k];
        mbs_param_info *p = &c->param[k];
        size_t nt = (size_t)s->ntargets;
        p->name = dup_str(s->name, &fail);
        p->target = dup_array(s->target, nt, sizeof(int), &fail);
        p->scale = dup_array(s->scale, nt, sizeof(double), &fail);
        p->offset = dup_array(s->offset, nt, sizeof(double), &fail);
        if (nt > 0) {
            p->target_name = calloc(nt, sizeof *p->target_name);
            if (!p->target_name) { fail = 1; break; }
            for (size_t t = 0; t < nt; t++) p->target_name[t] = dup_str(s->target_name[t], &fail);
        }
        if (fail) break;
    }
    if (fail) goto oom;
    c->sim.output = dup_array(m->sim.output, (size_t)m->sim.noutput, sizeof *m->sim.output, &fail);
    if (fail) goto oom;
    if (mbs_forces_copy(c, m) != 0) goto oom;
    if (mbs_con_model_copy(c, m) != 0) goto oom;
    if (mbs_objectives_copy(c, m) != 0) goto oom;
    if (mbs_model_index_names(c) != 0) goto oom;
    if (mbs_visuals_copy(c, m) != 0) goto oom;
    return c;
oom:
    mbs_model_free(c);
    return NULL;
}

/* ---------------------------------------------------------------- names */

void mbs_model_names_free(mbs_model *m)
{
    mbs_model_names *n = &m->names;
    mbs_hashmap *maps[] = { &n->body, &n->joint, &n->point, &n->vector, &n->coord, &n->param, &n->func };
    for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++) mbs_hashmap_free(maps[k]);
}

int mbs_model_index_names(mbs_model *m)
{
    mbs_model_names *n = &m->names;
    int fail = 0;
    for (int i = 0; i <= m->nb; i++) fail |= mbs_hashmap_put(&n->body, 0, m->body[i].name, i) == -2;
    for (int i = 1; i <= m->nb; i++) fail |= mbs_hashmap_put(&n->joint, 0, m->joint[i].name, i) == -2;
    for (int k = 0; k < m->npoint; k++) fail |= mbs_hashmap_put(&n->point, 0, m->point[k].name, k) == -2;
    for (int k = 0; k < m->nvector; k++)
        fail |= mbs_hashmap_put(&n->vector, (uint64_t)m->vector[k].body, m->vector[k].name, k) == -2;
    for (int k = 0; k < m->nq; k++) fail |= mbs_hashmap_put(&n->coord, 0, m->coord_name[k], k) == -2;
    for (int k = 0; k < m->nparam; k++) fail |= mbs_hashmap_put(&n->param, 0, m->param[k].name, k) == -2;
    for (int k = 0; k < m->nfunc; k++) fail |= mbs_hashmap_put(&n->func, 0, m->func[k].name, k) == -2;
    return fail ? -1 : 0;
}

int mbs_model_find_joint(const mbs_model *m, const char *name)
{
    return m ? mbs_hashmap_get(&m->names.joint, 0, name) : -1;
}

int mbs_model_find_coord(const mbs_model *m, const char *name)
{
    return m ? mbs_hashmap_get(&m->names.coord, 0, name) : -1;
}

int mbs_model_find_func(const mbs_model *m, const char *name)
{
    return m ? mbs_hashmap_get(&m->names.func, 0, name) : -1;
}

int mbs_model_find_vector(const mbs_model *m, int body, const char *qualified)
{
    return m && body >= 0 ? mbs_hashmap_get(&m->names.vector, (uint64_t)body, qualified) : -1;
}

/* ---------------------------------------------------------------- physics */

void mbs_inertia_principal(const double I6[6], double lam[3])
{
    double a[3][3] = {
        { I6[0], I6[3], I6[4] },
        { I6[3], I6[1], I6[5] },
        { I6[4], I6[5], I6[2] },
    };
    static const int pairs[3][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 } };
    for (int sweep = 0; sweep < 64; sweep++) {
        double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if (off == 0 || off <= 1e-36 * diag) break;
        for (int k = 0; k < 3; k++) {
            int p = pairs[k][0], q = pairs[k][1];
            double apq = a[p][q];
            if (apq == 0) continue;
            double theta = (a[q][q] - a[p][p]) / (2 * apq);
            double t;
            if (fabs(theta) > 1e150) t = 0.5 / theta;
            else t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
            double c = 1 / sqrt(t * t + 1), s = t * c;
            a[p][p] -= t * apq;
            a[q][q] += t * apq;
            a[p][q] = a[q][p] = 0;
            int r = 3 - p - q;
            double arp = a[r][p], arq = a[r][q];
            a[r][p] = a[p][r] = c * arp - s * arq;
            a[r][q] = a[q][r] = s * arp + c * arq;
        }
    }
    lam[0] = a[0][0]; lam[1] = a[1][1]; lam[2] = a[2][2];
    /* ascending */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (lam[j] > lam[j + 1]) { double t = lam[j]; lam[j] = lam[j + 1]; lam[j + 1] = t; }
}

void mbs_inertia_principal_axes(const double I6[6], double lam[3], double V[9])
{
    double a[9] = { I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2] };
    for (int k = 0; k < 9; k++) V[k] = (k % 4 == 0);
    for (int sweep = 0; sweep < 50; sweep++) {
        if (fabs(a[1]) + fabs(a[2]) + fabs(a[5]) == 0) break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                double apq = a[3 * p + q];
                if (apq == 0) continue;
                double theta = (a[3 * q + q] - a[3 * p + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                /* a <- J^T a J, V <- V J, J the rotation in the (p, q) plane */
                for (int k = 0; k < 3; k++) {
                    double akp = a[3 * k + p], akq = a[3 * k + q];
                    a[3 * k + p] = c * akp - s * akq;
                    a[3 * k + q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a[3 * p + k], aqk = a[3 * q + k];
                    a[3 * p + k] = c * apk - s * aqk;
                    a[3 * q + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = V[3 * k + p], vkq = V[3 * k + q];
                    V[3 * k + p] = c * vkp - s * vkq;
                    V[3 * k + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int k = 0; k < 3; k++) lam[k] = a[4 * k];
    double det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) +
                 V[2] * (V[3] * V[7] - V[4] * V[6]);
    if (det < 0)
        for (int k = 0; k < 3; k++) V[3 * k + 2] = -V[3 * k + 2];
}

static int all_finite(const double *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

int mbs_model_check_physics(const mbs_model *m, mbs_error *err)
{
    const double *x = m->x;
    const char *src = m->source ? m->source : (m->name ? m->name : "model");
    if (!all_finite(x + m->x_gravity, 3))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: gravity: not finite (%g, %g, %g)", src,
                             x[m->x_gravity], x[m->x_gravity + 1], x[m->x_gravity + 2]);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_body_info *b = &m->body[i];
        const char *w = b->where ? b->where : src;
        double mass = x[b->x_mass];
        const double *c = x + b->x_com, *I = x + b->x_inertia;
        if (!isfinite(mass))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: body %s: mass is not finite (%g)", w, b->name, mass);
        if (mass < 0)
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: body %s: mass must be >= 0, got %g", w, b->name, mass);
        if (!all_finite(c, 3))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: body %s: centre of mass is not finite (%g, %g, %g)",
                                 w, b->name, c[0], c[1], c[2]);
        if (!all_finite(I, 6))
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: body %s: inertia is not finite (xx %g, yy %g, zz %g, xy %g, xz %g, yz %g)",
                                 w, b->name, I[0], I[1], I[2], I[3], I[4], I[5]);
        int zero = 1;
        for (int k = 0; k < 6; k++)
            if (I[k] != 0) zero = 0;
        if (zero) continue;   /* point mass (or massless body) */
        if (mass == 0)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: body %s: a body with zero mass must have zero inertia "
                                 "(got xx %g, yy %g, zz %g, xy %g, xz %g, yz %g)",
                                 w, b->name, I[0], I[1], I[2], I[3], I[4], I[5]);
        double lam[3];
        mbs_inertia_principal(I, lam);
        if (!(lam[0] > 0))
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: body %s: inertia not positive definite: principal moments %g, %g, %g",
                                 w, b->name, lam[0], lam[1], lam[2]);
        if (lam[0] + lam[1] < lam[2] * (1 - 1e-9) && !m->lenient_inertia)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: body %s: inertia violates the triangle inequality: principal moments "
                                 "%g, %g, %g (%g + %g < %g)",
                                 w, b->name, lam[0], lam[1], lam[2], lam[0], lam[1], lam[2]);
    }
    for (int k = 0; k < m->npoint; k++) {
        const double *p = x + m->point[k].x;
        if (!all_finite(p, 3))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: point %s is not finite (%g, %g, %g)",
                                 src, m->point[k].name, p[0], p[1], p[2]);
    }
    for (int k = 0; k < m->nvector; k++) {
        const double *p = x + m->vector[k].x;
        if (!all_finite(p, 3))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: vector %s is not finite (%g, %g, %g)",
                                 src, m->vector[k].name, p[0], p[1], p[2]);
    }
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *j = &m->joint[i];
        if (!all_finite(x + j->x_ppoint, 3) || !all_finite(x + j->x_cpoint, 3))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: joint point is not finite",
                                 j->where ? j->where : src, j->name);
    }
    return mbs_forces_check(m, err);   /* force elements and time functions */
}

void mbs_model_apply_params(mbs_model *m)
{
    for (int k = 0; k < m->nparam; k++) {
        const mbs_param_info *p = &m->param[k];
        for (int t = 0; t < p->ntargets; t++)
            m->x[p->target[t]] = p->scale[t] * p->value + p->offset[t];
    }
}

mbs_model *mbs_model_with_params(const mbs_model *m, const double *values, mbs_error *err)
{
    if (!m || (m->nparam > 0 && !values)) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_model_with_params: %s is NULL", m ? "values" : "model");
        return NULL;
    }
    for (int k = 0; k < m->nparam; k++) {
        const mbs_param_info *p = &m->param[k];
        double v = values[k];
        if (!isfinite(v)) {
            mbs_error_set(err, MBS_ERR_ARG, "%s: parameter %s: value is not finite (%g)",
                          m->source ? m->source : m->name, p->name, v);
            return NULL;
        }
        if (v < p->lower || v > p->upper) {
            mbs_error_set(err, MBS_ERR_ARG, "%s: parameter %s: value %.17g is outside its bounds [%g, %g]",
                          m->source ? m->source : m->name, p->name, v, p->lower, p->upper);
            return NULL;
        }
    }
    mbs_model *c = mbs_model_copy(m);
    if (!c) {
        mbs_error_set(err, MBS_ERR_NOMEM, "mbs_model_with_params: out of memory");
        return NULL;
    }
    for (int k = 0; k < c->nparam; k++) c->param[k].value = values[k];
    mbs_model_apply_params(c);
    if (mbs_forces_prepare(c, err) != MBS_OK || mbs_model_check_physics(c, err) != MBS_OK) {   /* spline moments */
        mbs_model_free(c);
        return NULL;
    }
    return c;
}

/* ---------------------------------------------------------------- accessors */

static int body_ok(const mbs_model *m, int i) { return m && i >= 0 && i <= m->nb; }
static int joint_ok(const mbs_model *m, int i) { return m && i >= 1 && i <= m->nb; }

int mbs_model_nbodies(const mbs_model *m) { return m ? m->nb : 0; }
int mbs_model_nq(const mbs_model *m) { return m ? m->nq : 0; }
int mbs_model_nv(const mbs_model *m) { return m ? m->nv : 0; }
int mbs_model_ndof(const mbs_model *m) { return m ? m->ndof : 0; }
int mbs_model_npoints(const mbs_model *m) { return m ? m->npoint : 0; }
int mbs_model_nvectors(const mbs_model *m) { return m ? m->nvector : 0; }
int mbs_model_nparams(const mbs_model *m) { return m ? m->nparam : 0; }
const char *mbs_model_name(const mbs_model *m) { return m ? m->name : NULL; }
const char *mbs_model_source(const mbs_model *m) { return m ? m->source : NULL; }

int mbs_body_inertia(const mbs_model *m, int body, double com[3], double I6[6])
{
    if (!m || body < 0 || body > m->nb) return MBS_ERR_ARG;
    if (com) memset(com, 0, 3 * sizeof *com);
    if (I6) memset(I6, 0, 6 * sizeof *I6);
    if (body == 0) return MBS_OK;   /* the ground has no inertia */
    if (com) memcpy(com, m->x + m->body[body].x_com, 3 * sizeof *com);
    if (I6) memcpy(I6, m->x + m->body[body].x_inertia, 6 * sizeof *I6);
    return MBS_OK;
}

int mbs_joint_frames(const mbs_model *m, int joint, double Pp[3], double Xp[9], double Pc[3], double Xc[9])
{
    if (!m || joint < 1 || joint > m->nb) return MBS_ERR_ARG;
    const mbs_joint_info *j = &m->joint[joint];
    if (Pp) memcpy(Pp, m->x + j->x_ppoint, 3 * sizeof *Pp);
    if (Xp) memcpy(Xp, m->x + j->x_Xp, 9 * sizeof *Xp);
    if (Pc) memcpy(Pc, m->x + j->x_cpoint, 3 * sizeof *Pc);
    if (Xc) memcpy(Xc, m->x + j->x_Xc, 9 * sizeof *Xc);
    return MBS_OK;
}

const char *mbs_body_name(const mbs_model *m, int body)
{
    return body_ok(m, body) ? m->body[body].name : NULL;
}

int mbs_body_parent(const mbs_model *m, int body)
{
    return body_ok(m, body) && body > 0 ? m->body[body].parent : -1;
}

double mbs_body_mass(const mbs_model *m, int body)
{
    return body_ok(m, body) ? m->x[m->body[body].x_mass] : NAN;
}

int mbs_body_find(const mbs_model *m, const char *name)
{
    return m ? mbs_hashmap_get(&m->names.body, 0, name) : -1;
}

const char *mbs_joint_name(const mbs_model *m, int joint)
{
    return joint_ok(m, joint) ? m->joint[joint].name : NULL;
}

mbs_joint_type mbs_joint_type_of(const mbs_model *m, int joint)
{
    return joint_ok(m, joint) ? m->joint[joint].type : MBS_JOINT_FIXED;
}

int mbs_joint_nq(const mbs_model *m, int joint)
{
    return joint_ok(m, joint) ? m->joint[joint].nq : 0;
}

int mbs_joint_coord_offset(const mbs_model *m, int joint)
{
    return joint_ok(m, joint) ? m->joint[joint].qoff : -1;
}

int mbs_joint_nv(const mbs_model *m, int joint)
{
    return joint_ok(m, joint) ? m->joint[joint].nv : 0;
}

int mbs_joint_vel_offset(const mbs_model *m, int joint)
{
    return joint_ok(m, joint) ? m->joint[joint].voff : -1;
}

int mbs_joint_velocities(const mbs_model *m, int joint)
{
    return joint_ok(m, joint) ? m->joint[joint].velocities : -1;
}

int mbs_joint_limit(const mbs_model *m, int joint, double lim[4])
{
    if (lim) lim[0] = lim[1] = lim[2] = lim[3] = NAN;
    if (!m || joint < 1 || joint > m->nb) return -1;
    const mbs_joint_info *j = &m->joint[joint];
    if (!j->has_limit) return 0;
    if (lim) {
        lim[0] = j->lower;
        lim[1] = j->upper;
        lim[2] = j->effort;
        lim[3] = j->velocity;
    }
    return 1;
}

int mbs_joint_dynamics(const mbs_model *m, int joint, double dyn[2])
{
    if (dyn) dyn[0] = dyn[1] = NAN;
    if (!m || joint < 1 || joint > m->nb) return -1;
    const mbs_joint_info *j = &m->joint[joint];
    if (!j->has_dynamics) return 0;
    if (dyn) {
        dyn[0] = j->damping;
        dyn[1] = j->friction;
    }
    return 1;
}

const char *mbs_coord_name(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nq ? m->coord_name[k] : NULL;
}

const char *mbs_vel_name(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nv ? m->vel_name[k] : NULL;
}

void mbs_model_initial_state(const mbs_model *m, double *q, double *qd)
{
    if (!m) return;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *j = &m->joint[i];
        for (int k = 0; k < j->nq; k++)
            if (q) q[j->qoff + k] = j->q0[k];
        for (int k = 0; k < j->nv; k++)
            if (qd) qd[j->voff + k] = j->qd0[k];
    }
}

void mbs_model_gravity(const mbs_model *m, double g[3])
{
    if (!m) return;
    for (int k = 0; k < 3; k++) g[k] = m->x[m->x_gravity + k];
}

const char *mbs_point_name(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->npoint ? m->point[k].name : NULL;
}

int mbs_point_body(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->npoint ? m->point[k].body : -1;
}

int mbs_point_find(const mbs_model *m, const char *qualified_name)
{
    return m ? mbs_hashmap_get(&m->names.point, 0, qualified_name) : -1;
}

const char *mbs_vector_name(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nvector ? m->vector[k].name : NULL;
}

int mbs_vector_body(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nvector ? m->vector[k].body : -1;
}

const char *mbs_param_name(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nparam ? m->param[k].name : NULL;
}

double mbs_param_value(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nparam ? m->param[k].value : NAN;
}

double mbs_param_lower(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nparam ? m->param[k].lower : NAN;
}

double mbs_param_upper(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->nparam ? m->param[k].upper : NAN;
}

int mbs_param_find(const mbs_model *m, const char *name)
{
    return m ? mbs_hashmap_get(&m->names.param, 0, name) : -1;
}

double mbs_param_acts_from(const mbs_model *m, int k)
{
    if (!m || k < 0 || k >= m->nparam) return NAN;
    const mbs_param_info *p = &m->param[k];
    double t = HUGE_VAL;
    for (int j = 0; j < p->ntargets; j++) {
        const int x = p->target[j];
        double tj = -HUGE_VAL;
        for (int f = 0; f < m->nfunc; f++) {
            const mbs_func_info *fi = &m->func[f];
            if (fi->type == MBS_FUNC_SPLINE && x >= fi->x && x < fi->x + fi->nx) {
                const int i = x - fi->x;
                tj = fi->t[i > 0 ? i - 1 : 0];
            }
        }
        if (tj < t) t = tj;
    }
    return t;
}

/* ---------------------------------------------------------------- printing */

static void print_vec(FILE *out, const double *v, int n)
{
    fputc('[', out);
    for (int k = 0; k < n; k++) fprintf(out, "%s%g", k ? ", " : "", v[k]);
    fputc(']', out);
}

void mbs_model_print(const mbs_model *m, FILE *out)
{
    if (!m || !out) return;
    const double *x = m->x;
    fprintf(out, "model %s", m->name ? m->name : "(unnamed)");
    if (m->source) fprintf(out, " (%s)", m->source);
    fprintf(out, "\n  %d bodies, %d coordinates, %d degrees of freedom, %d points, %d vectors, %d parameters\n",
            m->nb, m->nq, m->ndof, m->npoint, m->nvector, m->nparam);
    fprintf(out, "  gravity ");
    print_vec(out, x + m->x_gravity, 3);
    fputc('\n', out);

    fprintf(out, "\nbodies (parent before child)\n");
    fprintf(out, "  %3s  %-16s %-16s %12s  %-24s %s\n", "#", "name", "parent", "mass", "com", "inertia (xx yy zz xy xz yz)");
    for (int i = 1; i <= m->nb; i++) {
        const mbs_body_info *b = &m->body[i];
        char com[128];
        snprintf(com, sizeof com, "[%g, %g, %g]", x[b->x_com], x[b->x_com + 1], x[b->x_com + 2]);
        fprintf(out, "  %3d  %-16s %-16s %12g  %-24s ", i, b->name, m->body[b->parent].name, x[b->x_mass], com);
        print_vec(out, x + b->x_inertia, 6);
        fputc('\n', out);
    }

    fprintf(out, "\njoints\n");
    fprintf(out, "  %3s  %-16s %-12s %-16s %-16s %5s  %s\n", "#", "name", "type", "parent", "child", "qoff", "coordinates");
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *j = &m->joint[i];
        fprintf(out, "  %3d  %-16s %-12s %-16s %-16s %5d  ", i, j->name, mbs_joint_type_name(j->type),
                m->body[j->parent].name, m->body[j->child].name, j->qoff);
        if (j->nq == 0) fputs("-", out);
        for (int k = 0; k < j->nq; k++) fprintf(out, "%s%s", k ? " " : "", m->coord_name[j->qoff + k]);
        fputc('\n', out);
    }
    if (m->con.ncut > 0) {
        fprintf(out, "\ncut joints (closed loops; %d constraints with drivers and Euler rows)\n",
                mbs_con_nrows(m));
        for (int k = 0; k < m->con.ncut; k++) {
            const mbs_cut_info *c = &m->con.cut[k];
            fprintf(out, "  %-16s %-12s %-16s %-16s ", c->name, mbs_joint_type_name(c->type),
                    m->body[c->body[0]].name, m->body[c->body[1]].name);
            if (c->nrows > 0) fprintf(out, "rows %d..%d  loop", c->row, c->row + c->nrows - 1);
            else fputs("no rows  loop", out);
            for (int i = 0; i < c->nloop; i++) fprintf(out, "%s%s", i ? " -> " : " ", m->body[c->loop[i]].name);
            fputc('\n', out);
        }
    }

    if (m->npoint > 0) {
        fprintf(out, "\npoints (local coordinates)\n");
        for (int k = 0; k < m->npoint; k++) {
            fprintf(out, "  %-32s ", m->point[k].name);
            print_vec(out, x + m->point[k].x, 3);
            fputc('\n', out);
        }
    }
    if (m->nvector > 0) {
        fprintf(out, "\nvectors (local coordinates)\n");
        for (int k = 0; k < m->nvector; k++) {
            fprintf(out, "  %-32s ", m->vector[k].name);
            print_vec(out, x + m->vector[k].x, 3);
            fputc('\n', out);
        }
    }
    mbs_forces_print(m, out);
    if (m->nparam > 0) {
        fprintf(out, "\nparameters\n");
        fprintf(out, "  %-16s %12s %12s %12s  %s\n", "name", "value", "lower", "upper", "sets");
        for (int k = 0; k < m->nparam; k++) {
            const mbs_param_info *p = &m->param[k];
            fprintf(out, "  %-16s %12g %12g %12g  ", p->name, p->value, p->lower, p->upper);
            for (int t = 0; t < p->ntargets; t++) {
                fprintf(out, "%s%s", t ? ", " : "", p->target_name[t]);
                if (p->offset[t] != 0)
                    fprintf(out, " (= %g*%s %+g)", p->scale[t], p->name, p->offset[t]);
                else if (p->scale[t] != 1)
                    fprintf(out, " (= %g*%s)", p->scale[t], p->name);
            }
            fputc('\n', out);
        }
    }
}
