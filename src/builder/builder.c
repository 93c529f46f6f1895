/*
 * builder.c - the model builder (see builder.h): the object and its items.
 *
 * The builder records items by handle in input order and checks each as it
 * is added; mbs_builder_finish() (finish.c) resolves the tree, orders the
 * bodies, lays out the model vector, applies the design parameters and
 * runs the physical checks.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_impl.h"
#include "model/model_util.h"
#include "model/force_model.h"
#include "model/constraint_model.h"

static const char *TARGET_FORMS =
    "valid forms: BODY.mass, BODY.com[k], BODY.inertia.xx|yy|zz|xy|xz|yz, BODY.POINT[k], gravity[k]; k = 0, 1, 2; "
    "FORCE.stiffness|damping|length|position|value|force[k]|torque[k]; "
    "FUNC.value|t0|v0|t1|v1|amplitude|frequency|phase|offset|values[k]";

/* Make room for one more element; 0 on success. */
static int grow(void **arr, int *cap, int n, size_t sz)
{
    if (n < *cap) return 0;
    int nc = *cap ? 2 * *cap : 8;
    void *p = realloc(*arr, (size_t)nc * sz);
    if (!p) return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* *a = copy of sa and *b = copy of sb; on failure neither is kept (both
 * NULL) and -1 is returned. */
static int dup_pair(char **a, const char *sa, char **b, const char *sb)
{
    *a = mbs_strdup(sa);
    *b = mbs_strdup(sb);
    if (*a && *b) return 0;
    free(*a);
    free(*b);
    *a = *b = NULL;
    return -1;
}

/* ---------------------------------------------------------------- lifetime */

mbs_builder *mbs_builder_new(const char *model_name, const char *source)
{
    mbs_builder *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->g[2] = -9.81;
    b->name = mbs_strdup(model_name ? model_name : "model");
    b->source = source ? mbs_strdup(source) : NULL;
    b->body = calloc(8, sizeof *b->body);
    b->capb = 8;
    if (b->body) b->body[0].name = mbs_strdup("ground");
    if (!b->name || (source && !b->source) || !b->body || !b->body[0].name ||
        mbs_hashmap_put(&b->body_map, 0, b->body[0].name, 0) != -1) {
        mbs_builder_free(b);
        return NULL;
    }
    return b;
}

void mbs_builder_free(mbs_builder *b)
{
    if (!b) return;
    if (b->body)
        for (int i = 0; i <= b->nb; i++) { free(b->body[i].name); free(b->body[i].where); }
    for (int k = 0; k < b->np; k++) { free(b->point[k].name); free(b->point[k].where); }
    for (int k = 0; k < b->nv; k++) { free(b->vector[k].name); free(b->vector[k].where); }
    for (int k = 0; k < b->nj; k++) { free(b->joint[k].name); free(b->joint[k].where); }
    for (int k = 0; k < b->npar; k++) {
        b_param *p = &b->param[k];
        for (int t = 0; t < p->nt; t++) { free(p->t[t].text); free(p->t[t].where); }
        free(p->t);
        free(p->name);
        free(p->where);
    }
    for (int k = 0; k < b->nfunc; k++) {
        free(b->func[k].name);
        free(b->func[k].where);
        free(b->func[k].num);
        free(b->func[k].t);
        free(b->func[k].coef);
    }
    for (int k = 0; k < b->nforce; k++) { free(b->force[k].name); free(b->force[k].where); }
    free(b->func);
    free(b->force);
    for (int k = 0; k < b->ndrv; k++) { free(b->drv[k].name); free(b->drv[k].where); }
    for (int k = 0; k < b->nfix; k++) free(b->fix[k].where);
    free(b->drv);
    free(b->fix);
    mbs_hashmap *maps[] = { &b->body_map, &b->point_map, &b->vector_map, &b->joint_map, &b->func_map,
                            &b->force_map, &b->drv_map, &b->param_map, &b->target_map };
    for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++) mbs_hashmap_free(maps[k]);
    free(b->body);
    free(b->point);
    free(b->vector);
    free(b->joint);
    free(b->param);
    free(b->name);
    free(b->source);
    free(b);
}

void mbs_builder_set_inertia_policy(mbs_builder *b, int lenient,
                                    void (*warn)(void *user, const char *msg), void *user)
{
    if (!b) return;
    b->lenient_inertia = lenient != 0;
    b->warn = warn;
    b->warn_user = user;
}

void mbs_builder_set_gravity(mbs_builder *b, const double g[3])
{
    if (b && g) memcpy(b->g, g, sizeof b->g);
}

/* ---------------------------------------------------------------- items */

int mbs_builder_find_body(const mbs_builder *b, const char *name)
{
    return b ? mbs_hashmap_get(&b->body_map, 0, name) : -1;
}

int mbs_builder_find_point(const mbs_builder *b, int body, const char *name)
{
    return b && body >= 0 ? mbs_hashmap_get(&b->point_map, (uint64_t)body, name) : -1;
}

size_t mbs_builder_find_body_prefixes(const mbs_builder *b, const char *name, int *out, size_t max)
{
    return b ? mbs_hashmap_get_prefixes(&b->body_map, 0, name, '.', out, max) : 0;
}

const char *mbs_builder_body_name(const mbs_builder *b, int body)
{
    return b && body >= 0 && body <= b->nb ? b->body[body].name : NULL;
}

/* Record a new item's name in its map (the caller has checked that the name
 * is new): 0, or -1 if memory runs out. */
static int map_add(mbs_hashmap *map, uint64_t tag, const char *name, int handle)
{
    return mbs_hashmap_put(map, tag, name, handle) == -1 ? 0 : -1;
}

/* The norm to divide v by to make it a unit vector: |v|, or exactly 1 when
 * |v|^2 is 1 to within round-off (8 ulp), so that a vector normalized here
 * and read back (a model written and loaded again) keeps every bit. */
static double unit_norm(const double v[3])
{
    double s = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    return fabs(s - 1) <= 8 * DBL_EPSILON ? 1 : sqrt(s);
}

int mbs_builder_add_body(mbs_builder *b, const char *name, double mass,
                         const double com[3], const double inertia6[6],
                         const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_body: builder is NULL");
    if (!name || !*name)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: a body needs a non-empty name", W(where));
    if (strcmp(name, "ground") == 0)
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: the name \"ground\" is reserved for the fixed ground body", W(where));
    int other = mbs_builder_find_body(b, name);
    if (other > 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate body name \"%s\" (also %s)", W(where), name,
                             W(b->body[other].where));
    double c[3] = { 0, 0, 0 }, I[6] = { 0, 0, 0, 0, 0, 0 };
    if (com) memcpy(c, com, sizeof c);
    if (inertia6) memcpy(I, inertia6, sizeof I);
    if (!isfinite(mass))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: body %s: mass is not finite (%g)", W(where), name, mass);
    if (!finite_n(c, 3))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: body %s: centre of mass is not finite", W(where), name);
    if (!finite_n(I, 6))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: body %s: inertia is not finite", W(where), name);
    /* body[0] is the ground: nb + 1 entries are in use */
    if (grow((void **)&b->body, &b->capb, b->nb + 1, sizeof *b->body)) return oom(err);
    b_body *bd = &b->body[b->nb + 1];
    memset(bd, 0, sizeof *bd);
    bd->name = mbs_strdup(name);
    bd->where = mbs_strdup(W(where));
    if (!bd->name || !bd->where || map_add(&b->body_map, 0, bd->name, b->nb + 1)) {
        free(bd->name);
        free(bd->where);
        return oom(err);
    }
    bd->mass = mass;
    memcpy(bd->com, c, sizeof c);
    memcpy(bd->inertia, I, sizeof I);
    return ++b->nb;
}

