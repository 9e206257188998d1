/*
 * Random shape sets (model/random.c): the generator's stream, the ranges and shares it promises,
 * and a set that reads back from its shape file as drawn.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

/* splitmix64 from state 0: the published first outputs of the reference implementation
 * (Vigna's splitmix64.c), not this code's. */
Test(random, splitmix64_matches_the_reference_stream, T_TIMEOUT)
{
    duet_rng_t r;
    duet_rng_seed(&r, 0);
    cr_assert_eq(duet_rng_next(&r), UINT64_C(0xe220a8397b1dcdaf));
    cr_assert_eq(duet_rng_next(&r), UINT64_C(0x6e789e6aa1b965f4));
    cr_assert_eq(duet_rng_next(&r), UINT64_C(0x06c45d188009454f));
}

Test(random, bounded_integers_stay_in_range_and_cover_it, T_TIMEOUT)
{
    duet_rng_t r;
    duet_rng_seed(&r, 7);
    int seen[6] = {0};
    for (int i = 0; i < 6000; i++) {
        int64_t v = duet_rng_int(&r, -2, 3);
        cr_assert(v >= -2 && v <= 3, "%lld", (long long)v);
        seen[v + 2]++;
    }
    /* 1000 expected per value; 6 sigma of a binomial(6000, 1/6) is about 173. */
    for (int i = 0; i < 6; i++)
        cr_assert(seen[i] > 827 && seen[i] < 1173, "value %d drawn %d times", i - 2, seen[i]);
    double u = duet_rng_unit(&r);
    cr_assert(u >= 0.0 && u < 1.0);
}

Test(random, a_set_is_named_by_its_seed, T_TIMEOUT)
{
    duet_random_params_t p = duet_random_default_params();
    p.seed = 42;
    duet_workloads_t a, b, c;
    cr_assert_eq(duet_workloads_random(&p, 50, &a), DUET_OK);
    cr_assert_eq(duet_workloads_random(&p, 50, &b), DUET_OK);
    p.seed = 43;
    cr_assert_eq(duet_workloads_random(&p, 50, &c), DUET_OK);
    cr_assert_eq(memcmp(a.w, b.w, 50 * sizeof(duet_workload_t)), 0);
    cr_assert_neq(memcmp(a.w, c.w, 50 * sizeof(duet_workload_t)), 0);
    duet_workloads_free(&a);
    duet_workloads_free(&b);
    duet_workloads_free(&c);
}

/* The documented ranges and shares, over 3000 draws at world 4. */
Test(random, ranges_and_shares_as_documented, T_TIMEOUT)
{
    duet_random_params_t p = duet_random_default_params();
    p.seed = 2026;
    p.world = 4;
    const size_t n = 3000;
    duet_workloads_t w;
    cr_assert_eq(duet_workloads_random(&p, n, &w), DUET_OK);
    cr_assert_eq(w.n, n);
    int ragged = 0, dims = 0, small_m = 0, small_k = 0, colls[DUET_COLL_COUNT] = {0}, dts[2] = {0};
    for (size_t i = 0; i < n; i++) {
        const duet_workload_t *x = &w.w[i];
        int64_t e[3] = {x->m, x->n, x->k};
        for (int j = 0; j < 3; j++) {
            cr_assert(e[j] >= 256 && e[j] <= 16384, "extent %lld", (long long)e[j]);
            ragged += e[j] % 64 != 0;
            dims++;
        }
        small_m += x->m <= 1024 && x->n > 1024; /* most skinny shapes; some normal ones land here too */
        small_k += x->k <= 1024;
        cr_assert(x->coll > DUET_COLL_NONE && x->coll < DUET_COLL_COUNT);
        colls[x->coll]++;
        dts[x->dtype]++;
        cr_assert_eq(x->mc % 4, 0, "Mc %lld is not a multiple of the world", (long long)x->mc);
        double bytes = (double)x->mc * (double)x->nc * 2.0;
        /* Rounding Mc down to a multiple of 4 rows can take up to 3 rows of 16384 columns off. */
        cr_assert(bytes >= 256.0 * 1024 - 3 * 16384 * 2 && bytes <= 256.0 * 1024 * 1024 + 1e-9, "%g bytes", bytes);
        cr_assert_eq(duet_workload_validate(x), DUET_OK);
    }
    /* A third of the extents ragged: 3000 expected of 9000, 5 sigma about 224. */
    cr_assert(ragged > 2776 && ragged < 3224, "%d ragged of %d", ragged, dims);
    /* Small K: 15 % drawn from [256, 1024] plus the log-uniform tail of the others
     * (log(1024/256) / log(16384/256) = 1/3 of the 85 %): 0.15 + 0.85 / 3 = 0.433 -> 1300 of 3000. */
    cr_assert(small_k > 1170 && small_k < 1430, "%d small K", small_k);
    cr_assert(small_m > 500, "%d skinny", small_m);
    for (int c = 1; c < DUET_COLL_COUNT; c++)
        cr_assert(colls[c] > 450 && colls[c] < 750, "collective %d drawn %d times", c, colls[c]);
    cr_assert(dts[0] > 1300 && dts[1] > 1300);
    duet_workloads_free(&w);
}

Test(random, a_saved_set_reads_back_as_drawn, T_TIMEOUT)
{
    duet_random_params_t p = duet_random_default_params();
    p.seed = 99;
    p.world = 2;
    p.colls |= 1u << DUET_COLL_NONE;
    duet_workloads_t a, b;
    cr_assert_eq(duet_workloads_random(&p, 40, &a), DUET_OK);
    char path[256];
    t_tmp_path(path, sizeof(path), "random.txt");
    cr_assert_eq(duet_workloads_save(path, &a, "seed 99\nworld 2"), DUET_OK);
    cr_assert_eq(duet_workloads_load(path, 2, DUET_DTYPE_FP16, &b), DUET_OK);
    cr_assert_eq(b.n, a.n);
    for (size_t i = 0; i < a.n; i++)
        cr_assert_eq(memcmp(&a.w[i], &b.w[i], sizeof(duet_workload_t)), 0, "workload %zu", i);
    duet_workloads_free(&a);
    duet_workloads_free(&b);
}

Test(random, impossible_parameters_are_refused, T_TIMEOUT)
{
    duet_random_params_t p = duet_random_default_params();
    duet_workloads_t w;
    p.min_dim = 0;
    cr_assert_eq(duet_workloads_random(&p, 1, &w), DUET_ERR_INVALID_ARG);
    p = duet_random_default_params();
    p.colls = 0;
    cr_assert_eq(duet_workloads_random(&p, 1, &w), DUET_ERR_INVALID_ARG);
    p = duet_random_default_params();
    p.skinny = 0.8;
    p.small_k = 0.5;
    cr_assert_eq(duet_workloads_random(&p, 1, &w), DUET_ERR_INVALID_ARG);
    p = duet_random_default_params();
    cr_assert_eq(duet_workloads_random(&p, 0, &w), DUET_ERR_INVALID_ARG);
}
