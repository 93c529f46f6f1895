/*
 * mass_matrix.c - mass matrix by composite inertias (thesis §2.4.1,
 * eqs. 2.214-2.216; Walker-Orin method 3).
 *
 *   M^S_i = M^v_i + sum_children B_s^T M^S_s B_s
 *   M(i,i) = b_i^T M^S_i b_i
 *   M(j,i) = b_j^T (B^T ... B^T) M^S_i b_i   for every ancestor j of i
 * The off-diagonal blocks transport the wrench columns F = M^S_i b_i up the
 * path to the root, one B^T per joint: O(n depth) in total.
 */
#include "kernels.h"
#include "base/algebra.h"

#if defined(__GNUC__)
#define CRBA_INLINE static inline __attribute__((always_inline))
#else
#define CRBA_INLINE static inline
#endif

/* The pass, writing either the dense row-major M (rowptr NULL: both
 * triangles) or its lower triangle in the tree storage of the model's
 * pattern (mbsens/sparse.h; rowptr of mbs_model_tree_pattern): entry (r, c),
 * c = r or an ancestor of r, at M[rowptr[r] + d_c], d_c the number of
 * ancestors of c. The two outputs hold the same numbers, each computed by
 * the same operations. */
CRBA_INLINE void crba_pass(const mbs_model *m, MBS_K(mbs_ws) *w, mreal *M, const int *rowptr)
{
    const int nv = m->nv;
#define CRBA_AT(r, c) (rowptr ? rowptr[r] + (rowptr[(c) + 1] - rowptr[c] - 1) : (r) * nv + (c))
    const int size = rowptr ? rowptr[nv] : nv * nv;
    for (int k = 0; k < size; k++) M[k] = 0;
    for (int i = 1; i <= m->nb; i++)
        for (int c = 0; c < 36; c++) w->MS[36 * i + c] = w->Mv[36 * i + c];
    for (int i = m->nb; i >= 1; i--) {
        const mbs_joint_info *jt = &m->joint[i];
        const int ni = jt->nv;
        const mreal *MS = w->MS + 36 * i, *bi = w->b + MBS_BSTRIDE * i;
        mreal *U = w->U + MBS_BSTRIDE * i;
        for (int k = 0; k < ni; k++) m6_mv(U + 6 * k, MS, bi + 6 * k);
        for (int r = 0; r < ni; r++)
            for (int k = 0; k < (rowptr ? r + 1 : ni); k++)
                M[CRBA_AT(jt->voff + r, jt->voff + k)] = s6_dot(bi + 6 * r, U + 6 * k);
        /* off-diagonal blocks along the path to the root */
        mreal Fc[MBS_BSTRIDE];
        for (int k = 0; k < 6 * ni; k++) Fc[k] = U[k];
        int j = i;
        while (m->joint[j].parent > 0) {
            const int h = m->joint[j].parent;
            /* F <- B_j^T F in place: [f; n - a x f] */
            const mreal *aj = w->a + 3 * j;
            for (int k = 0; k < ni; k++) {
                mreal *F = Fc + 6 * k;
                F[3] -= aj[1] * F[2] - aj[2] * F[1];
                F[4] -= aj[2] * F[0] - aj[0] * F[2];
                F[5] -= aj[0] * F[1] - aj[1] * F[0];
            }
            const mbs_joint_info *jh = &m->joint[h];
            const mreal *bh = w->b + MBS_BSTRIDE * h;
            for (int r = 0; r < jh->nv; r++)
                for (int k = 0; k < ni; k++) {
                    mreal v = s6_dot(bh + 6 * r, Fc + 6 * k);
                    M[CRBA_AT(jt->voff + k, jh->voff + r)] = v;
                    if (!rowptr) M[(jh->voff + r) * nv + jt->voff + k] = v;
                }
            j = h;
        }
        if (jt->parent > 0)
            m6_congruence_add_sym(w->MS + 36 * jt->parent, w->a + 3 * i, MS);
    }
#undef CRBA_AT
}

void MBS_K(mbs_crba)(const mbs_model *m, MBS_K(mbs_ws) *w, mreal *M)
{
    crba_pass(m, w, M, NULL);
}

void MBS_K(mbs_crba_tree)(const mbs_model *m, MBS_K(mbs_ws) *w, const int *rowptr, mreal *val)
{
    crba_pass(m, w, val, rowptr);
}