int mbs_builder_add_point(mbs_builder *b, int body, const char *name,
                          const double xyz[3], const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_point: builder is NULL");
    if (body < 0 || body > b->nb)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: invalid body handle %d", W(where), body);
    if (name && !*name)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: a point name must not be empty", W(where));
    if (name && mbs_builder_find_point(b, body, name) >= 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate point name \"%s\" on body %s", W(where), name,
                             b->body[body].name);
    double p[3] = { 0, 0, 0 };
    if (xyz) memcpy(p, xyz, sizeof p);
    if (!finite_n(p, 3))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: point coordinates are not finite", W(where));
    if (grow((void **)&b->point, &b->capp, b->np, sizeof *b->point)) return oom(err);
    b_point *pt = &b->point[b->np];
    memset(pt, 0, sizeof *pt);
    pt->body = body;
    pt->name = name ? mbs_strdup(name) : NULL;
    pt->where = mbs_strdup(W(where));
    if ((name && !pt->name) || !pt->where || (name && map_add(&b->point_map, (uint64_t)body, pt->name, b->np))) {
        free(pt->name);
        free(pt->where);
        return oom(err);
    }
    memcpy(pt->xyz, p, sizeof p);
    return b->np++;
}

int mbs_builder_add_vector(mbs_builder *b, int body, const char *name,
                           const double xyz[3], const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_vector: builder is NULL");
    if (body < 0 || body > b->nb)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: invalid body handle %d", W(where), body);
    if (!name || !*name)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: a vector needs a non-empty name", W(where));
    if (mbs_hashmap_get(&b->vector_map, (uint64_t)body, name) >= 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate vector name \"%s\" on body %s", W(where), name,
                             b->body[body].name);
    if (!xyz || !finite_n(xyz, 3))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: vector components are not finite", W(where));
    double n = unit_norm(xyz);
    if (!(n > 1e-300) || !isfinite(n))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: vector %s is zero (it is normalized and needs a direction)",
                             W(where), name);
    if (grow((void **)&b->vector, &b->capv, b->nv, sizeof *b->vector)) return oom(err);
    b_vector *v = &b->vector[b->nv];
    memset(v, 0, sizeof *v);
    v->body = body;
    v->name = mbs_strdup(name);
    v->where = mbs_strdup(W(where));
    if (!v->name || !v->where || map_add(&b->vector_map, (uint64_t)body, v->name, b->nv)) {
        free(v->name);
        free(v->where);
        return oom(err);
    }
    for (int k = 0; k < 3; k++) v->xyz[k] = xyz[k] / n;
    return b->nv++;
}

/* Orthonormal triad X = [axis, ref, axis x ref] (row-major, columns). ref
 * is made orthogonal to the axis by Gram-Schmidt, repeated (at most 3
 * times) until their dot product is below 2 ulp of |ref|; an axis and a ref
 * that are orthonormal to within round-off (8 ulp, unit_norm) are kept as
 * they are, so that the columns of X give X again bit for bit. */
static int joint_frame(const double axis[3], const double *ref, double X[9])
{
    double a[3], r[3], t[3];
    if (!finite_n(axis, 3)) return -1;
    double n = unit_norm(axis);
    if (!(n > 1e-12) || !isfinite(n)) return -1;
    for (int k = 0; k < 3; k++) a[k] = axis[k] / n;
    int have = 0;
    if (ref) {
        double rn = sqrt(ref[0] * ref[0] + ref[1] * ref[1] + ref[2] * ref[2]);
        if (isfinite(rn) && rn > 0) {
            memcpy(r, ref, sizeof r);
            double pn = rn;
            for (int pass = 0; pass < 3; pass++) {
                double d = r[0] * a[0] + r[1] * a[1] + r[2] * a[2];
                if (fabs(d) <= (pass ? 2 : 8) * DBL_EPSILON * pn) break;
                for (int k = 0; k < 3; k++) r[k] -= d * a[k];
                pn = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
                if (!(pn > 1e-9 * rn)) break;
            }
            if (pn > 1e-9 * rn) {
                pn = unit_norm(r);
                for (int k = 0; k < 3; k++) r[k] /= pn;
                have = 1;
            }
        }
    }
    if (!have) {
        /* Deterministic perpendicular: the coordinate axis following the
         * dominant component of the axis (x -> y, y -> z, z -> x),
         * orthogonalized. For the coordinate axes this gives a cyclic
         * permutation of the identity. */
        int kmax = 0;
        for (int k = 1; k < 3; k++)
            if (fabs(a[k]) > fabs(a[kmax])) kmax = k;
        int kr = (kmax + 1) % 3;
        double e[3] = { 0, 0, 0 };
        e[kr] = 1;
        double d = a[kr];
        for (int k = 0; k < 3; k++) r[k] = e[k] - d * a[k];
        double pn = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        for (int k = 0; k < 3; k++) r[k] /= pn;
    }
    t[0] = a[1] * r[2] - a[2] * r[1];
    t[1] = a[2] * r[0] - a[0] * r[2];
    t[2] = a[0] * r[1] - a[1] * r[0];
    for (int k = 0; k < 3; k++) {
        X[3 * k + 0] = a[k];
        X[3 * k + 1] = r[k];
        X[3 * k + 2] = t[k];
    }
    return 0;
}

/* The initial state of a joint of the given type (nq coordinates) into q,
 * qd (7 each): q0 (nq0 values) and qd0 (nqd0) when given, else zero with
 * Euler parameters (1, 0, 0, 0); checked finite, |p| = 1 and p . pd = 0. */
