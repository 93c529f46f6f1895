/*
 * finish.c - mbs_builder_finish: the model from a builder's records, in
 * stages over a finish_ctx (builder_impl.h): the topology, the body order
 * (DFS preorder from the ground, children in the order of the bodies'
 * records), the model vector, the tree, the joints, points and vectors, the
 * time functions and force elements, the constraints, the design
 * parameters, then the initial configuration and the physical checks.
 *
 * Model vector layout (m->x):
 *   gravity (3)
 *   per body, ground included, in final order: mass (1), com (3), inertia (6)
 *   per point: 3; the named points grouped by body in final order (the
 *     ground first), each body's in the order added; then the anonymous
 *     points in the order of their first use by the tree joints (final
 *     order), the cut joints, the force elements and the drivers (anonymous
 *     points nothing uses are left out)
 *   per vector: 3; grouped by body in final order, each body's in the order
 *     added
 *   per joint 1..nb in final order: X_p (9), X_c (9)
 *   per cut joint (joints cut to open closed loops, in input order): X_p (9), X_c (9)
 *   per driving constraint with a linear law (in the order added): value, rate
 *   per time function (in the order added): its numbers (mbs_func_info)
 *   per force element (in the order added): its numbers (mbs_force_info)
 * The layout depends on the model, not on the order of the calls that
 * described it (beyond the order within each kind), so a model written as
 * JSON (mbs_model_to_json) and loaded again has the same model vector.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/algebra.h"
#include "builder/builder_impl.h"
#include "joints/joint.h"
#include "joints/manifold.h"
#include "joints/joint_tangent.h"

/* The order of the points in the model vector: the named points grouped
 * by body in the final body order (the ground first), each body's in the
 * order of their records; then the anonymous points in the order of their
 * first use by the tree joints (final order; parent side, then child side),
 * the cut joints (input order), the force elements and the drivers.
 * Anonymous points that nothing uses are left out. porder (np) gets the
 * handles; returns how many, *nnamed of them named (the first ones), or -1
 * if memory runs out. */
static int point_order(const mbs_builder *b, const int *order, const int *newidx, const int *pj, const int *cut,
                       int *porder, int *nnamed)
{
    int *first = calloc((size_t)b->nb + 2, sizeof *first);
    char *placed = calloc((size_t)b->np + 1, 1);
    if (!first || !placed) {
        free(first);
        free(placed);
        return -1;
    }
    int n = 0;
    for (int k = 0; k < b->np; k++)
        if (b->point[k].name) first[newidx[b->point[k].body] + 1]++;
    for (int i = 0; i <= b->nb; i++) first[i + 1] += first[i];
    for (int k = 0; k < b->np; k++)
        if (b->point[k].name) {
            porder[first[newidx[b->point[k].body]]++] = k;
            placed[k] = 1;
            n++;
        }
    *nnamed = n;
#define USE(h) do { int h_ = (h); if (h_ >= 0 && !placed[h_]) { placed[h_] = 1; porder[n++] = h_; } } while (0)
    for (int i = 1; i <= b->nb; i++) {
        USE(b->joint[pj[order[i]]].ppoint);
        USE(b->joint[pj[order[i]]].cpoint);
    }
    for (int k = 0; k < b->nj; k++)
        if (cut[k]) {
            USE(b->joint[k].ppoint);
            USE(b->joint[k].cpoint);
        }
    for (int k = 0; k < b->nforce; k++) {
        USE(b->force[k].point[0]);
        USE(b->force[k].point[1]);
    }
    for (int k = 0; k < b->ndrv; k++) {
        USE(b->drv[k].point[0]);
        USE(b->drv[k].point[1]);
    }
#undef USE
    free(first);
    free(placed);
    return n;
}

/* The order of the vectors in the model vector: grouped by body in the
 * final body order, each body's in the order added. 0, or -1 if memory runs
 * out. */
static int vector_order(const mbs_builder *b, const int *newidx, int *vorder)
{
    int *first = calloc((size_t)b->nb + 2, sizeof *first);
    if (!first) return -1;
    for (int k = 0; k < b->nv; k++) first[newidx[b->vector[k].body] + 1]++;
    for (int i = 0; i <= b->nb; i++) first[i + 1] += first[i];
    for (int k = 0; k < b->nv; k++) vorder[first[newidx[b->vector[k].body]]++] = k;
    free(first);
    return 0;
}

