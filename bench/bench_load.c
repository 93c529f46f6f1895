/*
 * bench_load.c - model loading time against model size.
 *
 * Three kinds of model, generated in memory for n = 1e3, 1e4, 1e5 bodies:
 *
 *   chain  mbs_model_load_string on the chain of mbs_generate_chain_json
 *          (revolute joints; that generator stops at 256 links): per link a
 *          body with points "base" and "tip", a joint placed by point names
 *          with q0 and qd0; parameters "m1" and "L1".
 *   full   mbs_model_load_string on a spatial chain that uses every kind of
 *          name look-up of the JSON format: n bodies, each with 4 named
 *          points and a vector; n revolute joints placed by point names;
 *          a joint_spring per joint (joint by name); a spring_damper between
 *          consecutive bodies (qualified point names "linkK.side"); a
 *          parameter per body (target "linkK.mass"); an output per body
 *          (point "linkK.tip"); one objective with a term per body (a point
 *          and a coordinate by name).
 *   urdf   mbs_model_load_urdf on a chain of n moving links (revolute
 *          joints), every tenth with a sensor link fixed to it (merged into
 *          the body: a named point and 3 vectors). The text is written to a
 *          temporary file first (not timed).
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
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

/* ---------------------------------------------------------------- text buffer */

typedef struct tbuf {
    char *s;
    size_t len, cap;
} tbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void tb_printf(tbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) abort();
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = 2 * b->cap + (size_t)n + 1;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
}

static void tb_init(tbuf *b)
{
    b->cap = 1 << 16;
    b->len = 0;
    b->s = malloc(b->cap);
    if (!b->s) abort();
    b->s[0] = '\0';
}

/* ---------------------------------------------------------------- generators */

/* The chain of mbs_generate_chain_json (revolute joints), at any n. */
static char *chain_json(int n)
{
    tbuf b;
    tb_init(&b);
    tb_printf(&b, "{\n\"name\": \"load_chain\",\n\"gravity\": [0, 0, -9.81],\n\"bodies\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b,
                  "{\"name\": \"link%d\", \"mass\": %.4f, \"com\": [0.15, 0.005, -0.003], "
                  "\"inertia\": [0.000378614887290953, 0.00781888154646382, 0.00794683689957856, "
                  "-0.000927098271185006, 0.000596421464294338, 7.0429816357282e-5], "
                  "\"points\": {\"base\": [0, 0, 0], \"tip\": [0.3, 0, 0]}}%s\n",
                  k, 0.8 + 0.4 * (k % 7) / 7.0, k < n ? "," : "");
    tb_printf(&b, "],\n\"joints\": [\n");
    for (int k = 1; k <= n; k++) {
        char parent[32];
        if (k == 1) snprintf(parent, sizeof parent, "ground");
        else snprintf(parent, sizeof parent, "link%d", k - 1);
        tb_printf(&b,
                  "{\"name\": \"j%d\", \"type\": \"revolute\", \"parent\": \"%s\", \"child\": \"link%d\", "
                  "\"parent_point\": %s, \"child_point\": \"base\", \"axis\": [0, %d, %d], "
                  "\"q0\": [%.15g], \"qd0\": [%.15g]}%s\n",
                  k, parent, k, k == 1 ? "[0, 0, 0]" : "\"tip\"", k % 2 == 0, k % 2, 0.25 * sin(k),
                  0.1 * cos(k), k < n ? "," : "");
    }
    tb_printf(&b, "],\n\"parameters\": [\n"
                  "{\"name\": \"m1\", \"value\": 1, \"lower\": 0.1, \"upper\": 10, \"sets\": [\"link1.mass\"]},\n"
                  "{\"name\": \"L1\", \"value\": 0.3, \"lower\": 0.1, \"upper\": 1, "
                  "\"sets\": [\"link1.tip[0]\", {\"target\": \"link1.com[0]\", \"scale\": 0.5}]}\n]\n}\n");
    return b.s;
}

