/*
 * A vendor-mode row's "vendor_kernel" (duet_vendor_kernel_t): the library's kernel, read into the
 * row, saved back byte for byte, and refused where it cannot belong or holds garbage.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/corpus.h"

/* A one-row /2 corpus whose row runs in `mode` with `gemm_wgs` + 1 CTAs, then `extra` members. */
static void vk_corpus(char *out, size_t n, const char *mode, const char *extra)
{
    snprintf(out, n,
             "{\"schema\": \"duet-corpus/2\", \"device\": \"NVIDIA H100 80GB HBM3\", \"arch\": \"sm_90\", \"sms\": "
             "132, \"world\": 1, \"driver\": \"\", \"runtime\": \"\", \"date\": \"\", \"duet\": \"0.3.0\", "
             "\"repeats\": 6, \"warmup\": 2, \"grid\": {\"fused_fracs\": [1], \"tiles\": [\"256x128x64\"], "
             "\"concurrent_comm_wgs\": [8]}, "
             "\"rows\": [{\"kind\": \"gemm_alone\", \"collective\": \"all_gather\", \"dtype\": \"bf16\", \"m\": "
             "4096, \"n\": 4096, \"k\": 4096, \"mc\": 1024, \"nc\": 2048, \"world\": 1, \"root\": 0, \"mode\": "
             "\"%s\", \"num_wgs\": 67, \"gemm_wgs\": 66, \"comm_wgs\": 1, \"tile\": \"256x128x64\", \"comm_tile\": "
             "\"256x64\", \"group_m\": 8, \"ok\": true, \"repeats\": 6%s, \"us\": 350, \"min_us\": 340, "
             "\"max_us\": 360}]}",
             mode, extra);
}

#define VK_FULL                                                                                                        \
    ", \"vendor_kernel\": {\"algo\": 66, \"tile_m\": 256, \"tile_n\": 128, \"stage_k\": 64, \"stages\": 4, "           \
    "\"split_k\": 1, \"swizzle\": 1, \"cluster_m\": 2, \"cluster_n\": 1}"

Test(corpus_vendor_kernel, read_and_saved_back, T_TIMEOUT)
{
    char t[4096];
    vk_corpus(t, sizeof(t), "vendor", VK_FULL);
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_parse(t, "vk.json", &c), DUET_OK, "%s", duet_last_error());
    const duet_vendor_kernel_t *v = &c.rows[0].vendor;
    cr_assert_eq(v->valid, 1);
    cr_assert_eq(v->algo, 66);
    cr_assert_eq(v->tile_m, 256);
    cr_assert_eq(v->tile_n, 128);
    cr_assert_eq(v->stage_k, 64);
    cr_assert_eq(v->stages, 4);
    cr_assert_eq(v->split_k, 1);
    cr_assert_eq(v->swizzle, 1);
    cr_assert_eq(v->cluster_m, 2);
    cr_assert_eq(v->cluster_n, 1);
    char p[128];
    t_tmp_path(p, sizeof(p), "vk.json");
    cr_assert_eq(duet_corpus_save(&c, p), DUET_OK, "%s", duet_last_error());
    char *s = t_slurp(p);
    /* Saved after the configuration and before the times, in the order of the struct. */
    cr_assert(strstr(s, "\"repeats\": 6" VK_FULL ", \"us\": 350") != NULL, "%s", s);
    duet_corpus_t back;
    cr_assert_eq(duet_corpus_parse(s, "back.json", &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(memcmp(&back.rows[0].vendor, v, sizeof(*v)), 0);
    free(s);
    unlink(p);
    duet_corpus_free(&back);
    duet_corpus_free(&c);
}

Test(corpus_vendor_kernel, absent_means_not_recorded, T_TIMEOUT)
{
    char t[4096];
    vk_corpus(t, sizeof(t), "vendor", "");
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_parse(t, "vk.json", &c), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(c.rows[0].vendor.valid, 0);
    char p[128];
    t_tmp_path(p, sizeof(p), "vk0.json");
    cr_assert_eq(duet_corpus_save(&c, p), DUET_OK, "%s", duet_last_error());
    char *s = t_slurp(p);
    cr_assert(strstr(s, "vendor_kernel") == NULL, "%s", s);
    free(s);
    unlink(p);
    duet_corpus_free(&c);
}

Test(corpus_vendor_kernel, refused_where_it_cannot_belong, T_TIMEOUT)
{
    char t[4096];
    duet_corpus_t c;
    /* duet's own kernel has no library kernel to record. */
    vk_corpus(t, sizeof(t), "fused", VK_FULL);
    cr_assert_eq(duet_corpus_parse(t, "f.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "rows[0].vendor_kernel: only a vendor-mode row") != NULL, "%s",
              duet_last_error());
    /* A misspelt member, a missing one, one out of range, a wrong type. */
    vk_corpus(t, sizeof(t), "vendor",
              ", \"vendor_kernel\": {\"algo\": 66, \"tile_m\": 256, \"tile_n\": 128, \"stage_k\": 64, \"stages\": 4, "
              "\"split_k\": 1, \"swizzel\": 1, \"cluster_m\": 2, \"cluster_n\": 1}");
    cr_assert_eq(duet_corpus_parse(t, "g.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "vendor_kernel: unknown key \"swizzel\"") != NULL, "%s", duet_last_error());
    vk_corpus(t, sizeof(t), "vendor", ", \"vendor_kernel\": {\"algo\": 66}");
    cr_assert_eq(duet_corpus_parse(t, "h.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "tile_m") != NULL, "%s", duet_last_error());
    vk_corpus(t, sizeof(t), "vendor",
              ", \"vendor_kernel\": {\"algo\": 66, \"tile_m\": 99999, \"tile_n\": 128, \"stage_k\": 64, \"stages\": "
              "4, \"split_k\": 1, \"swizzle\": 1, \"cluster_m\": 2, \"cluster_n\": 1}");
    cr_assert_eq(duet_corpus_parse(t, "i.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "tile_m") != NULL, "%s", duet_last_error());
    vk_corpus(t, sizeof(t), "vendor", ", \"vendor_kernel\": [1, 2]");
    cr_assert_eq(duet_corpus_parse(t, "j.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "vendor_kernel: must be an object") != NULL, "%s", duet_last_error());
}
