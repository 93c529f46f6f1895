/*
 * lin_ali3p.h - the linearization of one ALI3-P step, shared by
 * the DDM (ddm_ali3p.c) and the discrete adjoint (davm_ali3p.c)
 * (internal; lin_ali3p.c, docs/sensitivity.md).
 */
#ifndef MBS_LIN_ALI3P_H
#define MBS_LIN_ALI3P_H

#include <lapacke.h>

#include "sens_common.h"

struct mbs_form_step;

/* What the linearization of a step needs: its end time and length, the
 * converged z, the projected zd, zdd, the unprojected zd*, zdd*, lambda*
 * and the branch taken (the projections applied). */
typedef struct sens_ali_rec {
    double t, h;
    const double *z, *zd, *zdd, *zds, *zdds, *lam;
    int vel, acc;
} sens_ali_rec;

/* Workspace (allocated once per run). */
typedef struct sens_ali_lin {
    int n, nc, np, nu;   /* nu = 3 n + np: the input columns (y_n, rho) */
    double *base;
    double *M, *Fz, *Fzd, *S, *Hv, *Ha, *Aq;   /* n x n (row-major; S col-major) */
    double *SU, *KN, *KB;   /* the index-3 stage in the singular basis: S U, U_N^T S U_N (LU), U_N^T S U_R */
    double *Phi, *Vz, *Az, *Azd, *dPhi;                 /* nc x n row-major */
    double *Fp, *Hvp, *Hap, *DR2, *DR3;                 /* n x np (column per parameter) */
    double *Pp, *Vp, *Ap;                               /* nc x np */
    double *r, *zp, *zdp, *zddn, *wv, *v, *rhs, *vv, *va, *dr, *x1, *e, *tmp;   /* n */
    double *phi, *phid, *phidd, *sig, *kap, *dphi, *dphid, *dphidd, *viol;                  /* nc */
    double *dx;                                         /* nx */
    lapack_int *ipiv;   /* n + nc */
    double *Kp;         /* (n + nc)^2 + n + nc: the penalty equations at t0 (mbs_form_penalty_factor) */
    /* projections in the singular basis of Phi_z^T = U Sigma V^T (graded: accurate for any right-hand side) */
    double *svA, *sv, *U, *VT, *K, *UMU, *svwork, *y;
    int svlwork, rank;
    int *force_only;   /* np: 1 if the parameter only sets numbers of force elements */
    int *dynamic;      /* np: 1 if it moves no kinematic quantity (mbs_form_param_dynamic) */
    int *skip;         /* np: 1 = form no columns for it (set by the caller; the DAVM's
                          element-only parameters, whose products come from sens_pprod) */
    int *pc, npc;      /* the parameters not skipped (sens_ali_lin_form) */
    /* the step last formed (sens_ali_lin_form) */
    double h, sa;
    int vel, acc, iterative;
    /* the transposed step's adjoints (sens_ali_lin_reverse) */
    double *zpb, *zdpb, *zddnb, *wvb, *vb, *z1b, *zd1b, *zdd1b, *rhsb, *xsb;   /* n */
    double *dphib, *gb, *gvb, *gab;                                          /* nc */
} sens_ali_lin;

int sens_ali_lin_create(sens_ali_lin *w, const mbs_model *m, int np);
void sens_ali_lin_free(sens_ali_lin *w);

/* The step's linearization y_{n+1}' = A y_n' + B rho', y = (z, zd, zdd):
 * sens_ali_lin_form forms its matrices at the record (point Jacobians,
 * factors; the parameter columns of the parameters not skipped). Uses r->d
 * (time, kinematics); with a team (r->team, the DDM) the parameter and
 * state columns run on its threads. */
int sens_ali_lin_form(sens_ali_lin *w, sens_run *r, const mbs_sim_options *so, const sens_ali_rec *st,
                      mbs_error *err);
/* The DDM: form, then Yout = A Yin + B (3n x np column-major, Yin the
 * sensitivities of y_n), each column through the step's linear algebra,
 * on the threads of r's team (sens_team; its column workspaces hold at
 * least sens_ali_lin_thread_ws doubles). */
int sens_ali_lin_step(sens_ali_lin *w, sens_run *r, const mbs_sim_options *so, const sens_ali_rec *st,
                      const double *Yin, double *Yout, mbs_error *err);
/* A thread's copy of w for the DDM's columns: the step's matrices shared
 * (read only), the column scratch of its own in ws
 * (sens_ali_lin_thread_ws doubles). */
size_t sens_ali_lin_thread_ws(const sens_ali_lin *w);
/* The scratch of a thread of r's team for sens_ali_lin_form's columns
 * (the parameters' tangents and the state columns of the projected
 * state): at least this many doubles in its column workspace. */
size_t sens_ali_lin_form_ws(const sens_ali_lin *w, const mbs_model *m);
void sens_ali_lin_thread(const sens_ali_lin *w, double *ws, sens_ali_lin *wt);
/* The DAVM, after sens_ali_lin_form: the transposed step for the adjoint
 * abar of y_{n+1} (3n): abar_in = A^T abar (3n), gp[j] += (B^T abar)_j for
 * the parameters not skipped, and wbar (n) the adjoint of the index-3
 * stage's residual w, whose parameter columns are dr/drho at (z, zd*, zdd*)
 * (a skipped parameter's part of B^T abar is wbar . dr/drho_j). */
void sens_ali_lin_reverse(sens_ali_lin *w, const double *abar, double *abar_in, double *gp, double *wbar);

/* The initial sensitivities Y0 = d y_0 / d rho (3n x np column-major):
 * kinematic sensitivities of the assembly and the velocity problem, then
 * the penalty accelerations' derivative. */
int sens_ali_lin_init(sens_ali_lin *w, sens_run *r, const mbs_sim_options *so, double t, const double *z,
                      const double *zd, const double *zdd, double *Y0, mbs_error *err);

/* rec from the stepper's record and the integrator's state z, zd, zdd
 * (copy: into the arrays rec points to, else aliasing them). */
void sens_ali_rec_from_step(sens_ali_rec *rec, const struct mbs_form_step *st, const double *z, const double *zd,
                            const double *zdd, int n, int nc, int copy);

#endif
