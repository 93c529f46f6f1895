/*
 * bench_sensitivity.c - wall time of the trajectory-sensitivity methods,
 * measured side by side in one run (median of a few runs each; whole
 * analyses are long enough for wall-clock timing).
 *
 *  1. Parameter sweep (thesis Table 7.27 style): a floating body pushed by
 *     a spline force, p = 32 .. 1000 knot values as parameters, 0.5 s at
 *     1 ms: time of each method against p, and the growth from 32 to 1000.
 *  2. Each method as a ratio to the plain simulation and to central finite
 *     differences (2p + 1 simulations) on the open-tree test model.
 *  3. The five-bar (thesis §7.1), 5 s at 1 ms, when the closed-loop
 *     formulations are available: the thesis's DDM took 0.719 s (i7-8700).
 *  4. Parameter sweep on a closed loop: the five-bar with a crank torque
 *     given by a spline of p knots (tests/models/fivebar_torque.json with
 *     its knots replaced), p = 32 .. 1000, 0.5 s at 1 ms: the closed-loop
 *     adjoints against p.
 *
 * Usage: bench_sensitivity [sweep|loops] [--quick] [--clock cpu] ...; with
 * "sweep" section 1 only, with "loops" section 4 only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench_common.h"

static double time_method(const mbs_model *m, mbs_sens_options *o, int reps, double *psi0)
{
    double best[8];
    int n = 0;
    for (int r = 0; r < reps && r < 8; r++) {
        mbs_sens_result res;
        mbs_error err;
        double t0 = bench_now_ns();
        if (mbs_sensitivity(m, o, &res, &err) != MBS_OK) {
            printf("  (%s failed: %s)\n", mbs_sens_method_name(o->method), err.msg);
            return NAN;
        }
        best[n++] = (bench_now_ns() - t0) * 1e-9;
        if (psi0) *psi0 = res.psi[0];
        bench_sink = res.grad[0];
        mbs_sens_result_free(&res);
    }
    /* median */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (best[j] < best[i]) { double t = best[i]; best[i] = best[j]; best[j] = t; }
    return best[n / 2];
}

static double time_simulation(const mbs_model *m, const mbs_sim_options *so, int reps)
{
    double t[8];
    for (int r = 0; r < reps && r < 8; r++) {
        mbs_data *d = bench_data(m);
        mbs_error err;
        double t0 = bench_now_ns();
        bench_check(mbs_simulate(m, d, so, NULL, NULL, NULL, NULL, NULL, &err), d, "simulate");
        t[r] = (bench_now_ns() - t0) * 1e-9;
        mbs_data_free(d);
    }
    for (int i = 0; i < reps; i++)
        for (int j = i + 1; j < reps; j++)
            if (t[j] < t[i]) { double x = t[i]; t[i] = t[j]; t[j] = x; }
    return t[reps / 2];
}

/* tests/models/fivebar_torque.json with p knots on [0, tf] as its u parameters */
static mbs_model *fivebar_knots(int p, double tf)
{
    const char *path = bench_model_path(NULL, "../tests/models/fivebar_torque.json");
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        printf("%s:%d:%d: %s\n", path, je.line, je.column, je.text);
        return NULL;
    }
    json_t *fn = json_array_get(json_object_get(root, "functions"), 0), *times = json_array(), *vals = json_array();
    for (int k = 0; k < p; k++) {
        json_array_append_new(times, json_real(tf * k / (p - 1)));
        json_array_append_new(vals, json_real(0));
    }
    json_object_set_new(fn, "times", times);
    json_object_set_new(fn, "values", vals);
    json_t *params = json_object_get(root, "parameters"), *kept = json_array();
    for (size_t i = 0; i < json_array_size(params); i++) {
        json_t *pi = json_array_get(params, i);
        if (json_string_value(json_object_get(pi, "name"))[0] != 'u') json_array_append(kept, pi);
    }
    for (int k = 0; k < p; k++) {
        char name[32], target[48];
        snprintf(name, sizeof name, "u%d", k);
        snprintf(target, sizeof target, "u.values[%d]", k);
        json_array_append_new(kept, json_pack("{s:s, s:f, s:[s]}", "name", name, "value", 0.0, "sets", target));
    }
    json_object_set_new(root, "parameters", kept);
    char *js = json_dumps(root, 0);
    json_decref(root);
    mbs_error err;
    mbs_model *m = js ? mbs_model_load_string(js, "fivebar_knots", &err) : NULL;
    free(js);
    if (!m) printf("fivebar_knots: %s\n", err.msg);
    return m;
}

/* the floating body of section 1 with p knots */
static mbs_model *spline_body(int p, double tf)
{
    mbs_error err;
    char *js = mbs_generate_spline_body_json(p, tf, &err);
    mbs_model *m = js ? mbs_model_load_string(js, "spline_body", &err) : NULL;
    free(js);
    if (!m) printf("model: %s\n", err.msg);
    return m;
}

