/*
 * bench_formulations.c - the closed-loop formulations side by side
 * (src/formulations/), against the thesis's CPU times (López Varela 2022,
 * Tables 7.3 and 7.11, Intel Core i7-8700 @ 3.2 GHz, single thread, MBSLIM
 * in Fortran; RTdyn0 = reference point at the CoM, RTdyn1 = at the origin):
 *
 *   five-bar (models/fivebar.json), 50 s at 1 ms, alpha = 1e9, varsigma = 1
 *   (thesis Table 7.2): ALI3-P 1.906 s (RTdyn0), 1.813 s (RTdyn1);
 *   Matrix R 2.406 s, 2.250 s.
 *   spatial slider-crank with spring (models/slider_crank.json), 5 s at
 *   1 ms, alpha = 1e10, varsigma = 1e-4 (Table 7.10): ALI3-P 0.156 s,
 *   Matrix R 0.297 s (both reference points).
 *
 * Every formulation with both reference points, plus penalty and index-1
 * (trapezoidal rule with its fixed point, and RK4), timed side by side
 * (interleaved repetitions, bench_common.h): one kernel = one complete
 * mbs_simulate run from the model's initial state (assembly included),
 * without statistics (as a plain simulation: no energy bookkeeping per
 * step). Also reported, from one more run with statistics: Newton
 * iterations per step (mean, max), force-tangent
 * evaluations (tangent sweeps), the speed-up over the thesis, and the
 * constraint violations and the largest relative change of the mechanical
 * energy of the run.
 *
 * Usage: bench_formulations [--quick] [--min-time S] [--reps N] [--clock cpu]
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

typedef struct {
    const char *label;
    mbs_loop_formulation loop;
    mbs_ref_point ref;
    int rk4;
    double thesis;          /* s, or 0 */
} variant;

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    mbs_sim_options o;
    mbs_sim_stats st;
    int stats;              /* request the statistics (the untimed run) */
    int rc;
} kctx;

/* One whole run. The timed runs request no statistics, as a plain
 * simulation would (mbs_simulate then skips the mechanical energy after
 * every step, which only the statistics report); the statistics printed
 * come from one identical run that requests them. */
static void k_sim(void *p)
{
    kctx *c = p;
    mbs_error err;
    c->rc = mbs_simulate(c->m, c->d, &c->o, NULL, NULL, NULL, NULL, c->stats ? &c->st : NULL, &err);
    if (c->rc) {
        fprintf(stderr, "bench_formulations: %s\n", err.msg);
        exit(2);
    }
    bench_sink = mbs_data_time(c->d);
}

static void run_model(const char *file, const char *title, double tf, double alpha, double vs,
                      const variant *v, int nv)
{
    mbs_model *m = bench_load_model(bench_model_path(NULL, file));
    kctx ctx[BENCH_MAX_KERNELS];
    bench_fn fns[BENCH_MAX_KERNELS];
    void *ps[BENCH_MAX_KERNELS];
    bench_result res[BENCH_MAX_KERNELS];
    for (int k = 0; k < nv; k++) {
        kctx *c = &ctx[k];
        c->m = m;
        c->d = bench_data(m);
        c->o = mbs_model_sim_options(m);
        c->o.loop = v[k].loop;
        c->o.ref = v[k].ref;
        c->o.t0 = 0;
        c->o.tf = tf;
        c->o.dt = 1e-3;
        c->o.penalty = alpha;
        c->o.proj_scale = vs;
        if (v[k].rk4) c->o.integrator = MBS_INTEGRATOR_RK4;
        fns[k] = k_sim;
        ps[k] = c;
        c->stats = 1;
        k_sim(c);   /* statistics of one run */
        c->stats = 0;
    }
    bench_time_many(nv, fns, ps, res, NULL);
    printf("\n## %s, %g s at 1 ms (%ld steps)\n\n", title, tf, ctx[0].st.steps);
    printf("| formulation | ref | time (s) | thesis (s) | speed-up | iterations/step (max) | tangent sweeps "
           "| max ‖Φ‖ | max ‖Φ̇‖ | max ΔE/E0 | spread |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < nv; k++) {
        const mbs_sim_stats *st = &ctx[k].st;
        const double s = res[k].median_ns * 1e-9;
        char th[32] = "", sp[32] = "";
        if (v[k].thesis > 0) {
            snprintf(th, sizeof th, "%.3f", v[k].thesis);
            snprintf(sp, sizeof sp, "%.1f×", v[k].thesis / s);
        }
        char it[48];
        if (v[k].rk4) snprintf(it, sizeof it, "(explicit)");
        else snprintf(it, sizeof it, "%.2f (%d)", st->iterations_mean, st->iterations_max);
        printf("| %s | %s | %.4f | %s | %s | %s | %ld | %.1e | %.1e | %.1e | %.0f %% |\n", v[k].label,
               mbs_ref_point_name(v[k].ref), s, th, sp, it, st->tangent_evals, st->violation[0], st->violation[1],
               st->energy_drift / fabs(st->energy0), bench_spread_pct(&res[k]));
        mbs_data_free(ctx[k].d);
    }
    mbs_model_free(m);
}

int main(int argc, char **argv)
{
    bench_parse_args(argc, argv, "");
    printf("# Closed-loop formulations (mbsens) against the thesis (i7-8700)\n\n");
    bench_print_machine(stdout, "");
    const variant fivebar[] = {
        { "ali3p", MBS_LOOP_ALI3P, MBS_REF_COM, 0, 1.906 },
        { "ali3p", MBS_LOOP_ALI3P, MBS_REF_ORIGIN, 0, 1.813 },
        { "matrixr", MBS_LOOP_MATRIXR, MBS_REF_COM, 0, 2.406 },
        { "matrixr", MBS_LOOP_MATRIXR, MBS_REF_ORIGIN, 0, 2.250 },
        { "penalty", MBS_LOOP_PENALTY, MBS_REF_COM, 0, 0 },
        { "index1 (trapezoidal)", MBS_LOOP_INDEX1, MBS_REF_COM, 0, 0 },
        { "index1 (rk4)", MBS_LOOP_INDEX1, MBS_REF_COM, 1, 0 },
    };
    run_model("fivebar.json", "Five-bar (thesis Table 7.3)", bench_cfg.quick ? 5 : 50, 1e9, 1, fivebar,
              (int)(sizeof fivebar / sizeof fivebar[0]));
    const variant slider[] = {
        { "ali3p", MBS_LOOP_ALI3P, MBS_REF_COM, 0, 0.156 },
        { "ali3p", MBS_LOOP_ALI3P, MBS_REF_ORIGIN, 0, 0.156 },
        { "matrixr", MBS_LOOP_MATRIXR, MBS_REF_COM, 0, 0.297 },
        { "matrixr", MBS_LOOP_MATRIXR, MBS_REF_ORIGIN, 0, 0.297 },
        { "penalty", MBS_LOOP_PENALTY, MBS_REF_COM, 0, 0 },
        { "index1 (trapezoidal)", MBS_LOOP_INDEX1, MBS_REF_COM, 0, 0 },
        { "index1 (rk4)", MBS_LOOP_INDEX1, MBS_REF_COM, 1, 0 },
    };
    run_model("slider_crank.json", "Spatial slider-crank with spring (thesis Table 7.11)", 5, 1e10, 1e-4, slider,
              (int)(sizeof slider / sizeof slider[0]));
    printf("\n");
    bench_print_footer(stdout);
    return 0;
}