static int joint_initial_state(const char *w, const char *name, mbs_joint_type type, int nq, const double *q0,
                               int nq0, const double *qd0, int nqd0, double *q, double *qd, mbs_error *err)
{
    int eu = mbs_joint_type_euler(type);
    if (eu >= 0) q[eu] = 1;
    if (q0) {
        if (nq0 != nq)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: joint %s: q0 has %d values, a %s joint has %d coordinates", w, name, nq0,
                                 mbs_joint_type_name(type), nq);
        memcpy(q, q0, (size_t)nq * sizeof *q);
    }
    if (qd0) {
        if (nqd0 != nq)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: joint %s: qd0 has %d values, a %s joint has %d coordinates", w, name, nqd0,
                                 mbs_joint_type_name(type), nq);
        memcpy(qd, qd0, (size_t)nq * sizeof *qd);
    }
    if (!finite_n(q, nq) || !finite_n(qd, nq))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: q0 or qd0 is not finite", w, name);
    if (eu >= 0) {
        const double *p = q + eu, *pd = qd + eu;
        double n = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
        if (fabs(n - 1) > 1e-6)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: joint %s: q0: Euler parameters [%g, %g, %g, %g] are not normalized "
                                 "(|p| = %.9g, must be 1 within 1e-6)", w, name, p[0], p[1], p[2], p[3], n);
        double dot = p[0] * pd[0] + p[1] * pd[1] + p[2] * pd[2] + p[3] * pd[3];
        if (fabs(dot) > 1e-6)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: joint %s: qd0: Euler parameter rates are not tangent (p.pdot = %g, "
                                 "must be 0 within 1e-6)", w, name, dot);
    }
    return MBS_OK;
}

static const char *joint_where(const char *where) { return W(where); }

int mbs_builder_add_joint(mbs_builder *b, const char *name, mbs_joint_type type,
                          int parent_body, int child_body,
                          const mbs_joint_side *parent_side,
                          const mbs_joint_side *child_side,
                          const double *q0, int nq0, const double *qd0, int nqd0,
                          const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_joint: builder is NULL");
    const char *w = joint_where(where);
    if (!name || !*name) return mbs_error_set(err, MBS_ERR_MODEL, "%s: a joint needs a non-empty name", w);
    int other = mbs_builder_find_joint(b, name);
    if (other >= 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate joint name \"%s\" (also %s)", w, name,
                             b->joint[other].where);
    int nq = mbs_joint_type_nq(type);
    if (nq < 0) return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: invalid joint type %d", w, name, (int)type);
    if (parent_body < 0 || parent_body > b->nb)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: joint %s: invalid parent body handle %d", w, name, parent_body);
    if (child_body < 0 || child_body > b->nb)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: joint %s: invalid child body handle %d", w, name, child_body);
    if (child_body == 0)
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: joint %s: the child cannot be the ground (the ground does not move; "
                             "swap parent and child)", w, name);
    if (parent_body == child_body)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: parent and child are the same body (%s)", w, name,
                             b->body[child_body].name);

    const mbs_joint_side *sides[2] = { parent_side, child_side };
    const int bodies[2] = { parent_body, child_body };
    const char *side_name[2] = { "parent", "child" };
    double X[2][9];
    int pt[2];
    for (int s = 0; s < 2; s++) {
        static const double zaxis[3] = { 0, 0, 1 };
        const double *axis = sides[s] ? sides[s]->axis : zaxis;
        const double *ref = sides[s] && sides[s]->has_ref ? sides[s]->ref : NULL;
        if (!finite_n(axis, 3) || (ref && !finite_n(ref, 3)))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: %s axis or ref is not finite", w, name,
                                 side_name[s]);
        if (joint_frame(axis, ref, X[s]))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: the %s axis is zero (%g, %g, %g)", w, name,
                                 side_name[s], axis[0], axis[1], axis[2]);
        pt[s] = sides[s] ? sides[s]->point : -1;
        if (pt[s] >= b->np || (pt[s] >= 0 && b->point[pt[s]].body != bodies[s]))
            return mbs_error_set(err, MBS_ERR_ARG, "%s: joint %s: %s point handle %d is not a point of body %s", w,
                                 name, side_name[s], pt[s], b->body[bodies[s]].name);
    }

    double q[7] = { 0 }, qd[7] = { 0 };
    int rc = joint_initial_state(w, name, type, nq, q0, nq0, qd0, nqd0, q, qd, err);
    if (rc) return rc;

    /* anonymous points at the body origin for sides without a point */
    for (int s = 0; s < 2; s++)
        if (pt[s] < 0) {
            int h = mbs_builder_add_point(b, bodies[s], NULL, NULL, w, err);
            if (h < 0) return h;
            pt[s] = h;
        }

    if (grow((void **)&b->joint, &b->capj, b->nj, sizeof *b->joint)) return oom(err);
    b_joint *j = &b->joint[b->nj];
    memset(j, 0, sizeof *j);
    if (dup_pair(&j->name, name, &j->where, w)) return oom(err);
    if (map_add(&b->joint_map, 0, j->name, b->nj)) {
        free(j->name);
        free(j->where);
        return oom(err);
    }
    j->type = type;
    j->parent = parent_body;
    j->child = child_body;
    j->ppoint = pt[0];
    j->cpoint = pt[1];
    memcpy(j->Xp, X[0], sizeof j->Xp);
    memcpy(j->Xc, X[1], sizeof j->Xc);
    memcpy(j->q0, q, sizeof q);
    memcpy(j->qd0, qd, sizeof qd);
    j->velocities = MBS_VELOCITIES_EULER_RATES;
    j->has_v0 = -1;
    return b->nj++;
}

int mbs_builder_set_joint_velocities(mbs_builder *b, int joint, int velocities, const char *where,
                                     mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_set_joint_velocities: builder is NULL");
    const char *w = W(where);
    if (joint < 0 || joint >= b->nj) return mbs_error_set(err, MBS_ERR_ARG, "%s: invalid joint handle %d", w, joint);
    b_joint *j = &b->joint[joint];
    if (velocities != MBS_VELOCITIES_EULER_RATES && velocities != MBS_VELOCITIES_TANGENT)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: joint %s: invalid velocity convention %d", w, j->name,
                             velocities);
    if (j->type != MBS_JOINT_SPHERICAL && j->type != MBS_JOINT_FLOATING)
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: joint %s is %s: a velocity convention is chosen only for spherical and floating "
                             "joints", w, j->name, mbs_joint_type_name(j->type));
    j->velocities = velocities;
    return MBS_OK;
}

int mbs_builder_set_joint_v0(mbs_builder *b, int joint, const double *v0, int n, const char *where,
                             mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_set_joint_v0: builder is NULL");
    const char *w = W(where);
    if (joint < 0 || joint >= b->nj) return mbs_error_set(err, MBS_ERR_ARG, "%s: invalid joint handle %d", w, joint);
    b_joint *j = &b->joint[joint];
    if (n < 0 || n > 7 || (n > 0 && !v0))
        return mbs_error_set(err, MBS_ERR_ARG, "%s: joint %s: v0 with %d values", w, j->name, n);
    if (!finite_n(v0, n)) return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: v0 is not finite", w, j->name);
    memset(j->v0, 0, sizeof j->v0);
    if (n > 0) memcpy(j->v0, v0, (size_t)n * sizeof *v0);
    j->has_v0 = n;
    return MBS_OK;
}

/* ---------------------------------------------------------------- functions, forces */

int mbs_builder_find_joint(const mbs_builder *b, const char *name)
{
    return b ? mbs_hashmap_get(&b->joint_map, 0, name) : -1;
}

int mbs_builder_joint_type(const mbs_builder *b, int joint)
{
    return b && joint >= 0 && joint < b->nj ? (int)b->joint[joint].type : -1;
}

