/*
 * bench_load.c - model loading time against model size.
 *
 * Four kinds of model, generated in memory (tests/large_models.c) for
 * n = 1e3, 1e4, 1e5 bodies:
 *
 *   chain  the chain of mbs_generate_chain_json (revolute joints; that
 *          generator stops at 256 links), mbs_model_load_string
 *   full   a chain that uses every kind of name look-up of the JSON format
 *          (4 named points and a vector per body, joints by point names,
 *          joint springs by joint name, spring-dampers by qualified point
 *          names, a parameter, an output and objective terms per body)
 *   loops  a ladder: a chain and n - 2 rungs, each closing a loop, all cut
 *          automatically (the cut choice and the loops)
 *   urdf   mbs_model_load_urdf_string on a chain of n moving links, every
 *          tenth with a sensor link fixed to it (merged into its body)
 *
 * Each load is timed whole (parse, build, checks, free of the document);
 * the model is freed outside the timing. Loads are repeated for at least
 * `--min-time` seconds, 5 repetitions, median (bench_common.h). Printed:
 * ms per load, us per body, and the growth ratio t(10 n) / t(n) next to
 * the ratio 10 log(10 n) / log(n) of an n log n cost.
 *
 * Usage: bench_load [--quick] [--min-time S] [--reps N] [--clock cpu] [--max N]
 *   --max N   largest n (default 100000)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "large_models.h"

/* ---------------------------------------------------------------- timing */

typedef struct lctx {
    const char *text;
    int urdf;
    int nb;
} lctx;

static void load_once(void *p)
{
    const lctx *c = p;
    mbs_error err;
    mbs_model *m = c->urdf ? mbs_model_load_urdf_string(c->text, "load_chain.urdf", NULL, &err)
                           : mbs_model_load_string(c->text, "load_chain.json", &err);
    if (!m) {
        fprintf(stderr, "bench_load: %s\n", err.msg);
        exit(2);
    }
    if (mbs_model_nbodies(m) != c->nb) {
        fprintf(stderr, "bench_load: %d bodies, expected %d\n", mbs_model_nbodies(m), c->nb);
        exit(2);
    }
    bench_sink = mbs_body_mass(m, 1);
    mbs_model_free(m);
}

int main(int argc, char **argv)
{
    int nmax = 100000;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            nmax = atoi(argv[i + 1]);
            for (int j = i; j + 2 <= argc; j++) argv[j] = argv[j + 2];
            argc -= 2;
            break;
        }
    bench_parse_args(argc, argv, "[--max N]");
    bench_print_machine(stdout, "");
    printf("\nmodel loading: ms per load (median of %d repetitions of >= %.2f s), us per body,\n"
           "growth t(10 n) / t(n) against 10 log(10 n) / log(n) (an n log n cost)\n\n",
           bench_cfg.reps, bench_cfg.min_time);
    printf("%-5s %8s %12s %10s %8s %10s %8s\n", "kind", "n", "ms/load", "us/body", "spread", "growth", "nlogn");
    static const char *const kinds[4] = { "chain", "full", "loops", "urdf" };
    char *(*const gen[4])(int) = { mbs_large_chain_json, mbs_large_full_json, mbs_large_ladder_json,
                                   mbs_large_chain_urdf };
    for (int kind = 0; kind < 4; kind++) {
        double prev = 0;
        for (int n = 1000; n <= nmax; n *= 10) {
            char *text = gen[kind](n);
            lctx c = { text, kind == 3, n };
            bench_result r = bench_time(load_once, &c);
            double ms = r.median_ns * 1e-6;
            printf("%-5s %8d %12.2f %10.2f %7.0f%%", kinds[kind], n, ms, 1e3 * ms / n,
                   bench_spread_pct(&r));
            if (prev > 0)
                printf(" %10.2f %8.2f", ms / prev, 10 * log((double)n) / log(n / 10.0));
            printf("\n");
            fflush(stdout);
            prev = ms;
            free(text);
        }
    }
    printf("\n");
    bench_print_footer(stdout);
    return 0;
}
