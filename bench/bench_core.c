/*
 * bench_core.c - ns/call of the core kernels of mbsens.
 *
 *   kin    mbs_kinematics: positions, velocities and accelerations
 *   ID     mbs_inverse_dynamics (recursive Newton-Euler)
 *   MM     mbs_mass_matrix (composite inertias, dense nq x nq)
 *   fr     mbs_forward_dynamics, MBS_FD_RECURSIVE (articulated bodies, O(n))
 *   semi   mbs_forward_dynamics, MBS_FD_SEMI_RECURSIVE (CRBA + dense Cholesky)
 *
 * on the generated spatial chains (mbs_generate_chain_json: revolute,
 * cardan, spherical; n = 8 .. 256) and on models/human43.json. Every call
 * is a full public-API call on a fixed random state (seed 1: angles in
 * [-pi, pi], rates in [-1, 1]); the reference point is the default (com)
 * except in the reference-point comparison. Then:
 *   - O(n) check: t(256)/t(32) for ID and fr (8 for exact O(n); <= 9 expected)
 *   - crossover: smallest n from which fr is faster than semi (scan n = 2..24)
 *   - Kang & Yoon's comparison: fr in global axes with the reference point
 *     at the centre of mass, the global origin and the joint point, and fr
 *     in joint frames (the default, which has no reference point), timed
 *     side by side.
 *
 * Usage: bench_core [--quick] [--min-time S] [--reps N] [HUMAN43_JSON]
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

typedef struct kctx {
    const mbs_model *m;
    mbs_data *d;
    double *q, *qd, *qdd, *out;
} kctx;

static void k_kin(void *p)
{
    kctx *c = p;
    mbs_kinematics(c->m, c->d, c->q, c->qd, c->qdd);
}
static void k_id(void *p)
{
    kctx *c = p;
    mbs_inverse_dynamics(c->m, c->d, c->q, c->qd, c->qdd, c->out);
    bench_sink = c->out[0];
}
static void k_mm(void *p)
{
    kctx *c = p;
    mbs_mass_matrix(c->m, c->d, c->q, c->out);
    bench_sink = c->out[0];
}
static void k_fr(void *p)
{
    kctx *c = p;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, NULL, c->out);
    bench_sink = c->out[0];
}
static void k_semi(void *p)
{
    kctx *c = p;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_SEMI_RECURSIVE, c->q, c->qd, NULL, c->out);
    bench_sink = c->out[0];
}

/* A model with its state, one data per reference point (global-axes fr)
 * and d[3] with the default joint frames. */
typedef struct bmodel {
    mbs_model *m;
    mbs_data *d[4];
    double *q, *qd, *qdd, *out;
    int nq;
} bmodel;

static void bmodel_init(bmodel *b, mbs_model *m)
{
    bench_rng r;
    b->m = m;
    b->nq = mbs_model_nq(m);
    size_t nq = (size_t)b->nq;
    b->q = malloc(nq * sizeof(double));
    b->qd = malloc(nq * sizeof(double));
    b->qdd = malloc(nq * sizeof(double));
    b->out = malloc(nq * nq * sizeof(double));
    if (!b->q || !b->qd || !b->qdd || !b->out) { fprintf(stderr, "out of memory\n"); exit(2); }
    bench_rng_seed(&r, 1);
    bench_random_state(m, &r, 1.0, 1.0, b->q, b->qd, b->qdd);
    for (int k = 0; k < 3; k++) {
        b->d[k] = bench_data(m);
        mbs_data_set_ref(b->d[k], (mbs_ref_point)k);
        mbs_data_set_fr_frames(b->d[k], MBS_FR_GLOBAL);
    }
    b->d[3] = bench_data(m);   /* the defaults: reference point com, joint frames */
    /* every kernel must succeed on this state */
    bench_check(mbs_kinematics(m, b->d[0], b->q, b->qd, b->qdd), b->d[0], "kinematics");
    bench_check(mbs_forward_dynamics(m, b->d[0], MBS_FD_RECURSIVE, b->q, b->qd, NULL, b->out),
                b->d[0], "forward dynamics (fr)");
    bench_check(mbs_forward_dynamics(m, b->d[0], MBS_FD_SEMI_RECURSIVE, b->q, b->qd, NULL, b->out),
                b->d[0], "forward dynamics (semi)");
}

static void bmodel_free(bmodel *b)
{
    for (int k = 0; k < 4; k++) mbs_data_free(b->d[k]);
    free(b->q);
    free(b->qd);
    free(b->qdd);
    free(b->out);
    mbs_model_free(b->m);
}

static kctx ctx_of(bmodel *b, int ref)
{
    kctx c = { b->m, b->d[ref], b->q, b->qd, b->qdd, b->out };
    return c;
}

enum { K_KIN, K_ID, K_MM, K_FR, K_SEMI, NK };
static const char *const kname[NK] = { "kin", "ID", "MM", "fr", "semi" };