int mbs_builder_find_function(const mbs_builder *b, const char *name)
{
    return b ? mbs_hashmap_get(&b->func_map, 0, name) : -1;
}

int mbs_builder_add_function(mbs_builder *b, const char *name, mbs_func_type type, int variant,
                             const double *numbers, int n, const double *times,
                             const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_function: builder is NULL");
    const char *w = W(where);
    if (!name || !*name) return mbs_error_set(err, MBS_ERR_MODEL, "%s: a function needs a non-empty name", w);
    int other = mbs_builder_find_function(b, name);
    if (other >= 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate function name \"%s\" (also %s)", w, name,
                             b->func[other].where);
    int nx = mbs_func_type_nx(type, n);
    if (nx < 0) return mbs_error_set(err, MBS_ERR_ARG, "%s: function %s: invalid type %d", w, name, (int)type);
    if (type == MBS_FUNC_SPLINE && n < 2)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: spline %s: needs at least 2 knots, got %d", w, name, n);
    if (type != MBS_FUNC_SPLINE && n != nx)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: function %s: a %s function has %d numbers, got %d", w, name,
                             mbs_function_type_name(type), nx, n);
    if ((type == MBS_FUNC_STEP || type == MBS_FUNC_SPLINE) && variant != 0 && variant != 1)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: function %s: invalid variant %d", w, name, variant);
    if (!numbers || !finite_n(numbers, nx))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: function %s: values are not finite", w, name);
    if (type == MBS_FUNC_STEP && !(numbers[2] > numbers[0]))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: step %s: t1 (%g) must be greater than t0 (%g)", w, name,
                             numbers[2], numbers[0]);
    if (grow((void **)&b->func, &b->capfunc, b->nfunc, sizeof *b->func)) return oom(err);
    b_func *f = &b->func[b->nfunc];
    memset(f, 0, sizeof *f);
    f->type = type;
    f->variant = (type == MBS_FUNC_STEP || type == MBS_FUNC_SPLINE) ? variant : 0;
    f->n = nx;
    f->name = mbs_strdup(name);
    f->where = mbs_strdup(w);
    f->num = malloc((size_t)nx * sizeof *f->num);
    if (type == MBS_FUNC_SPLINE) {
        f->t = malloc((size_t)n * sizeof *f->t);
        f->coef = malloc(6 * (size_t)n * sizeof *f->coef);
    }
    if (!f->name || !f->where || !f->num || (type == MBS_FUNC_SPLINE && (!f->t || !f->coef)) ||
        map_add(&b->func_map, 0, f->name, b->nfunc)) {
        free(f->name); free(f->where); free(f->num); free(f->t); free(f->coef);
        return oom(err);
    }
    memcpy(f->num, numbers, (size_t)nx * sizeof *f->num);
    if (type == MBS_FUNC_SPLINE) {
        if (!times || mbs_spline_setup(n, times, variant, f->coef) != 0) {
            int bad = 0;
            for (int k = 0; times && k < n; k++)
                if (!isfinite(times[k]) || (k > 0 && !(times[k] > times[k - 1]))) { bad = k; break; }
            free(f->name); free(f->where); free(f->num); free(f->t); free(f->coef);
            if (!times) return mbs_error_set(err, MBS_ERR_ARG, "%s: spline %s: no knot times", w, name);
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: spline %s: knot times must be finite and strictly increasing "
                                 "(time %d is %g after %g)", w, name, bad, times[bad], bad ? times[bad - 1] : NAN);
        }
        memcpy(f->t, times, (size_t)n * sizeof *f->t);
    }
    return b->nfunc++;
}

/* Common part of the force constructors: name checks and a new record. */
static b_force *new_force(mbs_builder *b, const char *name, mbs_force_type type, const char *w, mbs_error *err,
                          int *rc)
{
    if (!name || !*name) {
        *rc = mbs_error_set(err, MBS_ERR_MODEL, "%s: a force element needs a non-empty name", w);
        return NULL;
    }
    int other = mbs_hashmap_get(&b->force_map, 0, name);
    if (other >= 0) {
        *rc = mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate force name \"%s\" (also %s)", w, name,
                            b->force[other].where);
        return NULL;
    }
    if (grow((void **)&b->force, &b->capforce, b->nforce, sizeof *b->force)) {
        *rc = oom(err);
        return NULL;
    }
    b_force *f = &b->force[b->nforce];
    memset(f, 0, sizeof *f);
    if (dup_pair(&f->name, name, &f->where, w)) {
        *rc = oom(err);
        return NULL;
    }
    if (map_add(&b->force_map, 0, f->name, b->nforce)) {   /* the callers keep the record once it is made */
        free(f->name);
        free(f->where);
        *rc = oom(err);
        return NULL;
    }
    f->type = type;
    f->body[0] = f->body[1] = -1;
    f->point[0] = f->point[1] = -1;
    f->joint = f->coord = -1;
    f->func = -1;
    return f;
}

static int check_spring_numbers(const char *w, const char *tn, const char *name, double k, double c,
                                mbs_error *err)
{
    if (!isfinite(k) || !isfinite(c))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: stiffness and damping must be finite", w, tn, name);
    if (c < 0)
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: %s %s: damping must be >= 0 (a negative damping feeds energy in), got %g", w, tn,
                             name, c);
    return MBS_OK;
}

int mbs_builder_add_spring_damper(mbs_builder *b, const char *name, int point1, int point2,
                                  double stiffness, double damping, const double *length,
                                  const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_spring_damper: builder is NULL");
    const char *w = W(where);
    int rc = check_spring_numbers(w, "spring_damper", name ? name : "", stiffness, damping, err);
    if (rc) return rc;
    if (point1 < 0 || point1 >= b->np || point2 < 0 || point2 >= b->np)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: spring_damper %s: invalid point handle", w, name ? name : "");
    if (length && (!isfinite(*length) || *length < 0))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: spring_damper %s: free length must be finite and >= 0, got %g",
                             w, name ? name : "", *length);
    b_force *f = new_force(b, name, MBS_FORCE_SPRING_DAMPER, w, err, &rc);
    if (!f) return rc;
    f->point[0] = point1;
    f->point[1] = point2;
    f->body[0] = b->point[point1].body;
    f->body[1] = b->point[point2].body;
    f->nnum = 3;
    f->num[0] = stiffness;
    f->num[1] = damping;
    f->num[2] = length ? *length : 0;
    f->free_given = length != NULL;
    return b->nforce++;
}

/* Joint handle and coordinate of a joint element. */
static int check_joint_coord(const mbs_builder *b, const char *w, const char *tn, const char *name, int joint,
                             int coord, mbs_error *err)
{
    if (joint < 0 || joint >= b->nj)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: %s %s: invalid joint handle %d", w, tn, name, joint);
    const b_joint *j = &b->joint[joint];
    int nq = mbs_joint_type_nq(j->type);
    if (nq == 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: joint %s is fixed and has no coordinate", w, tn, name,
                             j->name);
    if (coord < 0 || coord >= nq)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: joint %s (%s) has coordinates 0..%d, not %d", w, tn,
                             name, j->name, mbs_joint_type_name(j->type), nq - 1, coord);
    int eu = mbs_joint_type_euler(j->type);
    if (eu >= 0 && coord >= eu && coord < eu + 4)
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: %s %s: coordinate %s.%s of joint %s is an Euler parameter; elements on Euler "
                             "parameters are not supported (use body loads or spring_damper elements)",
                             w, tn, name, j->name, mbs_joint_coord_suffix(j->type, coord), j->name);
    return MBS_OK;
}

