/*
 * view_page.h - the parts of `mbsens view` (cmd_view.c): the scene of a
 * model (view_scene.c), a run read from a CSV with what the page plots
 * (view_run.c), and the JSON pieces they write into the page's data.
 */
#ifndef MBS_VIEW_PAGE_H
#define MBS_VIEW_PAGE_H

#include "cli_util.h"

/* ---- JSON pieces for a document inlined in an HTML <script>: strings
 * escape <, > and & as \u00XX ---- */
void view_str(cli_buf *b, const char *s);
void view_vec(cli_buf *b, const double *x, int n);   /* 9 significant digits */
/* n bytes as base64 (a JSON string with the quotes) */
void view_base64(cli_buf *b, const void *data, size_t n);

/* ---- the scene (view_scene.c) ---- */
typedef struct view_scene {
    int nb;                /* moving bodies */
    int *drawn;            /* nb + 1: body has something drawn */
    double size;           /* model size: largest distance of a point from its body origin */
    int nnotes;
    char **notes;          /* what could not be drawn as given (missing meshes, ...) */
} view_scene;

/* Write the members "size", "radius", "bodies", "shapes", "points",
 * "springs" and "planes" of the page data (each followed by ",\n") for
 * model m, whose kinematics at a reference state are held in d (body-local
 * coordinates of named points and centres of mass are read from them).
 * Meshes of URDF visuals are searched relative to the model file.
 * CLI_EXIT_OK or CLI_EXIT_FAIL (message printed for cmd). */
int view_scene_write(const char *cmd, const mbs_model *m, mbs_data *d, view_scene *sc, cli_buf *b);
void view_scene_free(view_scene *sc);

/* ---- a run (view_run.c) ---- */
typedef struct view_run {
    int n;                 /* frames */
    int ncol;              /* columns of the CSV */
    double *t;             /* n */
    double *q, *qd, *qdd;  /* n x nq; qd, qdd NULL if the CSV has no such columns */
} view_run;

/* Read the trajectory CSV of `mbsens simulate` for model m: a header line
 * with t and every coordinate (NAME.qd and NAME.qdd optional, other
 * columns ignored), one row per time, times increasing. Errors name
 * FILE:LINE and the column. CLI_EXIT_OK or CLI_EXIT_FAIL (message printed). */
int view_run_read(const char *cmd, const char *path, const mbs_model *m, view_run *r);
/* One frame at the model's initial state (assembled if it has loops). */
int view_run_initial(const char *cmd, const mbs_model *m, mbs_data *d, view_run *r);
void view_run_free(view_run *r);

/* Write the members "frames" (times, and the poses of the drawn bodies as
 * base64 Float32) and "series" (coordinates; energies with velocities;
 * constraint violations for closed loops; objective integrands with
 * velocities and accelerations) of the page data, each followed by ",\n".
 * *follow: the first drawn body travels more than 3 model sizes. */
int view_run_write(const char *cmd, const char *csv, const mbs_model *m, mbs_data *d, const view_run *r,
                   const view_scene *sc, int *follow, cli_buf *b);

/* The member "sensitivity": the result of `mbsens sensitivity --json` in
 * FILE (checked: objectives, parameters, psi, gradient), or null. */
int view_sensitivity_write(const char *cmd, const char *path, cli_buf *b);

#endif
