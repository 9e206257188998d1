#!/bin/bash
# What one H200 can check of a change (docs/performance.md, "One GPU"), when no 2-GPU machine is
# lent: builds side by side, this tree (B) and other checkouts ($VARIANTS, "NAME=DIR ...", the
# first of them the base A, e.g. VARIANTS="A=.gpu-base P=.gpu-p"), then
#   smoke   the quick GPU tests at W = 1; the remaining steps are skipped if they fail or hang;
#   quick   the quick GPU tests at W = 1, 2, 3 and 4 (W > 1: every rank on the one GPU, under MPS
#           where the machine has it), then the planted faults at W = 4 (a couple of minutes);
#   tests1  the GPU tests at W = 1 only (verbose; also run E where ENV_E is set);
#   tests   the whole GPU tests at W = 4, 3 and 2 with every rank on the one GPU (under MPS where
#           the machine has it, so that the ranks' persistent kernels run at once), then at W = 1,
#           then the planted faults at W = 2;
#   comm    collectives alone at W = 2 on the one GPU, B, then every variant, then B again: the
#           peer's memory is the same HBM, so this measures the comm tile's own loop, not NVLink;
#   gemm    duet bench --gemm-only on $GEMM_SHAPES against cuBLASLt, in the same order ($GEMM_ARGS:
#           more options, e.g. --warmup-ms 300 for the clock a long job settles at);
#   trace   duet run --trace of the GEMMs of $TRACES (GEMM alone, every SM), every build;
#   pair    a GEMM and a collective together at W = 2, fused and concurrent, on half the SMs per
#           rank (two grids of all the SMs cannot both be resident on one GPU), every build, twice;
#   clocks  SM clock, power and clock-event reasons every 20 ms while the GEMM $CLOCK_GEMM (default
#           8192x8192x8192) runs $CLOCK_REPS (2000) times on every SM, once per entry of $CLOCK_RUNS:
#           V (cuBLASLt) or TILE:SPLIT:GROUP_M (this tree's kernel); default "V 256x256x64:1:8 V
#           256x256x64:1:8";
#   sass    spill instructions (STL/LDL) and wgmma (HGMMA) in each build's 128x256 fused kernel;
#   ncu     Nsight Compute (full set, source-level stall samples) of the GEMMs of $NCU (SHAPE:TILE:
#           SPLIT[:GROUP_M], GEMM alone on every SM as in trace) in the builds $NCU_BUILDS (default
#           B), and of cuBLASLt's kernel for each shape (unless NCU_VENDOR=0); the hottest SASS lines
#           (tools/ncu_hot.py) go into the log; with NCU_METRICS=a,b,... only those metrics, each
#           kernel's values in the log. MPS is stopped meanwhile (ncu does not profile MPS
#           clients). Clocks are left alone (--clock-control none, METHOD.md).
# Results in $OUT as a handful of files (the device tool brings back at most 8).
#   VARIANTS="A=.gpu-base" tools/h200-onegpu.sh [STEP...]      (default: tests comm gemm trace)
# VARIANTS may be empty (this tree alone: the profile of one build, its tests).
# ENV_E="NAME=VALUE" adds a run E: this tree's binary with that variable in the ranks' environment,
# in the tests1, gemm, trace and ncu steps: an A/B within one build for a change behind a switch
# (the gemm-pairs branch's ENV_E=DUET_GEMM_PAIRS=0).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/duet-onegpu}
VARIANTS=${VARIANTS-}
BASE=${VARIANTS%% *}
BASE=${BASE#*=}
BASE=${BASE:-.}
NP=2
. tools/h200-env.sh
mkdir -p "$OUT"
h200_unpack_deps
[ $# -eq 0 ] && set -- tests comm gemm trace
LOG=$OUT/onegpu.log
note() { echo "== $*" | tee -a "$LOG"; }

MK=(make JOBS=8 -j8 "CFLAGS=-I$DEP/usr/include"
    "LDFLAGS=-L$DEP/usr/lib/x86_64-linux-gnu -Wl,-rpath,$DEP/usr/lib/x86_64-linux-gnu" gpu)
# bin NAME: the duet of build NAME (B: this tree).
bin() {
    [ "$1" = B ] || [ "$1" = E ] && { echo build-gpu/duet; return; }
    local v
    for v in $VARIANTS; do [ "${v%%=*}" = "$1" ] && echo "${v#*=}/build-gpu/duet"; done
}
NAMES="B"
for v in $VARIANTS; do NAMES="$NAMES ${v%%=*}"; done
# mpi1 NAME: the one-rank mpirun line of run NAME (E: with $ENV_E in the ranks' environment).
mpi1() {
    if [ "$1" = E ]; then echo env "$ENV_E" $MPIRUN1 -x "${ENV_E%%=*}"; else echo $MPIRUN1; fi
}
RUNS=$NAMES
[ -n "${ENV_E:-}" ] && RUNS="$RUNS E"
t0=$SECONDS
"${MK[@]}" > "$OUT/build-B.log" 2>&1 &
for v in $VARIANTS; do (cd "${v#*=}" && "${MK[@]}") > "$OUT/build-${v%%=*}.log" 2>&1 & done
wait
note "builds ($NAMES): $((SECONDS - t0)) s"
for n in $NAMES; do [ -x "$(bin $n)" ] || { tail -5 "$OUT/build-$n.log"; exit 1; }; done
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw --format=csv >> "$LOG" 2>&1

# Two ranks on one GPU: MPS lets both persistent kernels run at once (without it they take turns
# in time slices, and every wait across the ranks costs a slice).
# h200-env.sh passes the MPS variables to the ranks when they are set, so it is read again
# whenever MPS starts or stops (ncu does not profile MPS clients).
mps=0
mps_mpirun() {
    . tools/h200-env.sh
    MPIRUN1=${MPIRUN/-np 2/-np 1}
}
# mpiw W: the mpirun line of W ranks (on the one GPU).
mpiw() {
    echo "${MPIRUN/-np 2/-np $1}"
}
# gpu_tests NAME LIMIT_S W ARGS...: one run of the GPU tests, its log in $OUT/NAME.log, a line in the
# log with its verdict and time, and its failures after it.
gpu_tests() {
    local name=$1 limit=$2 w=$3 t1=$SECONDS
    shift 3
    timeout "$limit" $(mpiw "$w") build-gpu/duet-gpu-tests "$@" > "$OUT/$name.log" 2>&1
    note "$name (W=$w $*): rc=$?, $((SECONDS - t1)) s. $(grep -E 'passed, .* failed' "$OUT/$name.log" | tail -1)"
    grep -E "^FAIL|^  \[rank" "$OUT/$name.log" | head -12 >> "$LOG"
}
mps_start() {
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if command -v nvidia-cuda-mps-control > /dev/null && nvidia-cuda-mps-control -d; then
        mps=1
    else
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
    mps_mpirun
}
mps_stop() {
    [ $mps = 1 ] && echo quit | nvidia-cuda-mps-control
    mps=0
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    mps_mpirun
}
mps_start
note "MPS: $mps"

for step in "$@"; do
    t0=$SECONDS
    case $step in
    smoke)
        # The quick GPU tests at W = 1, first: a change that hangs or breaks the kernels stops the
        # run here, in a minute, instead of in every later step's timeout.
        timeout 90 $MPIRUN1 build-gpu/duet-gpu-tests --quick --timeout-ms 20000 > "$OUT/smoke.log" 2>&1
        rc=$?
        note "smoke (quick tests W=1): rc=$rc, $((SECONDS - t0)) s. $(grep -E 'passed, .* failed' "$OUT/smoke.log" | tail -1)"
        [ $rc = 0 ] || { tail -20 "$OUT/smoke.log" >> "$LOG"; break; }
        ;;
    tests1)
        # The GPU tests at W = 1 only, verbose, this tree and run E.
        for n in B ${ENV_E:+E}; do
            t0=$SECONDS
            timeout 200 $(mpi1 $n) build-gpu/duet-gpu-tests --verbose --timeout-ms 20000 \
                > "$OUT/tests-w1-$n.log" 2>&1
            note "tests W=1 $n: rc=$?, $((SECONDS - t0)) s. $(grep -E 'passed, .* failed' "$OUT/tests-w1-$n.log" | tail -1)"
            grep -E "^FAIL|^  \[rank" "$OUT/tests-w1-$n.log" | head -12 >> "$LOG"
        done
        ;;
    quick)
        # Every world size on the one GPU, the reduced set: the matrix's quick shapes, the K split
        # in both types, the vendor mode, every rank skipping every collective (short bound).
        for w in 1 2 3 4; do
            gpu_tests "quick-w$w" 150 "$w" --quick --timeout-ms 20000
        done
        gpu_tests plant-w4 60 4 --plant --timeout-ms 20000
        ;;
    tests)
        for w in 4 3 2; do
            gpu_tests "tests-w$w" 300 "$w" --verbose --timeout-ms 20000
        done
        if [ -n "${TESTS_A:-}" ]; then
            t0=$SECONDS
            timeout 300 $MPIRUN "$BASE/build-gpu/duet-gpu-tests" --verbose --timeout-ms 20000 > "$OUT/tests-w2-A.log" 2>&1
            note "tests W=2 on one GPU, A: rc=$?, $((SECONDS - t0)) s. $(grep -E 'passed, .* failed' "$OUT/tests-w2-A.log" | tail -1)"
        fi
        gpu_tests tests-w1 200 1 --timeout-ms 20000
        gpu_tests plant-w2 60 2 --plant --timeout-ms 20000
        ;;
    comm)
        for n in $NAMES B; do
            echo "# $n" >> "$OUT/comm.txt"
            BIN=$(bin $n) NP=2 COMMS="${COMMS:-2048x16384 512x4096}" COLLS="${COLLS:-reduce_scatter all_reduce all_gather}" \
                CTAS="${CTAS:-4 16}" TILES=256x64 timeout 150 tools/h200-commtile.sh >> "$OUT/comm.txt" 2>&1
        done
        note "comm A/B: $((SECONDS - t0)) s"
        ;;
    gemm)
        k=0
        for n in $RUNS B; do
            k=$((k + 1))
            timeout 200 $(mpi1 $n) "$(bin $n)" bench --gemm-only --shapes "${GEMM_SHAPES:-bench/shapes/gemm-min.txt}" \
                --repeats 30 --warmup 5 ${GEMM_ARGS:-} --json "$OUT/gemm-$k-$n.json" > "$OUT/gemm-$k-$n.log" 2>&1
            note "gemm $k $n: rc=$?, $((SECONDS - t0)) s"
            grep -E "^[0-9]+x[0-9]+x[0-9]+ " "$OUT/gemm-$k-$n.log" | sed "s/^/$n /" >> "$OUT/gemm.txt"
        done
        ;;
    pair)
        for n in $NAMES $NAMES; do
            for coll in ${PAIR_COLLS:-reduce_scatter all_gather}; do
                for mode in fused concurrent; do
                    cfg="--num-wgs 64 --gemm-wgs 56"
                    [ $mode = concurrent ] && cfg="--gemm-wgs 56 --comm-wgs 8"
                    ms=$(timeout 60 $MPIRUN "$(bin $n)" run --gemm 4096x4096x4096 --collective "$coll" --comm 2048x16384 \
                        --dtype fp16 --mode $mode $cfg --tile 256x128x64 --repeats 20 --warmup 3 2>&1 |
                        sed -n 's/.*measured \([0-9.]*\) ms.*/\1/p' | head -1)
                    echo "$n $coll $mode ${ms:-failed}" >> "$OUT/comm.txt"
                done
            done
        done
        note "pair: $((SECONDS - t0)) s"
        ;;
    sass)
        for n in $NAMES; do
            d=$(dirname "$(dirname "$(bin $n)")")
            o=$(ls "$d"/build-gpu/backend/kernels_fp16*.o 2> /dev/null | head -1)
            f=_Z23duet__persistent_kernelILb0ELi128ELi256ELb0EEv13duet__kparams
            [ -n "$o" ] && cuobjdump -sass -fun "$f" "$o" > "$OUT/sass-$n.txt" 2>&1
            note "sass $n 128x256: $(grep -c HGMMA "$OUT/sass-$n.txt") HGMMA, $(grep -c 'STL' "$OUT/sass-$n.txt") STL, $(grep -c 'LDL' "$OUT/sass-$n.txt") LDL"
        done
        ;;
    trace)
        # GEMM alone on every SM at the tile and split the bench picks for these shapes.
        for t in ${TRACES:-4096x512x8192:128x256x64:2 4096x8192x512:256x256x64:1}; do
            IFS=: read -r shape tile split <<< "$t"
            for run in $RUNS; do
                timeout 60 $(mpi1 $run) "$(bin $run)" run --gemm "$shape" --dtype fp16 --mode fused --num-wgs 132 --gemm-wgs 132 \
                    --tile "$tile" --split-k "$split" --trace "$OUT/trace-$run-$shape-$tile.json" >> "$OUT/trace.log" 2>&1
            done
        done
        note "traces: $((SECONDS - t0)) s"
        ;;
    ncu)
        mps_stop
        # NCU_METRICS (comma-separated) collects only those metrics: a quick count, no source view.
        what=(--set full --import-source yes)
        [ -n "${NCU_METRICS:-}" ] && what=(--metrics "$NCU_METRICS")
        NCU_ARGS=(--clock-control none "${what[@]}" --launch-skip 2 --launch-count 1 -f)
        for t in ${NCU:-4096x512x8192:128x256x64:2 4096x8192x512:128x256x64:1}; do
            IFS=: read -r shape tile split gm <<< "$t"
            for run in ${NCU_BUILDS:-B}; do
                rep=$OUT/ncu-$run-$shape-$tile-k$split-g${gm:-8}
                timeout 240 $(mpi1 $run) ncu "${NCU_ARGS[@]}" -k regex:persistent -o "$rep" "$(bin $run)" run --gemm "$shape" \
                    --dtype fp16 --mode fused --num-wgs 132 --gemm-wgs 132 --tile "$tile" --split-k "$split" \
                    --group-m "${gm:-8}" --repeats 3 --warmup 1 >> "$OUT/ncu.log" 2>&1
                note "ncu $run $shape $tile split $split group_m ${gm:-8}: rc=$?, $((SECONDS - t0)) s"
            done
            # cuBLASLt's kernel for the shape (its name: nvjet_* or sm90_xmma_* on this CUDA), once.
            [ "${NCU_VENDOR:-1}" = 1 ] && [ ! -f "$OUT/ncu-vendor-$shape.ncu-rep" ] || continue
            echo "$shape 512x2048 all_gather fp16" > "$OUT/ncu-shape.txt"
            timeout 240 $MPIRUN1 ncu "${NCU_ARGS[@]}" -k "regex:nvjet|xmma|cutlass|gemm" -o "$OUT/ncu-vendor-$shape" build-gpu/duet \
                bench --gemm-only --shapes "$OUT/ncu-shape.txt" --repeats 4 --warmup 1 >> "$OUT/ncu.log" 2>&1
            note "ncu vendor $shape: rc=$?, $((SECONDS - t0)) s"
        done
        # Text views next to each report: the details page, and per-SASS-instruction samples.
        for rep in "$OUT"/ncu-*.ncu-rep; do
            [ -f "$rep" ] || continue
            ncu -i "$rep" --page details > "${rep%.ncu-rep}.details.txt" 2>&1
            if [ -n "${NCU_METRICS:-}" ]; then
                grep -E "${NCU_METRICS//,/|}" "${rep%.ncu-rep}.details.txt" | sed "s|^ *|$(basename "$rep") |" >> "$LOG"
                rm -f "$rep"
                continue
            fi
            ncu -i "$rep" --page source --csv --print-source sass > "${rep%.ncu-rep}.sass.csv" 2>&1
            ncu -i "$rep" --page source --csv --print-source cuda,sass > "${rep%.ncu-rep}.cuda-sass.csv" 2>&1
            grep -E "Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput" \
                "${rep%.ncu-rep}.details.txt" | head -8 | sed "s|^|$(basename "$rep") |" >> "$LOG"
            tools/ncu_hot.py --top 8 "${rep%.ncu-rep}.sass.csv" >> "$LOG" 2>&1
            rm -f "$rep" # tens of MB, and no ncu to open it off the machine
        done
        mps_start
        ;;
    clocks)
        # Is the gap under sustained load a clock one? The SM clock, power, temperature and the
        # driver's clock-event reasons, sampled every 20 ms while one GEMM runs $CLOCK_REPS times
        # back to back on every SM, run after run of $CLOCK_RUNS; tools/clocks_summary.py reads
        # each busy window after the last run.
        shape=${CLOCK_GEMM:-8192x8192x8192}
        sms=$(nvidia-smi -i 0 --query-gpu=multiprocessor_count --format=csv,noheader 2> /dev/null)
        [[ $sms =~ ^[0-9]+$ ]] || sms=132
        q=timestamp,utilization.gpu,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
        nvidia-smi -i 0 --query-gpu=$q --format=csv -c 1 > /dev/null 2>&1 || q=${q/clocks_event/clocks_throttle}
        k=0
        runs=()
        for run in ${CLOCK_RUNS:-V 256x256x64:1:8 V 256x256x64:1:8}; do
            k=$((k + 1))
            if [ "$run" = V ]; then
                cfg=(--mode vendor --gemm-wgs "$sms" --comm-wgs 0)
            else
                IFS=: read -r tile split gm <<< "$run"
                cfg=(--mode fused --num-wgs "$sms" --gemm-wgs "$sms" --tile "$tile" --split-k "$split" --group-m "$gm")
                run="B:$run"
            fi
            f=$OUT/clocks-$k.csv
            nvidia-smi -i 0 --query-gpu=$q --format=csv,nounits -lms 20 > "$f" 2>&1 &
            smi=$!
            sleep 1 # idle samples before the run: the window's start shows
            echo "# $k $run" >> "$OUT/clocks.log"
            timeout 120 $MPIRUN1 build-gpu/duet run --gemm "$shape" --dtype "${CLOCK_DTYPE:-fp16}" "${cfg[@]}" \
                --repeats "${CLOCK_REPS:-2000}" --warmup 5 >> "$OUT/clocks.log" 2>&1
            rc=$?
            sleep 1
            kill $smi
            wait $smi 2> /dev/null
            note "clocks $k $run $shape: rc=$rc, $(grep -o 'measured [0-9.]* ms' "$OUT/clocks.log" | tail -1)"
            runs+=("$k-$run=$f")
        done
        # One line a run into the log, every run's series in one JSON and one picture (SM clock and
        # power against time).
        tools/clocks_summary.py --json "$OUT/clocks.json" --svg "$OUT/clocks.svg" \
            --title "$shape ${CLOCK_DTYPE:-fp16}, $(nvidia-smi -i 0 --query-gpu=name --format=csv,noheader), ${CLOCK_REPS:-2000} runs back to back" \
            "${runs[@]}" >> "$LOG" 2>&1
        ;;
    *) echo "unknown step $step"; exit 2 ;;
    esac
done
mps_stop
# At most 8 files come back: the three tables and the clocks picture stay as they are, the rest (logs, JSON,
# traces, SASS) goes into one archive.
cd "$OUT" && cat "$LOG" && tar czf logs.tgz --remove-files $(ls | grep -v -e '^comm.txt$' -e '^gemm.txt$' -e '^onegpu.log$' \
    -e '^clocks.svg$')
ls
