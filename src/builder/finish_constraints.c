/*
 * finish_constraints.c - the constraints of the model being finished
 * (builder_impl.h: mbs_builder_finish_constraints): the cut joints (frames
 * at x[x_cut0 ..], 18 each) and their loops, the drivers (linear laws at
 * x[x_drv0 ..], 2 each), the Euler-parameter rows, the assembly settings
 * and the row names, in that order of the rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_impl.h"
#include "model/constraint_model.h"

/* Force elements cannot act on the coordinates of a cut joint. */
static int check_cut_forces(const finish_ctx *c)
{
    const mbs_builder *b = c->b;
    for (int k = 0; k < b->nforce; k++) {
        const b_force *f = &b->force[k];
        if (f->joint >= 0 && c->cut[f->joint])
            return mbs_error_set(c->err, MBS_ERR_MODEL,
                                 "%s: force %s acts on joint %s, which is cut to open a closed loop and has no "
                                 "coordinates (mark another joint of the loop \"cut\": true)",
                                 f->where, f->name, b->joint[f->joint].name);
    }
    return MBS_OK;
}

/* The loop of cut ci: side 0 up to the common ancestor, then down to side
 * 1 (up: scratch of 2 (max_depth + 2) entries). */
static int cut_loop(const mbs_model *m, mbs_cut_info *ci, int *up)
{
    int a = ci->body[0], c = ci->body[1], na = 0, nc = 0;
    int *pa = up, *pc = up + m->max_depth + 2;
    while (m->body[a].depth > m->body[c].depth) { pa[na++] = a; a = m->body[a].parent; }
    while (m->body[c].depth > m->body[a].depth) { pc[nc++] = c; c = m->body[c].parent; }
    while (a != c) {
        pa[na++] = a;
        a = m->body[a].parent;
        pc[nc++] = c;
        c = m->body[c].parent;
    }
    pa[na++] = a;
    ci->nloop = na + nc;
    ci->loop = malloc((size_t)ci->nloop * sizeof *ci->loop);
    if (!ci->loop) return -1;
    for (int i = 0; i < na; i++) ci->loop[i] = pa[i];
    for (int i = 0; i < nc; i++) ci->loop[na + i] = pc[nc - 1 - i];
    return 0;
}

/* The cut joints, in input order, and their loops; *rows: the loop rows. */
static int build_cuts(finish_ctx *c, int *rows)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    mbs_model_con *con = &m->con;
    int ncut = 0;
    for (int k = 0; k < b->nj; k++) ncut += c->cut[k];
    if (ncut > 0) {
        con->cut = calloc((size_t)ncut, sizeof *con->cut);
        if (!con->cut) return oom(c->err);
    }
    int *up = malloc(((size_t)m->max_depth + 2) * 2 * sizeof *up);
    if (!up) return oom(c->err);
    for (int k = 0; k < b->nj; k++) {
        if (!c->cut[k]) continue;
        const b_joint *bj = &b->joint[k];
        mbs_cut_info *ci = &con->cut[con->ncut];
        const int idx = con->ncut++;
        ci->name = mbs_strdup(bj->name);
        ci->where = mbs_strdup(bj->where);
        if (!ci->name || !ci->where) {
            free(up);
            return oom(c->err);
        }
        ci->type = bj->type;
        ci->body[0] = c->newidx[bj->parent];
        ci->body[1] = c->newidx[bj->child];
        ci->x_ppoint = c->point_x[bj->ppoint];
        ci->x_cpoint = c->point_x[bj->cpoint];
        ci->x_Xp = c->x_cut0 + 18 * idx;
        ci->x_Xc = ci->x_Xp + 9;
        memcpy(m->x + ci->x_Xp, bj->Xp, 9 * sizeof *m->x);
        memcpy(m->x + ci->x_Xc, bj->Xc, 9 * sizeof *m->x);
        ci->user = bj->cut;
        ci->row = *rows;
        ci->nrows = mbs_cut_type_nrows(bj->type);
        *rows += ci->nrows;
        if (cut_loop(m, ci, up) != 0) {
            free(up);
            return oom(c->err);
        }
    }
    free(up);
    con->nloop_rows = *rows;
    return MBS_OK;
}

/* The driving constraints, in the order added, one row each after the
 * loop rows. */
static int build_drivers(finish_ctx *c, int *rows)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    mbs_model_con *con = &m->con;
    if (b->ndrv > 0) {
        con->driver = calloc((size_t)b->ndrv, sizeof *con->driver);
        if (!con->driver) return oom(c->err);
    }
    int nlin = 0;
    for (int k = 0; k < b->ndrv; k++) {
        const b_driver *bd = &b->drv[k];
        mbs_driver_info *di = &con->driver[con->ndriver++];
        di->name = mbs_strdup(bd->name);
        di->where = mbs_strdup(bd->where);
        if (!di->name || !di->where) return oom(c->err);
        di->type = bd->type;
        di->coord = -1;
        di->body[0] = di->body[1] = -1;
        di->x_point[0] = di->x_point[1] = -1;
        di->func = bd->func;
        di->x = -1;
        di->row = (*rows)++;
        if (bd->func < 0) {
            di->x = c->x_drv0 + 2 * nlin++;
            m->x[di->x] = bd->value;
            m->x[di->x + 1] = bd->rate;
        }
        if (bd->type == MBS_DRIVER_COORDINATE) {
            if (c->cut[bd->joint])
                return mbs_error_set(c->err, MBS_ERR_MODEL,
                                     "%s: constraint %s drives joint %s, which is cut to open a closed loop and has "
                                     "no coordinates (mark another joint of the loop \"cut\": true)",
                                     bd->where, bd->name, b->joint[bd->joint].name);
            const b_joint *bj = &b->joint[bd->joint];
            if (bj->velocities == MBS_VELOCITIES_TANGENT)
                return mbs_error_set(c->err, MBS_ERR_MODEL,
                                     "%s: constraint %s drives coordinate %s.%s of joint %s, whose velocities are "
                                     "tangent: not supported (q_k - f(t) is not a row of velocity components); "
                                     "use \"velocities\": \"euler_rates\" on the joint", bd->where, bd->name,
                                     bj->name, mbs_joint_coord_suffix(bj->type, bd->coord), bj->name);
            di->coord = m->joint[c->newidx[bj->child]].qoff + bd->coord;
        } else {
            for (int s = 0; s < 2; s++) {
                di->body[s] = c->newidx[b->point[bd->point[s]].body];
                di->x_point[s] = c->point_x[bd->point[s]];
            }
        }
    }
    return MBS_OK;
}