/* "BODY.NAME" (malloc'd) */
static char *qualified(const char *body, const char *name)
{
    size_t len = strlen(body) + strlen(name) + 2;
    char *s = malloc(len);
    if (s) snprintf(s, len, "%s.%s", body, name);
    return s;
}

/* m->point (porder[0 .. nnamed - 1]) and m->vector (vorder, at x[x_vec0 ..]). */
static int make_points_vectors(const finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    mbs_error *err = c->err;
    const int *porder = c->porder, *vorder = c->vorder, *point_x = c->point_x, *newidx = c->newidx;
    const int nnamed = c->nnamed, vec_x0 = c->x_vec0;
    if (nnamed > 0 && !(m->point = calloc((size_t)nnamed, sizeof *m->point))) return oom(err);
    for (int i = 0; i < nnamed; i++) {
        const b_point *bp = &b->point[porder[i]];
        mbs_point_info *pi = &m->point[m->npoint++];
        if (!(pi->name = qualified(b->body[bp->body].name, bp->name))) return oom(err);
        pi->body = newidx[bp->body];
        pi->x = point_x[porder[i]];
    }
    if (b->nv > 0 && !(m->vector = calloc((size_t)b->nv, sizeof *m->vector))) return oom(err);
    for (int i = 0; i < b->nv; i++) {
        const b_vector *bv = &b->vector[vorder[i]];
        mbs_vector_info *vi = &m->vector[m->nvector++];
        if (!(vi->name = qualified(b->body[bv->body].name, bv->name))) return oom(err);
        vi->body = newidx[bv->body];
        vi->x = vec_x0 + 3 * i;
    }
    return MBS_OK;
}

/* The stages of mbs_builder_finish, in order. Each returns MBS_OK or the
 * error it set in c->err. */

/* Scratch by handle. */
static int ctx_alloc(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    const size_t nb1 = (size_t)b->nb + 1;
    c->pj = malloc(nb1 * sizeof *c->pj);
    c->order = malloc(nb1 * sizeof *c->order);
    c->newidx = malloc(nb1 * sizeof *c->newidx);
    c->point_x = malloc(((size_t)b->np + 1) * sizeof *c->point_x);
    c->porder = malloc(((size_t)b->np + 1) * sizeof *c->porder);
    c->vorder = malloc(((size_t)b->nv + 1) * sizeof *c->vorder);
    c->cut = calloc((size_t)b->nj + 1, sizeof *c->cut);
    if (!c->cut || !c->porder || !c->vorder || !c->pj || !c->order || !c->newidx || !c->point_x)
        return oom(c->err);
    return MBS_OK;
}

static void ctx_free(finish_ctx *c)
{
    free(c->pj);
    free(c->order);
    free(c->newidx);
    free(c->point_x);
    free(c->porder);
    free(c->vorder);
    free(c->free_given);
    free(c->cut);
}

/* The final order of the bodies: DFS preorder from the ground, the
 * children of each body in handle (= input) order. */
static int body_order(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    const int nb = b->nb;
    int *kids = malloc(((size_t)nb + 1) * sizeof *kids);       /* children lists by handle */
    int *kfirst = malloc(((size_t)nb + 1) * sizeof *kfirst);
    int *kcount = calloc((size_t)nb + 1, sizeof *kcount);
    int *stack = malloc(((size_t)nb + 1) * sizeof *stack);
    int *fill = calloc((size_t)nb + 1, sizeof *fill);
    int rc = MBS_OK;
    if (!kids || !kfirst || !kcount || !stack || !fill) {
        rc = oom(c->err);
        goto done;
    }
    for (int h = 1; h <= nb; h++) kcount[b->joint[c->pj[h]].parent]++;
    for (int h = 0, s = 0; h <= nb; h++) {
        kfirst[h] = s;
        s += kcount[h];
    }
    for (int h = 1; h <= nb; h++) {
        int ph = b->joint[c->pj[h]].parent;
        kids[kfirst[ph] + fill[ph]++] = h;
    }
    int sp = 0, n = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        int h = stack[--sp];
        c->order[n] = h;
        c->newidx[h] = n++;
        for (int k = kcount[h] - 1; k >= 0; k--) stack[sp++] = kids[kfirst[h] + k];
    }
done:
    free(kids);
    free(kfirst);
    free(kcount);
    free(stack);
    free(fill);
    return rc;
}

