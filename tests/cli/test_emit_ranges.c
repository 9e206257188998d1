/*
 * `duet predict --emit`: every number each stack's settings carry is within that stack's documented
 * range at the version named, over random workloads on h200, mi300x and mi350x; and the verdict is
 * one, never "unreachable" and "use the vendor split" together.
 *
 * The ranges, from the libraries' sources (model/emit.c has them with the files): NCCL clamps
 * minCTAs/maxCTAs and NCCL_MIN_CTAS/NCCL_MAX_CTAS to 32 CTAs before 2.25 and 64 from 2.25; RCCL to
 * 32 (2.18.3), 64 (2.18.6) and 128 (2.20 on); an SM (CU) count target lies in [1, SMs - 1] beside a
 * collective of at least one CTA, and the GEMM's SMs and the collective's CTAs partition the chip;
 * PyTorch's carve-out and Transformer Engine's margin are the SMs withheld from the GEMM; TE's bulk
 * overlap runs all_gather and reduce_scatter only, and takes the place of NVTE_EXT_MARGIN_SM.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../cli_run.h"

typedef struct {
    const char *hw;
    int32_t sms;
    int amd;
} t_prof_t;

typedef struct {
    const char *key, *ver; /* request member and version */
    int32_t cap;           /* the CTA cap the version has */
} t_ver_t;

static cJSON *ask(const char *request)
{
    char *out = NULL;
    cr_assert_eq(duet_predict_json(request, &out), DUET_OK, "%s: %s", request, duet_last_error());
    cJSON *o = cJSON_Parse(out);
    cr_assert_not_null(o, "%s", out);
    duet_json_free(out);
    return o;
}

/* Every number of every settings line, held to the ranges; a line with a number no rule knows fails. */
static void t_check_settings(const cJSON *e, const t_prof_t *p, int32_t stack, int32_t coll, int32_t cap)
{
    const cJSON *vb = cJSON_GetObjectItem(e, "vendor_best"), *l;
    int g = (int)t_num(vb, "gemm_wgs"), c = (int)t_num(vb, "comm_wgs");
    cr_assert(c >= 1 && c <= cap, "%s %s: %d CTAs past the cap %d", p->hw, duet_stack_name(stack), c, cap);
    cr_assert(g >= 1 && g + c == p->sms, "%s: %d SMs + %d CTAs do not partition %d", p->hw, g, c, p->sms);
    int ctas_set = 0, target_set = 0, margins = 0, bulk = 0;
    cJSON_ArrayForEach(l, cJSON_GetObjectItem(e, "settings"))
    {
        const char *s = l->valuestring;
        int x;
        if (sscanf(s, "config.minCTAs = %d;", &x) == 1 || sscanf(s, "config.maxCTAs = %d;", &x) == 1 ||
            sscanf(s, "opts.config.min_ctas = %d", &x) == 1 || sscanf(s, "opts.config.max_ctas = %d", &x) == 1 ||
            sscanf(s, "NCCL_MIN_CTAS=%d", &x) == 1 || sscanf(s, "NCCL_MAX_CTAS=%d", &x) == 1) {
            cr_assert(x == c && x >= 1 && x <= cap, "%s: %d CTAs (cap %d)", s, x, cap);
            ctas_set++;
        } else if (sscanf(s, "int32_t sm_target = %d;", &x) == 1) {
            cr_assert(x == g && x >= 1 && x <= p->sms - 1, "%s", s);
            target_set++;
        } else if (sscanf(s, "torch._C._set_sm_carveout_experimental(%d)", &x) == 1) {
            cr_assert(x == p->sms - g && x >= 1 && x <= p->sms - 1, "%s", s);
            target_set++;
        } else if (sscanf(s, "NVTE_EXT_MARGIN_SM=%d", &x) == 1) {
            cr_assert(!p->amd && x == p->sms - g, "%s", s);
            margins++;
        } else if (strstr(s, "_MATMUL_DESC_SM_COUNT_TARGET = ") != NULL) {
            cr_assert(sscanf(strstr(s, " = ") + 3, "%d", &x) == 1 && x == g, "%s", s);
            target_set++;
        } else if (strstr(s, "\"num_sm\": ") != NULL) {
            cr_assert(stack == DUET_STACK_TE && (coll == DUET_COLL_ALL_GATHER || coll == DUET_COLL_REDUCE_SCATTER),
                      "TE's bulk overlap runs all_gather and reduce_scatter only: %s", s);
            cr_assert(sscanf(strstr(s, "\"num_sm\": ") + 10, "%d", &x) == 1 && x == c, "%s", s);
            cr_assert(strstr(s, "NVTE_EXT_MARGIN_SM unset") != NULL, "one margin only: %s", s);
            bulk++;
        } else if (s[0] != '#') {
            /* Code lines without numbers of the split (the config's init, the process group, the Lt path). */
            for (const char *q = s; *q; q++)
                cr_assert(!(*q >= '0' && *q <= '9') || strstr(s, "cublaslt") || strstr(s, "HIPBLASLT") ||
                              strstr(s, "CUBLASLT"),
                          "a number no rule checks: %s", s);
        }
    }
    cr_assert_geq(ctas_set, 1, "the collective's CTAs are set");
    cr_assert_geq(target_set + margins, 1, "the GEMM's SMs are set");
    cr_assert_leq(margins, 1, "one margin knob");
    cr_assert_eq(bulk, stack == DUET_STACK_TE && (coll == DUET_COLL_ALL_GATHER || coll == DUET_COLL_REDUCE_SCATTER));
}

