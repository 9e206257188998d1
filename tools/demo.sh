#!/bin/sh
# make demo: predict the best split for a default workload on the built-in h200 profile, and draw
# the two pictures: the split curve, and the timeline of the best configuration.
#   tools/demo.sh BUILD/duet OUTDIR
set -eu
duet=$1
out=$2
mkdir -p "$out"
# --mode all: vendor mode (cuBLASLt on an SM target beside a capped collective) is drawn beside duet's modes,
# the same sweep `duet predict --emit` compares duet's best with.
set -- --hw h200 --collective all_gather --gemm 8192x8192x8192 --comm 4096x8192 --world 2 --dtype bf16 --mode all

echo "== duet predict $* --top 8"
"$duet" predict "$@" --top 8 --svg "$out/curve.svg" --timeline "$out/timeline.svg" --trace "$out/trace.json"
"$duet" predict "$@" --top 20 --json > "$out/predict.json"
# The table ranks rows by the upper end of their interval, so a vendor split predicted faster than
# duet's best but with vendor mode's larger known error ranks below it; `duet predict --emit` weighs
# the two predictions within their band instead. Its verdict is shown here, so that the two answers
# for this workload are seen side by side and the reason they differ is said.
echo
echo "== the same sweep's best vendor split, as \`duet predict --emit nccl\` weighs it (rows above are ranked by"
echo "   the upper end of their interval: vendor mode's larger known error ranks a faster vendor prediction lower)"
"$duet" predict "$@" --top 1 --emit nccl | grep -E "^(best split|duet's best|duet's kernels)"
echo
echo "wrote $out/curve.svg     predicted makespan against gemm_wgs, one line per mode and tile"
echo "      $out/timeline.svg  Gantt chart of the best configuration, one row per CTA"
echo "      $out/predict.json  the 20 best configurations;  $out/trace.json  the best one's timeline"
