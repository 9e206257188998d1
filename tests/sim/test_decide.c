/*
 * Deciding within the model's known error (sim/decide.c) on cases whose truth is known: a profile
 * with errors chosen so that the logarithms are round numbers, sweeps of made-up points whose
 * predictions are given, and the rule derived by hand: the safe choice is kept when the gain lies
 * inside the band of the two predictions and left when it lies beyond it; the intervals are
 * [p / (1 + e), p (1 + e)].
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "duet/sim.h"

TestSuite(decide, T_TIMEOUT);

/* h200 with err_fused, err_concurrent, err_vendor given. */
static duet_hw_t hw_err(double f, double c, double v)
{
    duet_hw_t hw = t_hw("h200");
    hw.err_fused = f;
    hw.err_concurrent = c;
    hw.err_vendor = v;
    return hw;
}

/* A point of `mode` with gemm_wgs g, predicted `us` microseconds. */
static duet_sweep_point_t pt(const duet_hw_t *hw, int32_t mode, int32_t g, double us)
{
    duet_sweep_point_t p;
    memset(&p, 0, sizeof(p));
    p.cfg = duet_config_default(hw, mode);
    if (mode == DUET_MODE_FUSED)
        cr_assert_eq(duet_config_complete_split(&p.cfg, hw, hw->n_sms, g, -1), DUET_OK);
    else
        cr_assert_eq(duet_config_complete_split(&p.cfg, hw, -1, g, hw->n_sms - g), DUET_OK);
    p.makespan_s = us * 1e-6;
    return p;
}

/* A sweep result holding pts (the decision reads only points and n). */
static duet_sweep_result_t sweep_of(duet_sweep_point_t *pts, size_t n)
{
    duet_sweep_result_t r;
    memset(&r, 0, sizeof(r));
    r.points = pts;
    r.n = n;
    return r;
}

/* e = exp(l) - 1: its log1p is l exactly enough for the hand values below. */
static double err_of_log(double l)
{
    return expm1(l);
}

Test(decide, the_band_adds_the_two_log_errors_in_quadrature)
{
    /* ln(1 + e) of 0.03 and 0.04: sqrt(0.03^2 + 0.04^2) = 0.05, band exp(0.05) - 1. */
    duet_hw_t hw = hw_err(err_of_log(0.03), err_of_log(0.04), err_of_log(0.12));
    cr_assert(t_rel_eq(duet_decide_band(&hw, DUET_MODE_FUSED, DUET_MODE_CONCURRENT), expm1(0.05), 1e-12));
    cr_assert(t_rel_eq(duet_decide_band(&hw, DUET_MODE_VENDOR, DUET_MODE_FUSED), expm1(sqrt(0.0009 + 0.0144)), 1e-12));
    /* One mode against itself: sqrt(2) of its log error. */
    cr_assert(t_rel_eq(duet_decide_band(&hw, DUET_MODE_FUSED, DUET_MODE_FUSED), expm1(0.03 * sqrt(2.0)), 1e-12));
    duet_hw_t zero = hw_err(0, 0, 0);
    cr_assert_eq(duet_decide_band(&zero, DUET_MODE_FUSED, DUET_MODE_VENDOR), 0.0);
    /* The interval of 100 us fused: [100 / e^0.03, 100 e^0.03]. */
    duet_sweep_point_t p = pt(&hw, DUET_MODE_FUSED, 99, 100);
    duet_interval_t iv = duet_decide_interval(&hw, &p);
    cr_assert(t_rel_eq(iv.lo_s, 100e-6 * exp(-0.03), 1e-12) && t_rel_eq(iv.hi_s, 100e-6 * exp(0.03), 1e-12));
}

/*
 * Safe: fused 100 us, err_fused e^0.03 - 1; a concurrent point with err e^0.04 - 1: band e^0.05 - 1
 * = 5.127 %. At 96 us the gain 100/96 - 1 = 4.17 % lies inside it: kept. At 94 us the gain 6.38 %
 * lies beyond it: left for the concurrent point, and the gain's interval is (100/94) e^-0.05 - 1 ..
 * (100/94) e^0.05 - 1.
 */
