#!/bin/bash
# Comm tile shapes against each other: duet's collective alone (fused, no GEMM) at two CTA counts,
# every collective, for each comm tile of $TILES, on the 64 MB and 4 MB tensors of the bench.
# Prints one line per run: collective, tensor, CTAs, comm tile, measured median ms.
#   tools/h200-commtile.sh   (after tools/h200-measure.sh build; NP ranks, default 2; BIN: another duet)
set -u
cd "$(dirname "$0")/.."
NP=${NP:-2}
. tools/h200-env.sh
for comm in ${COMMS:-2048x16384 512x4096}; do
    for coll in ${COLLS:-reduce_scatter all_to_all all_reduce all_gather}; do
        for ctas in ${CTAS:-32 132}; do
            for t in ${TILES:-256x64 64x256 32x512 16x1024}; do
                ms=$($MPIRUN "${BIN:-build-gpu/duet}" run --collective "$coll" --comm "$comm" --dtype fp16 --mode fused \
                    --num-wgs "$ctas" --gemm-wgs 0 --comm-tile "$t" --repeats 20 --warmup 3 2>&1 |
                    sed -n 's/.*measured \([0-9.]*\) ms.*/\1/p' | head -1)
                echo "$coll $comm $ctas $t ${ms:-failed}"
            done
        done
    done
done
