/*
 * model_compare.c - whether two models are the same model (model_compare.h):
 * every size, name, index, offset and flag of the model's structures, and
 * every number bit for bit (the model vector, initial states, spline knots
 * and factors, parameters, simulation settings, objective terms).
 */
#include <math.h>
#include <string.h>

#include "model_compare.h"
#include "mbs_testing.h"

typedef struct cmp {
    const char *label;
    int ndiff;
} cmp;

/* one CHECK per difference, the first 10 of them printed */
#define SAME(c, cond, ...) do { \
    const int same_ = (cond); \
    if (!same_) { \
        if ((c)->ndiff++ < 10) CHECK(same_, __VA_ARGS__); \
        else mbs_test_fail++; \
    } } while (0)

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_bits(const void *a, const void *b, size_t n)
{
    return n == 0 || (a && b && memcmp(a, b, n) == 0);
}

static void compare_bodies_joints(cmp *c, const mbs_model *a, const mbs_model *b)
{
    for (int i = 0; i <= a->nb; i++) {
        const mbs_body_info *p = &a->body[i], *q = &b->body[i];
        SAME(c, same_str(p->name, q->name) && p->parent == q->parent && p->first_child == q->first_child &&
                    p->next_sibling == q->next_sibling && p->depth == q->depth && p->branch == q->branch &&
                    p->subtree_end == q->subtree_end && p->x_mass == q->x_mass && p->x_com == q->x_com &&
                    p->x_inertia == q->x_inertia,
             "%s: body %d (%s / %s)", c->label, i, p->name, q->name);
    }
    for (int i = 1; i <= a->nb; i++) {
        const mbs_joint_info *p = &a->joint[i], *q = &b->joint[i];
        SAME(c, same_str(p->name, q->name) && p->type == q->type && p->parent == q->parent && p->child == q->child &&
                    p->qoff == q->qoff && p->nq == q->nq && p->euler == q->euler && p->voff == q->voff &&
                    p->nv == q->nv && p->quat == q->quat && p->velocities == q->velocities && p->x_ppoint == q->x_ppoint &&
                    p->x_cpoint == q->x_cpoint && p->x_Xp == q->x_Xp && p->x_Xc == q->x_Xc &&
                    same_bits(p->q0, q->q0, sizeof p->q0) && same_bits(p->qd0, q->qd0, sizeof p->qd0) &&
                    p->has_limit == q->has_limit && p->has_dynamics == q->has_dynamics,
             "%s: joint %d (%s / %s)", c->label, i, p->name, q->name);
        const double la[6] = { p->lower, p->upper, p->effort, p->velocity, p->damping, p->friction };
        const double lb[6] = { q->lower, q->upper, q->effort, q->velocity, q->damping, q->friction };
        if (p->has_limit || p->has_dynamics)
            SAME(c, same_bits(la, lb, sizeof la), "%s: joint %s: limit or dynamics", c->label, p->name);
    }
    for (int k = 0; k < a->nq; k++)
        SAME(c, same_str(a->coord_name[k], b->coord_name[k]), "%s: coordinate %d: %s / %s", c->label, k,
             a->coord_name[k], b->coord_name[k]);
    for (int k = 0; k < a->npoint; k++)
        SAME(c, same_str(a->point[k].name, b->point[k].name) && a->point[k].body == b->point[k].body &&
                    a->point[k].x == b->point[k].x,
             "%s: point %d: %s / %s", c->label, k, a->point[k].name, b->point[k].name);
    for (int k = 0; k < a->nvector; k++)
        SAME(c, same_str(a->vector[k].name, b->vector[k].name) && a->vector[k].body == b->vector[k].body &&
                    a->vector[k].x == b->vector[k].x,
             "%s: vector %d: %s / %s", c->label, k, a->vector[k].name, b->vector[k].name);
    for (int k = 0; k < a->nbranch; k++)
        SAME(c, a->branch_first[k] == b->branch_first[k] && a->branch_last[k] == b->branch_last[k],
             "%s: branch %d", c->label, k);
}

static void compare_params(cmp *c, const mbs_model *a, const mbs_model *b)
{
    for (int k = 0; k < a->nparam; k++) {
        const mbs_param_info *p = &a->param[k], *q = &b->param[k];
        int same = same_str(p->name, q->name) && p->ntargets == q->ntargets &&
                   same_bits(&p->value, &q->value, sizeof p->value) &&
                   same_bits(&p->lower, &q->lower, sizeof p->lower) && same_bits(&p->upper, &q->upper, sizeof p->upper);
        for (int t = 0; same && t < p->ntargets; t++)
            same = p->target[t] == q->target[t] && same_bits(&p->scale[t], &q->scale[t], sizeof(double)) &&
                   same_bits(&p->offset[t], &q->offset[t], sizeof(double)) &&
                   same_str(p->target_name[t], q->target_name[t]);
        SAME(c, same, "%s: parameter %d (%s / %s)", c->label, k, p->name, q->name);
    }
}