int mbs_builder_add_joint_spring(mbs_builder *b, const char *name, int joint, int coord,
                                 double stiffness, double damping, double position,
                                 const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_joint_spring: builder is NULL");
    const char *w = W(where);
    const char *nm = name ? name : "";
    int rc = check_spring_numbers(w, "joint_spring", nm, stiffness, damping, err);
    if (rc) return rc;
    if (!isfinite(position))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint_spring %s: position is not finite", w, nm);
    if ((rc = check_joint_coord(b, w, "joint_spring", nm, joint, coord, err))) return rc;
    b_force *f = new_force(b, name, MBS_FORCE_JOINT_SPRING, w, err, &rc);
    if (!f) return rc;
    f->joint = joint;
    f->coord = coord;
    f->nnum = 3;
    f->num[0] = stiffness;
    f->num[1] = damping;
    f->num[2] = position;
    return b->nforce++;
}

int mbs_builder_add_joint_force(mbs_builder *b, const char *name, int joint, int coord, double value,
                                int func, const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_joint_force: builder is NULL");
    const char *w = W(where);
    const char *nm = name ? name : "";
    if (!isfinite(value)) return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint_force %s: value is not finite", w, nm);
    if (func < -1 || func >= b->nfunc)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: joint_force %s: invalid function handle %d", w, nm, func);
    int rc = check_joint_coord(b, w, "joint_force", nm, joint, coord, err);
    if (rc) return rc;
    b_force *f = new_force(b, name, MBS_FORCE_JOINT_FORCE, w, err, &rc);
    if (!f) return rc;
    f->joint = joint;
    f->coord = coord;
    f->nnum = 1;
    f->num[0] = value;
    f->func = func;
    return b->nforce++;
}

int mbs_builder_add_body_load(mbs_builder *b, const char *name, int body, int point,
                              const double force[3], const double torque[3], int body_axes,
                              int func, const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_body_load: builder is NULL");
    const char *w = W(where);
    const char *nm = name ? name : "";
    if (body < 1 || body > b->nb)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: body_load %s: needs a moving body (handle %d)", w, nm, body);
    if (point < -1 || point >= b->np || (point >= 0 && b->point[point].body != body))
        return mbs_error_set(err, MBS_ERR_ARG, "%s: body_load %s: point handle %d is not a point of body %s", w, nm,
                             point, b->body[body].name);
    if ((force && !finite_n(force, 3)) || (torque && !finite_n(torque, 3)))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: body_load %s: force or torque is not finite", w, nm);
    if (func < -1 || func >= b->nfunc)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: body_load %s: invalid function handle %d", w, nm, func);
    int rc;
    b_force *f = new_force(b, name, MBS_FORCE_BODY_LOAD, w, err, &rc);
    if (!f) return rc;
    f->body[0] = body;
    f->point[0] = point;
    f->nnum = 6;
    for (int k = 0; k < 3; k++) {
        f->num[k] = force ? force[k] : 0;
        f->num[3 + k] = torque ? torque[k] : 0;
    }
    f->body_axes = body_axes != 0;
    f->func = func;
    return b->nforce++;
}

int mbs_builder_add_contact(mbs_builder *b, const char *name, mbs_force_type type, int point,
                            const mbs_builder_contact *c, const char *where, mbs_error *err)
{
    if (!b || !c) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_contact: NULL argument");
    const char *w = W(where);
    const char *nm = name ? name : "";
    const char *tn = mbs_force_type_name(type);
    if (type != MBS_FORCE_CONTACT_PLANE && type != MBS_FORCE_TIRE)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: %s: not a contact type", w, nm);
    if (point < 0 || point >= b->np)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: %s %s: invalid point handle", w, tn, nm);
    if (b->point[point].body < 1)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: the centre must be a point of a moving body", w, tn,
                             nm);
    const int circle = type == MBS_FORCE_TIRE || c->shape == 1;
    double n[3], a[3] = { 0, 0, 0 };
    double nn = unit_norm(c->plane_normal);
    if (!(nn > 0) || !isfinite(nn))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: the plane normal must be a non-zero vector", w, tn, nm);
    for (int k = 0; k < 3; k++) n[k] = c->plane_normal[k] / nn;
    if (circle) {
        double an = unit_norm(c->axis);
        if (!(an > 0) || !isfinite(an))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: the circle axis must be a non-zero vector", w, tn,
                                 nm);
        for (int k = 0; k < 3; k++) a[k] = c->axis[k] / an;
    }
    if (!finite_n(c->plane_point, 3))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: plane point is not finite", w, tn, nm);
    int rc;
    b_force *f = new_force(b, name, type, w, err, &rc);
    if (!f) return rc;
    f->body[0] = b->point[point].body;
    f->point[0] = point;
    f->shape = circle;
    double *v = f->num;
    v[0] = c->stiffness;
    v[1] = c->exponent;
    v[2] = c->hysteresis;
    v[3] = c->radius;
    v[4] = c->smoothing;
    for (int k = 0; k < 3; k++) {
        v[5 + k] = c->plane_point[k];
        v[8 + k] = n[k];
        v[11 + k] = a[k];
    }
    v[14] = c->mu;
    v[15] = c->vs;
    f->nnum = 16;
    if (type == MBS_FORCE_TIRE) {
        v[14] = c->kappa_c;
        v[15] = c->alpha_c;
        v[16] = c->mu_x;
        v[17] = c->mu_y;
        v[18] = c->v0;
        f->nnum = 19;
    }
    return b->nforce++;
}

/* ---------------------------------------------------------------- parameters */

int mbs_builder_add_param(mbs_builder *b, const char *name, double value,
                          double lower, double upper, const char *where,
                          mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_param: builder is NULL");
    const char *w = W(where);
    if (!name || !*name) return mbs_error_set(err, MBS_ERR_MODEL, "%s: a parameter needs a non-empty name", w);
    int other = mbs_hashmap_get(&b->param_map, 0, name);
    if (other >= 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate parameter name \"%s\" (also %s)", w, name,
                             b->param[other].where);
    if (!isfinite(value))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: parameter %s: value is not finite (%g)", w, name, value);
    if (isnan(lower) || isnan(upper))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: parameter %s: bounds are NaN", w, name);
    if (lower > upper)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: parameter %s: lower bound %g is above upper bound %g", w,
                             name, lower, upper);
    if (value < lower || value > upper)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: parameter %s: value %g is outside its bounds [%g, %g]", w,
                             name, value, lower, upper);
    if (grow((void **)&b->param, &b->cappar, b->npar, sizeof *b->param)) return oom(err);
    b_param *p = &b->param[b->npar];
    memset(p, 0, sizeof *p);
    if (dup_pair(&p->name, name, &p->where, w)) return oom(err);
    if (map_add(&b->param_map, 0, p->name, b->npar)) {
        free(p->name);
        free(p->where);
        return oom(err);
    }
    p->value = value;
    p->lower = lower;
    p->upper = upper;
    return b->npar++;
}