/* The model object, its name and its body and joint tables. */
static int model_object(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m = calloc(1, sizeof *m);
    if (!m) return oom(c->err);
    m->nb = b->nb;
    m->name = mbs_strdup(b->name);
    m->source = b->source ? mbs_strdup(b->source) : NULL;
    m->body = calloc((size_t)b->nb + 1, sizeof *m->body);
    m->joint = calloc((size_t)b->nb + 1, sizeof *m->joint);
    if (!m->name || (b->source && !m->source) || !m->body || !m->joint) return oom(c->err);
    return MBS_OK;
}

/* The size of the model vector (layout at the top of this file). */
static int model_vector_size(const finish_ctx *c, int *ncut, int *ndrvlin)
{
    const mbs_builder *b = c->b;
    int nx = 3 + 10 * (b->nb + 1) + 3 * c->npoint + 3 * b->nv + 18 * b->nb;
    for (int k = 0; k < b->nforce; k++) nx += b->force[k].nnum;
    for (int k = 0; k < b->nfunc; k++) nx += b->func[k].n;
    *ncut = *ndrvlin = 0;
    for (int k = 0; k < b->nj; k++) *ncut += c->cut[k];
    for (int k = 0; k < b->ndrv; k++) *ndrvlin += b->drv[k].func < 0;
    return nx + 18 * *ncut + 2 * *ndrvlin;
}

/* The model vector up to the joint frames (gravity, bodies, points,
 * vectors, joint frames), and the offsets of what follows them. */
static int model_vector(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    const int nb = b->nb;
    c->npoint = point_order(b, c->order, c->newidx, c->pj, c->cut, c->porder, &c->nnamed);
    if (c->npoint < 0 || vector_order(b, c->newidx, c->vorder) != 0) return oom(c->err);
    int ncut, ndrvlin;
    m->nx = model_vector_size(c, &ncut, &ndrvlin);
    m->x = calloc((size_t)m->nx, sizeof *m->x);
    if (!m->x) return oom(c->err);
    double *x = m->x;
    int off = 0;
    m->x_gravity = off;
    memcpy(x + off, b->g, 3 * sizeof *x);
    off += 3;
    for (int i = 0; i <= nb; i++) {
        const b_body *bb = &b->body[c->order[i]];
        mbs_body_info *bi = &m->body[i];
        bi->name = mbs_strdup(bb->name);
        bi->where = mbs_strdup(bb->where ? bb->where : c->src);
        if (!bi->name || !bi->where) return oom(c->err);
        bi->x_mass = off;
        bi->x_com = off + 1;
        bi->x_inertia = off + 4;
        if (i > 0) {
            x[off] = bb->mass;
            memcpy(x + off + 1, bb->com, 3 * sizeof *x);
            memcpy(x + off + 4, bb->inertia, 6 * sizeof *x);
        }
        off += 10;
    }
    for (int k = 0; k < b->np; k++) c->point_x[k] = -1;
    for (int i = 0; i < c->npoint; i++) {
        c->point_x[c->porder[i]] = off;
        memcpy(x + off, b->point[c->porder[i]].xyz, 3 * sizeof *x);
        off += 3;
    }
    c->x_vec0 = off;
    for (int i = 0; i < b->nv; i++) {
        memcpy(x + off, b->vector[c->vorder[i]].xyz, 3 * sizeof *x);
        off += 3;
    }
    for (int i = 1; i <= nb; i++) {
        const b_joint *bj = &b->joint[c->pj[c->order[i]]];
        mbs_joint_info *ji = &m->joint[i];
        ji->x_Xp = off;
        memcpy(x + off, bj->Xp, 9 * sizeof *x);
        off += 9;
        ji->x_Xc = off;
        memcpy(x + off, bj->Xc, 9 * sizeof *x);
        off += 9;
    }
    c->x_cut0 = off;          /* cut joint frames (mbs_builder_finish_constraints) */
    off += 18 * ncut;
    c->x_drv0 = off;          /* linear driver laws */
    off += 2 * ndrvlin;
    c->off = off;
    return MBS_OK;
}