/* The five kernels side by side (com reference). */
static void time_kernels(bmodel *b, bench_result res[NK])
{
    kctx c[NK];
    void *cp[NK];
    bench_fn f[NK] = { k_kin, k_id, k_mm, k_fr, k_semi };
    /* separate output buffers are not needed: every kernel writes b->out */
    for (int k = 0; k < NK; k++) { c[k] = ctx_of(b, 3); cp[k] = &c[k]; }
    bench_time_many(NK, f, cp, res, NULL);
}

/* fr in global axes with the three reference points, and in joint frames,
 * side by side; ratio[k] = t_k / t_com. */
static void time_refs(bmodel *b, bench_result res[4], double ratio[4])
{
    kctx c[4];
    void *cp[4];
    bench_fn f[4] = { k_fr, k_fr, k_fr, k_fr };
    for (int k = 0; k < 4; k++) { c[k] = ctx_of(b, k); cp[k] = &c[k]; }
    bench_time_many(4, f, cp, res, ratio);
}

static const int sizes[] = { 8, 16, 32, 64, 128, 256 };
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
static const mbs_joint_type jtypes[] = { MBS_JOINT_REVOLUTE, MBS_JOINT_CARDAN, MBS_JOINT_SPHERICAL };
#define NTYPES 3

static double max_spread = 0;

static void note_spread(const bench_result *r, int n)
{
    for (int k = 0; k < n; k++) {
        double s = bench_spread_pct(&r[k]);
        if (s > max_spread) max_spread = s;
    }
}

static void print_kernel_row(const char *label, int nq, const bench_result *r)
{
    printf("| %-14s | %4d |", label, nq);
    for (int k = 0; k < NK; k++) printf(" %9.0f |", r[k].median_ns);
    printf(" %6.2f |\n", r[K_SEMI].median_ns / r[K_FR].median_ns);
}

