/* model_compare.h - whether two models are the same model, for the tests. */
#ifndef MBS_MODEL_COMPARE_H
#define MBS_MODEL_COMPARE_H

#include "testutil.h"

/* 0 if a and b are the same model: the same sizes, names, indices, offsets
 * and flags, and every number bit for bit (model vector, initial states,
 * spline knots, parameters, settings, objectives). Otherwise the number of
 * differences, the first ones reported by failed CHECKs naming `label`. */
int mbs_test_same_model(const mbs_model *a, const mbs_model *b, const char *label);

#endif
