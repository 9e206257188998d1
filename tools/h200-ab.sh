#!/bin/bash
# Two builds side by side in one machine session: this tree (B) and another checkout (A, $BASE,
# e.g. the previous commit), both built at once, then `duet bench --shapes $SHAPES $BENCH_ARGS`
# alternately B, A, B (so that slow drift of the machine does not favour one). Results go to $OUT
# as ab-B1.json, ab-A.json, ab-B2.json; `python3 tools/bench_table.py --compare ab-A.json ab-B1.json
# ab-B2.json` puts them side by side.
#   BASE=.gpu-base SHAPES=bench/shapes/floor.txt tools/h200-ab.sh      (2 x H200)
#   BASE=.gpu-base SHAPES= BENCH_ARGS=--gemm-only tools/h200-ab.sh      (the seed's GEMMs alone)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/duet-ab}
BASE=${BASE:?BASE: the other checkout}
SHAPES=${SHAPES-bench/shapes/floor.txt} # empty: the default workload set
NP=${NP:-2}
. tools/h200-env.sh
mkdir -p "$OUT"
h200_unpack_deps
MK=(make JOBS=16 -j16 "CFLAGS=-I$DEP/usr/include"
    "LDFLAGS=-L$DEP/usr/lib/x86_64-linux-gnu -Wl,-rpath,$DEP/usr/lib/x86_64-linux-gnu" gpu)
t0=$SECONDS
"${MK[@]}" > "$OUT/ab-build-B.log" 2>&1 &
(cd "$BASE" && "${MK[@]}") > "$OUT/ab-build-A.log" 2>&1 &
wait
echo "== builds: $((SECONDS - t0)) s"
[ -x build-gpu/duet ] && [ -x "$BASE/build-gpu/duet" ] || { tail -5 "$OUT"/ab-build-*.log; exit 1; }
for run in B1 A B2; do
    bin=build-gpu/duet
    [ "$run" = A ] && bin=$BASE/build-gpu/duet
    t0=$SECONDS
    timeout 200 $MPIRUN "$bin" bench ${SHAPES:+--shapes "$SHAPES"} --repeats 30 --warmup 5 --hw tuning_data/h200.json \
        --json "$OUT/ab-$run.json" ${BENCH_ARGS:-} > "$OUT/ab-$run.log" 2>&1
    echo "== bench $run: rc=$?, $((SECONDS - t0)) s"
done
