/*
 * test_kin_velocities.c - the velocity pass the closed-loop steppers use
 * (mbs_kin_velocities, src/kernels/kinematics.c) against the full
 * kinematics kernel.
 *
 * On random models with closed loops (every joint type in the tree, every
 * cut type), at random states, for the three reference points:
 *   mbs_kin_forward(q, NULL, NULL, 0) + mbs_kin_velocities(q, qd, qdd)
 * must leave in the workspace the same V, ad, bd, d_i and Vd as
 * mbs_kin_forward(q, qd, qdd, 2), bit for bit (the same arithmetic in the
 * same order), and also with qd = NULL, qdd = NULL. The workspace is first
 * filled with the kinematics of another state, so that nothing stale can
 * pass for a result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"
#include "kernels/data.h"
#include "model/model_impl.h"
#include "formulations/form_impl.h"

#define NMODELS 60

static int same(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof(double)) == 0;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 515);
    long compared = 0;
    for (int it = 0; it < NMODELS; it++) {
        int nb = 2 + mbs_rng_int(&rng, 8), ncut = 1 + mbs_rng_int(&rng, 3), types[3];
        for (int k = 0; k < ncut; k++) types[k] = (it * 3 + k) % MBS_JOINT_TYPE_COUNT;
        double *qc = NULL;
        mbs_model *m = mbs_test_random_loops(&rng, nb, ncut, types, it % 2, &qc);
        CHECK(m != NULL, "random loop model %d", it);
        if (!m) continue;
        const size_t q1 = (size_t)m->nq + 1, nb1 = (size_t)m->nb + 1;
        double *q = calloc(q1, 8), *qd = calloc(q1, 8), *qdd = calloc(q1, 8);
        double *q2 = calloc(q1, 8), *qd2 = calloc(q1, 8), *qdd2 = calloc(q1, 8);
        double *V = calloc(6 * nb1, 8), *ad = calloc(3 * nb1, 8), *bd = calloc(MBS_BSTRIDE * nb1, 8);
        double *dv = calloc(6 * nb1, 8), *Vd = calloc(6 * nb1, 8);
        mbs_data *d = mbs_data_create(m, NULL);
        CHECK(d && q && V && bd, "allocation");
        for (int ref = 0; d && ref < 3; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            mbs_ws *w = &d->ws;
            for (int nulls = 0; nulls < 2; nulls++) {
                mbs_test_random_state(&rng, m, q, qd, qdd);
                mbs_test_random_state(&rng, m, q2, qd2, qdd2);
                const double *v = nulls ? NULL : qd, *a = nulls ? NULL : qdd;
                /* the kernel: reference values */
                mbs_kin_forward(m, m->x, w, q, v, a, 2);
                memcpy(V, w->V, 6 * nb1 * 8);
                memcpy(ad, w->ad, 3 * nb1 * 8);
                memcpy(bd, w->bd, MBS_BSTRIDE * nb1 * 8);
                memcpy(dv, w->dv, 6 * nb1 * 8);
                memcpy(Vd, w->Vd, 6 * nb1 * 8);
                /* another state's kinematics in the workspace, then positions at q and the velocity pass */
                mbs_kin_forward(m, m->x, w, q2, qd2, qdd2, 2);
                mbs_kin_forward(m, m->x, w, q, NULL, NULL, 0);
                mbs_kin_velocities(m, w, q, v, a);
                /* body 0 is the ground; every joint's map b_i is at most MBS_BSTRIDE wide */
                CHECK(same(V + 6, w->V + 6, 6 * (nb1 - 1)), "model %d ref %d: V", it, ref);
                CHECK(same(ad + 3, w->ad + 3, 3 * (nb1 - 1)), "model %d ref %d: ad", it, ref);
                for (int i = 1; i <= m->nb; i++)
                    CHECK(same(bd + MBS_BSTRIDE * i, w->bd + MBS_BSTRIDE * i, 6 * (size_t)m->joint[i].nq),
                          "model %d ref %d: bd of body %d", it, ref, i);
                CHECK(same(dv + 6, w->dv + 6, 6 * (nb1 - 1)), "model %d ref %d: d_i", it, ref);
                CHECK(same(Vd + 6, w->Vd + 6, 6 * (nb1 - 1)), "model %d ref %d: Vd", it, ref);
                compared++;
            }
        }
        mbs_data_free(d);
        free(q); free(qd); free(qdd); free(q2); free(qd2); free(qdd2);
        free(V); free(ad); free(bd); free(dv); free(Vd); free(qc);
        mbs_model_free(m);
    }
    printf("velocity pass = kernel level 2, bit for bit, in %ld states\n", compared);
    return mbs_test_summary("kin_velocities");
}
