#!/bin/sh
# The held-out table of docs/calibration.md ("Which terms help"): the H200 fit with the model's
# terms added one at a time, each from tuning_data/h200_start.json with the terms not yet added
# switched off (comm_sync_us 0: the barriers folded into launch_us; rtt_gemm_stretch 0: no
# stretch; tile_eff_* at 1: one efficiency for every tile). Prints each fit's table.
#   tools/h200-ablation.sh [BUILD/duet] [OUTDIR]
set -eu
cd "$(dirname "$0")/.."
duet=${1:-build/duet}
out=${2:-/tmp/duet-ablation}
mkdir -p "$out"
base=gemm_eff_fp16,l2_gbs,tile_overhead_us,dequeue_gemm_us,dequeue_comm_us,launch_us,link_gbs
base=$base,link_half_inflight_kib,cta_push_gbs,remote_rtt_us,comm_tile_overhead_us,hbm_gbs
tiles=tile_eff_128x256,tile_eff_256x128,tile_eff_128x128,tile_eff_256x64
jq '.constants.comm_sync_us.value = 0 | .constants.rtt_gemm_stretch.value = 0' tuning_data/h200_start.json \
    > "$out/start-off.json"
jq '.constants.rtt_gemm_stretch.value = 0' tuning_data/h200_start.json > "$out/start-sync.json"
fit() { # NAME START PARAMS
    echo "== $1: --hw $2 --params $3"
    "$duet" calibrate fit --corpus tuning_data/h200_world2.json --hw "$2" -o "$out/$1.json" \
        --report "$out/$1-report.json" --threads 2 --accept-unconverged --quiet --params "$3" > "$out/$1.txt"
    sed -n '/base profile  /,/alone-row error, p95/p' "$out/$1.txt"
}
fit a-before "$out/start-off.json" "$base"
fit b-tile-eff "$out/start-off.json" "$base,$tiles"
fit c-comm-sync "$out/start-sync.json" "$base,$tiles,comm_sync_us"
fit d-no-l2 tuning_data/h200_start.json "$(echo "$base" | sed 's/l2_gbs,//; s/,hbm_gbs//'),comm_sync_us,$tiles,rtt_gemm_stretch"
echo "the final fit (all terms) is tools/h200-fit.sh"