int main(int argc, char **argv)
{
    const char *human_arg = bench_parse_args(argc, argv, NULL);
    const char *human_path = bench_model_path(human_arg, "human43.json");
    static bench_result tab[NTYPES][NSIZES][NK];
    static bench_result reft[NTYPES][NSIZES][4];
    static double refr[NTYPES][NSIZES][4];

    printf("# bench_core: mbsens kernels, ns/call (median)\n\n");
    bench_print_machine(stdout, "    ");
    printf("    human model: %s\n", human_path);
    printf("    state: random (seed 1), angles in [-pi, pi], rates and accelerations in [-1, 1]\n\n");
    fflush(stdout);

    /* ---- kernel tables ---- */
    for (int t = 0; t < NTYPES; t++) {
        printf("## %s chains: ns/call (reference point: com)\n\n", mbs_joint_type_name(jtypes[t]));
        printf("| %-14s | %4s |", "model", "nq");
        for (int k = 0; k < NK; k++) printf(" %9s |", kname[k]);
        printf(" semi/fr |\n|%s|------|", "----------------");
        for (int k = 0; k < NK; k++) printf("-----------|");
        printf("---------|\n");
        for (int s = 0; s < NSIZES; s++) {
            bmodel b;
            bmodel_init(&b, bench_chain(sizes[s], jtypes[t], 0));
            time_kernels(&b, tab[t][s]);
            note_spread(tab[t][s], NK);
            char label[32];
            snprintf(label, sizeof label, "n = %d", sizes[s]);
            print_kernel_row(label, b.nq, tab[t][s]);
            fflush(stdout);
            bmodel_free(&b);
        }
        printf("\n");
    }

    /* ---- human model ---- */
    bench_result hum[NK], humref[4];
    double humratio[4];
    {
        bmodel b;
        bmodel_init(&b, bench_load_model(human_path));
        printf("## human43 (%s): ns/call (reference point: com)\n\n", human_path);
        printf("| %-14s | %4s |", "model", "nq");
        for (int k = 0; k < NK; k++) printf(" %9s |", kname[k]);
        printf(" semi/fr |\n|%s|------|", "----------------");
        for (int k = 0; k < NK; k++) printf("-----------|");
        printf("---------|\n");
        time_kernels(&b, hum);
        note_spread(hum, NK);
        print_kernel_row("human43", b.nq, hum);
        printf("\n");
        fflush(stdout);
        time_refs(&b, humref, humratio);
        note_spread(humref, 4);
        bmodel_free(&b);
    }

    /* ---- O(n) ---- */
    printf("## Scaling: t(256) / t(32) (exact O(n) gives 8; expected <= 9)\n\n");
    printf("| joint     | ID t(32) | ID t(256) | ID ratio | fr t(32) | fr t(256) | fr ratio | fr ns/body (256) | MM ratio (O(n^2) chain: 64) |\n");
    printf("|-----------|----------|-----------|----------|----------|-----------|----------|------------------|-----------------------------|\n");
    int bad_scaling = 0;
    for (int t = 0; t < NTYPES; t++) {
        const int i32 = 2, i256 = 5;
        double id32 = tab[t][i32][K_ID].median_ns, id256 = tab[t][i256][K_ID].median_ns;
        double fr32 = tab[t][i32][K_FR].median_ns, fr256 = tab[t][i256][K_FR].median_ns;
        double mm = tab[t][i256][K_MM].median_ns / tab[t][i32][K_MM].median_ns;
        printf("| %-9s | %8.0f | %9.0f | %8.2f | %8.0f | %9.0f | %8.2f | %16.1f | %27.1f |\n",
               mbs_joint_type_name(jtypes[t]), id32, id256, id256 / id32, fr32, fr256, fr256 / fr32,
               fr256 / 256, mm);
        if (id256 / id32 > 9 || fr256 / fr32 > 9) bad_scaling = 1;
    }
    printf("\n%s\n\n", bad_scaling ? "NOTE: some ratio exceeds 9 (not O(n) on this run; see docs/benchmarks.md)"
                                   : "All ratios <= 9: linear in n.");
    fflush(stdout);

    /* ---- crossover fr vs semi ---- */
    printf("## Crossover: fully recursive (fr) vs semi-recursive (semi), side by side\n\n");
    printf("semi/fr for n = 2..24 (> 1: fr faster), then the table sizes.\n\n");
    {
        const int nmax_scan = 24;
        double save_t = bench_cfg.min_time;
        if (!bench_cfg.quick) bench_cfg.min_time = 0.05;   /* 24 x 3 models: shorter repetitions */
        printf("| n   |");
        for (int t = 0; t < NTYPES; t++) printf(" %-9s |", mbs_joint_type_name(jtypes[t]));
        printf("\n|-----|");
        for (int t = 0; t < NTYPES; t++) printf("-----------|");
        printf("\n");
        double ratio[NTYPES][32];
        for (int n = 2; n <= nmax_scan; n++) {
            printf("| %3d |", n);
            for (int t = 0; t < NTYPES; t++) {
                bmodel b;
                bmodel_init(&b, bench_chain(n, jtypes[t], 0));
                kctx c[2] = { ctx_of(&b, 0), ctx_of(&b, 0) };
                void *cp[2] = { &c[0], &c[1] };
                bench_fn f[2] = { k_fr, k_semi };
                bench_result r[2];
                double rr[2];
                bench_time_many(2, f, cp, r, rr);
                ratio[t][n] = rr[1];
                printf(" %9.3f |", rr[1]);
                bmodel_free(&b);
            }
            printf("\n");
            fflush(stdout);
        }
        bench_cfg.min_time = save_t;
        printf("\n");
        for (int t = 0; t < NTYPES; t++) {
            /* smallest n such that fr is faster for every larger scanned n and every table size */
            int cross = -1;
            int table_ok = 1;
            for (int s = 0; s < NSIZES; s++)
                if (sizes[s] > nmax_scan && tab[t][s][K_SEMI].median_ns <= tab[t][s][K_FR].median_ns) table_ok = 0;
            if (table_ok)
                for (int n = nmax_scan; n >= 2 && ratio[t][n] > 1; n--) cross = n;
            if (cross > 0)
                printf("- %s: fr faster than semi from n = %d on (semi/fr = %.2f there, %.2f at n = 256)\n",
                       mbs_joint_type_name(jtypes[t]), cross, ratio[t][cross],
                       tab[t][NSIZES - 1][K_SEMI].median_ns / tab[t][NSIZES - 1][K_FR].median_ns);
            else
                printf("- %s: no stable crossover in n = 2..24 (semi/fr at 24: %.2f)\n",
                       mbs_joint_type_name(jtypes[t]), ratio[t][nmax_scan]);
        }
        printf("- human43 (43 bodies, tree): semi/fr = %.2f\n\n", hum[K_SEMI].median_ns / hum[K_FR].median_ns);
    }
    fflush(stdout);

    /* ---- reference points (Kang & Yoon) ---- */
    printf("## Reference point of the fully recursive FD (Kang & Yoon), side by side\n\n");
    printf("fr in global axes (mbs_data_set_fr_frames(MBS_FR_GLOBAL)) with each reference point, and in\n"
           "joint frames (the default); ratios to global axes with com.\n\n");
    printf("| model          |  com ns/call | origin/com | joint/com | joint frames/com |\n");
    printf("|----------------|--------------|------------|-----------|------------------|\n");
    for (int t = 0; t < NTYPES; t++)
        for (int s = 0; s < NSIZES; s++) {
            bmodel b;
            bmodel_init(&b, bench_chain(sizes[s], jtypes[t], 0));
            time_refs(&b, reft[t][s], refr[t][s]);
            note_spread(reft[t][s], 4);
            char label[40];
            snprintf(label, sizeof label, "%s %d", mbs_joint_type_name(jtypes[t]), sizes[s]);
            printf("| %-14s | %12.0f | %10.3f | %9.3f | %13.3f |\n", label, reft[t][s][0].median_ns,
                   refr[t][s][1], refr[t][s][2], refr[t][s][3]);
            fflush(stdout);
            bmodel_free(&b);
        }
    printf("| %-14s | %12.0f | %10.3f | %9.3f | %13.3f |\n\n", "human43", humref[0].median_ns, humratio[1],
           humratio[2], humratio[3]);

    printf("Largest spread (max - min) / median over the repetitions of any kernel: %.1f%%\n", max_spread);
    bench_print_footer(stdout);
    return 0;
}