Test(decide, the_safe_choice_is_kept_inside_the_band_and_left_beyond_it)
{
    duet_hw_t hw = hw_err(err_of_log(0.03), err_of_log(0.04), err_of_log(0.5));
    duet_sweep_point_t safe = pt(&hw, DUET_MODE_FUSED, 99, 100);
    duet_sweep_point_t pts[2] = {pt(&hw, DUET_MODE_CONCURRENT, 100, 96), safe};
    duet_sweep_result_t res = sweep_of(pts, 2);
    duet_decision_t d;
    cr_assert_eq(duet_decide(&hw, &res, &safe, DUET_SAFE_DEFAULT, &d), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(d.moved, 0);
    cr_assert(d.has_alt && d.alt.cfg.mode == DUET_MODE_CONCURRENT);
    cr_assert(t_rel_eq(d.band, expm1(0.05), 1e-12), "%.17g", d.band);
    cr_assert(t_rel_eq(d.gain, 100.0 / 96 - 1, 1e-12));
    cr_assert(d.gain_lo < 0 && d.gain_hi > 0, "the gain's interval holds 0");
    cr_assert(duet_config_same(&duet_decision_pick(&d)->cfg, &safe.cfg));
    duet_decision_free(&d);

    pts[0].makespan_s = 94e-6;
    cr_assert_eq(duet_decide(&hw, &res, &safe, DUET_SAFE_DEFAULT, &d), DUET_OK);
    cr_assert_eq(d.moved, 1);
    cr_assert_eq(duet_decision_pick(&d)->cfg.mode, DUET_MODE_CONCURRENT);
    cr_assert(t_rel_eq(d.gain, 100.0 / 94 - 1, 1e-12));
    cr_assert(t_rel_eq(d.gain_lo, 100.0 / 94 * exp(-0.05) - 1, 1e-12), "%.17g", d.gain_lo);
    cr_assert(t_rel_eq(d.gain_hi, 100.0 / 94 * exp(0.05) - 1, 1e-12), "%.17g", d.gain_hi);
    duet_decision_free(&d);
}

/*
 * The ranking's figure is the interval's upper end. err_fused e^0.01 - 1, err_concurrent e^0.2 - 1.
 * Safe: fused 100 us (figure 100 e^0.01 = 101.005). A fused point at 98.7 us (figure 99.692) ranks
 * first, the safe choice second, a concurrent point at 83.2 us (figure 83.2 e^0.2 = 101.621) third.
 * The fused point's gain 100/98.7 - 1 = 1.317 % lies inside its band e^(0.01 sqrt 2) - 1 = 1.424 %;
 * the concurrent point's 100/83.2 - 1 = 20.19 % inside its band e^sqrt(0.0001 + 0.04) - 1 = 22.17 %:
 * kept, and the alternative shown is the best-ranked other point, the fused one.
 * At 81.7 us the concurrent point (figure 99.789) ranks second, behind the fused point, and its gain
 * 22.40 % clears 22.17 %: the pick moves to it, though the fused point ranks first (its gain stays
 * inside its band).
 */
Test(decide, the_pick_is_the_best_ranked_point_that_clears_its_band)
{
    duet_hw_t hw = hw_err(err_of_log(0.01), err_of_log(0.2), err_of_log(0.3));
    duet_sweep_point_t safe = pt(&hw, DUET_MODE_FUSED, 99, 100);
    duet_sweep_point_t pts[3] = {pt(&hw, DUET_MODE_CONCURRENT, 110, 83.2), pt(&hw, DUET_MODE_FUSED, 90, 98.7), safe};
    duet_sweep_result_t res = sweep_of(pts, 3);
    duet_decision_t d;
    cr_assert_eq(duet_decide(&hw, &res, &safe, DUET_SAFE_DEFAULT, &d), DUET_OK);
    /* Figures: fused 98.7 e^0.01 = 99.69, safe 100 e^0.01 = 101.005, concurrent 83.2 e^0.2 = 101.62. */
    cr_assert_eq(d.order[0], 1);
    cr_assert_eq(d.order[1], 2);
    cr_assert_eq(d.order[2], 0);
    cr_assert(d.rank[0] == 1 && d.rank[1] == 2 && d.rank[2] == 3);
    cr_assert_eq(d.moved, 0);
    cr_assert(d.alt.cfg.mode == DUET_MODE_FUSED && d.alt.cfg.gemm_wgs == 90);
    cr_assert(t_rel_eq(d.band, expm1(0.01 * sqrt(2.0)), 1e-12));
    duet_decision_free(&d);

    pts[0].makespan_s = 81.7e-6;
    cr_assert_eq(duet_decide(&hw, &res, &safe, DUET_SAFE_DEFAULT, &d), DUET_OK);
    cr_assert_eq(d.order[0], 1);
    cr_assert_eq(d.order[1], 0);
    cr_assert_eq(d.moved, 1);
    cr_assert(d.alt.cfg.mode == DUET_MODE_CONCURRENT && d.alt.cfg.gemm_wgs == 110);
    cr_assert(t_rel_eq(d.band, expm1(sqrt(0.0001 + 0.04)), 1e-12));
    cr_assert(t_rel_eq(d.gain, 100.0 / 81.7 - 1, 1e-12));
    duet_decision_free(&d);
}

/* Without known errors the rule is the plain ranking: any faster point is a gain beyond a band of 0. */
Test(decide, with_no_error_any_faster_point_wins)
{
    duet_hw_t hw = hw_err(0, 0, 0);
    duet_sweep_point_t safe = pt(&hw, DUET_MODE_FUSED, 99, 100);
    duet_sweep_point_t pts[2] = {pt(&hw, DUET_MODE_FUSED, 98, 99.99), safe};
    duet_sweep_result_t res = sweep_of(pts, 2);
    duet_decision_t d;
    cr_assert_eq(duet_decide(&hw, &res, &safe, DUET_SAFE_DEFAULT, &d), DUET_OK);
    cr_assert_eq(d.moved, 1);
    cr_assert_eq(d.band, 0.0);
    duet_decision_free(&d);
    /* Only the safe choice in the sweep: nothing to weigh. */
    res.points = &pts[1];
    res.n = 1;
    cr_assert_eq(duet_decide(&hw, &res, &safe, DUET_SAFE_DEFAULT, &d), DUET_OK);
    cr_assert(d.moved == 0 && d.has_alt == 0);
    duet_decision_free(&d);
    cr_assert_eq(duet_decide(&hw, &res, NULL, DUET_SAFE_DEFAULT, &d), DUET_ERR_INVALID_ARG);
}

/* The vendor split a user runs, priced as the sweep prices vendor mode: its best stand-in tile. */
Test(decide, the_running_vendor_split_is_priced_as_the_sweep_prices_it)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = duet_workload_empty();
    wl.m = wl.n = wl.k = 2048;
    wl.coll = DUET_COLL_ALL_GATHER;
    wl.mc = 1024;
    wl.nc = 4096;
    wl.world = 2;
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.modes = 1u << DUET_MODE_VENDOR;
    sp.split_min = sp.split_max = 120;
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, 1);
    duet_sweep_point_t v;
    cr_assert_eq(duet_decide_vendor_point(ws, &hw, &wl, &sp, 120, -1, &v), DUET_OK, "%s", duet_last_error());
    cr_assert(v.cfg.mode == DUET_MODE_VENDOR && v.cfg.gemm_wgs == 120 && v.cfg.comm_wgs == 12);
    cr_assert_eq(v.makespan_s, res.points[0].makespan_s);
    cr_assert(duet_decide_vendor_point(ws, &hw, &wl, &sp, 120, 0, &v) < 0, "a collective needs comm CTAs");
    cr_assert(strstr(duet_last_error(), "vendor split") != NULL, "%s", duet_last_error());
    duet_sweep_result_free(&res);
    duet_sim_ws_destroy(ws);
}

