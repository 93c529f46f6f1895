/*
 * bench_csv.c - the cost of writing the trajectory CSV of `mbsens simulate`
 * against the simulation itself: human43, 10 s at the model's step (1 ms),
 * every row (t, q, qd, qdd: 130 columns, 10001 rows).
 *
 * Three kernels timed side by side (interleaved repetitions):
 *   sim     mbs_simulate with a callback that keeps nothing
 *   printf  the rows written as the command wrote them before
 *           cli/shortest.c: the first of %.15g, %.16g, %.17g that strtod
 *           reads back (cli_shortest_printf), written to /dev/null
 *   fast    the same text by cli_shortest (exact integer arithmetic)
 *   npy     the same rows as binary float64 (simulate --format npy), one
 *           fwrite per value as the command does
 * The rows are recorded once from one run; both writers print the same
 * text (checked here). Ratios printf/sim and fast/sim are medians over the
 * repetitions.
 *
 * Usage: bench_csv [--quick] [--clock cpu] [--reps N] [HUMAN43.json]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "shortest.h"

typedef struct {
    const mbs_model *m;
    mbs_sim_options o;
    int nq;
    long nrows, cap;
    double *rows;     /* nrows x (1 + 3 nq) */
    FILE *null;
    int (*fmt)(double, char *);
} ctx;

static int keep_row(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                    const double *qdd)
{
    (void)m;
    (void)d;
    ctx *c = user;
    const int w = 1 + 3 * c->nq;
    if (c->nrows >= c->cap) return 1;
    double *r = c->rows + (size_t)c->nrows++ * (size_t)w;
    r[0] = t;
    memcpy(r + 1, q, sizeof *q * (size_t)c->nq);
    memcpy(r + 1 + c->nq, qd, sizeof *qd * (size_t)c->nq);
    memcpy(r + 1 + 2 * c->nq, qdd, sizeof *qdd * (size_t)c->nq);
    return 0;
}

static int keep_nothing(void *user, const mbs_model *m, mbs_data *d, double t, const double *q,
                        const double *qd, const double *qdd)
{
    (void)user;
    (void)m;
    (void)d;
    bench_sink = t + q[0] + qd[0] + qdd[0];
    return 0;
}

static void run_sim(void *p)
{
    ctx *c = p;
    mbs_data *d = bench_data(c->m);
    mbs_sim_stats st;
    mbs_error err;
    if (mbs_simulate(c->m, d, &c->o, NULL, NULL, keep_nothing, NULL, &st, &err) != MBS_OK) {
        fprintf(stderr, "bench_csv: %s\n", err.msg);
        exit(1);
    }
    mbs_data_free(d);
}

/* the rows as the command writes them: values, commas, newlines, stdio */
static void write_rows(void *p)
{
    ctx *c = p;
    const int w = 1 + 3 * c->nq;
    char num[CLI_SHORTEST_LEN + 1];
    for (long r = 0; r < c->nrows; r++) {
        const double *row = c->rows + (size_t)r * (size_t)w;
        for (int k = 0; k < w; k++) {
            num[0] = ',';
            const int len = c->fmt(row[k], num + 1);
            fwrite(k ? num : num + 1, 1, (size_t)(k ? len + 1 : len), c->null);
        }
        fputc('\n', c->null);
    }
}

static void write_binary(void *p)
{
    ctx *c = p;
    const size_t n = (size_t)c->nrows * (size_t)(1 + 3 * c->nq);
    for (size_t i = 0; i < n; i++) fwrite(&c->rows[i], sizeof c->rows[i], 1, c->null);
}

static int same_text(const ctx *c)
{
    const int w = 1 + 3 * c->nq;
    char a[CLI_SHORTEST_LEN], b[CLI_SHORTEST_LEN];
    for (long i = 0; i < c->nrows * w; i++) {
        cli_shortest(c->rows[i], a);
        cli_shortest_printf(c->rows[i], b);
        if (strcmp(a, b) != 0) {
            printf("DIFFERENT TEXT for %a: '%s' and '%s'\n", c->rows[i], a, b);
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = bench_model_path(bench_parse_args(argc, argv, "[HUMAN43.json]"), "human43.json");
    mbs_error err;
    mbs_model *m = mbs_model_load(path, &err);
    if (!m) {
        fprintf(stderr, "bench_csv: %s\n", err.msg);
        return 1;
    }
    ctx c = { .m = m, .o = mbs_model_sim_options(m), .nq = mbs_model_nq(m) };
    c.o.tf = 10;
    c.cap = (long)(c.o.tf / c.o.dt + 2.5);
    c.rows = malloc(sizeof *c.rows * (size_t)c.cap * (size_t)(1 + 3 * c.nq));
    c.null = fopen("/dev/null", "w");
    mbs_data *d = bench_data(m);
    mbs_sim_stats st;
    if (!c.rows || !c.null || mbs_simulate(m, d, &c.o, NULL, NULL, keep_row, &c, &st, &err) != MBS_OK) {
        fprintf(stderr, "bench_csv: cannot record the rows (%s)\n", err.msg);
        return 1;
    }
    mbs_data_free(d);

    printf("# bench_csv: writing the CSV of a simulation against the simulation\n\n");
    bench_print_machine(stdout, "    ");
    printf("    model: %s, %g s at dt %g, %ld rows x %d columns\n\n", mbs_model_name(m), c.o.tf, c.o.dt, c.nrows,
           1 + 3 * c.nq);
    printf("same text from both writers: %s\n\n", same_text(&c) ? "yes" : "NO");

    ctx cp = c, cf = c;
    cp.fmt = cli_shortest_printf;
    cf.fmt = cli_shortest;
    bench_fn f[4] = { run_sim, write_rows, write_rows, write_binary };
    void *ctxs[4] = { &c, &cp, &cf, &c };
    bench_result r[4];
    double ratio[4];
    bench_time_many(4, f, ctxs, r, ratio);
    const double values = (double)c.nrows * (1 + 3 * c.nq);
    printf("| kernel | ms | ns/value | / simulation | spread |\n|---|---|---|---|---|\n");
    const char *name[4] = { "simulation", "CSV, printf + strtod", "CSV, cli_shortest", "npy (binary)" };
    for (int k = 0; k < 4; k++)
        printf("| %s | %.1f | %.1f | %.3f | %.0f %% |\n", name[k], r[k].median_ns * 1e-6,
               k ? r[k].median_ns / values : 0.0, ratio[k], bench_spread_pct(&r[k]));
    printf("\nprintf / cli_shortest: %.2f\n\n", ratio[1] / ratio[2]);
    bench_print_footer(stdout);
    fclose(c.null);
    free(c.rows);
    mbs_model_free(m);
    return 0;
}