/* The tree: parents, depths, children, subtrees, branches. */
static int model_tree(finish_ctx *c)
{
    mbs_model *m = c->m;
    const int nb = m->nb;
    m->body[0].parent = -1;
    m->body[0].branch = -1;
    m->body[0].depth = 0;
    for (int i = 0; i <= nb; i++) {
        m->body[i].first_child = -1;
        m->body[i].next_sibling = -1;
    }
    for (int i = 1; i <= nb; i++) {
        int p = c->newidx[c->b->joint[c->pj[c->order[i]]].parent];
        m->body[i].parent = p;
        m->body[i].depth = m->body[p].depth + 1;
        if (m->body[i].depth > m->max_depth) m->max_depth = m->body[i].depth;
    }
    for (int i = nb; i >= 1; i--) {   /* prepend in reverse: siblings in order */
        int p = m->body[i].parent;
        m->body[i].next_sibling = m->body[p].first_child;
        m->body[p].first_child = i;
        m->body[p].nchildren++;
    }
    for (int i = nb; i >= 0; i--) {
        int e = i + 1;
        for (int ch = m->body[i].first_child; ch >= 0; ch = m->body[ch].next_sibling)
            if (m->body[ch].subtree_end > e) e = m->body[ch].subtree_end;
        m->body[i].subtree_end = e;
    }
    m->branch_first = malloc((size_t)nb * sizeof(int));
    m->branch_last = malloc((size_t)nb * sizeof(int));
    if (!m->branch_first || !m->branch_last) return oom(c->err);
    for (int i = 1; i <= nb; i++) {
        int p = m->body[i].parent;
        if (p == 0 || m->body[p].nchildren != 1) {
            m->branch_first[m->nbranch] = i;
            m->body[i].branch = m->nbranch++;
        } else {
            m->body[i].branch = m->body[p].branch;
        }
        m->branch_last[m->body[i].branch] = i;
    }
    return MBS_OK;
}

/* "JOINT.SUFFIX", or "JOINT" without a suffix, into a new string. */
static char *qualified_name(const char *joint, const char *suf)
{
    size_t len = strlen(joint) + (suf ? strlen(suf) + 1 : 0) + 1;
    char *s = malloc(len);
    if (!s) return NULL;
    if (suf) snprintf(s, len, "%s.%s", joint, suf);
    else snprintf(s, len, "%s", joint);
    return s;
}

/* The names of the coordinates (JOINT, or JOINT.SUFFIX) and of the
 * velocities: a joint whose velocities are rates names them like its
 * coordinates, a tangent joint JOINT.vx, .vy, .vz (floating), .wx, .wy, .wz. */
static int coordinate_names(finish_ctx *c)
{
    static const char *const tangent_suffix[6] = { "vx", "vy", "vz", "wx", "wy", "wz" };
    mbs_model *m = c->m;
    if (m->nq > 0 && !(m->coord_name = calloc((size_t)m->nq, sizeof *m->coord_name))) return oom(c->err);
    if (m->nv > 0 && !(m->vel_name = calloc((size_t)m->nv, sizeof *m->vel_name))) return oom(c->err);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *ji = &m->joint[i];
        for (int k = 0; k < ji->nq; k++)
            if (!(m->coord_name[ji->qoff + k] = qualified_name(ji->name, mbs_joint_coord_suffix(ji->type, k))))
                return oom(c->err);
        const int tg = ji->velocities == MBS_VELOCITIES_TANGENT;
        for (int k = 0; k < ji->nv; k++) {
            const char *suf = tg ? tangent_suffix[6 - ji->nv + k] : mbs_joint_coord_suffix(ji->type, k);
            if (!(m->vel_name[ji->voff + k] = qualified_name(ji->name, suf))) return oom(c->err);
        }
    }
    return MBS_OK;
}

/* The initial velocities of joint ji (nv, in its convention) from bj: v0 if
 * given, else the rates qd0, which a tangent joint maps by v = T^+ qdot
 * (docs/tangent-space.md §1.1; the T^+ of mbsens/manifold.h). The map
 * drops the component of pdot along p, which must then be 0 to round-off. */