/* "[k]" with k in 0..2 and nothing after: k, else -1. */
static int parse_index(const char *s)
{
    if (s[0] == '[' && s[1] >= '0' && s[1] <= '2' && s[2] == ']' && s[3] == '\0') return s[1] - '0';
    return -1;
}

/* Resolve a target of body h from the text after "BODY.". 0 if found;
 * otherwise -1 with a reason in why. */
static int resolve_in_body(const mbs_builder *b, int h, const char *rest, b_target *t, char *why, size_t nwhy)
{
    const char *bn = b->body[h].name;
    if (h > 0 && strcmp(rest, "mass") == 0) {
        t->kind = T_MASS;
        t->handle = h;
        t->comp = 0;
        return 0;
    }
    if (h > 0 && strncmp(rest, "com", 3) == 0 && (rest[3] == '[' || rest[3] == '\0')) {
        int k = parse_index(rest + 3);
        if (k < 0) {
            snprintf(why, nwhy, "the index must be [0], [1] or [2]");
            return -1;
        }
        t->kind = T_COM;
        t->handle = h;
        t->comp = k;
        return 0;
    }
    if (h > 0 && strncmp(rest, "inertia", 7) == 0 && (rest[7] == '.' || rest[7] == '\0')) {
        for (int k = 0; k < 6; k++)
            if (rest[7] == '.' && strcmp(rest + 8, mbs_inertia_entry_names[k]) == 0) {
                t->kind = T_INERTIA;
                t->handle = h;
                t->comp = k;
                return 0;
            }
        snprintf(why, nwhy, "the inertia entry must be one of .xx .yy .zz .xy .xz .yz");
        return -1;
    }
    const char *br = strrchr(rest, '[');
    size_t len = br ? (size_t)(br - rest) : strlen(rest);
    char pname[256];
    if (len >= sizeof pname) len = sizeof pname - 1;
    memcpy(pname, rest, len);
    pname[len] = '\0';
    int ph = mbs_builder_find_point(b, h, pname);
    if (ph < 0) {
        snprintf(why, nwhy, "body %s has no point named \"%s\"", bn, pname);
        return -1;
    }
    int k = br ? parse_index(br) : -1;
    if (k < 0) {
        snprintf(why, nwhy, "a point coordinate needs an index [0], [1] or [2]");
        return -1;
    }
    t->kind = T_POINT;
    t->handle = ph;
    t->comp = k;
    return 0;
}

/* Parameter targets in force elements and functions: the member names of
 * the model file; comp is the offset in the item's block of x. `count`:
 * 1 for a scalar, 3 for [k] with k = 0..2, 0 for [k] with k = 0..n-1. */
typedef struct {
    const char *name;
    int comp, count;
} member_def;

static const member_def *force_members(mbs_force_type t)
{
    static const member_def sd[] = { { "stiffness", 0, 1 }, { "damping", 1, 1 }, { "length", 2, 1 }, { NULL, 0, 0 } };
    static const member_def js[] = { { "stiffness", 0, 1 }, { "damping", 1, 1 }, { "position", 2, 1 }, { NULL, 0, 0 } };
    static const member_def jf[] = { { "value", 0, 1 }, { NULL, 0, 0 } };
    static const member_def bl[] = { { "force", 0, 3 }, { "torque", 3, 3 }, { NULL, 0, 0 } };
    static const member_def cp[] = { { "stiffness", 0, 1 }, { "exponent", 1, 1 }, { "hysteresis", 2, 1 },
                                     { "radius", 3, 1 }, { "friction", 14, 1 }, { "slip_speed", 15, 1 },
                                     { NULL, 0, 0 } };
    static const member_def ti[] = { { "stiffness", 0, 1 }, { "exponent", 1, 1 }, { "hysteresis", 2, 1 },
                                     { "radius", 3, 1 }, { "kappa_c", 14, 1 }, { "alpha_c", 15, 1 },
                                     { "mu_x", 16, 1 }, { "mu_y", 17, 1 }, { NULL, 0, 0 } };
    switch (t) {
    case MBS_FORCE_SPRING_DAMPER: return sd;
    case MBS_FORCE_JOINT_SPRING: return js;
    case MBS_FORCE_JOINT_FORCE: return jf;
    case MBS_FORCE_CONTACT_PLANE: return cp;
    case MBS_FORCE_TIRE: return ti;
    default: return bl;
    }
}

static const member_def *func_members(mbs_func_type t)
{
    static const member_def co[] = { { "value", 0, 1 }, { NULL, 0, 0 } };
    static const member_def st[] = { { "t0", 0, 1 }, { "v0", 1, 1 }, { "t1", 2, 1 }, { "v1", 3, 1 }, { NULL, 0, 0 } };
    static const member_def si[] = { { "amplitude", 0, 1 }, { "frequency", 1, 1 }, { "phase", 2, 1 },
                                     { "offset", 3, 1 }, { NULL, 0, 0 } };
    static const member_def sp[] = { { "values", 0, 0 }, { NULL, 0, 0 } };
    switch (t) {
    case MBS_FUNC_CONSTANT: return co;
    case MBS_FUNC_STEP: return st;
    case MBS_FUNC_SINE: return si;
    default: return sp;
    }
}

/* Resolve `rest` (after "NAME.") among the members; n: length of a [k]
 * member with count 0. 0 and *comp, or -1 with a reason. */
static int resolve_member(const member_def *defs, int n, const char *kind, const char *name, const char *rest,
                          int *comp, char *why, size_t nwhy)
{
    char list[256] = "";
    size_t len = 0;
    for (const member_def *d = defs; d->name; d++) {
        size_t l = strlen(d->name);
        int k = snprintf(list + len, sizeof list - len, "%s%s%s", len ? ", " : "", d->name, d->count == 1 ? "" : "[k]");
        if (k > 0 && (size_t)k < sizeof list - len) len += (size_t)k;
        if (strncmp(rest, d->name, l) != 0 || (rest[l] != '\0' && rest[l] != '[')) continue;
        if (d->count == 1) {
            if (rest[l] != '\0') {
                snprintf(why, nwhy, "%s %s: %s takes no index", kind, name, d->name);
                return -1;
            }
            *comp = d->comp;
            return 0;
        }
        int max = d->count ? d->count : n;
        const char *p = rest + l;
        char *end = NULL;
        long idx = -1;
        if (p[0] == '[' && p[1] >= '0' && p[1] <= '9') idx = strtol(p + 1, &end, 10);
        if (idx < 0 || !end || end[0] != ']' || end[1] != '\0' || idx >= max) {
            snprintf(why, nwhy, "%s %s: %s needs an index [0] .. [%d]", kind, name, d->name, max - 1);
            return -1;
        }
        *comp = d->comp + (int)idx;
        return 0;
    }
    snprintf(why, nwhy, "%s %s has no member \"%s\" (targets: %s)", kind, name, rest, list);
    return -1;
}

