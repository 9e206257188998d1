#!/bin/sh
# The held-out table of docs/calibration.md ("Which terms help", wgmma corpus): the H200 fit of
# $CORPUS (default tuning_data/h200_world2.json; the documented table was made with
# CORPUS=tuning_data/h200_world2_wgmma1.json, the first wgmma corpus) with the model's newer terms switched on one at a time, each fit
# from tuning_data/h200_start.json with the terms not yet added switched off. Prints each fit's
# table (the "held out (5-f)" column is the table's).
#   A: before: gemm_sm_contention 0 and tile_oob_row_ns 0, with the start values of that fit
#      (gemm_eff_* 0.8, l2_gbs 12 TB/s) and its parameter list;
#   B: + gemm_sm_contention (the start profile's gemm_eff_* 1.0 and l2_gbs 24 TB/s: the K loop on
#      a lightly loaded chip, the L2 step out of the way);
#   C: + tile_oob_row_ns only (no contention, A's start values);
#   D: both: the final fit, as tools/h200-fit.sh makes it;
#   E: D with l2_gbs fitted too (rejected).
# The mma.sync corpus's table in the same section came from this script as of commit 863e4f9
# (git show 863e4f9:tools/h200-ablation.sh), when tuning_data/h200_world2.json was that corpus.
#   tools/h200-ablation.sh [BUILD/duet] [OUTDIR]
set -eu
cd "$(dirname "$0")/.."
duet=${1:-build/duet}
out=${2:-/tmp/duet-ablation}
corpus=${CORPUS:-tuning_data/h200_world2.json}
mkdir -p "$out"
base=gemm_eff_fp16,tile_overhead_us,dequeue_gemm_us,dequeue_comm_us,launch_us,comm_sync_us
base=$base,link_gbs,link_half_inflight_kib,cta_push_gbs,remote_rtt_us,comm_tile_overhead_us
base=$base,tile_eff_128x256,tile_eff_256x128,tile_eff_128x128,tile_eff_256x64,rtt_gemm_stretch
# The previous start values of what the new terms changed, and the new terms off.
jq '.constants.gemm_sm_contention.value = 0 | .constants.tile_oob_row_ns.value = 0
    | .constants.gemm_eff_fp16.value = 0.8 | .constants.gemm_eff_bf16.value = 0.8 | .constants.l2_gbs.value = 12000' \
    tuning_data/h200_start.json > "$out/start-before.json"
jq '.constants.tile_oob_row_ns.value = 0' tuning_data/h200_start.json > "$out/start-contention.json"
jq '.constants.tile_oob_row_ns.value = 1' "$out/start-before.json" > "$out/start-oob.json"
fit() { # NAME START PARAMS
    echo "== $1: --hw $2 --params $3"
    "$duet" calibrate fit --corpus "$corpus" --hw "$2" -o "$out/$1.json" \
        --report "$out/$1-report.json" --threads 2 --accept-unconverged --quiet --params "$3" \
        --rows "$out/$1-rows.csv" > "$out/$1.txt"
    sed -n '/base profile  /,/alone-row error, p95/p' "$out/$1.txt"
}
fit a-before "$out/start-before.json" "$base"
fit b-contention "$out/start-contention.json" "$base,gemm_sm_contention"
fit c-oob "$out/start-oob.json" "$base,tile_oob_row_ns"
fit d-final tuning_data/h200_start.json "$base,gemm_sm_contention,tile_oob_row_ns"
fit e-l2 tuning_data/h200_start.json "$base,gemm_sm_contention,tile_oob_row_ns,l2_gbs"