static int initial_velocities(mbs_joint_info *ji, const b_joint *bj, mbs_error *err)
{
    memset(ji->qd0, 0, sizeof ji->qd0);
    if (bj->has_v0 >= 0) {
        if (bj->has_v0 != ji->nv)
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: v0 has %d values, this %s joint has %d "
                                 "velocities (%s)", bj->where, bj->name, bj->has_v0, mbs_joint_type_name(bj->type),
                                 ji->nv, ji->velocities == MBS_VELOCITIES_TANGENT ? "tangent" : "euler_rates");
        memcpy(ji->qd0, bj->v0, (size_t)ji->nv * sizeof *ji->qd0);
        return MBS_OK;
    }
    if (ji->velocities != MBS_VELOCITIES_TANGENT) {
        memcpy(ji->qd0, bj->qd0, sizeof ji->qd0);
        return MBS_OK;
    }
    const int e = ji->quat;
    const double *p = bj->q0 + e, *pd = bj->qd0 + e;
    const double dot = p[0] * pd[0] + p[1] * pd[1] + p[2] * pd[2] + p[3] * pd[3];
    const double npd = sqrt(pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3]);
    if (fabs(dot) > 1e-12 * npd)
        return mbs_error_set(err, MBS_ERR_MODEL, "%s: joint %s: qd0 of a joint with tangent velocities: the "
                             "Euler parameter rates have a component along p (p.pdot = %g, |pdot| = %g; must be 0 "
                             "within 1e-12 |pdot|): give v0 instead", bj->where, bj->name, dot, npd);
    /* w = 2 G(p) pdot / |p|^2, G(p) pdot = -pd0 e + e0 ed - e x ed; nu = R^T tdot
     * with the joint's rotation R = A(p / |p|) */
    tj_quat_omega(p, pd, ji->qd0 + (e == 3 ? 3 : 0));
    if (e == 3) {
        double R[9];
        mbs_quat_rotation(p, R);
        m3_mtv(ji->qd0, R, bj->qd0);
    }
    return MBS_OK;
}

/* The tree joints and their coordinates. */
static int model_joints(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    m->joint[0].type = MBS_JOINT_FIXED;
    m->joint[0].parent = -1;
    m->joint[0].euler = m->joint[0].quat = -1;
    m->joint[0].x_ppoint = m->joint[0].x_cpoint = m->joint[0].x_Xp = m->joint[0].x_Xc = -1;
    int nq = 0, nv = 0, ndof = 0, neul = 0, nquat = 0;
    for (int i = 1; i <= m->nb; i++) {
        const b_joint *bj = &b->joint[c->pj[c->order[i]]];
        mbs_joint_info *ji = &m->joint[i];
        ji->name = mbs_strdup(bj->name);
        ji->where = mbs_strdup(bj->where);
        if (!ji->name || !ji->where) return oom(c->err);
        ji->type = bj->type;
        ji->parent = m->body[i].parent;
        ji->child = i;
        ji->qoff = nq;
        ji->voff = nv;
        ji->nq = mbs_joint_type_nq(bj->type);
        ji->ndof = mbs_joint_type_ndof(bj->type);
        const mbs_joint_ops *ops = mbs_joint_ops_of(bj->type, bj->velocities);
        ji->euler = ops->euler;
        ji->velocities = ops->tangent ? MBS_VELOCITIES_TANGENT : MBS_VELOCITIES_EULER_RATES;
        ji->nv = ops->nv;
        ji->quat = ops->quat;
        ji->frame_kind = (int)ops->frame_kind;
        ji->x_ppoint = c->point_x[bj->ppoint];
        ji->x_cpoint = c->point_x[bj->cpoint];
        memcpy(ji->q0, bj->q0, sizeof ji->q0);
        int rc = initial_velocities(ji, bj, c->err);
        if (rc) return rc;
        nq += ji->nq;
        nv += ji->nv;
        ndof += ji->ndof;
        if (ji->euler >= 0) neul++;
        if (ji->quat >= 0) nquat++;
    }
    m->n_euler = neul;
    m->n_quat = nquat;
    m->nq = nq;
    m->nv = nv;
    m->ndof = ndof;
    return coordinate_names(c);
}