static void member_text(const member_def *defs, int comp, char *buf, size_t n)
{
    const member_def *best = defs;
    for (const member_def *d = defs; d->name; d++)
        if (d->comp <= comp) best = d;
    if (best->count == 1) snprintf(buf, n, "%s", best->name);
    else snprintf(buf, n, "%s[%d]", best->name, comp - best->comp);
}

static void target_describe(const mbs_builder *b, const b_target *t, char *buf, size_t n)
{
    char mem[64];
    if (t->kind == T_FORCE) {
        member_text(force_members(b->force[t->handle].type), t->comp, mem, sizeof mem);
        snprintf(buf, n, "%s.%s", b->force[t->handle].name, mem);
        return;
    }
    if (t->kind == T_FUNC) {
        member_text(func_members(b->func[t->handle].type), t->comp, mem, sizeof mem);
        snprintf(buf, n, "%s.%s", b->func[t->handle].name, mem);
        return;
    }
    switch (t->kind) {
    case T_GRAVITY: snprintf(buf, n, "gravity[%d]", t->comp); break;
    case T_MASS: snprintf(buf, n, "%s.mass", b->body[t->handle].name); break;
    case T_COM: snprintf(buf, n, "%s.com[%d]", b->body[t->handle].name, t->comp); break;
    case T_INERTIA:
        snprintf(buf, n, "%s.inertia.%s", b->body[t->handle].name, mbs_inertia_entry_names[t->comp]);
        break;
    default:
        snprintf(buf, n, "%s.%s[%d]", b->body[b->point[t->handle].body].name, b->point[t->handle].name, t->comp);
        break;
    }
}

/* The key of a target in target_map (with the empty string). */
static uint64_t target_key(const b_target *t)
{
    return ((uint64_t)(t->kind + 1) << 60) ^ ((uint64_t)(unsigned)t->handle << 30) ^ (uint64_t)(unsigned)t->comp;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The bodies, forces and functions whose name followed by '.' begins the
 * target: n[0] + n[1] + n[2] handles in a malloc'd *out (bodies, then forces,
 * then functions, each ascending). 0, or -1 if memory runs out. */
static int target_candidates(const mbs_builder *b, const char *target, int **out, int n[3])
{
    const mbs_hashmap *maps[3] = { &b->body_map, &b->force_map, &b->func_map };
    size_t total = 0;
    for (int k = 0; k < 3; k++) {
        n[k] = (int)mbs_hashmap_get_prefixes(maps[k], 0, target, '.', NULL, 0);
        total += (size_t)n[k];
    }
    *out = malloc((total + 1) * sizeof **out);
    if (!*out) return -1;
    for (int k = 0, at = 0; k < 3; at += n[k++]) {
        mbs_hashmap_get_prefixes(maps[k], 0, target, '.', *out + at, (size_t)n[k]);
        qsort(*out + at, (size_t)n[k], sizeof **out, cmp_int);
    }
    return 0;
}

#define WHY_LEN 512

/* A target BODY.rest, FORCE.rest or FUNCTION.rest into t (*found = 1), or
 * why it names nothing into why (WHY_LEN); an error when it names two
 * items or memory runs out. */
static int resolve_named_target(mbs_builder *b, const char *target, const char *w, b_target *t, char *why,
                                int *found, mbs_error *err)
{
    int *cand = NULL;
    /* BODY.rest, FORCE.rest, FUNCTION.rest: every prefix of the target
     * before a dot that names such an item (names may contain dots),
     * each kind in handle order */
    int ncand[3];
    if (target_candidates(b, target, &cand, ncand) != 0) return oom(err);
    const int *hb = cand, *hk[2] = { cand + ncand[0], cand + ncand[0] + ncand[1] };
    int anybody = 0;
    for (int c = 0; c < ncand[0] && !*found; c++) {
        int h = hb[c];
        size_t n = strlen(b->body[h].name);
        char why2[WHY_LEN];
        if (resolve_in_body(b, h, target + n + 1, t, why2, sizeof why2) == 0) *found = 1;
        else if (!anybody) memcpy(why, why2, WHY_LEN);
        anybody = 1;
    }
    /* a name that also resolves as another item is ambiguous */
    for (int kind = 0; kind < 2; kind++) {
        for (int c = 0; c < ncand[1 + kind]; c++) {
            int h = hk[kind][c];
            const char *nm = kind ? b->func[h].name : b->force[h].name;
            size_t n = strlen(nm);
            char why2[WHY_LEN];
            int comp;
            int ok = kind ? resolve_member(func_members(b->func[h].type), b->func[h].n, "function", nm,
                                           target + n + 1, &comp, why2, sizeof why2)
                          : resolve_member(force_members(b->force[h].type), 0,
                                           mbs_force_type_name(b->force[h].type), nm, target + n + 1, &comp,
                                           why2, sizeof why2);
            if (ok == 0 && *found) {
                char d[300];
                target_describe(b, t, d, sizeof d);
                free(cand);
                return mbs_error_set(err, MBS_ERR_MODEL,
                                     "%s: ambiguous parameter target \"%s\": it names %s and %s %s (rename one)",
                                     w, target, d, kind ? "function" : "force", nm);
            }
            if (ok == 0) {
                t->kind = kind ? T_FUNC : T_FORCE;
                t->handle = h;
                t->comp = comp;
                *found = 1;
            } else if (!anybody) {
                memcpy(why, why2, WHY_LEN);
            }
            anybody = 1;
        }
    }
    if (!*found && !anybody && !why[0]) {
        const char *dot = strchr(target, '.');
        int n = dot ? (int)(dot - target) : (int)strlen(target);
        snprintf(why, WHY_LEN, "no body named \"%.*s\" (nor a force or function)", n, target);
    }
    free(cand);
    return MBS_OK;
}

