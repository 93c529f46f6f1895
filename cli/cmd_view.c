/*
 * cmd_view.c - `mbsens view MODEL [TRAJECTORY.csv] -o FILE.html
 * [--sensitivity RESULT.json] [--trace POINT]`: one self-contained HTML
 * page (no server, no network) that shows the model in 3D, plays a run of
 * `mbsens simulate` back with its curves, and shows a gradient of
 * `mbsens sensitivity --json` (docs/viewer.md).
 *
 * The page is viewer/dist/viewer.html (three.js and uPlot bundled by
 * esbuild, committed), embedded in this program at build time
 * (cmake/embed_file.c); this command fills in its data: the scene
 * (view_scene.c) and the run (view_run.c), all computed here through the
 * public API. The file is written atomically.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "view_page.h"

extern const char mbs_viewer_page[];
extern const unsigned long mbs_viewer_page_len;

static void usage(FILE *out)
{
    fputs("Usage: mbsens view MODEL [TRAJECTORY.csv] -o FILE.html [--sensitivity RESULT.json]\n"
          "                   [--trace POINT] [--title TEXT]\n"
          "\n"
          "Write one self-contained HTML page (it opens offline in any browser)\n"
          "showing MODEL (JSON or URDF) in 3D: URDF visual shapes, or a figure of\n"
          "bodies, joints, points and springs; names on hover; orbit, pan, zoom.\n"
          "With TRAJECTORY.csv (from mbsens simulate): playback (play/pause, speed,\n"
          "time slider, trace of a point) and plots of the coordinates, the\n"
          "energies, the constraint violations and the objective integrands, linked\n"
          "to the time slider. With --sensitivity: the gradient as a coloured table\n"
          "and a bar chart per objective. See docs/viewer.md.\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE.html      the page (required; written atomically)\n"
          "  --sensitivity RESULT.json   output of mbsens sensitivity --json\n"
          "  --trace POINT               trace this named point (body.point) at first\n"
          "  --title TEXT                title shown on the page (default: model and run)\n"
          "  -h, --help                  show this help and exit\n", out);
}

static void write_info(cli_buf *b, const mbs_model *m, const view_scene *sc, const view_run *r, const char *csv)
{
    char line[1024];
    cli_buf_puts(b, "\"info\": [");
    snprintf(line, sizeof line, "%s: %d bodies, %d coordinates, %d named points, %d force elements, %d loops",
             mbs_model_name(m), mbs_model_nbodies(m), mbs_model_nq(m), mbs_model_npoints(m), mbs_model_nforces(m),
             mbs_model_ncuts(m));
    view_str(b, line);
    if (mbs_model_source(m)) {
        snprintf(line, sizeof line, "model file: %s", mbs_model_source(m));
        cli_buf_puts(b, ", ");
        view_str(b, line);
    }
    if (csv)
        snprintf(line, sizeof line, "run: %s, %d frames, t = %g .. %g s", csv, r->n, r->t[0], r->t[r->n - 1]);
    else
        snprintf(line, sizeof line, "no run: the model at its initial state");
    cli_buf_puts(b, ", ");
    view_str(b, line);
    for (int k = 0; k < sc->nnotes; k++) {
        cli_buf_puts(b, ", ");
        view_str(b, sc->notes[k]);
    }
    cli_buf_puts(b, "],\n");
}

typedef struct view_args {
    const char *model, *csv, *out, *sens, *trace, *title;
} view_args;

static int build_data(const char *cmd, const view_args *a, const mbs_model *m, mbs_data *d, cli_buf *b)
{
    view_run r;
    view_scene sc;
    memset(&sc, 0, sizeof sc);
    int rc = a->csv ? view_run_read(cmd, a->csv, m, &r) : view_run_initial(cmd, m, d, &r);
    if (rc) return rc;
    if (mbs_kinematics(m, d, r.q, NULL, NULL) != MBS_OK) {
        cli_error(cmd, "%s: %s", a->csv ? a->csv : mbs_model_name(m), mbs_data_error(d));
        view_run_free(&r);
        return CLI_EXIT_FAIL;
    }
    char title[1024];
    if (a->title) snprintf(title, sizeof title, "%s", a->title);
    else if (a->csv) snprintf(title, sizeof title, "%s: %s", mbs_model_name(m),
                              strrchr(a->csv, '/') ? strrchr(a->csv, '/') + 1 : a->csv);
    else snprintf(title, sizeof title, "%s", mbs_model_name(m));
    cli_buf_puts(b, "{\"version\": 1,\n\"model\": ");
    view_str(b, mbs_model_name(m));
    cli_buf_puts(b, ",\n\"title\": ");
    view_str(b, title);
    double g[3];
    mbs_model_gravity(m, g);
    cli_buf_puts(b, ",\n\"gravity\": ");
    view_vec(b, g, 3);
    cli_buf_puts(b, ",\n");
    int follow = 0;
    rc = view_scene_write(cmd, m, d, &sc, b);
    if (!rc) rc = view_run_write(cmd, a->csv, m, d, &r, &sc, &follow, b);
    if (!rc) rc = view_sensitivity_write(cmd, a->sens, b);
    if (!rc) {
        write_info(b, m, &sc, &r, a->csv);
        cli_buf_puts(b, "\"trace\": ");
        if (a->trace) view_str(b, a->trace);
        else cli_buf_puts(b, "null");
        cli_buf_printf(b, ",\n\"follow\": %s\n}", follow ? "true" : "false");
    }
    view_scene_free(&sc);
    view_run_free(&r);
    return rc;
}

static int write_page(const char *cmd, const char *out, const char *input, const cli_buf *data)
{
    const char *mark = strstr(mbs_viewer_page, "@MBS_DATA@");
    if (!mark) {
        cli_error(cmd, "the embedded page has no @MBS_DATA@ (viewer/dist/viewer.html)");
        return CLI_EXIT_FAIL;
    }
    cli_buf page = {0};
    size_t head = (size_t)(mark - mbs_viewer_page);
    cli_buf_printf(&page, "%.*s", (int)head, mbs_viewer_page);
    cli_buf_puts(&page, data->s);
    cli_buf_puts(&page, mark + strlen("@MBS_DATA@"));
    int rc = CLI_EXIT_FAIL;
    if (page.oom || data->oom) cli_error(cmd, "out of memory");
    else if (cli_write_atomic(cmd, "-o", out, input, page.s, page.len) == 0) rc = CLI_EXIT_OK;
    cli_buf_free(&page);
    return rc;
}

static const cli_opt view_opts[] = {
    CLI_ROW(view_args, "--output", "-o", CLI_STRING, out),
    CLI_ROW(view_args, "--sensitivity", NULL, CLI_STRING, sens),
    CLI_ROW(view_args, "--trace", NULL, CLI_STRING, trace),
    CLI_ROW(view_args, "--title", NULL, CLI_STRING, title),
};

const cli_command cli_view_command = {
    "view", usage, view_opts, CLI_NELEM(view_opts), NULL, 0, 2, 1, "missing MODEL argument", CLI_WORDS_VALUE,
};

int cmd_view(int argc, char **argv)
{
    const char *cmd = "view";
    const char *pos[2];
    view_args a = { 0 };
    int npos = 0;
    int rc = cli_parse(&cli_view_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    if (!a.out || !strcmp(a.out, "-")) return cli_usage_error(cmd, usage, "give the page's file with -o FILE.html");
    a.model = pos[0];
    a.csv = npos > 1 ? pos[1] : NULL;
    mbs_model *m = cli_load_model(cmd, a.model);
    if (!m) return CLI_EXIT_FAIL;
    if (a.trace && mbs_point_find(m, a.trace) < 0) {
        rc = cli_usage_error(cmd, usage, "--trace: model %s has no point '%s' (expected body.point)",
                             mbs_model_name(m), a.trace);
        mbs_model_free(m);
        return rc;
    }
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    cli_buf data = {0};
    rc = d ? build_data(cmd, &a, m, d, &data) : CLI_EXIT_FAIL;
    if (!d) cli_error(cmd, "%s", err.msg);
    if (!rc) rc = write_page(cmd, a.out, a.model, &data);
    cli_buf_free(&data);
    mbs_data_free(d);
    mbs_model_free(m);
    return rc;
}