/* The time functions (x: after the joint frames). */
static int model_functions(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    if (b->nfunc > 0) {
        m->func = calloc((size_t)b->nfunc, sizeof *m->func);
        if (!m->func) return oom(c->err);
    }
    for (int k = 0; k < b->nfunc; k++) {
        const b_func *bf = &b->func[k];
        mbs_func_info *fi = &m->func[m->nfunc++];
        fi->name = mbs_strdup(bf->name);
        fi->where = mbs_strdup(bf->where);
        if (!fi->name || !fi->where) return oom(c->err);
        fi->type = bf->type;
        fi->variant = bf->variant;
        fi->x = c->off;
        fi->nx = bf->n;
        memcpy(m->x + c->off, bf->num, (size_t)bf->n * sizeof *m->x);
        c->off += bf->n;
        if (bf->type == MBS_FUNC_SPLINE) {
            fi->n = bf->n;
            fi->t = malloc((size_t)bf->n * sizeof *fi->t);
            fi->coef = malloc(6 * (size_t)bf->n * sizeof *fi->coef);
            if (!fi->t || !fi->coef) return oom(c->err);
            memcpy(fi->t, bf->t, (size_t)bf->n * sizeof *fi->t);
            memcpy(fi->coef, bf->coef, 6 * (size_t)bf->n * sizeof *fi->coef);
        }
    }
    return MBS_OK;
}

/* Where force element fi's numbers sit in x (from off), by its type. */
static void force_offsets(mbs_force_info *fi, const b_force *bf, int off)
{
    fi->x_stiffness = fi->x_damping = fi->x_free = fi->x_value = fi->x_torque = -1;
    switch (bf->type) {
    case MBS_FORCE_SPRING_DAMPER:
    case MBS_FORCE_JOINT_SPRING:
        fi->x_stiffness = off;
        fi->x_damping = off + 1;
        fi->x_free = off + 2;
        break;
    case MBS_FORCE_JOINT_FORCE:
        fi->x_value = off;
        break;
    case MBS_FORCE_CONTACT_PLANE:
    case MBS_FORCE_TIRE:
        fi->x_stiffness = off;
        fi->x_damping = off + 2;   /* the hysteresis factor chi */
        fi->shape = bf->shape;
        break;
    default:
        fi->x_value = off;
        fi->x_torque = off + 3;
        break;
    }
}

/* The force elements (x: after the time functions). */
static int model_forces(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    if (b->nforce > 0) {
        m->force = calloc((size_t)b->nforce, sizeof *m->force);
        c->free_given = calloc((size_t)b->nforce, sizeof *c->free_given);
        if (!m->force || !c->free_given) return oom(c->err);
    }
    for (int k = 0; k < b->nforce; k++) {
        const b_force *bf = &b->force[k];
        mbs_force_info *fi = &m->force[m->nforce++];
        fi->name = mbs_strdup(bf->name);
        fi->where = mbs_strdup(bf->where);
        if (!fi->name || !fi->where) return oom(c->err);
        fi->type = bf->type;
        fi->func = bf->func;
        fi->body_axes = bf->body_axes;
        fi->x = c->off;
        fi->nx = bf->nnum;
        memcpy(m->x + c->off, bf->num, (size_t)bf->nnum * sizeof *m->x);
        fi->body[0] = fi->body[1] = -1;
        fi->x_point[0] = fi->x_point[1] = -1;
        fi->joint = fi->coord = fi->vel = -1;
        for (int s = 0; s < 2; s++) {
            if (bf->body[s] < 0) continue;
            fi->body[s] = c->newidx[bf->body[s]];
            fi->x_point[s] = bf->point[s] >= 0 ? c->point_x[bf->point[s]] : m->body[fi->body[s]].x_com;
        }
        if (bf->joint >= 0) {
            fi->joint = c->newidx[b->joint[bf->joint].child];
            const mbs_joint_info *ji = &m->joint[fi->joint];
            if (ji->velocities == MBS_VELOCITIES_TANGENT)
                return mbs_error_set(c->err, MBS_ERR_MODEL,
                                     "%s: %s %s on coordinate %s of joint %s, whose velocities are tangent: not "
                                     "supported (its coordinates are not velocities); use a spring_damper or a "
                                     "body_load, or \"velocities\": \"euler_rates\" on the joint", bf->where,
                                     bf->type == MBS_FORCE_JOINT_SPRING ? "joint_spring" : "joint_force", bf->name,
                                     m->coord_name[ji->qoff + bf->coord], ji->name);
            fi->coord = ji->qoff + bf->coord;
            fi->vel = ji->voff + bf->coord;
        }
        force_offsets(fi, bf, c->off);
        c->free_given[k] = bf->free_given;
        c->off += bf->nnum;
    }
    return MBS_OK;
}