static char *full_json(int n)
{
    tbuf b;
    tb_init(&b);
    tb_printf(&b, "{\n\"name\": \"load_chain\",\n\"bodies\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b,
                  "{\"name\": \"link%d\", \"mass\": %.3f, \"com\": [0.15, 0.002, 0], "
                  "\"inertia\": [0.0001, 0.0075, 0.0075, 0, 0, 0], "
                  "\"points\": {\"base\": [0, 0, 0], \"tip\": [0.3, 0, 0], \"mid\": [0.15, 0, 0], "
                  "\"side\": [0.15, 0.02, 0]}, \"vectors\": {\"u\": [1, 0, 0]}}%s\n",
                  k, 0.8 + 0.4 * (k % 7) / 7.0, k < n ? "," : "");
    tb_printf(&b, "],\n\"joints\": [\n");
    for (int k = 1; k <= n; k++) {
        if (k == 1)
            tb_printf(&b, "{\"name\": \"j1\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"link1\", "
                          "\"child_point\": \"base\", \"axis\": [0, 0, 1]},\n");
        else
            tb_printf(&b,
                      "{\"name\": \"j%d\", \"type\": \"revolute\", \"parent\": \"link%d\", \"child\": \"link%d\", "
                      "\"parent_point\": \"tip\", \"child_point\": \"base\", \"axis\": [0, %d, %d], "
                      "\"q0\": [0.01]}%s\n",
                      k, k - 1, k, k % 2 == 0, k % 2, k < n ? "," : "");
    }
    tb_printf(&b, "],\n\"forces\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b, "{\"name\": \"s%d\", \"type\": \"joint_spring\", \"joint\": \"j%d\", \"stiffness\": 1, "
                      "\"damping\": 0.01},\n", k, k);
    for (int k = 1; k < n; k++)
        tb_printf(&b, "{\"name\": \"sd%d\", \"type\": \"spring_damper\", \"point1\": \"link%d.side\", "
                      "\"point2\": \"link%d.side\", \"stiffness\": 10}%s\n", k, k, k + 1, k + 1 < n ? "," : "");
    tb_printf(&b, "],\n\"parameters\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b, "{\"name\": \"m%d\", \"value\": 1, \"lower\": 0.1, \"upper\": 10, \"sets\": [\"link%d.mass\"]}%s\n",
                  k, k, k < n ? "," : "");
    tb_printf(&b, "],\n\"outputs\": [\n");
    for (int k = 1; k <= n; k++) tb_printf(&b, "{\"point\": \"link%d.tip\"}%s\n", k, k < n ? "," : "");
    tb_printf(&b, "],\n\"objectives\": [{\"name\": \"psi\", \"integral\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b, "{\"point\": \"link%d.tip\", \"component\": 2}, {\"coordinate\": \"j%d\"}%s\n", k, k,
                  k < n ? "," : "");
    tb_printf(&b, "]}]\n}\n");
    return b.s;
}

static char *chain_urdf(int n)
{
    tbuf b;
    tb_init(&b);
    tb_printf(&b, "<?xml version=\"1.0\"?>\n<robot name=\"load_chain\">\n<link name=\"base\"/>\n");
    for (int k = 1; k <= n; k++) {
        tb_printf(&b,
                  "<link name=\"link%d\"><inertial><origin xyz=\"0.15 0.002 0\" rpy=\"0 0 0\"/>"
                  "<mass value=\"%.3f\"/><inertia ixx=\"0.0001\" iyy=\"0.0075\" izz=\"0.0075\" ixy=\"0\" "
                  "ixz=\"0\" iyz=\"0\"/></inertial></link>\n",
                  k, 0.8 + 0.4 * (k % 7) / 7.0);
        char parent[32];
        if (k == 1) snprintf(parent, sizeof parent, "base");
        else snprintf(parent, sizeof parent, "link%d", k - 1);
        tb_printf(&b,
                  "<joint name=\"j%d\" type=\"revolute\"><parent link=\"%s\"/><child link=\"link%d\"/>"
                  "<origin xyz=\"%s 0 0\" rpy=\"0 0 0\"/><axis xyz=\"0 %d %d\"/>"
                  "<limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"2\"/></joint>\n",
                  k, parent, k, k == 1 ? "0" : "0.3", k % 2 == 0, k % 2);
        if (k % 10 == 0)
            tb_printf(&b,
                      "<link name=\"sensor%d\"><inertial><mass value=\"0.01\"/><inertia ixx=\"1e-6\" "
                      "iyy=\"1e-6\" izz=\"1e-6\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
                      "<joint name=\"fix%d\" type=\"fixed\"><parent link=\"link%d\"/><child link=\"sensor%d\"/>"
                      "<origin xyz=\"0.2 0 0.01\" rpy=\"0 0 0.5\"/></joint>\n",
                      k, k, k, k);
    }
    tb_printf(&b, "</robot>\n");
    return b.s;
}

/* ---------------------------------------------------------------- timing */

typedef struct lctx {
    const char *json;      /* JSON text, or NULL */
    const char *urdf;      /* URDF path, or NULL */
    int nb;
} lctx;

static void load_once(void *p)
{
    const lctx *c = p;
    mbs_error err;
    mbs_model *m = c->json ? mbs_model_load_string(c->json, "load_chain.json", &err)
                           : mbs_model_load_urdf(c->urdf, NULL, &err);
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
    char path[] = "/tmp/bench_load_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("bench_load: mkstemp");
        return 2;
    }
    close(fd);
    int status = 0;
    static const char *const kinds[3] = { "chain", "full", "urdf" };
    for (int kind = 0; kind < 3; kind++) {
        double prev = 0;
        for (int n = 1000; n <= nmax; n *= 10) {
            lctx c = { NULL, NULL, n };
            char *text = kind == 0 ? chain_json(n) : kind == 1 ? full_json(n) : chain_urdf(n);
            if (kind < 2) {
                c.json = text;
            } else {
                FILE *f = fopen(path, "w");
                if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                    perror("bench_load: writing the URDF");
                    status = 2;
                    break;
                }
                c.urdf = path;
            }
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
    unlink(path);
    printf("\n");
    bench_print_footer(stdout);
    return status;
}
