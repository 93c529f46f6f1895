/*
 * scribble.h - the test hook behind the guarantee that a call's result
 * never depends on the calls made before it on the same mbs_data
 * (tests/test_call_order.c; docs/api.md). Internal: not installed, not part
 * of the API.
 */
#ifndef MBS_SCRIBBLE_H
#define MBS_SCRIBBLE_H

#include <stdint.h>

#include "mbsens/data.h"

/* Fill all the scratch of d (src/kernels/data.h) with garbage drawn from
 * seed, and its error message with a placeholder. What stays is what a
 * call may depend on: the model, the settings (reference point, frames,
 * time), the user loads, and the constants the workspaces hold since
 * their creation. A routine that reads scratch it has not written then gives a
 * result that differs from a fresh data's (the garbage is random bits:
 * values of any exponent, now and then a NaN or an infinity). The complex
 * and double kernel workspaces on their own: mbs_ws_scribble
 * (src/kernels/kernels.h). */
void mbs_data_scribble(mbs_data *d, uint64_t seed);

#endif
