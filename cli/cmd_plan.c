/*
 * duet plan: what one configuration of one workload puts in the two queues, the bytes it moves
 * and what the cost model charges for one tile of each kind.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/internal.h"

static void cmd_plan_usage(FILE *f)
{
    fprintf(f,
            "usage: duet plan [workload] [configuration] [--rank R] [--json] [-o FILE]\n"
            "\n"
            "Builds the plan both executors run (the simulator and the GPU kernels): the GEMM tiles in dequeue\n"
            "order, the comm tiles of this rank with their bytes and peers, and the queue policy. Prints tile\n"
            "counts, bytes per peer, FLOPs and the cost model's price of one tile of each kind.\n"
            "\n"
            "%s\n%s\n"
            "other:\n"
            "  --rank R              the rank to plan for (default: the busiest, i.e. the broadcast root)\n"
            "  --json                machine-readable output (schema duet-plan/1, times in us)\n"
            "  -o, --output FILE     write the result (text or --json) to FILE instead of standard output\n"
            "  -h, --help            this text\n"
            "\n"
            "examples:\n"
            "  duet plan --collective all_gather --gemm 8192x8192x8192 --comm 2048x4096 --world 2\n"
            "  duet plan --hw mi300x --collective all_reduce --gemm 4096x4096x4096 --comm 8192x4608 --world 8 \\\n"
            "            --mode concurrent --comm-wgs 32 --json\n",
            cli_workload_help, cli_config_help);
}

static void cmd_plan_text(FILE *f, const cli_common_t *c, const duet_plan_t *p, const duet_gemm_cost_t *gc,
                          const duet_comm_cost_t *cc, double t_static)
{
    char b1[32], b2[32], b3[32], b4[32];
    fprintf(f, "plan for rank %d of %d on %s (%s), %s\n", p->rank, p->wl.world, c->hw.name, c->hw.device,
            duet_dtype_name(p->wl.dtype));
    if (p->gemm.tiles > 0) {
        fprintf(f, "GEMM   %lld x %lld x %lld, tile %dx%dx%d, group_m %d, split_k %d\n", (long long)p->wl.m,
                (long long)p->wl.n, (long long)p->wl.k, p->cfg.tile.bm, p->cfg.tile.bn, p->cfg.tile.bk, p->cfg.group_m,
                p->gemm.split_k);
        char parts[160] = "";
        if (p->gemm.split_from > 0)
            snprintf(parts, sizeof(parts), " C tiles: %lld whole of %lld K steps, then stream-K: %lld in %d K parts",
                     (long long)p->gemm.split_from, (long long)p->gemm.k_iters_total,
                     (long long)duet_gemm_split_tiles(&p->gemm), p->gemm.split_k);
        else if (p->gemm.split_k > 1)
            snprintf(parts, sizeof(parts), " C tiles, each in %d K parts", p->gemm.split_k);
        fprintf(f, "       %lld tiles (%lld x %lld%s), %lld K steps each%s, %.4g FLOP\n", (long long)p->gemm.tiles,
                (long long)p->gemm.grid_m, (long long)p->gemm.grid_n, parts, (long long)p->gemm.k_iters,
                p->gemm.split_from > 0 ? " (a part)" : "", p->gemm_flops);
        fprintf(f, "       one tile: %.2f us on its SM (K step: matrix %.3f us, L2 %.3f us), L2 hit %.1f %%, HBM %s\n",
                gc->t_sm * 1e6, gc->t_step_mma * 1e6, gc->t_step_l2 * 1e6, gc->l2_hit * 100,
                cli_bytes(gc->hbm_bytes, b1, sizeof(b1)));
        fprintf(f, "       alone on %d SMs (static origami estimate): %.3f ms, %.0f TFLOP/s\n", c->hw.n_sms,
                t_static * 1e3, p->gemm_flops / t_static / 1e12);
    } else {
        fprintf(f, "GEMM   none\n");
    }
    if (p->wl.coll != DUET_COLL_NONE) {
        fprintf(f, "comm   %s of %lld x %lld per rank, tile %dx%d\n", duet_collective_name(p->wl.coll),
                (long long)p->wl.mc, (long long)p->wl.nc, p->cfg.cm, p->cfg.cn);
        fprintf(f, "       queue of this rank: %lld tiles (%lld move data; %lld tiles cover the tensor)\n",
                (long long)p->comm.queue_len, (long long)p->comm_valid_tiles, (long long)p->comm.total);
        fprintf(f, "       push %s, pull %s, local read %s, local write %s\n",
                cli_bytes(p->comm_total.push_bytes, b1, sizeof(b1)),
                cli_bytes(p->comm_total.pull_bytes, b2, sizeof(b2)),
                cli_bytes(p->comm_total.local_read_bytes, b3, sizeof(b3)),
                cli_bytes(p->comm_total.local_write_bytes, b4, sizeof(b4)));
        fprintf(f, "       remote bytes %s (tile-granular %s); per peer: out %s, in %s\n",
                cli_bytes(p->remote_bytes, b1, sizeof(b1)), cli_bytes(p->remote_bytes_tiles, b2, sizeof(b2)),
                cli_bytes(p->bytes_per_peer_out, b3, sizeof(b3)), cli_bytes(p->bytes_per_peer_in, b4, sizeof(b4)));
        if (p->comm_valid_tiles > 0)
            fprintf(f, "       average tile alone: %.2f us (push %.2f, pull %.2f in %lld round trips, local %.2f)\n",
                    cc->t_alone * 1e6, cc->t_push * 1e6, cc->t_pull * 1e6, (long long)cc->round_trips,
                    cc->t_local * 1e6);
    } else {
        fprintf(f, "comm   none\n");
    }
    fprintf(f, "queues %s: %d CTAs start on GEMM, %d on comm; %s\n", duet_mode_name(p->cfg.mode), p->gemm_home_ctas,
            p->comm_home_ctas, p->steal ? "a CTA steals from the other queue when its own is empty" : "no stealing");
}

/* What `duet plan`'s command line gives. */
typedef struct cmd_plan_opts {
    cli_common_t c;
    const char *out_path;
    int rank, help;
} cmd_plan_opts_t;

