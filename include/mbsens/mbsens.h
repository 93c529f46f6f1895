/*
 * mbsens.h - recursive multibody dynamics with analytical sensitivities.
 * Umbrella header; see docs/api.md.
 */
#ifndef MBSENS_H
#define MBSENS_H

#define MBSENS_VERSION_MAJOR 0
#define MBSENS_VERSION_MINOR 1
#define MBSENS_VERSION_PATCH 0
#define MBSENS_VERSION_STRING "0.1.0"

#include "error.h"
#include "model.h"
#include "data.h"
#include "kinematics.h"
#include "jacobians.h"
#include "dynamics.h"
#include "forces.h"
#include "generate.h"
#include "derivatives.h"
#include "sparse.h"
#include "manifold.h"
#include "constraints.h"
#include "simulate.h"
#include "check.h"
#include "sensitivity.h"
#include "optimize.h"
#include "batch.h"

#ifdef __cplusplus
extern "C" {
#endif
const char *mbs_version(void);
#ifdef __cplusplus
}
#endif
#endif
