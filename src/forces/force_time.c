/* force_time.c - the time factor of a force element: its time function at
 * t (1 without one), and the factor's tangent along a model-vector
 * direction. The elements that scale their loads by it call these. */
#include "force.h"

mreal MBS_K(mbs_force_time_factor)(const mbs_model *m, const mbs_force_info *fe,
                                   const mreal *x, mreal t)
{
    if (fe->func < 0) return 1;
    return MBS_K(mbs_func_eval)(&m->func[fe->func], x, t, 0);
}

mreal MBS_K(mbs_force_time_factor_d)(const mbs_model *m, const mbs_force_info *fe,
                                     const mreal *x, const mreal *dx, mreal t)
{
    if (fe->func < 0) return 0;
    return MBS_K(mbs_func_eval_d)(&m->func[fe->func], x, dx, t);
}
