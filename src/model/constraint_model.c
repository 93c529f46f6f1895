/*
 * constraint_model.c - closed loops and driving constraints: model
 * accessors (mbsens/constraints.h), row names, release and copy.
 */
#include <stdlib.h>
#include <string.h>

#include "model/constraint_model.h"
#include "model/model_util.h"

static const char *const sfx_point[] = { "point x", "point y", "point z" };
static const char *const sfx_axis[] = { "axis x", "axis y", "axis z" };
static const char *const sfx_line[] = { "line x", "line y", "line z" };
static const char *const sfx_ref[] = { "ref x", "ref y", "ref z" };

int mbs_cut_type_nrows(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_FIXED: return 9;
    case MBS_JOINT_REVOLUTE: return 6;
    case MBS_JOINT_PRISMATIC: return 9;
    case MBS_JOINT_CYLINDRICAL: return 6;
    case MBS_JOINT_CARDAN: return 4;
    case MBS_JOINT_SPHERICAL: return 3;
    case MBS_JOINT_PLANAR: return 4;
    case MBS_JOINT_FLOATING: return 0;
    default: return -1;
    }
}

/* Same order as the equations in src/constraints/constraint_*.c. */
const char *mbs_cut_row_suffix(mbs_joint_type t, int r)
{
    if (r < 0 || r >= mbs_cut_type_nrows(t)) return "?";
    const int g = r / 3, k = r % 3;
    switch (t) {
    case MBS_JOINT_SPHERICAL: return sfx_point[k];
    case MBS_JOINT_REVOLUTE: return g == 0 ? sfx_point[k] : sfx_axis[k];
    case MBS_JOINT_CYLINDRICAL: return g == 0 ? sfx_axis[k] : sfx_line[k];
    case MBS_JOINT_PRISMATIC: return g == 0 ? sfx_axis[k] : g == 1 ? sfx_line[k] : sfx_ref[k];
    case MBS_JOINT_CARDAN: return r == 3 ? "cross" : sfx_point[k];
    case MBS_JOINT_PLANAR: return r == 3 ? "plane" : sfx_axis[k];
    case MBS_JOINT_FIXED: return g == 0 ? sfx_point[k] : g == 1 ? sfx_axis[k] : sfx_ref[k];
    default: return "?";
    }
}

int mbs_con_nrows(const mbs_model *m) { return m->con.nloop_rows + m->con.ndriver + m->n_euler; }

int mbs_model_nconstraints(const mbs_model *m) { return m ? mbs_con_nrows(m) : 0; }
int mbs_model_nloop_constraints(const mbs_model *m) { return m ? m->con.nloop_rows : 0; }
int mbs_model_ndriver_constraints(const mbs_model *m) { return m ? m->con.ndriver : 0; }
int mbs_model_neuler_constraints(const mbs_model *m) { return m ? m->n_euler : 0; }

int mbs_model_ncuts(const mbs_model *m) { return m ? m->con.ncut : 0; }

static const mbs_cut_info *cut_at(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->con.ncut ? &m->con.cut[k] : NULL;
}

const char *mbs_cut_name(const mbs_model *m, int k)
{
    const mbs_cut_info *c = cut_at(m, k);
    return c ? c->name : NULL;
}

mbs_joint_type mbs_cut_type(const mbs_model *m, int k)
{
    const mbs_cut_info *c = cut_at(m, k);
    return c ? c->type : MBS_JOINT_TYPE_COUNT;
}

int mbs_cut_body(const mbs_model *m, int k, int side)
{
    const mbs_cut_info *c = cut_at(m, k);
    return c && (side == 0 || side == 1) ? c->body[side] : -1;
}

int mbs_cut_frames(const mbs_model *m, int k, double P0[3], double X0[9], double P1[3], double X1[9])
{
    const mbs_cut_info *c = cut_at(m, k);
    if (!c) return MBS_ERR_ARG;
    if (P0) memcpy(P0, m->x + c->x_ppoint, 3 * sizeof *P0);
    if (X0) memcpy(X0, m->x + c->x_Xp, 9 * sizeof *X0);
    if (P1) memcpy(P1, m->x + c->x_cpoint, 3 * sizeof *P1);
    if (X1) memcpy(X1, m->x + c->x_Xc, 9 * sizeof *X1);
    return MBS_OK;
}

int mbs_cut_row(const mbs_model *m, int k)
{
    const mbs_cut_info *c = cut_at(m, k);
    return c ? c->row : -1;
}

int mbs_cut_nrows(const mbs_model *m, int k)
{
    const mbs_cut_info *c = cut_at(m, k);
    return c ? c->nrows : -1;
}

int mbs_cut_user(const mbs_model *m, int k)
{
    const mbs_cut_info *c = cut_at(m, k);
    return c ? c->user : 0;
}

int mbs_cut_loop(const mbs_model *m, int k, const int **bodies)
{
    const mbs_cut_info *c = cut_at(m, k);
    if (bodies) *bodies = c ? c->loop : NULL;
    return c ? c->nloop : 0;
}