/* The assembly settings and the coordinates held fixed. */
static int build_assembly(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    mbs_model_con *con = &m->con;
    con->tol = b->asm_tol > 0 ? b->asm_tol : 1e-10;
    con->max_iter = b->asm_maxit > 0 ? b->asm_maxit : 50;
    int nfixed = 0;
    for (int k = 0; k < b->nfix; k++) {
        const b_fixed *f = &b->fix[k];
        if (c->cut[f->joint])
            return mbs_error_set(c->err, MBS_ERR_MODEL,
                                 "%s: joint %s is cut to open a closed loop and has no coordinates to hold fixed "
                                 "(mark another joint of the loop \"cut\": true)", f->where, b->joint[f->joint].name);
        if (b->joint[f->joint].velocities == MBS_VELOCITIES_TANGENT)
            return mbs_error_set(c->err, MBS_ERR_MODEL,
                                 "%s: assembly.fixed holds joint %s, whose velocities are tangent: not yet "
                                 "implemented (the kinematic problems take Euler-parameter rates only); use "
                                 "\"velocities\": \"euler_rates\" on the joint", f->where, b->joint[f->joint].name);
        nfixed += f->coord < 0 ? mbs_joint_type_nq(b->joint[f->joint].type) : 1;
    }
    if (nfixed > 0) {
        con->fixed = malloc((size_t)nfixed * sizeof *con->fixed);
        if (!con->fixed) return oom(c->err);
    }
    char *held = nfixed > 0 ? calloc((size_t)m->nq + 1, 1) : NULL;
    if (nfixed > 0 && !held) return oom(c->err);
    for (int k = 0; k < b->nfix; k++) {
        const b_fixed *f = &b->fix[k];
        const mbs_joint_info *ji = &m->joint[c->newidx[b->joint[f->joint].child]];
        for (int cq = 0; cq < ji->nq; cq++) {
            if (f->coord >= 0 && cq != f->coord) continue;
            int q = ji->qoff + cq;
            if (!held[q]) con->fixed[con->nfixed++] = q;
            held[q] = 1;
        }
    }
    free(held);
    return MBS_OK;
}

/* The names of the rows: loops, drivers, Euler parameters. */
static int name_rows(finish_ctx *c, int rows)
{
    mbs_model *m = c->m;
    mbs_model_con *con = &m->con;
    if (rows > 0) {
        con->row_name = calloc((size_t)rows, sizeof *con->row_name);
        if (!con->row_name) return oom(c->err);
    }
    char buf[512];
    for (int k = 0; k < con->ncut; k++) {
        const mbs_cut_info *ci = &con->cut[k];
        for (int r = 0; r < ci->nrows; r++) {
            snprintf(buf, sizeof buf, "loop %s: %s", ci->name, mbs_cut_row_suffix(ci->type, r));
            if (!(con->row_name[ci->row + r] = mbs_strdup(buf))) return oom(c->err);
        }
    }
    for (int k = 0; k < con->ndriver; k++) {
        snprintf(buf, sizeof buf, "driver %s", con->driver[k].name);
        if (!(con->row_name[con->driver[k].row] = mbs_strdup(buf))) return oom(c->err);
    }
    for (int e = 0; e < m->n_euler; e++) {
        snprintf(buf, sizeof buf, "euler %s", m->joint[con->euler_joint[e]].name);
        if (!(con->row_name[con->nloop_rows + con->ndriver + e] = mbs_strdup(buf))) return oom(c->err);
    }
    return MBS_OK;
}

int mbs_builder_finish_constraints(finish_ctx *c)
{
    mbs_model *m = c->m;
    int rows = 0, rc = check_cut_forces(c);
    if (rc == MBS_OK) rc = build_cuts(c, &rows);
    if (rc == MBS_OK) rc = build_drivers(c, &rows);
    if (rc != MBS_OK) return rc;
    /* Euler-parameter normalization rows */
    if (m->n_euler > 0) {
        m->con.euler_joint = malloc((size_t)m->n_euler * sizeof *m->con.euler_joint);
        if (!m->con.euler_joint) return oom(c->err);
        for (int i = 1, e = 0; i <= m->nb; i++)
            if (m->joint[i].euler >= 0) m->con.euler_joint[e++] = i;
    }
    rows += m->n_euler;
    rc = build_assembly(c);
    return rc == MBS_OK ? name_rows(c, rows) : rc;
}