static void compare_elements(cmp *c, const mbs_model *a, const mbs_model *b)
{
    for (int k = 0; k < a->nfunc; k++) {
        const mbs_func_info *p = &a->func[k], *q = &b->func[k];
        size_t n = (size_t)p->n;
        SAME(c, same_str(p->name, q->name) && p->type == q->type && p->variant == q->variant && p->x == q->x &&
                    p->nx == q->nx && p->n == q->n && same_bits(p->t, q->t, n * sizeof *p->t) &&
                    same_bits(p->coef, q->coef, 6 * n * sizeof *p->coef) &&
                    same_bits(p->mom, q->mom, n * sizeof *p->mom),
             "%s: function %d (%s / %s)", c->label, k, p->name, q->name);
    }
    for (int k = 0; k < a->nforce; k++) {
        const mbs_force_info *p = &a->force[k], *q = &b->force[k];
        SAME(c, same_str(p->name, q->name) && p->type == q->type && p->body[0] == q->body[0] &&
                    p->body[1] == q->body[1] && p->x_point[0] == q->x_point[0] && p->x_point[1] == q->x_point[1] &&
                    p->joint == q->joint && p->coord == q->coord && p->vel == q->vel && p->x == q->x && p->nx == q->nx &&
                    p->x_stiffness == q->x_stiffness && p->x_damping == q->x_damping && p->x_free == q->x_free &&
                    p->x_value == q->x_value && p->x_torque == q->x_torque && p->func == q->func &&
                    p->body_axes == q->body_axes && p->shape == q->shape &&
                    same_bits(&p->eps, &q->eps, sizeof p->eps) && same_bits(&p->l_init, &q->l_init, sizeof p->l_init),
             "%s: force %d (%s / %s)", c->label, k, p->name, q->name);
    }
}

static void compare_constraints(cmp *c, const mbs_model *a, const mbs_model *b)
{
    const mbs_model_con *p = &a->con, *q = &b->con;
    SAME(c, p->ncut == q->ncut && p->ndriver == q->ndriver && p->nloop_rows == q->nloop_rows &&
                p->nfixed == q->nfixed && same_bits(&p->tol, &q->tol, sizeof p->tol) && p->max_iter == q->max_iter,
         "%s: constraint sizes or assembly settings", c->label);
    if (p->ncut != q->ncut || p->ndriver != q->ndriver || p->nfixed != q->nfixed) return;
    for (int k = 0; k < p->ncut; k++) {
        const mbs_cut_info *u = &p->cut[k], *v = &q->cut[k];
        SAME(c, same_str(u->name, v->name) && u->type == v->type && u->body[0] == v->body[0] &&
                    u->body[1] == v->body[1] && u->x_ppoint == v->x_ppoint && u->x_cpoint == v->x_cpoint &&
                    u->x_Xp == v->x_Xp && u->x_Xc == v->x_Xc && u->user == v->user && u->row == v->row &&
                    u->nrows == v->nrows && u->nloop == v->nloop &&
                    same_bits(u->loop, v->loop, (size_t)u->nloop * sizeof *u->loop),
             "%s: cut joint %d (%s / %s)", c->label, k, u->name, v->name);
    }
    for (int k = 0; k < p->ndriver; k++) {
        const mbs_driver_info *u = &p->driver[k], *v = &q->driver[k];
        SAME(c, same_str(u->name, v->name) && u->type == v->type && u->coord == v->coord && u->body[0] == v->body[0] &&
                    u->body[1] == v->body[1] && u->x_point[0] == v->x_point[0] && u->x_point[1] == v->x_point[1] &&
                    u->func == v->func && u->x == v->x && u->row == v->row,
             "%s: driver %d (%s / %s)", c->label, k, u->name, v->name);
    }
    SAME(c, same_bits(p->fixed, q->fixed, (size_t)p->nfixed * sizeof *p->fixed), "%s: assembly.fixed", c->label);
    int rows = p->nloop_rows + p->ndriver + a->n_euler;
    for (int r = 0; r < rows; r++)
        SAME(c, same_str(p->row_name[r], q->row_name[r]), "%s: constraint row %d: %s / %s", c->label, r,
             p->row_name[r], q->row_name[r]);
}