/* hw_err()'s profile named `name`, saved to a temporary file whose path goes to path (n bytes). */
static void hw_err_file(double f, double c, double v, const char *name, char *path, size_t n)
{
    duet_hw_t hw = hw_err(f, c, v);
    snprintf(hw.name, sizeof(hw.name), "%s", name);
    char file[64];
    snprintf(file, sizeof(file), "%s.json", name);
    t_tmp_path(path, n, file);
    cr_assert_eq(duet_hw_save(&hw, path), DUET_OK, "%s", duet_last_error());
}

/*
 * End to end, `duet predict --json` with a profile whose errors are set: every ranked row's interval
 * is its prediction over and times 1 + err of its mode, the rows come in the order of the upper ends,
 * and the decision follows the rule from the printed numbers.
 */
Test(decide, predict_prints_the_derived_intervals_and_follows_the_rule, .timeout = 60)
{
    char path[256];
    hw_err_file(0.02, 0.05, 0.25, "h200-err", path, sizeof(path));
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", "--hw", path, "--collective", "all_gather", "--gemm", "4096x4096x4096", "--comm",
              "2048x4096", "--mode", "all", "--splits", "step:8", "--top", "0", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-predict/2");
    const double err[4] = {0.02, 0.05, 0.25, 0.2425}; /* copy: h200's stand-in, as the file keeps it */
    double prev = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "ranked"))
    {
        int32_t m;
        cr_assert_eq(duet_mode_parse(cJSON_GetObjectItem(e, "mode")->valuestring, &m), DUET_OK);
        double p = t_num(e, "pred_us"), lo = t_num(e, "lo_us"), hi = t_num(e, "hi_us");
        cr_assert(t_rel_eq(lo, p / (1 + err[m]), 1e-12) && t_rel_eq(hi, p * (1 + err[m]), 1e-12), "%g: %g %g", p, lo,
                  hi);
        cr_assert(hi >= prev * (1 - 1e-9), "ranked by the upper end");
        prev = hi;
    }
    const cJSON *d = cJSON_GetObjectItem(o, "decision");
    const cJSON *safe = cJSON_GetObjectItem(d, "safe"), *alt = cJSON_GetObjectItem(d, "alternative");
    cr_assert_str_eq(cJSON_GetObjectItem(d, "safe_kind")->valuestring, "static_default");
    cr_assert_eq(t_num(safe, "pred_us"), t_num(cJSON_GetObjectItem(o, "static_default"), "pred_us"));
    int32_t ms, ma;
    duet_mode_parse(cJSON_GetObjectItem(safe, "mode")->valuestring, &ms);
    duet_mode_parse(cJSON_GetObjectItem(alt, "mode")->valuestring, &ma);
    double ls = log1p(err[ms]), la = log1p(err[ma]), band = expm1(sqrt(ls * ls + la * la));
    double ratio = t_num(safe, "pred_us") / t_num(alt, "pred_us");
    cr_assert(t_rel_eq(t_num(d, "band"), band, 1e-12));
    cr_assert(t_rel_eq(t_num(d, "gain_lo"), ratio / (1 + band) - 1, 1e-9));
    cr_assert(t_rel_eq(t_num(d, "gain_hi"), ratio * (1 + band) - 1, 1e-9));
    cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(d, "moved")), ratio > 1 + band);
    cJSON_Delete(o);
    /* The text shows the same interval for the first row: "lo-hi" in us, two decimals. */
    t_cli_run(&r, NULL, "predict", "--hw", path, "--collective", "all_gather", "--gemm", "4096x4096x4096", "--comm",
              "2048x4096", "--mode", "all", "--splits", "step:8", "--top", "1", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "range us"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "verdict: "), "%s", r.out);
}