/* A method of a sweep: its formulation (open trees) or loop formulation (closed loops, loop >= 0). */
typedef struct {
    mbs_sens_method meth;
    mbs_fd_algorithm form;
    int loop;
    const char *name;
} sweep_method;

/* Sections 1 and 4: each method's time against the number of knots p, 0.5 s at 1 ms, and the growth
 * from the first p to the last. The plain simulation with sim_form (open trees) or the model's own. */
static int sweep(const char *title, mbs_model *(*make)(int p, double tf), const sweep_method *M, int nM,
                 int sim_semi, int reps)
{
    static const int P[] = { 32, 100, 200, 500, 1000 };
    const int nP = bench_cfg.quick ? 2 : 5;
    const double tf = 0.5;
    double T[5][8];
    printf("\n## %s, %.1f s at 1 ms (seconds)\n\n| p | simulation |", title, tf);
    for (int k = 0; k < nM; k++) printf(" %s |", M[k].name);
    printf("\n|---|---|");
    for (int k = 0; k < nM; k++) printf("---|");
    printf("\n");
    for (int i = 0; i < nP; i++) {
        mbs_model *m = make(P[i], tf);
        if (!m) return 2;
        mbs_sens_options o = mbs_sens_options_default(m);
        o.sim.tf = tf;
        o.sim.dt = 1e-3;
        mbs_sim_options so = o.sim;
        if (sim_semi) so.formulation = MBS_FD_SEMI_RECURSIVE;
        printf("| %d | %.3f |", P[i], time_simulation(m, &so, reps));
        fflush(stdout);
        for (int k = 0; k < nM; k++) {
            o.method = M[k].meth;
            o.sim.formulation = M[k].form;
            if (M[k].loop >= 0) o.sim.loop = (mbs_loop_formulation)M[k].loop;
            /* the DDM is linear in p: one repetition for the large sizes */
            int rr = (M[k].meth == MBS_SENS_DDM && P[i] > 200) ? 1 : reps;
            T[i][k] = time_method(m, &o, rr, NULL);
            printf(" %.3f |", T[i][k]);
            fflush(stdout);
        }
        printf("\n");
        mbs_model_free(m);
    }
    printf("\nGrowth of the time from p = %d to p = %d:", P[0], P[nP - 1]);
    for (int k = 0; k < nM; k++) printf(" %s %.2fx;", M[k].name, T[nP - 1][k] / T[0][k]);
    printf(" (knots grow %.1fx)\n", (double)P[nP - 1] / P[0]);
    return 0;
}

/* section 4: the closed-loop adjoints against the number of knots */
static int loops_sweep(int reps)
{
    const sweep_method M[] = {
        { MBS_SENS_DDM, MBS_FD_SEMI_RECURSIVE, MBS_LOOP_ALI3P, "ali3p ddm" },
        { MBS_SENS_DAVM, MBS_FD_SEMI_RECURSIVE, MBS_LOOP_ALI3P, "ali3p davm" },
        { MBS_SENS_DAVM, MBS_FD_SEMI_RECURSIVE, MBS_LOOP_MATRIXR, "matrixr davm" },
        { MBS_SENS_CAVM, MBS_FD_SEMI_RECURSIVE, MBS_LOOP_ALI3P, "cavm" },
    };
    return sweep("Parameter sweep on a closed loop: five-bar, crank torque spline with p knots (p + 6 parameters)",
                 fivebar_knots, M, 4, 0, reps);
}

