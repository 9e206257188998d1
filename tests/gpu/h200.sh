#!/bin/bash
# Build and run the GPU tests on an H200 machine (docs/backend.md).
#
#   tests/gpu/h200.sh [STEP...]
#   STEP: build tests memcheck racecheck canary perf (default: all); cli: make gpu alone
#   tests: make test-gpu at W = 1 .. min(4, GPUs) ($WORLDS overrides, e.g. WORLDS="1 2 3 4" on a
#   2-GPU machine under MPS), then the planted faults at W = $NP, which every check must catch.
#   canary: a planted out-of-bounds write and a planted shared-memory race, which the two
#   sanitizer tools must report (so that their clean passes mean something).
#
# cJSON and GSL are not installed there: their Debian packages travel in .deps/ (ignored by git)
# and are unpacked under /tmp/dep. Logs go to $OUT (or /tmp/duet-gpu-out); the last lines printed
# are one summary line per step.
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/duet-gpu-out}
DEP=/tmp/dep
NP=${NP:-2}
mkdir -p "$OUT" "$DEP"
# NVLink multicast stays off on these shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
MPIRUN="mpirun --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS"
BIN=build-gpu/duet-gpu-tests
SUMMARY=()
[ $# -eq 0 ] && set -- build tests memcheck racecheck canary perf

note() { SUMMARY+=("$1"); echo "== $1"; }

# run NAME LIMIT_S CMD...: one step with a time limit, its output in $OUT/NAME.log.
run() {
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    local tail_line
    tail_line=$(grep -E "passed, .* failed|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/$name.log" | tail -3 | tr '\n' ' ')
    note "$name: rc=$rc, $((SECONDS - t0)) s. $tail_line"
    return $rc
}

for step in "$@"; do
    case $step in
    build)
        for f in .deps/*.deb; do dpkg -x "$f" "$DEP"; done
        { nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; nvidia-smi topo -m; } \
            > "$OUT/gpus.log" 2>&1
        MK=(make JOBS=32 "CFLAGS=-I$DEP/usr/include"
            "LDFLAGS=-L$DEP/usr/lib/x86_64-linux-gnu -Wl,-rpath,$DEP/usr/lib/x86_64-linux-gnu")
        # The backend and its tests; `cli` below runs the whole `make gpu` (GPU CLI included).
        run build 240 "${MK[@]}" -j32 build/libduet.a build-gpu/libduet_backend.a "$BIN" || break
        ;;
    cli)
        MK=(make JOBS=32 "CFLAGS=-I$DEP/usr/include"
            "LDFLAGS=-L$DEP/usr/lib/x86_64-linux-gnu -Wl,-rpath,$DEP/usr/lib/x86_64-linux-gnu")
        run make-gpu 200 "${MK[@]}" gpu
        ;;
    tests)
        # The official target: make gpu (GPU CLI included), then W = NP and W = 1.
        MK=(make JOBS=32 "CFLAGS=-I$DEP/usr/include"
            "LDFLAGS=-L$DEP/usr/lib/x86_64-linux-gnu -Wl,-rpath,$DEP/usr/lib/x86_64-linux-gnu")
        ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
        WORLDS=${WORLDS:-$(seq -s ' ' 1 $((ngpu < 1 ? 1 : ngpu > 4 ? 4 : ngpu)))}
        run test-gpu 600 "${MK[@]}" test-gpu GPU_WORLDS="$WORLDS" GPU_PLANT_NP="$NP" GPU_TEST_ARGS=--verbose
        ;;
    memcheck)
        run memcheck 150 $MPIRUN -np "$NP" compute-sanitizer --tool memcheck --error-exitcode 99 \
            "$BIN" --quick --skip-timeouts --skip-vendor --timeout-ms 120000
        ;;
    racecheck)
        run racecheck 200 $MPIRUN -np "$NP" compute-sanitizer --tool racecheck --error-exitcode 99 \
            "$BIN" --quick --skip-timeouts --skip-vendor --timeout-ms 120000
        ;;
    canary)
        run canary-memcheck 60 $MPIRUN -np 1 compute-sanitizer --tool memcheck "$BIN" --canary
        run canary-racecheck 60 $MPIRUN -np 1 compute-sanitizer --tool racecheck "$BIN" --canary
        cat "$OUT/canary-memcheck.log" "$OUT/canary-racecheck.log" > "$OUT/canary.log"
        rm -f "$OUT/canary-memcheck.log" "$OUT/canary-racecheck.log"
        ;;
    perf)
        run perf 60 $MPIRUN -np "$NP" "$BIN" --perf
        grep perf: "$OUT/perf.log"
        ;;
    *) echo "unknown step $step"; exit 2 ;;
    esac
done
# At most 8 files come back from the machine: fold the device listing into the build log.
if [ -f "$OUT/gpus.log" ] && [ -f "$OUT/build.log" ]; then
    cat "$OUT/gpus.log" >> "$OUT/build.log" && rm -f "$OUT/gpus.log"
fi
echo "---- summary"
for s in "${SUMMARY[@]}"; do echo "$s"; done