/* The index in x of parameter target bt. */
static int target_index(const finish_ctx *c, const b_target *bt)
{
    const mbs_model *m = c->m;
    switch (bt->kind) {
    case T_GRAVITY: return m->x_gravity + bt->comp;
    case T_MASS: return m->body[c->newidx[bt->handle]].x_mass;
    case T_COM: return m->body[c->newidx[bt->handle]].x_com + bt->comp;
    case T_INERTIA: return m->body[c->newidx[bt->handle]].x_inertia + bt->comp;
    case T_FORCE: return m->force[bt->handle].x + bt->comp;
    case T_FUNC: return m->func[bt->handle].x + bt->comp;
    default: return c->point_x[bt->handle] + bt->comp;
    }
}

/* The design parameters and their targets, applied; every value they set
 * must be finite. */
static int model_params(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    if (b->npar > 0) {
        m->param = calloc((size_t)b->npar, sizeof *m->param);
        if (!m->param) return oom(c->err);
    }
    for (int k = 0; k < b->npar; k++) {
        const b_param *bp = &b->param[k];
        mbs_param_info *pi = &m->param[m->nparam++];
        if (bp->nt == 0)
            return mbs_error_set(c->err, MBS_ERR_MODEL, "%s: parameter %s sets nothing (give at least one target)",
                                 bp->where, bp->name);
        pi->name = mbs_strdup(bp->name);
        pi->value = bp->value;
        pi->lower = bp->lower;
        pi->upper = bp->upper;
        pi->target = malloc((size_t)bp->nt * sizeof *pi->target);
        pi->scale = malloc((size_t)bp->nt * sizeof *pi->scale);
        pi->offset = malloc((size_t)bp->nt * sizeof *pi->offset);
        pi->target_name = calloc((size_t)bp->nt, sizeof *pi->target_name);
        if (!pi->name || !pi->target || !pi->scale || !pi->offset || !pi->target_name) return oom(c->err);
        pi->ntargets = bp->nt;
        for (int t = 0; t < bp->nt; t++) {
            const b_target *bt = &bp->t[t];
            pi->target[t] = target_index(c, bt);
            pi->scale[t] = bt->scale;
            pi->offset[t] = bt->offset;
            pi->target_name[t] = mbs_strdup(bt->text);
            if (!pi->target_name[t]) return oom(c->err);
        }
    }
    mbs_model_apply_params(m);
    for (int k = 0; k < b->npar; k++)
        for (int t = 0; t < b->param[k].nt; t++) {
            double v = m->x[m->param[k].target[t]];
            if (!isfinite(v))
                return mbs_error_set(c->err, MBS_ERR_MODEL, "%s: parameter %s sets %s to %g", b->param[k].t[t].where,
                                     b->param[k].name, b->param[k].t[t].text, v);
        }
    return MBS_OK;
}

mbs_model *mbs_builder_finish(mbs_builder *b, mbs_error *err)
{
    if (!b) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_builder_finish: builder is NULL");
        return NULL;
    }
    const char *src = b->source ? b->source : b->name;
    if (!finite_n(b->g, 3)) {
        mbs_error_set(err, MBS_ERR_MODEL, "%s: gravity is not finite (%g, %g, %g)", src, b->g[0], b->g[1], b->g[2]);
        return NULL;
    }
    if (b->nb < 1) {
        mbs_error_set(err, MBS_ERR_MODEL, "%s: the model has no moving body", src);
        return NULL;
    }
    finish_ctx c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.err = err;
    c.src = src;
    int rc = ctx_alloc(&c);
    if (rc == MBS_OK) rc = mbs_builder_topology(b, c.pj, c.cut, err);
    if (rc == MBS_OK) rc = body_order(&c);
    if (rc == MBS_OK) rc = model_object(&c);
    if (rc == MBS_OK) rc = model_vector(&c);
    if (rc == MBS_OK) rc = model_tree(&c);
    if (rc == MBS_OK) rc = model_joints(&c);
    if (rc == MBS_OK) rc = make_points_vectors(&c);
    if (rc == MBS_OK) rc = model_functions(&c);
    if (rc == MBS_OK) rc = model_forces(&c);
    if (rc == MBS_OK) rc = mbs_builder_finish_constraints(&c);
    if (rc == MBS_OK) rc = model_params(&c);
    if (rc == MBS_OK) rc = mbs_builder_finish_initial(&c);
    ctx_free(&c);
    if (rc == MBS_OK) return c.m;
    mbs_model_free(c.m);
    return NULL;
}