int main(int argc, char **argv)
{
    const char *only = bench_parse_args(argc, argv, "  sweep            section 1 only (the parameter sweep)\n"
                                                    "  loops            section 4 only (the closed-loop sweep)\n");
    if (only && strcmp(only, "sweep") && strcmp(only, "loops")) {
        fprintf(stderr, "bench_sensitivity: unknown argument '%s' (expected: sweep or loops)\n", only);
        return 2;
    }
    const int reps = bench_cfg.quick ? 1 : 3;
    printf("# bench_sensitivity: trajectory-sensitivity methods\n");
    bench_print_machine(stdout, "# ");
    if (only && !strcmp(only, "loops")) {
        int rc = loops_sweep(reps);
        printf("\n");
        bench_print_footer(stdout);
        return rc;
    }

    /* ---- 1. parameter sweep ---- */
    const sweep_method M[] = {
        { MBS_SENS_DDM, MBS_FD_SEMI_RECURSIVE, -1, "ddm semi" },
        { MBS_SENS_DDM, MBS_FD_RECURSIVE, -1, "ddm fr" },
        { MBS_SENS_DAVM, MBS_FD_SEMI_RECURSIVE, -1, "davm" },
        { MBS_SENS_CAVM, MBS_FD_RECURSIVE, -1, "cavm" },
    };
    const int nM = 4;
    if (sweep("Parameter sweep: floating body, spline force with p knots", spline_body, M, nM, 1, reps)) return 2;
    if (only) {
        printf("\n");
        bench_print_footer(stdout);
        return 0;
    }

    /* ---- 2. ratios on the open-tree test model ---- */
    {
        const char *path = bench_model_path(NULL, "../tests/models/spring_tree.json");
        mbs_model *m = bench_load_model(path);
        mbs_sens_options o = mbs_sens_options_default(m);
        o.sim.tf = 1;
        o.sim.dt = 1e-3;
        mbs_sim_options so = o.sim;
        so.formulation = MBS_FD_SEMI_RECURSIVE;
        double tsim = time_simulation(m, &so, reps);
        printf("\n## Methods on tests/models/spring_tree.json (3 bodies, 7 coordinates, p = %d, 5 objectives), 1 s at 1 ms\n\n",
               mbs_model_nparams(m));
        printf("| method | seconds | / simulation | / fd |\n|---|---|---|---|\n");
        o.method = MBS_SENS_FD;
        o.sim.formulation = MBS_FD_SEMI_RECURSIVE;
        double tfd = time_method(m, &o, reps, NULL);
        for (int k = 0; k < nM; k++) {
            o.method = M[k].meth;
            o.sim.formulation = M[k].form;
            double t = time_method(m, &o, reps, NULL);
            printf("| %s | %.4f | %.1f | %.3f |\n", M[k].name, t, t / tsim, t / tfd);
        }
        printf("| fd (2p + 1 runs) | %.4f | %.1f | 1 |\n| simulation | %.4f | 1 | |\n", tfd, tfd / tsim, tsim);
        mbs_model_free(m);
    }

    /* ---- 3. five-bar ---- */
    {
        const char *path = bench_model_path(NULL, "fivebar.json");
        mbs_error err;
        mbs_model *m = mbs_model_load(path, &err);
        if (m && mbs_model_nobjectives(m) > 0) {
            mbs_sens_options o = mbs_sens_options_default(m);
            o.sim.tf = 5;
            o.sim.dt = 1e-3;
            printf("\n## Five-bar (thesis 7.1), 5 s at 1 ms, 5 parameters, 3 objectives\n\n");
            printf("| formulation / method | seconds | / simulation | / fd | thesis (i7-8700) | ratio |\n"
                   "|---|---|---|---|---|---|\n");
            static const char *forms[] = { "ali3p", "matrixr" };
            static const double thesis[2][3] = { { 0.719, 0.766, 0.781 }, { 1.109, NAN, 1.109 } };
            static const mbs_sens_method meths[3] = { MBS_SENS_DDM, MBS_SENS_DAVM, MBS_SENS_CAVM };
            for (int f = 0; f < 2; f++) {
                int lf = mbs_loop_formulation_from_name(forms[f]);
                if (lf < 0) continue;
                o.sim.loop = (mbs_loop_formulation)lf;
                /* the plain simulation and the fd reference (2p + 1 simulations) of this formulation */
                const double tsim = time_simulation(m, &o.sim, reps);
                o.method = MBS_SENS_FD;
                const double tfd = time_method(m, &o, reps, NULL);
                printf("| %s simulation | %.4f | 1 | %.3f | | |\n", forms[f], tsim, tsim / tfd);
                printf("| %s fd | %.4f | %.1f | 1 | | |\n", forms[f], tfd, tfd / tsim);
                for (int k = 0; k < 3; k++) {
                    o.method = meths[k];
                    double t = time_method(m, &o, reps, NULL);
                    if (isnan(t)) continue;
                    if (isnan(thesis[f][k]))   /* the thesis has no Matrix R discrete adjoint */
                        printf("| %s %s | %.4f | %.1f | %.3f | | |\n", forms[f], mbs_sens_method_name(meths[k]), t,
                               t / tsim, t / tfd);
                    else
                        printf("| %s %s | %.4f | %.1f | %.3f | %.3f | %.1fx faster |\n", forms[f],
                               mbs_sens_method_name(meths[k]), t, t / tsim, t / tfd, thesis[f][k], thesis[f][k] / t);
                }
                /* the DDM with the other reference point (the same discrete equations) */
                o.method = MBS_SENS_DDM;
                const mbs_ref_point ref0 = o.sim.ref;
                o.sim.ref = ref0 == MBS_REF_ORIGIN ? MBS_REF_COM : MBS_REF_ORIGIN;
                double t = time_method(m, &o, reps, NULL);
                o.sim.ref = ref0;
                if (!isnan(t))
                    printf("| %s ddm (ref %s) | %.4f | %.1f | %.3f | %.3f | %.1fx faster |\n", forms[f],
                           ref0 == MBS_REF_ORIGIN ? "com" : "origin", t, t / tsim,
                           t / tfd, thesis[f][0], thesis[f][0] / t);
            }
        } else {
            printf("\n(five-bar: %s)\n", m ? "the model declares no objectives" : err.msg);
        }
        mbs_model_free(m);
    }
    if (loops_sweep(reps)) return 2;
    printf("\n");
    bench_print_footer(stdout);
    return 0;
}