int mbs_builder_add_param_target(mbs_builder *b, int param, const char *target,
                                 double scale, double offset, const char *where,
                                 mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_param_target: builder is NULL");
    const char *w = W(where);
    if (param < 0 || param >= b->npar)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: invalid parameter handle %d", w, param);
    if (!target || !*target) return mbs_error_set(err, MBS_ERR_MODEL, "%s: empty parameter target", w);
    b_param *p = &b->param[param];
    if (!isfinite(scale) || !isfinite(offset))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: parameter %s: scale and offset must be finite", w, p->name);

    b_target t = { .kind = -1 };
    char why[WHY_LEN] = "";
    int found = 0;
    if (strncmp(target, "gravity", 7) == 0) {
        int k = parse_index(target + 7);
        if (k >= 0) {
            t.kind = T_GRAVITY;
            t.comp = k;
            found = 1;
        } else {
            snprintf(why, sizeof why, "the gravity index must be [0], [1] or [2]");
        }
    }
    if (!found) {
        int rc = resolve_named_target(b, target, w, &t, why, &found, err);
        if (rc) return rc;
    }
    if (!found)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: unknown parameter target \"%s\": %s (%s)", w, target, why,
                             TARGET_FORMS);

    /* one parameter per model entry */
    const uint64_t key = target_key(&t);
    int k = mbs_hashmap_get(&b->target_map, key, "");
    for (int s = 0; k >= 0 && s < b->param[k].nt; s++) {
        const b_target *o = &b->param[k].t[s];
        if (o->kind == t.kind && o->handle == t.handle && o->comp == t.comp) {
            char d[300];
            target_describe(b, &t, d, sizeof d);
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s is already set by parameter %s (%s)", w, d,
                                 b->param[k].name, o->where);
        }
    }

    if (grow((void **)&p->t, &p->capt, p->nt, sizeof *p->t)) return oom(err);
    t.scale = scale;
    t.offset = offset;
    if (dup_pair(&t.text, target, &t.where, w)) return oom(err);
    if (map_add(&b->target_map, key, "", param)) {
        free(t.text);
        free(t.where);
        return oom(err);
    }
    p->t[p->nt++] = t;
    return MBS_OK;
}

/* ---------------------------------------------------------------- closed loops, drivers, assembly */

int mbs_builder_set_joint_cut(mbs_builder *b, int joint, const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_set_joint_cut: builder is NULL");
    if (joint < 0 || joint >= b->nj)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: invalid joint handle %d", W(where), joint);
    b->joint[joint].cut = 1;
    return MBS_OK;
}

/* Name, time law and a new record for a driver. */
static b_driver *new_driver(mbs_builder *b, const char *name, int func, double value, double rate, const char *w,
                            mbs_error *err, int *rc)
{
    if (!name || !*name) {
        *rc = mbs_error_set(err, MBS_ERR_MODEL, "%s: a constraint needs a non-empty name", w);
        return NULL;
    }
    int other = mbs_hashmap_get(&b->drv_map, 0, name);
    if (other >= 0) {
        *rc = mbs_error_set(err, MBS_ERR_MODEL, "%s: duplicate constraint name \"%s\" (also %s)", w, name,
                            b->drv[other].where);
        return NULL;
    }
    if (func >= b->nfunc) {
        *rc = mbs_error_set(err, MBS_ERR_ARG, "%s: constraint %s: invalid function handle %d", w, name, func);
        return NULL;
    }
    if (!isfinite(value) || !isfinite(rate)) {
        *rc = mbs_error_set(err, MBS_ERR_MODEL, "%s: constraint %s: value and rate must be finite", w, name);
        return NULL;
    }
    if (grow((void **)&b->drv, &b->capdrv, b->ndrv, sizeof *b->drv)) {
        *rc = oom(err);
        return NULL;
    }
    b_driver *d = &b->drv[b->ndrv];
    memset(d, 0, sizeof *d);
    if (dup_pair(&d->name, name, &d->where, w)) {
        *rc = oom(err);
        return NULL;
    }
    if (map_add(&b->drv_map, 0, d->name, b->ndrv)) {   /* the callers keep the record once it is made */
        free(d->name);
        free(d->where);
        *rc = oom(err);
        return NULL;
    }
    d->func = func;
    d->value = value;
    d->rate = rate;
    d->joint = d->coord = -1;
    d->point[0] = d->point[1] = -1;
    return d;
}

int mbs_builder_add_coordinate_driver(mbs_builder *b, const char *name, int joint, int coord, int func,
                                      double value, double rate, const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_coordinate_driver: builder is NULL");
    const char *w = W(where);
    if (joint < 0 || joint >= b->nj)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: constraint %s: invalid joint handle %d", w, name ? name : "",
                             joint);
    const b_joint *j = &b->joint[joint];
    int nq = mbs_joint_type_nq(j->type), eu = mbs_joint_type_euler(j->type);
    if (coord < 0 || coord >= nq)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: constraint %s: joint %s (%s) has %d coordinate%s, not %d", w,
                             name ? name : "", j->name, mbs_joint_type_name(j->type), nq, nq == 1 ? "" : "s",
                             coord);
    if (eu >= 0 && coord >= eu && coord < eu + 4)
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: constraint %s: coordinate %s.%s of joint %s is an Euler parameter and cannot be "
                             "driven (drive an angle or a distance)", w, name ? name : "", j->name,
                             mbs_joint_coord_suffix(j->type, coord), j->name);
    int rc = MBS_OK;
    b_driver *d = new_driver(b, name, func, value, rate, w, err, &rc);
    if (!d) return rc;
    d->type = MBS_DRIVER_COORDINATE;
    d->joint = joint;
    d->coord = coord;
    return b->ndrv++;
}

int mbs_builder_add_distance_driver(mbs_builder *b, const char *name, int point1, int point2, int func,
                                    double value, double rate, const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_distance_driver: builder is NULL");
    const char *w = W(where);
    if (point1 < 0 || point1 >= b->np || point2 < 0 || point2 >= b->np)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: constraint %s: invalid point handle", w, name ? name : "");
    if (b->point[point1].body == b->point[point2].body)
        return mbs_error_set(err, MBS_ERR_MODEL,
                             "%s: constraint %s: both points are on body %s, their distance cannot change", w,
                             name ? name : "", b->body[b->point[point1].body].name);
    int rc = MBS_OK;
    b_driver *d = new_driver(b, name, func, value, rate, w, err, &rc);
    if (!d) return rc;
    d->type = MBS_DRIVER_DISTANCE;
    d->point[0] = point1;
    d->point[1] = point2;
    return b->ndrv++;
}

int mbs_builder_add_assembly_fixed(mbs_builder *b, int joint, int coord, const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_add_assembly_fixed: builder is NULL");
    const char *w = W(where);
    if (joint < 0 || joint >= b->nj) return mbs_error_set(err, MBS_ERR_ARG, "%s: invalid joint handle %d", w, joint);
    int nq = mbs_joint_type_nq(b->joint[joint].type);
    if (coord < -1 || coord >= nq)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s has no coordinate %d", w, b->joint[joint].name, coord);
    if (nq == 0)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s is fixed: it has no coordinate to hold", w,
                             b->joint[joint].name);
    if (grow((void **)&b->fix, &b->capfix, b->nfix, sizeof *b->fix)) return oom(err);
    b_fixed *f = &b->fix[b->nfix];
    f->joint = joint;
    f->coord = coord;
    f->where = mbs_strdup(w);
    if (!f->where) return oom(err);
    b->nfix++;
    return MBS_OK;
}

int mbs_builder_set_assembly(mbs_builder *b, double tol, int max_iter, const char *where, mbs_error *err)
{
    if (!b) return mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_set_assembly: builder is NULL");
    if (!(tol > 0) || !isfinite(tol))
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: the assembly tolerance must be finite and > 0, got %g",
                             W(where), tol);
    if (max_iter < 1)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: the assembly iteration limit must be >= 1, got %d", W(where),
                             max_iter);
    b->asm_tol = tol;
    b->asm_maxit = max_iter;
    return MBS_OK;
}