/*
 * `--emit`'s verdict and the decision's are one story: what to use is the decision's pick. With no
 * known error (every band 0) the pick is the fastest point, and on the demo workload that is the vendor
 * split (cuBLASLt on 125 SMs beside 7 CTAs, 1398 us, against duet's best 1590 us and the static
 * default's 1717 us, README): both lines say to run it. With the built-in errors (err_fused 11.73 %,
 * err_vendor 34.08 %) the vendor split's upper end, 1398.40 x 1.3408 = 1875 us, ranks it below duet's
 * best (1589.91 x 1.1173 = 1776 us); that one's gain over the static default, 1717.34 / 1589.91 = +8.0 %,
 * is within the band of two fused predictions, e^(sqrt(2) ln 1.1173) - 1 = 17.0 %, so the static default
 * is kept, and the emit line says so rather than "use the vendor split" (whose gain over the default,
 * 1717.34 / 1398.40 = +22.8 %, is within the fused-vendor band, e^sqrt(ln(1.1173)^2 + ln(1.3408)^2) - 1
 * = 36.8 %).
 */
Test(decide, the_emit_verdict_is_the_decisions, .timeout = 120)
{
    char path[256];
    hw_err_file(0.0, 0.0, 0.0, "h200-noerr", path, sizeof(path));
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", "--hw", path, "--collective", "all_gather", "--gemm", "8192x8192x8192", "--comm",
              "4096x8192", "--world", "2", "--emit", "torch", "--top", "3", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "verdict: run vendor 125 SM|7, "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "slower than the best vendor split"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "): use the vendor split (the verdict)\n"), "%s", r.out);
    /* err 20 % for duet's modes, 5 % for vendor: band e^sqrt(ln(1.2)^2 + ln(1.05)^2) - 1 = 20.8 %. The
     * vendor split's upper end (1398.4 x 1.05 = 1468 us) ranks first (duet's best: 1589.9 x 1.2 = 1908),
     * and its gain over the static default, 1717.34 / 1398.40 = 1.228, clears the band (1.228 / 1.208
     * - 1 = +1.7 % at the low end): the decision runs it. Against duet's best the gain's interval reaches
     * 1398.4 / 1589.9 x 1.208 - 1 = +6.2 %: within the band, and yet the emit line's advice is the
     * decision's. */
    hw_err_file(0.2, 0.2, 0.05, "h200-err5", path, sizeof(path));
    t_cli_run(&r, NULL, "predict", "--hw", path, "--collective", "all_gather", "--gemm", "8192x8192x8192", "--comm",
              "4096x8192", "--world", "2", "--emit", "torch", "--top", "3", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "verdict: run vendor 125 SM|7, "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "within the band of 20.8 %): use the vendor split (the verdict)\n"), "%s", r.out);
    t_cli_run(&r, NULL, "predict", "--hw", "h200", "--collective", "all_gather", "--gemm", "8192x8192x8192", "--comm",
              "4096x8192", "--world", "2", "--emit", "torch", "--top", "3", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "verdict: keep the static default, "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "keep duet's static default (the verdict)\n"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "within the band of 36.8 %): the model cannot tell them apart"), "%s", r.out);
    cr_assert_null(strstr(r.out, "use the vendor split"), "%s", r.out);
}
