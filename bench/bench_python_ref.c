/*
 * bench_python_ref.c - the C side of bench/bench_python.py: the calls the
 * Python benchmark makes, made from C, so that the Python script can put
 * the two side by side (it runs this program between its own repetitions).
 *
 *   id_pendulum_ns    mbs_inverse_dynamics on the double pendulum, ns/call
 *   sim_pendulum_ns   mbs_simulate of the double pendulum, 10^4 trapezoidal
 *                     steps (tf 10 s, dt 1 ms), with the statistics and a
 *                     callback that records t, q, qd, qdd of every row into
 *                     arrays grown by doubling, as mbsens.simulate does; ns/run
 *
 * Prints "name value" lines, and the layout of mbs_sim_options (size and the
 * offsets of t0, dt, tf) and the sizes of mbs_sim_stats and mbs_error, with
 * which bench_python.py calls mbs_simulate of libmbsens.so through ctypes in
 * its own process. Options: those of every bench program (--min-time,
 * --reps; bench_common.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    double q[2], qd[2], qdd[2], tau[2];
} id_ctx;

static void id_kernel(void *p)
{
    id_ctx *c = p;
    mbs_inverse_dynamics(c->m, c->d, c->q, c->qd, c->qdd, c->tau);
    bench_sink += c->tau[0];
}

typedef struct {
    size_t n, cap;
    int nq;
    double *t, *q, *qd, *qdd;
} rows;

static int record(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                  const double *qdd)
{
    (void)m, (void)d;
    rows *r = user;
    if (r->n == r->cap) {
        size_t cap = 2 * r->cap + 64, w = (size_t)r->nq;
        r->t = realloc(r->t, cap * sizeof(double));
        r->q = realloc(r->q, cap * w * sizeof(double));
        r->qd = realloc(r->qd, cap * w * sizeof(double));
        r->qdd = realloc(r->qdd, cap * w * sizeof(double));
        if (!r->t || !r->q || !r->qd || !r->qdd) return MBS_ERR_NOMEM;
        r->cap = cap;
    }
    const size_t i = r->n++, w = (size_t)r->nq;
    r->t[i] = t;
    memcpy(r->q + i * w, q, w * sizeof(double));
    memcpy(r->qd + i * w, qd, w * sizeof(double));
    memcpy(r->qdd + i * w, qdd, w * sizeof(double));
    return 0;
}

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    mbs_sim_options o;
} sim_ctx;

static void sim_kernel(void *p)
{
    sim_ctx *c = p;
    const size_t first = (size_t)((c->o.tf - c->o.t0) / c->o.dt) + 2;
    rows r = { 0, first, mbs_model_nq(c->m), malloc(first * sizeof(double)), NULL, NULL, NULL };
    r.q = malloc(first * (size_t)r.nq * sizeof(double));
    r.qd = malloc(first * (size_t)r.nq * sizeof(double));
    r.qdd = malloc(first * (size_t)r.nq * sizeof(double));
    mbs_sim_stats st;
    mbs_error err;
    int rc = mbs_simulate(c->m, c->d, &c->o, NULL, NULL, record, &r, &st, &err);
    if (rc != MBS_OK || r.n != 10001) {
        fprintf(stderr, "bench_python_ref: simulate: %s (%zu rows)\n", rc ? err.msg : "", r.n);
        exit(1);
    }
    bench_sink += r.q[r.n * (size_t)r.nq - 1];
    free(r.t), free(r.q), free(r.qd), free(r.qdd);
}

int main(int argc, char **argv)
{
    bench_parse_args(argc, argv, NULL);
    mbs_model *m = bench_load_model(bench_model_path(NULL, "double_pendulum.json"));
    id_ctx ic = { m, bench_data(m), { 0.3, -0.2 }, { 1.0, 2.0 }, { 0.5, 0.1 }, { 0, 0 } };
    sim_ctx sc = { m, bench_data(m), mbs_model_sim_options(m) };
    sc.o.t0 = 0;
    sc.o.tf = 10;
    sc.o.dt = 1e-3;
    bench_result a = bench_time(id_kernel, &ic), b = bench_time(sim_kernel, &sc);
    printf("id_pendulum_ns %.1f\nsim_pendulum_ns %.0f\n", a.median_ns, b.median_ns);
    printf("sizeof_sim_options %zu\noffset_t0 %zu\noffset_dt %zu\noffset_tf %zu\nsizeof_sim_stats %zu\n"
           "sizeof_error %zu\n", sizeof(mbs_sim_options), offsetof(mbs_sim_options, t0),
           offsetof(mbs_sim_options, dt), offsetof(mbs_sim_options, tf), sizeof(mbs_sim_stats), sizeof(mbs_error));
    mbs_data_free(ic.d);
    mbs_data_free(sc.d);
    mbs_model_free(m);
    return 0;
}
