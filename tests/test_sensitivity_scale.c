/*
 * test_sensitivity_scale.c - a design parameter's units do not change its
 * gradient (docs/sensitivity.md, "Parameters").
 *
 * A parameter rho sets x_t = s_t rho + o_t. Expressed in other units,
 * rho' = rho / c with scales c s_t, the model vector is the same and the
 * gradient is dpsi/drho' = c dpsi/drho. The methods on fixed steps (DDM,
 * DAVM, the closed loops' CAVM) are linear in a parameter's direction
 * dx = sum_t s_t e_t: every state sensitivity of the DDM, every product of
 * an adjoint with a parameter column, scales with c. With c a power of
 * two, every floating-point operation on a column scales exactly (its
 * rounding does not change while no value leaves the normal range, down
 * to 2e-308), so the gradient in the new units is c times the old one
 * BIT FOR BIT: the tolerance is zero. Any step that is not linear in
 * the direction (an absolute threshold, or a difference like
 * A(p + dp) - A(p - dp) whose rounding is eps |p|, not eps |dp|) breaks
 * the equality for small c. c = 2^-34 (~5.8e-11) is a stiffness of order
 * 1e10 given in N/m^1.5 (the anchor lift, docs/benchmarks.md); c = 2^34
 * the opposite.
 *
 * Regression: the rotation tangent of Euler parameters took that central
 * difference; along a DDM column of size ~1e-21 (the anchor's hull
 * stiffness in N/m^1.5) p + dp rounded to p, the column's rotation tangents
 * vanished, and dpsi/dK of the hoist-force objective came out at -4.7
 * times its value (DAVM and central differences: +8.3e-15).
 *
 * Models: tests/models/spring_tree.json (spherical, revolute, cardan
 * joints; force elements; parameters and objectives of every kind), with
 * the semi-recursive DDM and DAVM and the fully recursive (RK4) DDM; random
 * closed loops (tests/random_loops.c: every joint type in the tree, Euler
 * parameters included, force elements and parameters of every kind), with
 * the DDM, DAVM and CAVM of ALI3-P (penalty and iterative projections) and
 * Matrix R, the two closed-loop formulations with sensitivities of their
 * own (penalty and index-1 have only finite differences). The open trees'
 * CAVM is left out: CVODES chooses its steps from absolute tolerances on
 * the adjoint and its quadratures, so its gradient depends on the units
 * through the step sizes, within its tolerance (spring_tree: 1.8e-8 and
 * 4.4e-8 of the row's largest entry at 2^-34 and 2^34).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mbs_testing.h"
#include "random_loops.h"

/* every parameter of m in units c times larger (rho' = rho / c, scales c s_t); x is unchanged */
static void rescale(mbs_model *m, double c)
{
    for (int j = 0; j < m->nparam; j++) {
        mbs_param_info *p = &m->param[j];
        p->value /= c;
        p->lower /= c;
        p->upper /= c;
        for (int t = 0; t < p->ntargets; t++) p->scale[t] *= c;
    }
}

/* may_fail: a failure is printed, not counted (a random draw whose forward run fails) */
static int run(const mbs_model *m, const mbs_sim_options *sim, mbs_sens_method meth, int may_fail,
               mbs_sens_result *res)
{
    mbs_sens_options o = mbs_sens_options_default(m);
    o.sim = *sim;
    o.method = meth;
    mbs_error err;
    memset(&err, 0, sizeof err);
    memset(res, 0, sizeof *res);
    const int rc = mbs_sensitivity(m, &o, res, &err);
    if (may_fail && rc != MBS_OK) printf("    %s fails: %s\n", mbs_sens_method_name(meth), err.msg);
    else CHECK(rc == MBS_OK, "%s: %s", mbs_sens_method_name(meth), err.msg);
    return rc;
}

/* The gradients of method meth in the model's units and in units c times larger: entry by entry
 * b_ij = c a_ij exactly, and psi the same; returns the number of entries that differ (printed),
 * -1 if the first run fails (allowed with may_fail) */
static int compare_units(mbs_model *m, const mbs_sim_options *sim, mbs_sens_method meth, double c,
                         int may_fail, const char *label)
{
    mbs_sens_result a, b;
    int bad = -1;
    if (run(m, sim, meth, may_fail, &a) == MBS_OK) {
        rescale(m, c);
        const int rc = run(m, sim, meth, 0, &b);
        rescale(m, 1 / c);
        if (rc == MBS_OK) {
            bad = 0;
            double worst = 0;
            const int np = a.nparam;
            for (int i = 0; i < a.nobj; i++) {
                bad += a.psi[i] != b.psi[i];
                double big = 1e-300;
                for (int j = 0; j < np; j++) big = fmax(big, fabs(a.grad[i * np + j]));
                for (int j = 0; j < np; j++) {
                    const double x = a.grad[i * np + j], y = b.grad[i * np + j] / c;
                    if (x == y) continue;
                    bad++;
                    worst = fmax(worst, fabs(x - y) / big);
                    if (bad <= 3)
                        printf("    %s %s, units x %g: objective %d, %s: %.17g and %.17g / c\n", label,
                               mbs_sens_method_name(meth), c, i, mbs_param_name(m, j), x, y);
                }
            }
            printf("  %s %s, units x %g: %d of %d entries differ (worst %.1e of the row's largest)\n", label,
                   mbs_sens_method_name(meth), c, bad, a.nobj * np, worst);
            CHECK(bad == 0, "%s %s: the gradient depends on the units (x %g): %d entries", label,
                  mbs_sens_method_name(meth), c, bad);
        }
        mbs_sens_result_free(&b);
    }
    mbs_sens_result_free(&a);
    return bad;
}