int mbs_cut_find(const mbs_model *m, const char *name)
{
    if (!m || !name) return -1;
    for (int k = 0; k < m->con.ncut; k++)
        if (strcmp(m->con.cut[k].name, name) == 0) return k;
    return -1;
}

int mbs_model_ndrivers(const mbs_model *m) { return m ? m->con.ndriver : 0; }

const char *mbs_driver_name(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->con.ndriver ? m->con.driver[k].name : NULL;
}

mbs_driver_type mbs_driver_type_of(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->con.ndriver ? (mbs_driver_type)m->con.driver[k].type : MBS_DRIVER_TYPE_COUNT;
}

int mbs_driver_row(const mbs_model *m, int k)
{
    return m && k >= 0 && k < m->con.ndriver ? m->con.driver[k].row : -1;
}

const char *mbs_constraint_name(const mbs_model *m, int row)
{
    if (!m || row < 0 || row >= mbs_con_nrows(m) || !m->con.row_name) return NULL;
    return m->con.row_name[row];
}

int mbs_model_assembly_fixed(const mbs_model *m, const int **fixed)
{
    if (fixed) *fixed = m ? m->con.fixed : NULL;
    return m ? m->con.nfixed : 0;
}

void mbs_model_assembly_settings(const mbs_model *m, double *tol, int *max_iter)
{
    if (tol) *tol = m ? m->con.tol : 0;
    if (max_iter) *max_iter = m ? m->con.max_iter : 0;
}

void mbs_con_model_free(mbs_model *m)
{
    mbs_model_con *c = &m->con;
    for (int k = 0; c->cut && k < c->ncut; k++) {
        free(c->cut[k].name);
        free(c->cut[k].where);
        free(c->cut[k].loop);
    }
    for (int k = 0; c->driver && k < c->ndriver; k++) {
        free(c->driver[k].name);
        free(c->driver[k].where);
    }
    if (c->row_name)
        for (int k = 0; k < mbs_con_nrows(m); k++) free(c->row_name[k]);
    free(c->cut);
    free(c->driver);
    free(c->row_name);
    free(c->euler_joint);
    free(c->fixed);
    memset(c, 0, sizeof *c);
}

int mbs_con_model_copy(mbs_model *c, const mbs_model *m)
{
    const mbs_model_con *s = &m->con;
    mbs_model_con *d = &c->con;
    memset(d, 0, sizeof *d);
    d->nloop_rows = s->nloop_rows;
    d->tol = s->tol;
    d->max_iter = s->max_iter;
    const int nrows = mbs_con_nrows(m);
    /* the row count of c must match while its arrays are partial: count
     * drivers as they are copied, and keep n_euler (already in c) */
    if (s->ncut > 0 && !(d->cut = calloc((size_t)s->ncut, sizeof *d->cut))) goto oom;
    for (int k = 0; k < s->ncut; k++) {
        mbs_cut_info *t = &d->cut[k];
        *t = s->cut[k];
        t->name = mbs_strdup(s->cut[k].name);
        t->where = mbs_strdup(s->cut[k].where);
        t->loop = malloc((size_t)(s->cut[k].nloop > 0 ? s->cut[k].nloop : 1) * sizeof *t->loop);
        d->ncut = k + 1;
        if (!t->name || !t->where || !t->loop) goto oom;
        memcpy(t->loop, s->cut[k].loop, (size_t)s->cut[k].nloop * sizeof *t->loop);
    }
    if (s->ndriver > 0 && !(d->driver = calloc((size_t)s->ndriver, sizeof *d->driver))) goto oom;
    for (int k = 0; k < s->ndriver; k++) {
        mbs_driver_info *t = &d->driver[k];
        *t = s->driver[k];
        t->name = mbs_strdup(s->driver[k].name);
        t->where = mbs_strdup(s->driver[k].where);
        d->ndriver = k + 1;
        if (!t->name || !t->where) goto oom;
    }
    if (m->n_euler > 0) {
        if (!(d->euler_joint = malloc((size_t)m->n_euler * sizeof *d->euler_joint))) goto oom;
        memcpy(d->euler_joint, s->euler_joint, (size_t)m->n_euler * sizeof *d->euler_joint);
    }
    if (s->nfixed > 0) {
        if (!(d->fixed = malloc((size_t)s->nfixed * sizeof *d->fixed))) goto oom;
        memcpy(d->fixed, s->fixed, (size_t)s->nfixed * sizeof *d->fixed);
        d->nfixed = s->nfixed;
    }
    if (nrows > 0 && s->row_name) {
        d->ndriver = s->ndriver;
        if (!(d->row_name = calloc((size_t)nrows, sizeof *d->row_name))) goto oom;
        for (int k = 0; k < nrows; k++)
            if (!(d->row_name[k] = mbs_strdup(s->row_name[k]))) goto oom;
    }
    return 0;
oom:
    return -1;
}
