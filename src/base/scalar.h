/*
 * scalar.h - the scalar type of the computational kernels.
 *
 * Every kernel (joint motion, kinematics, inverse dynamics, mass matrix,
 * forward dynamics) is written once in terms of `mreal` and compiled twice:
 *
 *   - normally, with mreal = double: this is what libmbsens exports;
 *   - with -DMBS_COMPLEX, mreal = double complex: an internal library used
 *     by the test suite for complex-step differentiation
 *     (f'(x) ~ Im f(x + ih) / h, exact to round-off for h = 1e-30).
 *
 * Rules for kernel code so that both builds are right:
 *   - use only + - * / on mreal and the M* math macros below;
 *   - never branch on an mreal value (complex step must follow one path);
 *     use MRE() to take the real part where a decision is unavoidable;
 *   - name every kernel symbol through MBS_K() so the two builds coexist.
 */
#ifndef MBS_SCALAR_H
#define MBS_SCALAR_H

#include <math.h>

#ifdef MBS_COMPLEX
#include <complex.h>
typedef double complex mreal;
#define MBS_K(name) name##_cs
#define MSIN(x) csin(x)
#define MCOS(x) ccos(x)
#define MSQRT(x) csqrt(x)
#define MPOW(x, y) cpow(x, y)
#define MRE(x) creal(x)
#define MIM(x) cimag(x)
#else
typedef double mreal;
#define MBS_K(name) name
#define MSIN(x) sin(x)
#define MCOS(x) cos(x)
#define MSQRT(x) sqrt(x)
#define MPOW(x, y) pow(x, y)
#define MRE(x) (x)
#define MIM(x) (0.0 * (x))
#endif

#endif
