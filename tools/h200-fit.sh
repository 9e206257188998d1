#!/bin/sh
# The CPU side of the H200 calibration (docs/calibration.md): fit the committed corpus from the
# uncalibrated start profile, write the calibrated profile, the report and the printed table, and
# regenerate the built-in h200 profile from the result.
#   tools/h200-fit.sh [BUILD/duet]        (ROWS=FILE also writes the per-row predictions, --rows)
set -eu
cd "$(dirname "$0")/.."
duet=${1:-build/duet}
# l2_gbs is not fitted: on the wgmma corpus the L2 step bound the 128x256 and 256x128 tiles in the
# model, left their factors undetermined and predicted held-out shapes worse on every metric
# (docs/calibration.md); it keeps the start profile's value, where no tile is L2-bound. Fitted beside
# gemm_sm_contention it runs to its bound or binds again, and predicts held-out shapes no better.
params=gemm_eff_fp16,tile_overhead_us,dequeue_gemm_us,dequeue_comm_us,launch_us,comm_sync_us
# cta_push_gbs is not fitted: since the comm tile is compiled for the world size its rows cannot
# tell a CTA's push rate from comm_tile_overhead_us (fitted: 167 +- 777 GB/s); the start profile
# carries the rate measured for duet's tile pattern (bench/results/nvlink-rate-h200.json, 21 GB/s).
params=$params,link_gbs,link_half_inflight_kib,remote_rtt_us,comm_tile_overhead_us
params=$params,tile_eff_128x256,tile_eff_256x128,tile_eff_128x128,tile_eff_256x64,rtt_gemm_stretch
params=$params,gemm_sm_contention,tile_oob_row_ns
# The chip's capacity for operand box rows fetched past L2 or zero-filled, and the share of it a
# GEMM on few SMs reaches (docs/model.md): the M <= 128 rows determine them.
params=$params,box_rows_per_us,box_min_share
# The clock under the operation's sustained matrix work (docs/model.md): with it the held-out
# makespan error and the regret of the pick fall (docs/calibration.md, "The current fit").
params=$params,clock_heat,heat_half_us
# splitk_sm_gbs only where the corpus has K-split rows (collected since rounds); nothing else
# depends on it, and the committed corpus has none.
if grep -q '"split_k"' tuning_data/h200_world2.json; then params=$params,splitk_sm_gbs; fi
"$duet" calibrate fit --corpus tuning_data/h200_world2.json --hw tuning_data/h200_start.json --name h200 \
    -o tuning_data/h200.json --report tuning_data/h200_fit_report.json --date 2026-11-30 --threads 2 \
    --accept-unconverged --quiet --params "$params" ${ROWS:+--rows "$ROWS"} | tee tuning_data/h200_fit.txt
# The corpus is fp16: Hopper's bf16 matrix rate equals its fp16 one, so bf16 takes the fp16 fit.
tmp=tuning_data/h200.json.tmp.$$
jq '.constants.gemm_eff_bf16 = (.constants.gemm_eff_fp16
      | .source = "[derived] gemm_eff_fp16 of this fit: the corpus is fp16, and Hopper runs bf16 mma at the fp16 rate")' \
    tuning_data/h200.json > "$tmp"
mv "$tmp" tuning_data/h200.json
"$duet" hw show tuning_data/h200.json > /dev/null # the edited file still loads
tools/h200-builtin.sh tuning_data/h200.json