/* One option of `duet plan`. @return an exit code, or CLI_OPT_UNKNOWN. */
static int cmd_plan_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cmd_plan_opts_t *o = arg0;
    long long r;
    if (opt == 'o') {
        o->out_path = arg;
        return CLI_EXIT_OK;
    }
    if (opt != OPT_RANK)
        return cli_common_take(&o->c, cmd, opt, arg);
    if (cli_parse_i64(arg, 0, 1023, &r) != 0)
        return cli_usage_error(cmd, "--rank: '%s' is not an integer in [0, 1023]", duet__q(arg));
    o->rank = (int)r;
    return CLI_EXIT_OK;
}

/* Parse the command line, load the profile, check the workload, the configuration and the rank. */
static int cmd_plan_parse(cmd_plan_opts_t *o, int argc, char **argv)
{
    static const struct option longopts[] = {CLI_WORKLOAD_LONGOPTS,
                                             CLI_CONFIG_LONGOPTS,
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"output", required_argument, NULL, 'o'},
                                             {"rank", required_argument, NULL, OPT_RANK},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    cli_common_init(&o->c);
    o->rank = -1;
    int rc = cli_getopt("plan", argc, argv, longopts, cmd_plan_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help || (rc = cli_no_operands("plan", argc, argv)) != CLI_EXIT_OK)
        return rc;
    if ((rc = cli_common_workload(&o->c, "plan")) != CLI_EXIT_OK)
        return rc;
    int32_t mode = DUET_MODE_FUSED;
    if (o->c.mode_arg)
        duet_mode_parse(o->c.mode_arg, &mode);
    o->c.r.rank = o->rank;
    if ((rc = cli_common_config(&o->c, "plan", mode)) != CLI_EXIT_OK)
        return rc;
    o->rank = o->c.r.rank;
    return CLI_EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
    cmd_plan_opts_t o;
    int rc = cmd_plan_parse(&o, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_plan_usage(stdout);
        return rc;
    }
    const cli_common_t *c = &o.c;
    duet_plan_t plan;
    duet_status_t st = duet_plan_build(&c->wl, &c->cfg, o.rank, &plan);
    /* Vendor mode: the GEMM is the library's kernel, as the model expects it to choose (as simulate). */
    if (st >= 0)
        st = duet_plan_vendor_kernel(&c->hw, NULL, &plan);
    if (st < 0)
        return cli_fail("plan", st);
    o.c.cfg = plan.cfg;
    duet_gemm_cost_t gc;
    duet_comm_cost_t cc;
    int64_t active = duet_plan_gemm_concurrent(&plan);
    duet_cost_gemm_tile_kind(&c->hw, &plan, active, 0, &gc); /* stream-K: a whole C tile */
    duet_cost_comm_tile(&c->hw, &plan, &cc);
    double t_static = duet_cost_gemm_static_s(&c->hw, &plan, c->hw.n_sms);
    cli_out_t out;
    if ((rc = cli_out_open(&out, "plan", o.out_path)) != CLI_EXIT_OK)
        return rc;
    if (c->json)
        rc = cli_out_json(&out, "plan", duet__plan_cjson(&c->hw, &plan));
    else
        cmd_plan_text(out.f, c, &plan, &gc, &cc, t_static);
    return cli_out_close(&out, "plan", rc);
}