Test(emit_ranges, every_emitted_number_within_the_stacks_range, .timeout = 600)
{
    static const t_prof_t profs[] = {{"h200", 132, 0}, {"mi300x", 304, 1}, {"mi350x", 256, 1}};
    static const t_ver_t nv[] = {{"nccl_version", "2.21", 32}, {"nccl_version", "2.27", 64}};
    static const t_ver_t amdv[] = {
        {"rccl_version", "2.18.3", 32}, {"rccl_version", "2.18.6", 64}, {"rccl_version", "2.20.5", 128}};
    duet_random_params_t rp = duet_random_default_params();
    rp.seed = 32;
    rp.max_dim = 8192;
    rp.max_comm_bytes = 64.0 * 1024 * 1024;
    rp.world = 8;
    duet_workloads_t set;
    cr_assert_eq(duet_workloads_random(&rp, 6, &set), DUET_OK, "%s", duet_last_error());
    int checked = 0;
    for (size_t w = 0; w < set.n; w++) {
        const duet_workload_t *wl = &set.w[w];
        for (size_t pi = 0; pi < 3; pi++) {
            const t_prof_t *p = &profs[pi];
            const t_ver_t *vers = p->amd ? amdv : nv;
            size_t nvers = p->amd ? 3 : 2;
            for (int32_t st = 0; st < DUET_STACK_COUNT; st++) {
                int runs = p->amd ? st == DUET_STACK_RCCL || st == DUET_STACK_TORCH || st == DUET_STACK_ENV
                                  : st != DUET_STACK_RCCL;
                for (size_t vi = 0; vi < nvers; vi++) {
                    char req[1024];
                    snprintf(req, sizeof(req),
                             "{\"hw\": \"%s\", \"collective\": \"%s\", \"dtype\": \"%s\", \"m\": %lld, \"n\": %lld, "
                             "\"k\": %lld, \"mc\": %lld, \"nc\": %lld, \"world\": %d, \"split_step\": 3, \"top\": 3, "
                             "\"emit\": \"%s\", \"%s\": \"%s\"}",
                             p->hw, duet_collective_name(wl->coll), duet_dtype_name(wl->dtype), (long long)wl->m,
                             (long long)wl->n, (long long)wl->k, (long long)wl->mc, (long long)wl->nc, wl->world,
                             duet_stack_name(st), vers[vi].key, vers[vi].ver);
                    if (!runs) {
                        char *out = NULL;
                        cr_assert_eq(duet_predict_json(req, &out), DUET_ERR_INVALID_ARG, "%s on %s",
                                     duet_stack_name(st), p->hw);
                        continue;
                    }
                    cJSON *o = ask(req);
                    const cJSON *e = cJSON_GetObjectItem(o, "emit"), *row;
                    cr_assert_not_null(e);
                    cr_assert_eq(t_num(e, "max_ctas"), vers[vi].cap, "%s %s %s", p->hw, duet_stack_name(st),
                                 vers[vi].ver);
                    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(e, "reachable")), "%s: a split is reachable", req);
                    /* The sweep offers vendor splits within the cap only. */
                    cJSON_ArrayForEach(
                        row, cJSON_GetObjectItem(o, "ranked")) if (strcmp(cJSON_GetObjectItem(row, "mode")->valuestring,
                                                                          "vendor") == 0)
                        cr_assert_leq(t_num(row, "comm_wgs"), vers[vi].cap);
                    t_check_settings(e, p, st, wl->coll, vers[vi].cap);
                    checked++;
                    cJSON_Delete(o);
                }
            }
        }
    }
    /* 6 workloads x (h200: 4 stacks x 2 versions + mi300x, mi350x: 3 stacks x 3 versions). */
    cr_assert_eq(checked, 6 * (4 * 2 + 2 * 3 * 3));
    duet_workloads_free(&set);
}