static void compare_sim(cmp *c, const mbs_model *a, const mbs_model *b)
{
    const mbs_sim_options *o = &a->sim.options, *p = &b->sim.options;
    const double da[] = { o->t0, o->dt, o->tf, o->tolerance, o->rtol, o->atol, o->penalty, o->proj_scale,
                          o->proj_tol, o->lambda_factor, o->omega, o->xi };
    const double db[] = { p->t0, p->dt, p->tf, p->tolerance, p->rtol, p->atol, p->penalty, p->proj_scale,
                          p->proj_tol, p->lambda_factor, p->omega, p->xi };
    SAME(c, a->sim.present == b->sim.present, "%s: simulation section", c->label);
    if (a->sim.present && b->sim.present)   /* else the options are not used (mbs_model_sim_options) */
        SAME(c, o->formulation == p->formulation && o->ref == p->ref &&
                o->integrator == p->integrator && o->solver == p->solver && o->max_iterations == p->max_iterations &&
                o->tangent_update == p->tangent_update && o->cvodes_method == p->cvodes_method &&
                o->cvodes_max_steps == p->cvodes_max_steps && o->project == p->project && o->tangent == p->tangent &&
                o->loop == p->loop && o->projection == p->projection && o->tangent_keep == p->tangent_keep &&
                    o->baumgarte == p->baumgarte && o->ndofs == p->ndofs && same_bits(da, db, sizeof da),
             "%s: simulation settings", c->label);
    SAME(c, a->sim.noutput == b->sim.noutput, "%s: %d / %d outputs", c->label, a->sim.noutput, b->sim.noutput);
    for (int k = 0; k < a->sim.noutput && a->sim.noutput == b->sim.noutput; k++)
        SAME(c, a->sim.output[k].kind == b->sim.output[k].kind && a->sim.output[k].point == b->sim.output[k].point &&
                a->sim.output[k].body == b->sim.output[k].body,
             "%s: output %d", c->label, k);
    SAME(c, a->nobj == b->nobj, "%s: %d / %d objectives", c->label, a->nobj, b->nobj);
    for (int k = 0; k < a->nobj && a->nobj == b->nobj; k++) {
        const mbs_objective_info *u = &a->obj[k], *v = &b->obj[k];
        int same = same_str(u->name, v->name) && u->nterm == v->nterm && u->nintegral == v->nintegral;
        for (int t = 0; same && t < u->nterm; t++) {
            const mbs_objective_term *x = &u->term[t], *y = &v->term[t];
            same = x->quantity == y->quantity && x->point == y->point && x->coord == y->coord && x->body == y->body &&
                   x->vector == y->vector && x->component == y->component && x->squared == y->squared &&
                   x->nref == y->nref && same_bits(&x->weight, &y->weight, sizeof x->weight) &&
                   same_bits(x->ref, y->ref, sizeof x->ref) && same_bits(x->func, y->func, sizeof x->func);
        }
        SAME(c, same, "%s: objective %d (%s / %s)", c->label, k, u->name, v->name);
    }
}

int mbs_test_same_model(const mbs_model *a, const mbs_model *b, const char *label)
{
    cmp c = { label, 0 };
    SAME(&c, a->nb == b->nb && a->nq == b->nq && a->ndof == b->ndof && a->nx == b->nx && a->npoint == b->npoint &&
                 a->nvector == b->nvector && a->nparam == b->nparam && a->nforce == b->nforce &&
                 a->nfunc == b->nfunc && a->n_euler == b->n_euler && a->nv == b->nv && a->n_quat == b->n_quat &&
                 a->nbranch == b->nbranch &&
                 a->max_depth == b->max_depth && a->x_gravity == b->x_gravity,
         "%s: sizes: nb %d/%d nq %d/%d nx %d/%d points %d/%d vectors %d/%d params %d/%d forces %d/%d funcs %d/%d",
         label, a->nb, b->nb, a->nq, b->nq, a->nx, b->nx, a->npoint, b->npoint, a->nvector, b->nvector, a->nparam,
         b->nparam, a->nforce, b->nforce, a->nfunc, b->nfunc);
    if (c.ndiff) return c.ndiff;
    SAME(&c, same_str(a->name, b->name) && a->lenient_inertia == b->lenient_inertia, "%s: name or lenient_inertia",
         label);
    for (int k = 0; k < a->nx && c.ndiff < 10; k++)
        SAME(&c, same_bits(&a->x[k], &b->x[k], sizeof a->x[k]), "%s: x[%d] = %.17g / %.17g", label, k, a->x[k],
             b->x[k]);
    compare_bodies_joints(&c, a, b);
    compare_params(&c, a, b);
    compare_elements(&c, a, b);
    compare_constraints(&c, a, b);
    compare_sim(&c, a, b);
    if (c.ndiff == 0) mbs_test_pass++;
    return c.ndiff;
}
