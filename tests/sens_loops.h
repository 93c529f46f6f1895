/*
 * sens_loops.h - shared pieces of the closed-loop sensitivity tests
 * (test_sensitivity_loops.c: DDM; test_sensitivity_davm_loops.c: DAVM;
 * test_sensitivity_cavm_loops.c: CAVM).
 */
#ifndef MBS_TEST_SENS_LOOPS_H
#define MBS_TEST_SENS_LOOPS_H

#include "mbsens/mbsens.h"

/* Thesis Tables 7.4-7.6, "Reference" row: d psi_i / d (L_s1, L_s2, m_A1,
 * rG, L_A1) of the five-bar, 5 s at 1 ms. */
extern const double MBS_FIVEBAR_THESIS[3][5];
/* psi of the five-bar's ODE (digest thesis_ch7_8.md §2.6, independent
 * code: RK4 at 1e-4 s, whose error is far below its last digit). */
extern const double MBS_FIVEBAR_PSI[3];

/* CHECK psi of a five-bar run (formulation f, reference point ref, tf, dt
 * of the trapezoidal rule) against MBS_FIVEBAR_PSI: the run is off by its
 * discretization error, estimated from simulations at dt/2 and dt/4
 * (mbs_objective_trace; Richardson as mbs_test_order_error: 1.25 r'/(r' - 1)
 * |psi(h) - psi(h/2)|), plus half a unit of the reference's last digit. */
void mbs_test_check_fivebar_psi(const mbs_model *m, mbs_loop_formulation f, mbs_ref_point ref, double tf, double dt,
                                const double *psi, const char *title);

/* models/NAME.json (NAME.json when NAME contains a '/'), edited: when EXTRA
 * holds an "objectives" member the model's own is removed first; ",EXTRA" is
 * inserted before the final brace and "PARAMS," first in its parameters
 * (EXTRA and PARAMS may be NULL). NULL after a failed CHECK. */
mbs_model *mbs_test_load_edited(const char *name, const char *extra, const char *params);

/* models/NAME.json (slider_crank: the thesis §7.2 objectives;
 * fourbar_redundant, quarter_car: parameters and objectives added) as the
 * closed-loop sensitivity tests use them. */
mbs_model *mbs_test_load_sens_case(const char *name);

/* The options mbs_test_sens uses. */
mbs_sens_options mbs_test_sens_options(const mbs_model *m, mbs_loop_formulation f, mbs_sens_method meth,
                                       mbs_ref_point ref, double tf, double dt, double tol, double fd_step,
                                       const mbs_sim_options *base);

/* mbs_sensitivity with these settings on top of the model's (or of *base);
 * res is zeroed first; the status is CHECKed and returned. */
int mbs_test_sens(const mbs_model *m, mbs_loop_formulation f, mbs_sens_method meth, mbs_ref_point ref, double tf,
                  double dt, double tol, double fd_step, const mbs_sim_options *base, mbs_sens_result *res);

/* max over objectives of max_j |a_ij - b_ij| / max_j |b_ij| (b: nobj x
 * nparam, row-major); INFINITY if any difference is NaN. */
double mbs_test_grad_err(const mbs_sens_result *a, const double *b);

/* Prints psi and the gradient of r, one objective per line, `digits`
 * significant digits per entry. */
void mbs_test_print_grad(const char *title, const mbs_sens_result *r, int digits);

/* A program objective that is zero everywhere (mbs_sens_objective_fn): with
 * it every parameter takes its column in the adjoints (a program's
 * objective may read any parameter), so it compares the element-only
 * parameters' adjoint products with columns. */
int mbs_test_zero_objective(void *user, double t, int nq, const double *q, const double *qd, const double *qdd,
                            int nparam, const double *rho, double *g, double *g_q, double *g_qd, double *g_qdd,
                            double *g_rho);

#endif
