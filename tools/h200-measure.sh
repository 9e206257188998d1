#!/bin/bash
# Build the GPU duet on an H200 machine and run measurement steps (docs/performance.md,
# docs/calibration.md). Outputs and logs go to $OUT (at most 8 files come back from the device
# tool); the last lines printed are one summary line per step.
#
#   tools/h200-measure.sh STEP...
#   STEP: build | collect | resume | ties | smoke | shapes | bench | gemm | tune | timeline
#   ties: a corpus of bench/shapes/ties.txt with three times the runs (27 in 9 rounds a point),
#         h200_world$NP-ties.json, for the tied sets of the fit (docs/calibration.md)
#   shapes: duet bench on the workloads of the file $SHAPES (default bench/shapes/splitk.txt)
#   gemm: duet's GEMM (every tile) against cuBLASLt on the seed's 15 shapes; one GPU is enough (NP=1)
# Environment: NP (ranks, default 2), PROFILE (profile for bench/tune, default h200),
#              BENCH_ARGS, COLLECT_ARGS (extra arguments).
#
# cJSON and GSL are not installed there: their Debian packages travel in .deps/ (ignored by git):
#   mkdir -p .deps && cd .deps && apt-get download libgsl27 libgslcblas0 libgsl-dev libcjson1 libcjson-dev
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/duet-measure}
NP=${NP:-2}
PROFILE=${PROFILE:-h200}
. tools/h200-env.sh
mkdir -p "$OUT" "$DEP"
DUET=build-gpu/duet
SUMMARY=()
note() { SUMMARY+=("$1"); echo "== $1"; }

# run NAME LIMIT_S CMD...: a step with a time limit; output in $OUT/NAME.log.
run() {
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    note "$name: rc=$rc, $((SECONDS - t0)) s. $(grep -v '^\[' "$OUT/$name.log" | tail -2 | tr '\n' ' ' | cut -c1-300)"
    return $rc
}

for step in "$@"; do
    case $step in
    build)
        h200_unpack_deps
        { nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
          nvidia-smi topo -m; } > /tmp/gpus.log 2>&1
        run build 300 make JOBS=32 -j32 "CFLAGS=-I$DEP/usr/include" \
            "LDFLAGS=-L$DEP/usr/lib/x86_64-linux-gnu -Wl,-rpath,$DEP/usr/lib/x86_64-linux-gnu" gpu || break
        cat /tmp/gpus.log >> "$OUT/build.log"
        ;;
    collect)
        # About 97 s on 2 x H200 at the defaults (3 rounds, 12 runs a point, 5775 rows with the
        # K-split rows; the 66-point grid at 11 runs took 87 s), so 420 s leaves room.
        run collect 420 $MPIRUN $DUET calibrate collect -o "$OUT/h200_world$NP.json" ${COLLECT_ARGS:-}
        ;;
    ties)
        # About 250 s on 2 x H200 (16384^3: some 500 points of 27 runs of 14 ms).
        run ties 560 $MPIRUN $DUET calibrate collect --shapes bench/shapes/ties.txt --repeats 27 --rounds 9 \
            -o "$OUT/h200_world$NP-ties.json" ${COLLECT_ARGS:-}
        ;;
    resume)
        # Re-running on a complete corpus must measure nothing.
        run resume 120 $MPIRUN $DUET calibrate collect -o "$OUT/h200_world$NP.json" ${COLLECT_ARGS:-}
        ;;
    gemm)
        run gemm 400 $MPIRUN $DUET bench --gemm-only --repeats 20 --warmup 3 ${BENCH_ARGS:-} \
            --json "$OUT/bench-gemm-h200.json"
        ;;
    smoke)
        printf '4096x4096x4096 512x2048 all_gather,all_reduce\n' > /tmp/smoke.shapes
        run smoke 120 $MPIRUN $DUET bench --shapes /tmp/smoke.shapes --repeats 20 --warmup 3 --hw "$PROFILE" \
            --json "$OUT/smoke.json"
        ;;
    shapes)
        run shapes 400 $MPIRUN $DUET bench --shapes "${SHAPES:-bench/shapes/splitk.txt}" --repeats 20 --warmup 3 \
            --hw "$PROFILE" --json "$OUT/shapes.json" ${BENCH_ARGS:-}
        ;;
    bench)
        run bench ${BENCH_LIMIT:-450} $MPIRUN $DUET bench --repeats 20 --warmup 3 --hw "$PROFILE" \
            --json "$OUT/bench-h200-w$NP.json" --svg "$OUT/bench-h200-w$NP.svg" ${BENCH_ARGS:-}
        ;;
    tune)
        # One real tuning run per collective (a miss: benchmarks), then the first one again (a hit).
        export DUET_CACHE="$OUT/tuning.json"
        : > "$OUT/tune.log"
        t0=$SECONDS
        for coll in all_gather all_reduce reduce_scatter all_to_all broadcast all_gather; do
            echo "== duet tune --collective $coll ${TUNE_SHAPE:---gemm 8192x8192x8192 --comm 4096x8192}" >> "$OUT/tune.log"
            timeout 120 $MPIRUN -x DUET_CACHE $DUET tune --collective $coll \
                ${TUNE_SHAPE:---gemm 8192x8192x8192 --comm 4096x8192} --hw "$PROFILE" --json >> "$OUT/tune.log" 2>&1
            echo "rc=$?" >> "$OUT/tune.log"
        done
        note "tune: $((SECONDS - t0)) s, $(grep -c '"cached":	false' "$OUT/tune.log") tuned, $(grep -c '"cached":	true' "$OUT/tune.log") cache hits"
        ;;
    timeline)
        run timeline 120 $MPIRUN $DUET run ${TIMELINE_ARGS:---collective all_gather --gemm 8192x8192x8192 --comm 4096x8192} \
            --hw "$PROFILE" --trace "$OUT/timeline-measured.json" --svg "$OUT/timeline.svg"
        ;;
    *) echo "unknown step $step"; exit 2 ;;
    esac
done
echo "---- summary"
for s in "${SUMMARY[@]}"; do echo "$s"; done
