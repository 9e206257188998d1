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

static void cmd_candidates_print(FILE *f, const duet_tune_candset_t *set)
{
    for (size_t a = 0; a < set->n_archs; a++) {
        const duet_tune_candset_arch_t *A = &set->archs[a];
        fprintf(f, "%s%s: %d shapes, SMs", a ? "\n" : "", A->arch, (int)A->n_shapes);
        for (int32_t i = 0; i < A->n_sms; i++)
            fprintf(f, "%s%d", i ? "," : " ", (int)A->sms[i]);
        fprintf(f, ", worlds");
        for (int32_t i = 0; i < A->n_worlds; i++)
            fprintf(f, "%s%d", i ? "," : " ", (int)A->worlds[i]);
        fprintf(f, ", tolerance %.1f %%\n\n", set->tol * 100);
        fprintf(f, "%4s  %-10s %9s %9s %-12s %5s %8s   %9s %9s %9s\n", "k", "mode", "gemm_frac", "comm_frac", "tile",
                "gain", "mean_rel", "within", "mean_slow", "max_slow");
        for (size_t i = 0; i < A->n_order; i++) {
            const duet_tune_cand_t *c = &A->order[i];
            const duet_tune_coverage_t *v = i < A->n_coverage ? &A->coverage[i] : NULL;
            char tile[48];
            snprintf(tile, sizeof(tile), "%dx%dx%d", (int)c->tile.bm, (int)c->tile.bn, (int)c->tile.bk);
            fprintf(f, "%4zu  %-10s %9.4f %9.4f %-12s %5d %8.4f   %8.1f%% %9.4f %9.4f%s\n", i + 1,
                    duet_mode_name(c->mode), c->gemm_frac, c->comm_frac, tile, (int)c->gain, c->mean_rel,
                    v ? v->share_within_tol * 100 : 0, v ? v->mean_slowdown : 0, v ? v->max_slowdown : 0,
                    c->shape_best ? "  (a shape's own best)" : "");
        }
    }
}

static const char *const cmd_candidates_cols[] = {
    "arch", "k",        "mode", "gemm_frac",        "comm_frac",     "tile",
    "gain", "mean_rel", "by",   "share_within_tol", "mean_slowdown", "max_slowdown"};

static void cmd_candidates_csv(FILE *f, const duet_tune_candset_t *set)
{
    duet__csv_t c;
    duet__csv_init(&c, f);
    duet__csv_names(&c, cmd_candidates_cols, sizeof(cmd_candidates_cols) / sizeof(cmd_candidates_cols[0]));
    for (size_t a = 0; a < set->n_archs; a++) {
        const duet_tune_candset_arch_t *A = &set->archs[a];
        for (size_t i = 0; i < A->n_order; i++) {
            const duet_tune_cand_t *x = &A->order[i];
            const duet_tune_coverage_t *v = i < A->n_coverage ? &A->coverage[i] : NULL;
            duet__csv_str(&c, A->arch);
            duet__csv_printf(&c, "%zu", i + 1);
            duet__csv_str(&c, duet_mode_name(x->mode));
            duet__csv_num(&c, x->gemm_frac);
            duet__csv_num(&c, x->comm_frac);
            duet__csv_printf(&c, "%dx%dx%d", (int)x->tile.bm, (int)x->tile.bn, (int)x->tile.bk);
            duet__csv_printf(&c, "%d", (int)x->gain);
            duet__csv_num(&c, x->mean_rel);
            duet__csv_str(&c, x->shape_best ? "shape_best" : "greedy");
            duet__csv_num(&c, v ? v->share_within_tol : NAN);
            duet__csv_num(&c, v ? v->mean_slowdown : NAN);
            duet__csv_num(&c, v ? v->max_slowdown : NAN);
            duet__csv_end(&c);
        }
    }
}

int cmd_derive_candidates(int argc, char **argv)
{
    static const struct option longopts[] = {{"corpus", required_argument, NULL, OPT_CORPUS},
                                             {"tol", required_argument, NULL, OPT_TOL},
                                             CLI_OUTPUT_LONGOPTS,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *cmd = "derive-candidates";
    const char *files[CMD_CANDS_MAX_CORPORA];
    size_t n_files = 0;
    double tol = DUET_TUNE_DEFAULT_TOL;
    int opt, rc;
    cli_outopt_t oo = {0, 0, NULL};
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cmd_candidates_usage(stdout);
            return CLI_EXIT_OK;
        case OPT_CORPUS:
            if (n_files >= CMD_CANDS_MAX_CORPORA)
                return cli_usage_error(cmd, "--corpus: at most %d files", CMD_CANDS_MAX_CORPORA);
            files[n_files++] = optarg;
            break;
        case OPT_TOL:
            if (cli_parse_double(optarg, 0, 1, &tol) != 0)
                return cli_usage_error(cmd, "--tol: '%s' is not a fraction in [0, 1] (0.03 is 3 %%)", duet__q(optarg));
            break;
        default:
            if (!cli_out_option(&oo, opt, optarg))
                return cli_getopt_error(cmd, argv, opt);
        }
    }
    for (; optind < argc; optind++) {
        if (n_files >= CMD_CANDS_MAX_CORPORA)
            return cli_usage_error(cmd, "--corpus: at most %d files", CMD_CANDS_MAX_CORPORA);
        files[n_files++] = argv[optind];
    }
    if (n_files == 0)
        return cli_usage_error(cmd, "give at least one --corpus FILE");
    if ((rc = cli_out_validate(cmd, &oo)) != CLI_EXIT_OK)
        return rc;

    duet_corpus_t *corpora = calloc(n_files, sizeof(*corpora));
    if (corpora == NULL) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAILED;
    }
    size_t loaded = 0;
    duet_tune_candset_t set;
    duet_status_t st = DUET_OK;
    for (; loaded < n_files && st == DUET_OK; loaded++)
        st = duet_corpus_load(files[loaded], &corpora[loaded]);
    if (st < 0) {
        loaded--; /* the failed load wrote nothing */
        rc = cli_fail(cmd, st);
        goto out;
    }
    st = duet_tune_candset_derive(corpora, n_files, tol, &set);
    if (st < 0) {
        rc = cli_fail(cmd, st);
        goto out;
    }
    cli_out_t o;
    if ((rc = cli_out_open(&o, cmd, oo.path)) == CLI_EXIT_OK) {
        if (oo.json) {
            char *text = NULL;
            size_t len = 0;
            st = duet__tune_candset_text(&set, files, n_files, &text, &len);
            if (st < 0)
                rc = cli_fail(cmd, st);
            else
                fwrite(text, 1, len, o.f);
            free(text);
        } else if (oo.csv) {
            cmd_candidates_csv(o.f, &set);
        } else {
            cmd_candidates_print(o.f, &set);
        }
        rc = cli_out_close(&o, cmd, rc);
    }
    duet_tune_candset_free(&set);
out:
    for (size_t i = 0; i < loaded; i++)
        duet_corpus_free(&corpora[i]);
    free(corpora);
    return rc;
}