/* hipBLASLt before 1.4 has no CU target: no vendor split, no settings, and the one verdict says why. */
Test(emit_ranges, one_verdict_where_no_split_is_reachable, .timeout = 120)
{
    static t_cli_t r;
    static const char *const stacks[] = {"rccl", "env"};
    for (size_t i = 0; i < 2; i++) {
        t_cli_run(&r, NULL, "predict", "--hw", "mi350x", "--collective", "all_gather", "--gemm", "8192x8192x8192",
                  "--comm", "4096x8192", "--world", "8", "--splits", "step:4", "--emit", stacks[i],
                  "--hipblaslt-version", "1.2", NULL);
        cr_assert_eq(r.code, 0, "%s", r.err);
        cr_assert(strstr(r.out, "no vendor split is reachable through RCCL 2.20.5 + hipBLASLt 1.2") != NULL, "%s",
                  r.out);
        cr_assert(strstr(r.out, "use the vendor split") == NULL, "%s", r.out);
        cr_assert(strstr(r.out, "  vendor  ") == NULL, "no vendor row is ranked: %s", r.out);
        cr_assert(strstr(r.out, "SM_COUNT_TARGET = ") == NULL && strstr(r.out, "NCCL_MAX_CTAS") == NULL, "%s", r.out);
    }
    /* With 1.4 (the default) the split is reachable, within RCCL's 128 CTAs, and the verdict compares. */
    t_cli_run(&r, NULL, "predict", "--hw", "mi350x", "--collective", "all_gather", "--gemm", "8192x8192x8192", "--comm",
              "4096x8192", "--world", "8", "--splits", "step:4", "--emit", "rccl", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "best split RCCL 2.20.5 + hipBLASLt 1.4 can reach") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "not reachable") == NULL && strstr(r.out, "no vendor split") == NULL, "%s", r.out);
    cr_assert(strstr(r.out, "duet's kernels are predicted ") != NULL, "%s", r.out);
    /* Bad versions and stacks that do not run on the profile: one line, exit 2. */
    t_cli_run(&r, NULL, "predict", "--hw", "mi300x", "--gemm", "1024x1024x1024", "--emit", "nccl", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "NCCL runs on NVIDIA GPUs") != NULL, "%s", r.err);
    t_cli_run(&r, NULL, "predict", "--gemm", "1024x1024x1024", "--emit", "nccl", "--nccl-version", "2.x", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "--nccl-version: '2.x' is not a version") != NULL, "%s", r.err);
}
