/*
 * mass_matrix_sparse.c - mbs_mass_matrix_sparse: the mass matrix in the
 * tree storage (mbsens/sparse.h) over the kernels' composite inertias,
 * with the state and result checks of mbs_mass_matrix.
 */
#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "kernels/results.h"
#include "model/sparsity.h"

int mbs_mass_matrix_sparse(const mbs_model *m, mbs_data *d, const double *q, const mbs_tree_pattern *p,
                           double *val)
{
    int rc = mbs_data_check_state(d, q, NULL, NULL);
    if (rc) return rc;
    const int jf = d->model == m && mbs_crbajf_usable(d);
    if (!val || !(jf ? mbs_crbajf_is_tree_pattern(d, p) : mbs_model_is_tree_pattern(m, p)))
        return mbs_data_fail(d, MBS_ERR_ARG, "mass matrix (sparse): %s", !val ? "NULL output" :
                             "the pattern is not the model's tree pattern (mbs_model_tree_pattern)");
    if (jf) {
        const double s = mbs_crbajf_mass_matrix(m, d, q, 1, val);   /* joint frames (crba_joint_frames.c) */
        if (s - s == 0) {   /* every entry finite */
            d->err[0] = 0;
            return MBS_OK;
        }
    } else {
        mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
        mbs_mass_terms(m, m->x, &d->ws);
        mbs_crba_tree(m, &d->ws, p->rowptr, val);
    }
    return mbs_data_results(d, "mass matrix (sparse)", MBS_RESULTS({ "M", val, p->nnz, 1, MBS_IX_NONE, 0 }));
}