static void open_tree(void)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_model *m = mbs_model_load(mbs_test_path("tests/models/spring_tree.json"), &err);
    CHECK(m != NULL, "spring_tree.json: %s", err.msg);
    if (!m) return;
    CHECK(m->n_euler > 0, "spring_tree.json has Euler parameters");
    mbs_sim_options sim = mbs_model_sim_options(m);
    sim.tf = 0.05;
    sim.dt = 1e-3;
    const double cs[2] = { 0x1p-34, 0x1p34 };
    for (int k = 0; k < 2; k++) {
        sim.formulation = MBS_FD_SEMI_RECURSIVE;
        compare_units(m, &sim, MBS_SENS_DDM, cs[k], 0, "spring_tree semi");
        compare_units(m, &sim, MBS_SENS_DAVM, cs[k], 0, "spring_tree semi");
        sim.formulation = MBS_FD_RECURSIVE;
        compare_units(m, &sim, MBS_SENS_DDM, cs[k], 0, "spring_tree fr (rk4)");
    }
    mbs_model_free(m);
}

/* objectives on the points p of bodies 1 and nb and on the generalized force of the first
 * coordinate that is not an Euler parameter (if any) */
static int add_objectives(mbs_model *m, int nb)
{
    int qk = -1;
    for (int i = 1; i <= m->nb && qk < 0; i++)
        for (int c = 0; c < m->joint[i].nq && qk < 0; c++)
            if (m->joint[i].euler < 0 || c < m->joint[i].euler || c >= m->joint[i].euler + 4) qk = m->joint[i].qoff + c;
    char force[256] = "";
    if (qk >= 0)
        snprintf(force, sizeof force,
                 ",{\"name\": \"force\", \"integral\": [{\"coordinate\": \"%s\", \"quantity\": \"force\"}]}",
                 m->coord_name[qk]);
    char s[1024];
    snprintf(s, sizeof s,
             "[{\"name\": \"pos\", \"integral\": [{\"point\": \"b1.p\", \"quantity\": \"position\","
             " \"reference\": [0.1, -0.2, 0.3]}]},"
             "{\"name\": \"vel\", \"integral\": [{\"point\": \"b%d.p\", \"quantity\": \"velocity\"}],"
             " \"terminal\": [{\"point\": \"b%d.p\", \"quantity\": \"acceleration\", \"weight\": 0.001}]}"
             "%s]",
             nb, nb, force);
    return mbs_test_add_objectives(m, s, "scale objectives");
}

/* One draw of a closed loop with a cut of type `type` and Euler parameters in its tree, checked
 * with every closed-loop method; 0 if it has none or a forward run fails (redrawn). */
static int loop_draw(mbs_rng *rng, int it, int type)
{
    const int nb = 2 + mbs_rng_int(rng, 3);
    const double tf = 0.02;
    mbs_test_loops_options o = { it % 2, 1, 1, tf, 1 };
    double *qc = NULL;
    mbs_model *m = mbs_test_random_loops_ex(rng, nb, 1, &type, &o, &qc);
    free(qc);
    if (!m) return 0;
    int ok = m->n_euler > 0 && add_objectives(m, nb) == MBS_OK;
    mbs_sim_options sim = mbs_sim_options_default();
    sim.tf = tf;
    sim.dt = 1e-3;
    sim.tolerance = 1e-10;
    char label[96];
    for (int f = 0; f < 3 && ok; f++) {
        sim.loop = f < 2 ? MBS_LOOP_ALI3P : MBS_LOOP_MATRIXR;
        sim.projection = f == 1 ? MBS_PROJ_ITERATIVE : MBS_PROJ_PENALTY;
        snprintf(label, sizeof label, "loops %d (%d bodies, %s cut) %s%s", it, nb,
                 mbs_joint_type_name((mbs_joint_type)type), mbs_loop_formulation_name(sim.loop),
                 f == 1 ? " (iterative)" : "");
        /* a draw whose forward run fails (a locked or singular loop) is redrawn */
        ok = compare_units(m, &sim, MBS_SENS_DDM, 0x1p-34, 1, label) >= 0;
        if (ok) compare_units(m, &sim, MBS_SENS_DAVM, 0x1p-34, 0, label);
        if (ok) compare_units(m, &sim, MBS_SENS_CAVM, 0x1p-34, 0, label);
    }
    mbs_model_free(m);
    return ok;
}

/* closed loops: for each cut type, draws until one with Euler parameters in its tree ran */
static void random_loops(void)
{
    static const int cut_types[6] = { MBS_JOINT_REVOLUTE, MBS_JOINT_PRISMATIC, MBS_JOINT_CYLINDRICAL,
                                      MBS_JOINT_CARDAN, MBS_JOINT_SPHERICAL, MBS_JOINT_PLANAR };
    mbs_rng rng;
    mbs_rng_seed(&rng, 20261128);
    for (int k = 0, it = 0; k < 6; k++) {
        int ran = 0;
        for (int tries = 0; tries < 40 && !ran; tries++) ran = loop_draw(&rng, it++, cut_types[k]);
        CHECK(ran, "no random closed loop with a %s cut and Euler parameters ran",
              mbs_joint_type_name((mbs_joint_type)cut_types[k]));
    }
}

int main(void)
{
    open_tree();
    random_loops();
    return mbs_test_summary("test_sensitivity_scale");
}
