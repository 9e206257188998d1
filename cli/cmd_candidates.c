/*
 * duet derive-candidates: the greedy max-coverage ordering of configurations over the shapes of
 * measurement corpora, per arch, with coverage curves; the file the tuner reads as its candidate
 * set.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "duet/tune.h"
#include "tune/internal.h"

enum { OPT_CORPUS = OPT_FIRST_PRIVATE, OPT_TOL };

#define CMD_CANDS_MAX_CORPORA 64

static void cmd_candidates_usage(FILE *f)
{
    fprintf(f,
            "usage: duet derive-candidates --corpus FILE [FILE...] [--tol T] [--json|--csv] [-o FILE]\n"
            "\n"
            "Orders the configurations of measurement corpora (duet calibrate collect) so that the first k cover the\n"
            "most shapes: a configuration covers a shape when its median is within the tolerance of the shape's best.\n"
            "Greedy: take the configuration covering the most uncovered shapes (ties: lowest mean time relative to\n"
            "each shape's best), until none adds coverage; then each uncovered shape's own best. One ordering per\n"
            "arch, with the coverage curve: for each k, the share of shapes within the tolerance and the mean and\n"
            "max slowdown of the best of the first k against each shape's best. CTA counts are stored as fractions\n"
            "of the SMs so the set transfers across SM counts. The tuner reads the --json file (docs/tuning.md).\n"
            "\n"
            "options:\n"
            "  --corpus FILE         a corpus file, duet-corpus/2 or /1 (repeat the flag or list more files after it)\n"
            "  --tol T               coverage tolerance as a fraction (default 0.03)\n"
            "  --json                the candidate set, the file the tuner reads (schema duet-candidates/1)\n"
            "  --csv                 the orderings and coverage curves as CSV, one row per arch and k\n"
            "  -o, --output FILE     write the result (text, --json or --csv) to FILE instead of standard output\n"
            "                        (atomically)\n"
            "  -h, --help            this text\n"
            "\n"
            "examples:\n"
            "  duet derive-candidates --corpus tuning_data/h200_world2.json --json -o tuning_data/candidate_set.json\n"
            "  duet derive-candidates --corpus a.json b.json --tol 0.02\n"
            "  duet derive-candidates --corpus a.json --csv -o coverage.csv\n");
}

/* The orderings' table (text per arch, CSV of every arch; the JSON is the candidate set file). */
static const duet__col_t cmd_candidates_cols[] = {
    {"arch", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
    {"k", NULL, NULL, "%4lld", DUET__CELL_INT, 0, 0, NULL},
    {"mode", NULL, NULL, "  %-10s", DUET__CELL_STR, 0, 0, NULL},
    {"gemm_frac", NULL, NULL, " %9.4f", DUET__CELL_NUM, 0, 0, NULL},
    {"comm_frac", NULL, NULL, " %9.4f", DUET__CELL_NUM, 0, 0, NULL},
    {"tile", NULL, NULL, " %-12s", DUET__CELL_STR, 0, 0, NULL},
    {"gain", NULL, NULL, " %5lld", DUET__CELL_INT, 0, 0, NULL},
    {"mean_rel", NULL, NULL, " %8.4f", DUET__CELL_NUM, 0, 0, NULL},
    {"by", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
    {"share_within_tol", "within", NULL, "   %8.1f%%", DUET__CELL_NUM, 100, 0, NULL},
    {"mean_slowdown", "mean_slow", NULL, " %9.4f", DUET__CELL_NUM, 0, 0, NULL},
    {"max_slowdown", "max_slow", NULL, " %9.4f", DUET__CELL_NUM, 0, 0, NULL},
    {"note", "", NULL, "%s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
};

static void cmd_candidates_table(duet__table_t *t)
{
    duet__table_init(t, cmd_candidates_cols, (int)(sizeof(cmd_candidates_cols) / sizeof(cmd_candidates_cols[0])));
}

/* One arch's ordering, a row per configuration (no coverage: NaN). */
static void cmd_candidates_rows(duet__table_t *t, const duet_tune_candset_arch_t *A)
{
    for (size_t i = 0; i < A->n_order; i++) {
        const duet_tune_cand_t *x = &A->order[i];
        const duet_tune_coverage_t *v = i < A->n_coverage ? &A->coverage[i] : NULL;
        duet__table_str(t, A->arch);
        duet__table_int(t, (long long)i + 1);
        duet__table_str(t, duet_mode_name(x->mode));
        duet__table_num(t, x->gemm_frac);
        duet__table_num(t, x->comm_frac);
        duet__table_strf(t, "%dx%dx%d", (int)x->tile.bm, (int)x->tile.bn, (int)x->tile.bk);
        duet__table_int(t, x->gain);
        duet__table_num(t, x->mean_rel);
        duet__table_str(t, x->shape_best ? "shape_best" : "greedy");
        duet__table_num(t, v ? v->share_within_tol : NAN);
        duet__table_num(t, v ? v->mean_slowdown : NAN);
        duet__table_num(t, v ? v->max_slowdown : NAN);
        duet__table_str(t, x->shape_best ? "  (a shape's own best)" : "");
    }
}

/* The text: per arch, what its corpora hold, then its ordering. */
static int cmd_candidates_print(cli_out_t *o, const duet_tune_candset_t *set)
{
    FILE *f = o->f;
    int rc = CLI_EXIT_OK;
    for (size_t a = 0; a < set->n_archs && rc == CLI_EXIT_OK; a++) {
        const duet_tune_candset_arch_t *A = &set->archs[a];
        fprintf(f, "%s%s: %d shapes, SMs", a ? "\n" : "", A->arch, (int)A->n_shapes);
        for (int32_t i = 0; i < A->n_sms; i++)
            fprintf(f, "%s%d", i ? "," : " ", (int)A->sms[i]);
        fprintf(f, ", worlds");
        for (int32_t i = 0; i < A->n_worlds; i++)
            fprintf(f, "%s%d", i ? "," : " ", (int)A->worlds[i]);
        fprintf(f, ", tolerance %.1f %%\n\n", set->tol * 100);
        duet__table_t t;
        cmd_candidates_table(&t);
        cmd_candidates_rows(&t, A);
        rc = cli_out_table(o, "derive-candidates", &t, 0, 0, NULL, NULL);
    }
    return rc;
}

static int cmd_candidates_csv(cli_out_t *o, const duet_tune_candset_t *set)
{
    duet__table_t t;
    cmd_candidates_table(&t);
    for (size_t a = 0; a < set->n_archs; a++)
        cmd_candidates_rows(&t, &set->archs[a]);
    return cli_out_table(o, "derive-candidates", &t, 0, 1, NULL, NULL);
}

/* derive-candidates' flags. */
typedef struct cmd_cands_opts {
    const char *files[CMD_CANDS_MAX_CORPORA];
    size_t n_files;
    double tol;
    cli_outopt_t oo;
    int help;
} cmd_cands_opts_t;

/* One more corpus file (--corpus, or a file after the options). @return an exit code. */
static int cmd_cands_add_file(cmd_cands_opts_t *o, const char *cmd, const char *path)
{
    if (o->n_files >= CMD_CANDS_MAX_CORPORA)
        return cli_usage_error(cmd, "--corpus: at most %d files", CMD_CANDS_MAX_CORPORA);
    o->files[o->n_files++] = path;
    return CLI_EXIT_OK;
}

static int cmd_cands_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cmd_cands_opts_t *o = arg0;
    switch (opt) {
    case OPT_CORPUS:
        return cmd_cands_add_file(o, cmd, arg);
    case OPT_TOL:
        if (cli_parse_double(arg, 0, 1, &o->tol) != 0)
            return cli_usage_error(cmd, "--tol: '%s' is not a fraction in [0, 1] (0.03 is 3 %%)", duet__q(arg));
        return CLI_EXIT_OK;
    default:
        return cli_out_option(&o->oo, opt, arg) ? CLI_EXIT_OK : CLI_OPT_UNKNOWN;
    }
}

/* Parse argv (files after the options are more corpora). @return an exit code (CLI_EXIT_OK to go on). */
static int cmd_cands_parse(cmd_cands_opts_t *o, const char *cmd, int argc, char **argv)
{
    static const struct option longopts[] = {{"corpus", required_argument, NULL, OPT_CORPUS},
                                             {"tol", required_argument, NULL, OPT_TOL},
                                             CLI_OUTPUT_LONGOPTS,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int rc = cli_getopt(cmd, argc, argv, longopts, cmd_cands_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help)
        return rc;
    for (; optind < argc; optind++)
        if ((rc = cmd_cands_add_file(o, cmd, argv[optind])) != CLI_EXIT_OK)
            return rc;
    if (o->n_files == 0)
        return cli_usage_error(cmd, "give at least one --corpus FILE");
    return cli_out_validate(cmd, &o->oo);
}

/* Derive the set from the loaded corpora and write it. @return an exit code. */
static int cmd_cands_write(const cmd_cands_opts_t *o, const char *cmd, const duet_corpus_t *corpora)
{
    duet_tune_candset_t set;
    duet_status_t st = duet_tune_candset_derive(corpora, o->n_files, o->tol, &set);
    if (st < 0)
        return cli_fail(cmd, st);
    cli_out_t out;
    int rc;
    if ((rc = cli_out_open(&out, cmd, o->oo.path)) == CLI_EXIT_OK) {
        if (o->oo.json) {
            char *text = NULL;
            size_t len = 0;
            st = duet__tune_candset_text(&set, o->files, o->n_files, &text, &len);
            if (st < 0)
                rc = cli_fail(cmd, st);
            else
                fwrite(text, 1, len, out.f);
            free(text);
        } else {
            rc = o->oo.csv ? cmd_candidates_csv(&out, &set) : cmd_candidates_print(&out, &set);
        }
        rc = cli_out_close(&out, cmd, rc);
    }
    duet_tune_candset_free(&set);
    return rc;
}

int cmd_derive_candidates(int argc, char **argv)
{
    const char *cmd = "derive-candidates";
    cmd_cands_opts_t o = {.n_files = 0, .tol = DUET_TUNE_DEFAULT_TOL, .oo = {0, 0, NULL}, .help = 0};
    int rc = cmd_cands_parse(&o, cmd, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_candidates_usage(stdout);
        return rc;
    }
    duet_corpus_t *corpora = calloc(o.n_files, sizeof(*corpora));
    if (corpora == NULL) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAILED;
    }
    size_t loaded = 0;
    duet_status_t st = DUET_OK;
    for (; loaded < o.n_files && st == DUET_OK; loaded++)
        st = duet_corpus_load(o.files[loaded], &corpora[loaded]);
    if (st < 0) {
        loaded--; /* the failed load wrote nothing */
        rc = cli_fail(cmd, st);
    } else {
        rc = cmd_cands_write(&o, cmd, corpora);
    }
    for (size_t i = 0; i < loaded; i++)
        duet_corpus_free(&corpora[i]);
    free(corpora);
    return rc;
}
