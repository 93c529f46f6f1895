#include "sens_impl.h"
int sens_cavm(sens_run *r, mbs_sim_stats *s, mbs_error *err) { (void)r; (void)s; return mbs_error_set(err, MBS_ERR_UNSUPPORTED, "cavm: not yet"); }
