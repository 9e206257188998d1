#!/bin/bash
# tools/gpu.sh: duet's GPU-side work as named steps, on a node with NVIDIA (CUDA) or AMD (ROCm) GPUs.
# The node is detected by tools/gpu-env.sh (the vendor, GPUs, architecture, ranks, mpirun line).
#
#   tools/gpu.sh STEP...          e.g.  tools/gpu.sh build test bench
#   tools/gpu.sh help             this text
#
# Steps (run in the order given; every step has a time limit and a log; "CPU" needs no GPU):
#   info       the node: GPUs, driver, topology, compilers, MPI, commit                  -> info.log
#   build      make gpu (library, GPU duet, GPU tests); with VARIANTS, their builds beside it
#   smoke      the quick GPU tests at W = 1; if they fail, the remaining steps are skipped
#   test       make test-gpu at every W of WORLDS (default 1 .. min(4, GPUs)), then the planted
#              faults at PLANT_NP (default NP), which every check must catch
#   quick      the quick GPU tests at every W of QUICK_WORLDS (default 1 2 3 4; ranks beyond the
#              GPUs share them), then the planted faults at the largest
#   example    examples/gpu_run.hip (build-gpu/gpu_run) at every W of EXAMPLE_WORLDS (default 1 2):
#              a program without MPI that starts duet through the file bootstrap, registers its own
#              buffers and checks one GEMM + all_gather; each rank prints a line ending in OK
#   sanitize   NVIDIA: compute-sanitizer memcheck and racecheck on the quick set at SAN_NP ranks
#              (SAN_ONLY=split_k,stream_k: those sections only, SAN_RACE_ONLY racecheck's alone;
#              racecheck takes minutes per wgmma kernel; SAN_LIMIT, default 300 s, each tool's limit)
#              (default 1), then the canaries (a planted out-of-bounds write and a planted race,
#              which the tools must report, so that their clean passes mean something)
#   perf       the GPU tests' rough speeds (--perf); measuring properly is the bench
#   bench      duet bench at NP ranks: duet against the vendor libraries (cuBLASLt + NCCL, or
#              hipBLASLt + RCCL), every workload of SHAPES (default: the reference design's set)
#   gemm       duet bench --gemm-only on one GPU: duet's GEMM against the vendor's, GEMM_SHAPES
#   gemm-random  duet bench --gemm-only --random on one GPU: RANDOM_N (48) random GEMMs of seed
#              RANDOM_SEED (default: drawn from /dev/urandom, so each run draws a fresh set; the seed is in the
#              JSON), extents 512..16384, each in fp16 and bf16, on every SM, at the settled clock
#   sm-budget  the same on SM budgets: BUDGET_N (16) random GEMMs at BUDGETS (1,0.75,0.5 of the SMs)
#   collect    duet calibrate collect at NP ranks -> DEVICE_TAG_worldNP.json (resumable: `resume`
#              runs it again and must measure nothing); `ties`: bench/shapes/ties.txt, 27 runs in 9
#              rounds a point -> DEVICE_TAG_worldNP-ties.json
#   corpus     the one-GPU corpus (docs/calibration.md): duet calibrate collect --grid w1 at W = 1 on the
#              training set (random 64, seed 1) and the test set (random 32, seed CORPUS_TEST_SEED,
#              default 20261203, the H200's, written down in tuning_data/testset-h200-w1.txt; draw a
#              fresh one for another device), each in two sweeps of different orders
#              (--order-seed 1, 2), and a second training set (random 64, seed 2, one sweep), at the
#              settled clock (--warmup-ms, default 200) -> DEVICE_TAG_world1-{train,test}-s{1,2}.json,
#              DEVICE_TAG_world1-train2-s1.json; the expected duration is printed first. CORPUS_SETS
#              picks sets ("train train2"), CORPUS_TEST_SEED draws another test set
#   copy-corpus  copy mode's corpus: duet calibrate collect --grid copy (all_gather, all_to_all,
#              broadcast) at every W of COPY_WORLDS (default 1 2; W = 2 on one GPU runs under MPS, a
#              loopback, not a link) on a training set (random COPY_N, default 48, seed COPY_SEED,
#              default 1) and a held-out test set (random COPY_TEST_N, default 24, seed
#              COPY_TEST_SEED, default drawn from /dev/urandom and printed first), at the settled
#              clock -> DEVICE_TAG_copy-worldW-{train,test}.json
#   fit        CPU: duet calibrate fit (defaults: the committed H200 training corpus and start profile)
#   builtin    CPU: regenerate a built-in profile, BUILTIN_NAME (h200), model/hw_NAME.inc from
#              tuning_data/NAME.json
#   ablation   CPU: the H200 fit with the model's newer terms switched on one at a time
#   tune       one real `duet tune` per collective, then the first again (a cache hit)
#   trace      one operation traced: its measured timeline (JSON) and a picture beside the prediction
#   gemm-trace GEMMs alone traced on every SM, one per entry of TRACES, every build
#   comm       collectives alone, per collective x tensor x CTA count x comm tile, every build
#   pair       a GEMM and a collective together at W = 2, fused and concurrent, every build, twice
#   clocks     NVIDIA: SM clock, power, temperature and clock-event reasons every 20 ms while one
#              GEMM runs back to back on every SM -> clocks.json, clocks.svg
#   sass       NVIDIA: wgmma, spill stores and loads in each build's fp16 128x256 fused kernel
#   ncu        NVIDIA: Nsight Compute of the GEMMs of NCU and of the vendor's kernel for each shape
#
# Builds side by side (A/B): VARIANTS="A=DIR [NAME=DIR...]" names other checkouts (one without .git,
# e.g. from git archive, names its commit in DIR/.duet-commit, which its results carry); `build` builds
# them beside this tree (B), and bench, gemm, gemm-trace, comm, pair, sass and ncu run every build:
# B, each variant, then B again for bench and gemm (slow drift of the machine then favours no build).
# ENV_E="NAME=VALUE" adds a run E: this tree's binary with that variable set in the ranks (gemm,
# gemm-trace, ncu, and `test` at W = 1): an A/B inside one build for a change behind a switch.
#
# Outputs go to OUT (default /tmp/duet-gpu): a log per step (STEP.log), the results, summary.log
# (one line per step, also printed at the end) and manifest.tsv (each result file with its step,
# the commit it measured, the date and the command). OUT_MAX_FILES=N (default 0: no limit) keeps at
# most N files there, for a transport that brings back only a few (the device tool of this
# project's GPU sessions returns 8 files at most): summary.log, manifest.tsv and the files matching
# KEEP (default "*.svg bench*.json gemm*.json sm-budget*.json *_world*.json *_copy-world*.json") stay while they fit,
# everything else goes into rest.tgz. DRY_RUN=1 prints the commands instead of running them.
#
# Knobs (environment): DUET_COMMIT (the commit to record where the tree has no .git), DEADLINE_S (seconds
# from the start past which no step starts and every command is cut: for a transport with a time limit), NP, WORLDS, PLANT_NP, QUICK_WORLDS, SAN_NP, SAN_ONLY, SAN_RACE_ONLY, SAN_LIMIT, PROFILE (the --hw of bench,
# collect, corpus, tune and trace; default the device's built-in), SHAPES, BENCH_ARGS, GEMM_SHAPES, GEMM_ARGS, COLLECT_ARGS, TRACE_ARGS,
# TRACES, COMMS, COLLS, CTAS, TILES, PAIR_COLLS, CLOCK_GEMM, CLOCK_REPS, CLOCK_RUNS, CLOCK_DTYPE, NCU,
# NCU_BUILDS, NCU_METRICS, NCU_VENDOR, SAN_TOOLS, SAN_RACE_FLAGS, FIT_* (step fit), RANDOM_N, RANDOM_SEED, BUDGET_N, BUDGETS,
# RANDOM_ARGS, JOBS; each step's section below says more.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2
if [ $# -eq 0 ] || [ "$1" = help ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
STEPS=" info build smoke test quick example sanitize perf bench gemm gemm-random sm-budget collect resume ties corpus copy-corpus fit builtin ablation tune trace gemm-trace comm pair clocks sass ncu "
for step in "$@"; do
    [[ $STEPS == *" $step "* ]] || { echo "duet: tools/gpu.sh: unknown step '$step' (tools/gpu.sh help lists them)" >&2; exit 2; }
done
# shellcheck source=tools/gpu-env.sh
. tools/gpu-env.sh
OUT=${OUT:-/tmp/duet-gpu}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DRY=${DRY_RUN:-0}
DUET=build-gpu/duet
TESTBIN=build-gpu/duet-gpu-tests
# DUET_COMMIT names the commit where the tree has no .git (a copy sent to a GPU machine).
if [ -n "${DUET_COMMIT:-}" ]; then
    COMMIT=$DUET_COMMIT
else
    COMMIT=$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
    git diff --quiet HEAD 2> /dev/null || COMMIT="$COMMIT+dirty"
fi
NCPU=$(nproc 2> /dev/null || echo 2)
SUMMARY=$OUT/summary.log
touch "$SUMMARY"
FIRST=$(($(wc -l < "$SUMMARY") + 1)) # this run's first summary line (OUT may hold earlier runs)
MANIFEST=$OUT/manifest.tsv
[ -f "$MANIFEST" ] || printf 'file\tstep\tcommit\tdate\tcommand\n' > "$MANIFEST"
STOP=0   # 1: an earlier step failed in a way that makes the rest pointless
FAILED=0 # 1: some command failed (the exit status)

note() { echo "== $*" | tee -a "$SUMMARY"; }
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
# fresh_seed: a seed drawn from /dev/urandom (the time where it cannot be read), for sets nobody chose.
fresh_seed() {
    local x
    x=$(od -An -N4 -tu4 /dev/urandom 2> /dev/null | tr -d ' ')
    echo "${x:-$(date +%s)}"
}

# record FILE STEP CMD...: a result file in the manifest, with the commit it measured (REC_COMMIT
# where a variant's build made it, else this tree's).
record() {
    local f=$1 step=$2
    shift 2
    [ "$DRY" = 1 ] && return 0
    printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$f")" "$step" "${REC_COMMIT:-$COMMIT}" "$(now)" "$*" >> "$MANIFEST"
}

# stamp FILE: write the commit into a result JSON whose readers take any key (duet-bench/2 and
# the clocks summary; corpora and timelines are validated key by key, so the manifest holds theirs).
# stamp FILE COMMIT: the same with a variant's commit, which replaces whatever the binary wrote (a
# variant's ranks see this tree's DUET_COMMIT).
stamp() {
    [ "$DRY" = 1 ] || [ ! -s "$1" ] && return 0
    if [ -n "${2:-}" ]; then
        # The first "commit" member, on whichever line (older builds write their JSON indented).
        grep -q '"commit"' "$1" && sed -i "0,/\"commit\":[[:space:]]*\"[^\"]*\"/s//\"commit\": \"$2\"/" "$1" && return 0
        sed -i "1s/^{/{\"commit\": \"$2\", /" "$1"
    else
        grep -q '"commit"' "$1" || sed -i "1s/^{/{\"commit\": \"$COMMIT\", /" "$1"
    fi
}

# xrun LOG LIMIT_S CMD...: run a command with a time limit, its output appended to LOG; returns
# its status. DRY_RUN=1 writes the command to LOG instead.
xrun() {
    local log=$1 limit=$2
    shift 2
    echo "+ $*" >> "$log"
    [ "$DRY" = 1 ] && { echo "+ $*"; return 0; }
    # DEADLINE_S: no command runs past it (seconds from the start), so the outputs are packed in time.
    if [ -n "${DEADLINE_S:-}" ] && [ "$limit" -gt $((DEADLINE_S - SECONDS)) ]; then
        limit=$((DEADLINE_S - SECONDS))
        [ "$limit" -ge 1 ] || limit=1
    fi
    timeout "$limit" "$@" >> "$log" 2>&1
    local rc=$?
    [ $rc = 0 ] || FAILED=1
    return $rc
}

# step_run NAME LIMIT_S CMD...: one whole step as one command: NAME.log, a summary line with the
# status, the time and the lines that say how it went.
step_run() {
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    xrun "$OUT/$name.log" "$limit" "$@"
    rc=$?
    note "$name: rc=$rc, $((SECONDS - t0)) s. $(grep -E 'passed, .* failed|ERROR SUMMARY|RACECHECK SUMMARY|summary|^wrote' \
        "$OUT/$name.log" | tail -3 | tr '\n' ' ' | cut -c1-300)"
    return $rc
}

# Builds: B (this tree), then the VARIANTS, then E (this tree's binary with ENV_E).
VARIANTS=${VARIANTS:-}
NAMES="B"
for v in $VARIANTS; do NAMES="$NAMES ${v%%=*}"; done
RUNS=$NAMES
[ -n "${ENV_E:-}" ] && RUNS="$RUNS E"
bindir() { # bindir NAME: the checkout of build NAME
    [ "$1" = B ] || [ "$1" = E ] && { echo .; return; }
    local v
    for v in $VARIANTS; do [ "${v%%=*}" = "$1" ] && echo "${v#*=}"; done
}
bin() { echo "$(bindir "$1")/$DUET"; }
# commit_of NAME: the commit build NAME measures: this tree's for B and E; a variant's from
# DIR/.duet-commit (a tree exported by git archive has no .git), else from DIR's own git checkout (not
# a repository DIR merely sits inside), else "unknown".
commit_of() {
    [ "$1" = B ] || [ "$1" = E ] && { echo "$COMMIT"; return; }
    local d c="" top
    d=$(bindir "$1")
    if [ -s "$d/.duet-commit" ]; then
        c=$(head -c 40 "$d/.duet-commit" | tr -d '[:space:]')
    else
        top=$(git -C "$d" rev-parse --show-toplevel 2> /dev/null)
        [ -n "$top" ] && [ "$top" = "$(cd "$d" && pwd -P)" ] && c=$(git -C "$d" rev-parse --short HEAD)
    fi
    echo "${c:-unknown}"
}
# json_out NAME FILE: build NAME's option for a JSON file: --json -o FILE, or --json FILE where the
# variant is older than -o (an A/B against an earlier commit).
json_out() {
    if [ "$1" = B ] || [ "$1" = E ] || "$(bin "$1")" bench --help 2>&1 | grep -q -- '-o FILE'; then
        printf -- '--json -o %s' "$2"
    else printf -- '--json %s' "$2"; fi
}
# mpiw W [NAME]: the mpirun line of W ranks, for build NAME (E: with ENV_E in the ranks).
mpiw() {
    if [ "${2:-}" = E ]; then
        echo "env $ENV_E $(duet_mpirun "$1")" "$([[ $MPIRUN_FLAGS == *-x* ]] && echo "-x ${ENV_E%%=*}")"
    else
        duet_mpirun "$1"
    fi
}
# hw_arg: --hw PROFILE, else the device's built-in by its name (duet hw for-device: the table the GPU
# commands use when given no --hw, so a run before the build picks the same profile).
hw_arg() {
    local p=$PROFILE
    [ -z "$p" ] && [ -x "$DUET" ] && p=$("$DUET" hw for-device "$GPU_NAME" "$GPU_ARCH" 2> /dev/null)
    [ -n "$p" ] && echo "--hw $p"
}

# MPS (NVIDIA) lets the persistent kernels of ranks that share a GPU run at once; without it they
# take turns in time slices and every wait across ranks costs one. Started only for steps with more
# ranks than GPUs, where the node has it; stopped for ncu (which does not profile MPS clients) and at
# the end. AMD has no equivalent: ranks sharing a GPU there take turns.
MPS=0
mps_start() {
    [ "$MPS" = 1 ] || [ "$GPU_VENDOR" != nvidia ] || [ "$DRY" = 1 ] && return 0
    command -v nvidia-cuda-mps-control > /dev/null 2>&1 || return 0
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/duet-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/duet-mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d; then
        MPS=1
        note "MPS started (ranks share GPUs)"
    else
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
}
mps_stop() {
    [ "$MPS" = 1 ] && echo quit | nvidia-cuda-mps-control
    MPS=0
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
# shares W: start MPS when W ranks outnumber the GPUs.
shares() { [ "$1" -gt "$GPU_COUNT" ] && mps_start; return 0; }
trap mps_stop EXIT

# gpu_tests NAME LIMIT_S W [NAME_OF_BUILD] ARGS...: one run of the GPU tests.
gpu_tests() {
    local name=$1 limit=$2 w=$3 t0=$SECONDS run=B
    shift 3
    if [ "${1:-}" = E ]; then run=E; shift; fi
    shares "$w"
    # shellcheck disable=SC2046
    xrun "$OUT/$name.log" "$limit" $(mpiw "$w" $run) "$TESTBIN" "$@"
    note "$name (W=$w $*): rc=$?, $((SECONDS - t0)) s. $(grep -E 'passed, .* failed' "$OUT/$name.log" | tail -1)"
    grep -E "^FAIL|^  \[rank" "$OUT/$name.log" | head -12 >> "$SUMMARY"
}

# duet_ms LOG: the measured median of a `duet run` line.
duet_ms() { sed -n 's/.*measured \([0-9.]*\) ms.*/\1/p' "$1" | tail -1; }

worlds_default() { # 1 .. min(4, GPUs)
    local n=$GPU_COUNT
    [ "$n" -gt 4 ] && n=4
    [ "$n" -lt 1 ] && n=1
    seq -s ' ' 1 "$n"
}

# The A/B steps' repeats: as `duet bench` with one build, 30 runs after 5 with several.
if [ -n "$VARIANTS" ] || [ -n "${ENV_E:-}" ]; then REPS="--repeats 30 --warmup 5"; else REPS="--repeats 20 --warmup 3"; fi

note "tools/gpu.sh $* at $COMMIT on $(hostname 2> /dev/null): $GPU_VENDOR, $GPU_COUNT x $GPU_NAME ($GPU_ARCH, $GPU_SMS SMs, tag $DEVICE_TAG), NP=$NP${DUET_DEBS_USED:+, cJSON and GSL from $DUET_DEBS}"
[ "$GPU_VENDOR" = none ] && note "no GPU found (nvidia-smi, amd-smi, rocm-smi, rocminfo): only the CPU steps can run"

for step in "$@"; do
    [ "$STOP" = 1 ] && { note "$step: skipped (an earlier step failed)"; continue; }
    [ -n "${DEADLINE_S:-}" ] && [ "$SECONDS" -ge "$DEADLINE_S" ] && { note "$step: skipped (past DEADLINE_S=$DEADLINE_S s)"; FAILED=1; continue; }
    case $step in
    info | fit | builtin | ablation) ;;
    *) if [ "$GPU_VENDOR" = none ] && [ "$DRY" != 1 ]; then
        note "$step: skipped (no GPU on this machine)"
        FAILED=1
        continue
    fi ;;
    esac
    t0=$SECONDS
    case $step in
    info)
        {
            echo "commit $COMMIT"
            echo "device $GPU_NAME ($GPU_ARCH), tag $DEVICE_TAG, profile ${PROFILE:-by device}: $(hw_arg || echo "not built yet: duet's GPU commands pick it from the device's name")"
            uname -a
            case $GPU_VENDOR in
            nvidia)
                nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
                nvidia-smi topo -m
                ;;
            amd)
                if command -v amd-smi > /dev/null; then amd-smi static --asic --bus 2>&1 | head -80; amd-smi topology 2>&1 | head -40
                else rocm-smi --showproductname --showtopo 2>&1 | head -80; fi
                ;;
            esac
            { command -v nvcc > /dev/null && nvcc --version | tail -2; } || true
            { command -v hipcc > /dev/null && hipcc --version 2>&1 | head -3; } || true
            "$MPIRUN_BIN" --version 2>&1 | head -2
        } > "$OUT/info.log" 2>&1
        note "info: $(grep -c . "$OUT/info.log") lines"
        ;;
    build)
        # Every build at once, the cores shared between them.
        nb=$(($(echo "$NAMES" | wc -w)))
        j=$((NCPU / nb))
        [ "$j" -lt 1 ] && j=1
        for n in $NAMES; do
            (
                # A variant's binary records its own commit, not this tree's DUET_COMMIT and
                # DUET_KERNEL_COMMIT (its make asks git where it is a checkout).
                if [ "$n" != B ]; then
                    unset DUET_COMMIT DUET_KERNEL_COMMIT
                    c=$(commit_of "$n")
                    [ "$c" != unknown ] && [ -n "$c" ] && export DUET_COMMIT=$c DUET_KERNEL_COMMIT=$c
                fi
                cd "$(bindir "$n")" && xrun "$OUT/build-$n.log" 900 make JOBS=$j -j$j "${MAKE_VARS[@]}" gpu
            ) &
        done
        wait
        ok=1
        for n in $NAMES; do
            [ "$DRY" = 1 ] || [ -x "$(bin "$n")" ] || { ok=0; tail -5 "$OUT/build-$n.log" >> "$SUMMARY"; }
        done
        [ "$NAMES" = B ] && mv "$OUT/build-B.log" "$OUT/build.log"
        note "build ($NAMES): $([ $ok = 1 ] && echo ok || echo FAILED), $((SECONDS - t0)) s"
        [ $ok = 1 ] || { STOP=1; FAILED=1; }
        ;;
    smoke)
        gpu_tests smoke 120 1 --quick --timeout-ms 20000
        grep -q ' 0 failed' "$OUT/smoke.log" || [ "$DRY" = 1 ] || { tail -20 "$OUT/smoke.log" >> "$SUMMARY"; STOP=1; FAILED=1; }
        ;;
    test)
        # The official target; WORLDS above the GPU count share GPUs (e.g. WORLDS="1 2 3 4" on one).
        worlds=${WORLDS:-$(worlds_default)}
        max=$(echo "$worlds" | tr ' ' '\n' | sort -n | tail -1)
        shares "${max:-1}"
        shares "${PLANT_NP:-$NP}"
        step_run test 900 make JOBS="$NCPU" "${MAKE_VARS[@]}" test-gpu GPU_WORLDS="$worlds" \
            GPU_PLANT_NP="${PLANT_NP:-$NP}" GPU_TEST_ARGS="--verbose ${TEST_ARGS:-}" MPIRUN="$MPIRUN_BIN" \
            MPIRUN_FLAGS="$(duet_mpirun 0 | sed "s|^$MPIRUN_BIN ||; s| -np 0$||")"
        [ -n "${ENV_E:-}" ] && gpu_tests test-E 300 1 E --verbose --timeout-ms 20000
        ;;
    quick)
        # The reduced set at every world size: the quick shapes, the K split in both types, the
        # vendor mode, every rank skipping every collective (short bound).
        worlds=${QUICK_WORLDS:-1 2 3 4}
        for w in $worlds; do gpu_tests "quick-w$w" 150 "$w" --quick --timeout-ms 20000; done
        w=$(echo "$worlds" | tr ' ' '\n' | sort -n | tail -1)
        gpu_tests "plant-w$w" 60 "$w" --plant --timeout-ms 20000
        ;;
    example)
        # mpirun only launches the ranks here: the program reads its rank from the environment
        # and the ranks meet in a fresh directory (duet_bootstrap_file).
        for w in ${EXAMPLE_WORLDS:-1 2}; do
            t1=$SECONDS
            shares "$w"
            d=$(mktemp -d /tmp/duet-example.XXXXXX)
            # shellcheck disable=SC2046
            xrun "$OUT/example.log" 60 $(mpiw "$w") build-gpu/gpu_run "$d"
            rc=$?
            note "example (W=$w): rc=$rc, $((SECONDS - t1)) s, $(grep -c ': OK$' "$OUT/example.log") OK lines so far"
            grep -E 'FAILED|duet:' "$OUT/example.log" | head -4 >> "$SUMMARY"
            rm -rf "$d"
        done
        ;;
    sanitize)
        if [ "$GPU_VENDOR" != nvidia ]; then
            note "sanitize: skipped (compute-sanitizer is NVIDIA's; on ROCm, make sanitize checks the host code)"
            continue
        elif ! command -v compute-sanitizer > /dev/null; then
            note "sanitize: skipped (compute-sanitizer is not on PATH; it ships with the CUDA toolkit)"
            continue
        fi
        w=${SAN_NP:-1}
        shares "$w"
        # SAN_TOOLS: the tools (default both); SAN_RACE_FLAGS: racecheck's own flags, e.g.
        # "--racecheck-report hazard" for each hazard with the threads on both sides;
        # SAN_RACE_ONLY: racecheck's sections where they differ from SAN_ONLY (racecheck is the slow one).
        for tool in ${SAN_TOOLS:-memcheck racecheck}; do
            only=${SAN_ONLY:-}
            [ "$tool" = racecheck ] && only=${SAN_RACE_ONLY:-$only}
            # shellcheck disable=SC2046
            step_run "$tool" "${SAN_LIMIT:-300}" $(mpiw "$w") compute-sanitizer --tool "$tool" --error-exitcode 99 \
                $([ "$tool" = racecheck ] && printf -- '%s' "${SAN_RACE_FLAGS:-}") \
                "$TESTBIN" --quick --skip-timeouts --skip-vendor --timeout-ms 120000 --verbose \
                $([ -n "$only" ] && printf -- '--only %s' "$only")
        done
        # The canaries must be reported: a clean pass of a tool that sees nothing means nothing.
        for tool in memcheck racecheck; do
            # shellcheck disable=SC2046
            xrun "$OUT/canary.log" 60 $(mpiw 1) compute-sanitizer --tool "$tool" "$TESTBIN" --canary
        done
        note "canary: $(grep -cE 'Invalid __global__ write|Race reported|hazard' "$OUT/canary.log") reports (must be > 0)"
        ;;
    perf)
        shares "$NP"
        # shellcheck disable=SC2046
        step_run perf 120 $(mpiw "$NP") "$TESTBIN" --perf
        grep perf: "$OUT/perf.log" >> "$SUMMARY"
        ;;
    bench)
        # One build: bench-TAG-wNP.json and .svg. With VARIANTS: B, each variant, B again
        # (bench-B1.json, bench-A.json, ..., bench-B2.json); tools/bench_table.py --compare puts
        # them side by side. SHAPES=FILE benches that file's workloads (bench/shapes/).
        shares "$NP"
        list="B"
        [ -n "$VARIANTS" ] && list="B1 ${NAMES#B } B2"
        for run in $list; do
            n=$run
            [ "$run" = B1 ] || [ "$run" = B2 ] && n=B
            base=bench-$run
            [ "$list" = B ] && base=bench-$DEVICE_TAG-w$NP
            svg=()
            [ "$list" = B ] && svg=(--svg "$OUT/$base.svg")
            # shellcheck disable=SC2046,SC2086
            step_run "$base" "${BENCH_LIMIT:-900}" $(mpiw "$NP") "$(bin "$n")" bench ${SHAPES:+--shapes "$SHAPES"} $REPS \
                $(hw_arg) --json -o "$OUT/$base.json" "${svg[@]}" ${BENCH_ARGS:-}
            stamp "$OUT/$base.json" "$(commit_of "$n")"
            REC_COMMIT=$(commit_of "$n") record "$OUT/$base.json" bench "duet bench ${SHAPES:+--shapes $SHAPES} $REPS $(hw_arg) ${BENCH_ARGS:-} (build $n, $NP ranks)"
        done
        ;;
    gemm)
        # duet's GEMM alone (every tile and K split worth trying) against the vendor's, one GPU.
        # GEMM_SHAPES=FILE (bench/shapes/gemm-seed.txt: the reference design's 13 distinct GEMMs);
        # GEMM_ARGS, e.g. "--warmup-ms 300" to time every figure at the clock the power limit settles at.
        k=0
        list=$RUNS
        [ "$RUNS" != B ] && list="$RUNS B"
        for n in $list; do
            k=$((k + 1))
            base=gemm-$DEVICE_TAG
            [ "$RUNS" != B ] && base=gemm-$k-$n
            # shellcheck disable=SC2046,SC2086
            step_run "$base" 600 $(mpiw 1 "$n") "$(bin "$n")" bench --gemm-only ${GEMM_SHAPES:+--shapes "$GEMM_SHAPES"} \
                $REPS ${GEMM_ARGS:-} $(json_out "$n" "$OUT/$base.json")
            stamp "$OUT/$base.json" "$(commit_of "$n")"
            REC_COMMIT=$(commit_of "$n") record "$OUT/$base.json" gemm "duet bench --gemm-only ${GEMM_SHAPES:+--shapes $GEMM_SHAPES} $REPS ${GEMM_ARGS:-} (build $n)"
            grep -E "^[0-9]+x[0-9]+x[0-9]+ " "$OUT/$base.log" | sed "s/^/$n /" >> "$OUT/gemm.txt"
        done
        ;;
    gemm-random | sm-budget)
        # duet's GEMM at every tile and K split worth trying, and at the model's pick, against the
        # vendor's planned for the same SMs, on random shapes (docs/performance.md has the targets).
        # At 10 timed runs after 3 (and 300 ms once per row to settle the clock) the model's own
        # estimate of the GPU time, printed first, is 55-72 s for either default (96 rows, about
        # 4000 figures: 8 tiles x up to 6 K splits); allow 2-3 times that for the host's share of
        # each run and the vendor's heuristics.
        seed=${RANDOM_SEED:-$(fresh_seed)}
        if [ "$step" = gemm-random ]; then
            base=gemm-random-$DEVICE_TAG
            args=(--random "${RANDOM_N:-48}" --sm-budgets 1)
        else
            base=sm-budget-$DEVICE_TAG
            args=(--random "${BUDGET_N:-16}" --sm-budgets "${BUDGETS:-1,0.75,0.5}")
        fi
        # shellcheck disable=SC2046,SC2086
        step_run "$base" 600 $(mpiw 1) "$DUET" bench --gemm-only "${args[@]}" --seed "$seed" --min-dim 512 \
            --dtype both --repeats 10 --warmup 3 --warmup-ms 300 ${RANDOM_ARGS:-} --json -o "$OUT/$base.json"
        stamp "$OUT/$base.json"
        record "$OUT/$base.json" "$step" "duet bench --gemm-only ${args[*]} --seed $seed --min-dim 512 --dtype both --repeats 10 --warmup 3 --warmup-ms 300 ${RANDOM_ARGS:-}"
        grep -E "^ *[0-9]+ (fp16|bf16|both) |target" "$OUT/$base.log" >> "$SUMMARY"
        ;;
    collect | resume | ties)
        # About 100-120 s on 2 x H200 at the defaults (3 rounds of 3 runs a point, the K-split rows
        # included); `ties` about 250 s there. Larger nodes, more CUs and more ranks take longer.
        shares "$NP"
        corpus=$OUT/${DEVICE_TAG}_world$NP.json
        args=()
        if [ "$step" = ties ]; then
            corpus=$OUT/${DEVICE_TAG}_world$NP-ties.json
            args=(--shapes bench/shapes/ties.txt --repeats 27 --rounds 9)
        fi
        # shellcheck disable=SC2046,SC2086
        step_run "$step" "${COLLECT_LIMIT:-3000}" $(mpiw "$NP") "$DUET" calibrate collect "${args[@]}" \
            -o "$corpus" $(hw_arg) ${COLLECT_ARGS:-}
        record "$corpus" "$step" "duet calibrate collect ${args[*]} $(hw_arg) ${COLLECT_ARGS:-} ($NP ranks)"
        ;;
    corpus)
        # W = 1 on one GPU. About 4-5 min on one H200 in all by the h200 profile's predictions with
        # 0.5 ms of overhead per run (each run prints its own estimate before it starts; start-up of
        # the context and the vendor libraries adds a few seconds each). CORPUS_ARGS adds options.
        # train2 (a second training set, one sweep) gives the fit more workloads; the test set's two
        # sweeps give the noise band of the pick metric.
        # CORPUS_SETS picks the sets (default all three); CORPUS_TEST_SEED draws another test set
        # (e.g. $(od -An -N4 -tu4 /dev/urandom) after the last model change, written down first).
        for set in ${CORPUS_SETS:-train train2 test}; do
            case $set in
                train) n=64 seed=1 sweeps="1 2" ;;
                train2) n=64 seed=2 sweeps=1 ;;
                test) n=32 seed=${CORPUS_TEST_SEED:-20261203} sweeps="1 2" ;;
                *) echo "duet: tools/gpu.sh: CORPUS_SETS: unknown set '$set' (train, train2, test)" >&2; exit 2 ;;
            esac
            for sweep in $sweeps; do
                corpus=$OUT/${DEVICE_TAG}_world1-$set-s$sweep.json
                # shellcheck disable=SC2046,SC2086
                step_run "corpus-$set-s$sweep" "${CORPUS_LIMIT:-1200}" $(mpiw 1) "$DUET" calibrate collect --grid w1 \
                    --random $n --seed $seed --order-seed $sweep --repeats 6 --rounds 3 --warmup 2 \
                    --warmup-ms "${CORPUS_WARMUP_MS:-200}" -o "$corpus" $(hw_arg) ${CORPUS_ARGS:-}
                record "$corpus" corpus "duet calibrate collect --grid w1 --random $n --seed $seed --order-seed $sweep --repeats 6 --rounds 3 --warmup 2 --warmup-ms ${CORPUS_WARMUP_MS:-200} $(hw_arg) ${CORPUS_ARGS:-} (1 rank)"
            done
        done
        ;;
    copy-corpus)
        # A few seconds a set at W = 1 on one H100 by the profile's estimate (7 points a workload);
        # W = 2 under MPS runs both ranks' GEMMs on the one GPU, so about twice that.
        test_seed=${COPY_TEST_SEED:-$(fresh_seed)}
        note "copy-corpus: test set seed $test_seed (drawn before any fit it judges)"
        for w in ${COPY_WORLDS:-1 2}; do
            shares "$w"
            for set in train test; do
                n=${COPY_N:-48} seed=${COPY_SEED:-1}
                [ "$set" = test ] && n=${COPY_TEST_N:-24} seed=$test_seed
                corpus=$OUT/${DEVICE_TAG}_copy-world$w-$set.json
                # shellcheck disable=SC2054 # the commas are --collective's list
                args=(--grid copy --collective all_gather,all_to_all,broadcast --random "$n" --seed "$seed"
                    --repeats 6 --rounds 3 --warmup 2 --warmup-ms "${CORPUS_WARMUP_MS:-200}")
                # shellcheck disable=SC2046,SC2086
                step_run "copy-corpus-w$w-$set" "${CORPUS_LIMIT:-600}" $(mpiw "$w") "$DUET" calibrate collect \
                    "${args[@]}" -o "$corpus" $(hw_arg) ${CORPUS_ARGS:-}
                record "$corpus" copy-corpus "duet calibrate collect ${args[*]} $(hw_arg) ${CORPUS_ARGS:-} ($w ranks)"
            done
        done
        ;;
    fit)
        # CPU. Defaults reproduce the committed H200 profile: FIT_NAME (default h200; h100 for the
        # H100's), FIT_CORPUS (files; default tuning_data/NAME_world1-train-s1.json and
        # NAME_world1-train2-s1.json), FIT_BASE (start profile; default tuning_data/NAME_w1_start.json),
        # FIT_DATE, FIT_PARAMS, FIT_OUT (default OUT; FIT_OUT=tuning_data replaces the committed
        # files, which `builtin` then makes the built-in NAME). A corpus without bf16 rows fits
        # gemm_eff_fp16, and gemm_eff_bf16 takes its value (the matrix rates of both types are equal
        # on these GPUs).
        fit_duet=${FIT_DUET:-build/duet}
        [ -x "$fit_duet" ] || [ "$DRY" = 1 ] || make -j"$NCPU" "${MAKE_VARS[@]}" "$fit_duet" > "$OUT/fit-build.log" 2>&1
        name=${FIT_NAME:-h200}
        corpus=${FIT_CORPUS:-tuning_data/${name}_world1-train-s1.json tuning_data/${name}_world1-train2-s1.json}
        base=${FIT_BASE:-tuning_data/${name}_w1_start.json}
        fo=${FIT_OUT:-$OUT}
        # The parameters of the built-in H200 fit (docs/calibration.md, "The H200 profile"): the GEMM's
        # rates (duet's per tile, the vendor's, the ragged vendor kernels'), its fixed costs, the
        # clock terms, the rows beyond the matrix and the chip's box rows, the comm tile's local
        # rate and fixed cost, HBM as the GEMM and comm tiles share it. Not fitted: the fabric
        # (a one-GPU corpus moves no remote bytes: link_gbs, remote_rtt_us and the others keep the
        # values of the 2 x H200 fit in the start profile), l2_mib (the rows do not determine it),
        # l2_gbs and cta_push_gbs (as before: docs/calibration.md). splitk_sm_gbs only where the
        # corpus has K-split rows.
        params=gemm_eff_fp16,gemm_eff_bf16,tile_eff_128x256,tile_eff_256x128,tile_eff_128x128,tile_eff_256x64
        params=$params,tile_overhead_us,gemm_sm_contention,clock_heat,heat_half_us,heat_sm_exp,tile_oob_row_ns
        params=$params,launch_us,dequeue_comm_us,comm_tile_overhead_us,cta_local_gbs,c_ragged_sm_gbs
        params=$params,vendor_gemm_eff_fp16,vendor_gemm_eff_bf16,vendor_ragged_eff,box_rows_per_us,hbm_gbs
        params=$params,comm_heat_share
        # shellcheck disable=SC2086
        grep -q '"split_k"' $corpus && params=$params,splitk_sm_gbs
        params=${FIT_PARAMS:-$params}
        # shellcheck disable=SC2086
        xrun "$OUT/fit.log" 3600 "$fit_duet" calibrate fit --corpus $corpus --hw "$base" --name "$name" \
            -o "$fo/$name.json" --report "$fo/${name}_fit_report.json" ${FIT_DATE:+--date "$FIT_DATE"} \
            --threads "$NCPU" --accept-unconverged --quiet --params "$params" ${FIT_ROWS:+--rows "$FIT_ROWS"}
        rc=$?
        [ "$DRY" = 1 ] || sed -n '/^duet calibrate fit/,$p' "$OUT/fit.log" > "$fo/${name}_fit.txt"
        # shellcheck disable=SC2086
        if [ $rc = 0 ] && [ "$DRY" != 1 ] && [[ $params != *gemm_eff_bf16* ]] && ! grep -q '"bf16"' $corpus; then
            why="the corpus is fp16, and the device runs bf16 matrix instructions at the fp16 rate"
            [[ $name == h[12]00 ]] && why="the corpus is fp16, and Hopper runs bf16 mma at the fp16 rate"
            jq --arg why "[derived] gemm_eff_fp16 of this fit: $why" \
                '.constants.gemm_eff_bf16 = (.constants.gemm_eff_fp16 | .source = $why)' "$fo/$name.json" > "$fo/$name.json.tmp.$$" \
                && mv "$fo/$name.json.tmp.$$" "$fo/$name.json"
            "$fit_duet" hw show "$fo/$name.json" > /dev/null || rc=1 # the edited file still loads
        fi
        # hbm_gbs fits far below the device's rate on the one-GPU corpus: say so where users read it.
        if [ $rc = 0 ] && [ "$DRY" != 1 ] && [[ ,$params, == *,hbm_gbs,* ]]; then
            copy=""
            case $name in h200) copy="a copy measures 4.3 TB/s; " ;; h100) copy="a copy measures about 3.0 TB/s; " ;; esac
            jq --arg copy "$copy" '.constants.hbm_gbs.source += "; an effective constant: the memory rate the GEMM and comm tiles share in the model, not the device'"'"'s (\($copy)docs/calibration.md)"' \
                "$fo/$name.json" > "$fo/$name.json.tmp.$$" && mv "$fo/$name.json.tmp.$$" "$fo/$name.json"
        fi
        note "fit $name: rc=$rc, $((SECONDS - t0)) s. $(grep -E '^fit \(policy' "$OUT/fit.log" | cut -c1-200)"
        record "$fo/$name.json" fit "duet calibrate fit --corpus $corpus --hw $base --params $params"
        ;;
    builtin)
        # CPU. A built-in profile is its committed profile, constant by constant with its sources:
        # BUILTIN_NAME (default FIT_NAME, else h200) is generated from BUILTIN_SRC (default tuning_data/NAME.json)
        # into model/hw_NAME.inc; the test hw/builtins_are_their_committed_profiles fails when the
        # two differ. A new name also needs its line in model/hw.c's table.
        bname=${BUILTIN_NAME:-${FIT_NAME:-h200}}
        src=${BUILTIN_SRC:-tuning_data/$bname.json}
        inc=model/hw_$bname.inc
        [[ $bname =~ ^[a-z0-9_]+$ ]] || { note "builtin: '$bname' is not a profile name (a-z, 0-9, _)"; FAILED=1; continue; }
        {
            echo "/* Generated by tools/gpu.sh builtin from $src: do not edit; edit the profile and regenerate. */"
            # One initializer per constant, {F(name), value, "source"}; jq's @json quoting of the
            # ASCII sources is a valid C string literal.
            jq -r '.constants | to_entries[] | "    {F(\(.key)), \(.value.value), \(.value.source | @json)},"' "$src"
        } > "$inc.tmp.$$" && mv "$inc.tmp.$$" "$inc"
        note "builtin: wrote $inc from $src"
        ;;
    ablation)
        # CPU. What each newer term of the model adds, held out: the H200 fit of
        # ABL_CORPUS (default tuning_data/h200_world2.json) with the model's newer terms switched on
        # one at a time, each from tuning_data/h200_start.json with the terms not yet added off:
        #   a-before: gemm_sm_contention and tile_oob_row_ns 0, gemm_eff_* 0.8, l2_gbs 12 TB/s;
        #   b-contention: + gemm_sm_contention; c-oob: + tile_oob_row_ns only;
        #   d-final: both; e-l2: d with l2_gbs fitted too.
        abl_duet=${FIT_DUET:-build/duet}
        corpus=${ABL_CORPUS:-tuning_data/h200_world2.json}
        a=$OUT/ablation
        mkdir -p "$a"
        base=gemm_eff_fp16,tile_overhead_us,dequeue_gemm_us,dequeue_comm_us,launch_us,comm_sync_us
        base=$base,link_gbs,link_half_inflight_kib,cta_push_gbs,remote_rtt_us,comm_tile_overhead_us
        base=$base,tile_eff_128x256,tile_eff_256x128,tile_eff_128x128,tile_eff_256x64,rtt_gemm_stretch
        jq '.constants.gemm_sm_contention.value = 0 | .constants.tile_oob_row_ns.value = 0
            | .constants.gemm_eff_fp16.value = 0.8 | .constants.gemm_eff_bf16.value = 0.8 | .constants.l2_gbs.value = 12000' \
            tuning_data/h200_start.json > "$a/start-before.json"
        jq '.constants.tile_oob_row_ns.value = 0' tuning_data/h200_start.json > "$a/start-contention.json"
        jq '.constants.tile_oob_row_ns.value = 1' "$a/start-before.json" > "$a/start-oob.json"
        for spec in "a-before $a/start-before.json $base" \
            "b-contention $a/start-contention.json $base,gemm_sm_contention" \
            "c-oob $a/start-oob.json $base,tile_oob_row_ns" \
            "d-final tuning_data/h200_start.json $base,gemm_sm_contention,tile_oob_row_ns" \
            "e-l2 tuning_data/h200_start.json $base,gemm_sm_contention,tile_oob_row_ns,l2_gbs"; do
            read -r nm start p <<< "$spec"
            echo "== $nm: --hw $start --params $p" >> "$OUT/ablation.log"
            xrun "$a/$nm.txt" 3600 "$abl_duet" calibrate fit --corpus "$corpus" --hw "$start" -o "$a/$nm.json" \
                --report "$a/$nm-report.json" --threads "$NCPU" --accept-unconverged --quiet --params "$p" \
                --rows "$a/$nm-rows.csv"
            sed -n '/base profile  /,/alone-row error, p95/p' "$a/$nm.txt" >> "$OUT/ablation.log"
        done
        note "ablation: $((SECONDS - t0)) s, tables in ablation.log"
        ;;
    tune)
        # One real tuning run per collective (a miss: it benchmarks the candidates), then the first
        # one again (a hit: nothing benchmarked). TUNE_SHAPE: the workload's --gemm and --comm.
        export DUET_CACHE=$OUT/tuning.json
        shares "$NP"
        for coll in all_gather all_reduce reduce_scatter all_to_all broadcast all_gather; do
            # shellcheck disable=SC2046,SC2086
            xrun "$OUT/tune.log" 300 $(mpiw "$NP") $([[ $MPIRUN_FLAGS == *-x* ]] && echo "-x DUET_CACHE") "$DUET" tune \
                --collective $coll ${TUNE_SHAPE:---gemm 8192x8192x8192 --comm 4096x8192} $(hw_arg) --json
            echo "rc=$?" >> "$OUT/tune.log"
        done
        note "tune: $((SECONDS - t0)) s, $(grep -c '"cached":	false' "$OUT/tune.log") tuned, $(grep -c '"cached":	true' "$OUT/tune.log") cache hits"
        record "$OUT/tune.log" tune "duet tune per collective ${TUNE_SHAPE:-} $(hw_arg)"
        ;;
    trace)
        # One operation, traced tile by tile, drawn above the simulator's prediction. TRACE_ARGS:
        # the workload and configuration (default: 8192^3 with a 64 MB all_gather).
        shares "$NP"
        # shellcheck disable=SC2046,SC2086
        step_run trace 300 $(mpiw "$NP") "$DUET" run ${TRACE_ARGS:---collective all_gather --gemm 8192x8192x8192 --comm 4096x8192} \
            $(hw_arg) --trace "$OUT/trace-measured.json" --svg "$OUT/trace.svg"
        record "$OUT/trace-measured.json" trace "duet run ${TRACE_ARGS:-} $(hw_arg) --trace ($NP ranks)"
        ;;
    gemm-trace)
        # GEMMs alone on every SM, traced: TRACES="SHAPE:TILE:SPLIT ..." (the tile and K split the
        # bench picks for those shapes, say).
        for t in ${TRACES:-4096x512x8192:128x256x64:2 4096x8192x512:256x256x64:1}; do
            IFS=: read -r shape tile split <<< "$t"
            for n in $RUNS; do
                # shellcheck disable=SC2046
                xrun "$OUT/gemm-trace.log" 120 $(mpiw 1 "$n") "$(bin "$n")" run --gemm "$shape" --dtype fp16 --mode fused \
                    --num-wgs "$GPU_SMS" --gemm-wgs "$GPU_SMS" --tile "$tile" --split-k "$split" \
                    --trace "$OUT/trace-$n-$shape-$tile.json"
            done
        done
        note "gemm-trace: $((SECONDS - t0)) s"
        ;;
    comm)
        # duet's collective alone (fused, no GEMM) for each build, collective, per-rank tensor,
        # CTA count and comm tile; one line each in comm.txt: build, collective, tensor, CTAs, tile,
        # measured median ms. With ranks sharing one GPU the peer's memory is the same HBM: that
        # measures the comm tile's own loop, not the link.
        w=${COMM_NP:-$NP}
        [ "$w" -lt 2 ] && w=2
        shares "$w"
        for n in $NAMES; do
            for comm in ${COMMS:-2048x16384 512x4096}; do
                for coll in ${COLLS:-reduce_scatter all_to_all all_reduce all_gather}; do
                    for ctas in ${CTAS:-32 132}; do
                        for t in ${TILES:-256x64 64x256 32x512 16x1024}; do
                            : > "$OUT/comm-one.log"
                            # shellcheck disable=SC2046
                            xrun "$OUT/comm-one.log" 60 $(mpiw "$w") "$(bin "$n")" run --collective "$coll" --comm "$comm" \
                                --dtype fp16 --mode fused --num-wgs "$ctas" --gemm-wgs 0 --comm-tile "$t" --repeats 20 --warmup 3
                            cat "$OUT/comm-one.log" >> "$OUT/comm.log"
                            echo "$n $coll $comm $ctas $t $(duet_ms "$OUT/comm-one.log" | grep . || echo failed)" >> "$OUT/comm.txt"
                        done
                    done
                done
            done
        done
        rm -f "$OUT/comm-one.log"
        note "comm: $((SECONDS - t0)) s, $(grep -c . "$OUT/comm.txt") lines in comm.txt"
        ;;
    pair)
        # A GEMM (4096^3) beside a 64 MB collective at W = 2, fused and concurrent, every build
        # twice. Two grids of every SM cannot both be resident when the ranks share one GPU, so
        # each rank takes about half the SMs (a multiple of 8): fused HALF CTAs with 8 on the comm
        # queue, concurrent HALF - 8 + 8.
        shares 2
        half=$((GPU_SMS / 2 - GPU_SMS / 2 % 8))
        [ "$half" -lt 16 ] && half=64
        for n in $NAMES $NAMES; do
            for coll in ${PAIR_COLLS:-reduce_scatter all_gather}; do
                for mode in fused concurrent; do
                    cfg="--num-wgs $half --gemm-wgs $((half - 8))"
                    [ $mode = concurrent ] && cfg="--gemm-wgs $((half - 8)) --comm-wgs 8"
                    : > "$OUT/pair-one.log"
                    # shellcheck disable=SC2046,SC2086
                    xrun "$OUT/pair-one.log" 60 $(mpiw 2) "$(bin "$n")" run --gemm 4096x4096x4096 --collective "$coll" \
                        --comm 2048x16384 --dtype fp16 --mode $mode $cfg --tile 256x128x64 --repeats 20 --warmup 3
                    cat "$OUT/pair-one.log" >> "$OUT/pair.log"
                    echo "$n $coll $mode $(duet_ms "$OUT/pair-one.log" | grep . || echo failed)" >> "$OUT/pair.txt"
                done
            done
        done
        rm -f "$OUT/pair-one.log"
        note "pair: $((SECONDS - t0)) s, results in pair.txt"
        ;;
    sass)
        [ "$GPU_VENDOR" = nvidia ] || { note "sass: skipped (NVIDIA's cuobjdump)"; continue; }
        for n in $NAMES; do
            o=$(find "$(bindir "$n")"/build-gpu/backend -name 'kernels_fp16*.o' 2> /dev/null | head -1)
            f=_Z23duet__persistent_kernelILb0ELi128ELi256ELb0EEv13duet__kparams
            [ -n "$o" ] && cuobjdump -sass -fun "$f" "$o" > "$OUT/sass-$n.txt" 2>&1
            note "sass $n 128x256: $(grep -c HGMMA "$OUT/sass-$n.txt") HGMMA, $(grep -c 'STL' "$OUT/sass-$n.txt") STL, $(grep -c 'LDL' "$OUT/sass-$n.txt") LDL"
        done
        ;;
    ncu)
        # Nsight Compute, clocks left alone (--clock-control none: the figures are at the clock the
        # kernel really runs at). NCU="SHAPE:TILE:SPLIT[:GROUP_M] ..." (GEMM alone on every SM) in the
        # builds NCU_BUILDS (default B), and the vendor's kernel for each shape (NCU_VENDOR=0: not).
        # NCU_METRICS=a,b,... collects only those metrics (their values go into ncu.log); otherwise
        # the full set with source-level samples, and the hottest SASS lines (tools/ncu_hot.py).
        [ "$GPU_VENDOR" = nvidia ] || { note "ncu: skipped (NVIDIA's Nsight Compute)"; continue; }
        mps_stop
        what=(--set full --import-source yes)
        [ -n "${NCU_METRICS:-}" ] && what=(--metrics "$NCU_METRICS")
        nargs=(--clock-control none "${what[@]}" --launch-skip 2 --launch-count 1 -f)
        for t in ${NCU:-4096x512x8192:128x256x64:2 4096x8192x512:128x256x64:1}; do
            IFS=: read -r shape tile split gm <<< "$t"
            for n in ${NCU_BUILDS:-B}; do
                rep=$OUT/ncu-$n-$shape-$tile-k$split-g${gm:-8}
                # shellcheck disable=SC2046
                xrun "$OUT/ncu.log" 300 $(mpiw 1 "$n") ncu "${nargs[@]}" -k regex:persistent -o "$rep" "$(bin "$n")" run \
                    --gemm "$shape" --dtype fp16 --mode fused --num-wgs "$GPU_SMS" --gemm-wgs "$GPU_SMS" --tile "$tile" \
                    --split-k "$split" --group-m "${gm:-8}" --repeats 3 --warmup 1
                note "ncu $n $shape $tile split $split group_m ${gm:-8}: rc=$?, $((SECONDS - t0)) s"
            done
            if [ "${NCU_VENDOR:-1}" != 1 ] || [ -f "$OUT/ncu-vendor-$shape.ncu-rep" ]; then continue; fi
            echo "$shape 512x2048 all_gather fp16" > "$OUT/ncu-shape.txt"
            # shellcheck disable=SC2046
            xrun "$OUT/ncu.log" 300 $(mpiw 1) ncu "${nargs[@]}" -k "regex:nvjet|xmma|cutlass|gemm" -o "$OUT/ncu-vendor-$shape" \
                "$DUET" bench --gemm-only --shapes "$OUT/ncu-shape.txt" --repeats 4 --warmup 1
            note "ncu vendor $shape: rc=$?, $((SECONDS - t0)) s"
        done
        rm -f "$OUT/ncu-shape.txt"
        # Text views beside each report (the reports themselves are tens of MB): the details page
        # and the per-SASS-instruction samples.
        for rep in "$OUT"/ncu-*.ncu-rep; do
            [ -f "$rep" ] || continue
            r=${rep%.ncu-rep}
            ncu -i "$rep" --page details > "$r.details.txt" 2>&1
            if [ -n "${NCU_METRICS:-}" ]; then
                grep -E "${NCU_METRICS//,/|}" "$r.details.txt" | sed "s|^ *|$(basename "$rep") |" >> "$SUMMARY"
            else
                ncu -i "$rep" --page source --csv --print-source sass > "$r.sass.csv" 2>&1
                grep -E "Duration|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput|Memory Throughput" \
                    "$r.details.txt" | head -8 | sed "s|^|$(basename "$rep") |" >> "$SUMMARY"
                python3 tools/ncu_hot.py --top 8 "$r.sass.csv" >> "$SUMMARY" 2>&1
            fi
            [ "${NCU_KEEP_REPORTS:-0}" = 1 ] || rm -f "$rep"
        done
        ;;
    clocks)
        # Is a gap under sustained load a clock one? nvidia-smi samples every 20 ms while one GEMM
        # (CLOCK_GEMM, default 8192^3) runs CLOCK_REPS (2000) times back to back on every SM, once
        # per entry of CLOCK_RUNS: V (the vendor's GEMM through duet run --mode vendor) or
        # TILE:SPLIT:GROUP_M (duet's kernel); tools/clocks_summary.py reads each busy window.
        [ "$GPU_VENDOR" = nvidia ] || { note "clocks: skipped (nvidia-smi sampling; not written for ROCm)"; continue; }
        shape=${CLOCK_GEMM:-8192x8192x8192}
        q=timestamp,utilization.gpu,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
        nvidia-smi -i 0 --query-gpu=$q --format=csv -c 1 > /dev/null 2>&1 || q=${q/clocks_event/clocks_throttle}
        k=0
        runs=()
        for run in ${CLOCK_RUNS:-V 256x256x64:1:8 V 256x256x64:1:8}; do
            k=$((k + 1))
            if [ "$run" = V ]; then
                cfg=(--mode vendor --gemm-wgs "$GPU_SMS" --comm-wgs 0)
            else
                IFS=: read -r tile split gm <<< "$run"
                cfg=(--mode fused --num-wgs "$GPU_SMS" --gemm-wgs "$GPU_SMS" --tile "$tile" --split-k "$split" --group-m "$gm")
                run="B:$run"
            fi
            f=$OUT/clocks-$k.csv
            [ "$DRY" = 1 ] || { nvidia-smi -i 0 --query-gpu="$q" --format=csv,nounits -lms 20 > "$f" 2>&1 & }
            smi=$!
            sleep 1 # idle samples before the run: the window's start shows
            echo "# $k $run" >> "$OUT/clocks.log"
            # shellcheck disable=SC2046
            xrun "$OUT/clocks.log" 300 $(mpiw 1) "$DUET" run --gemm "$shape" --dtype "${CLOCK_DTYPE:-fp16}" "${cfg[@]}" \
                --repeats "${CLOCK_REPS:-2000}" --warmup 5
            rc=$?
            sleep 1
            [ "$DRY" = 1 ] || { kill "$smi"; wait "$smi" 2> /dev/null; }
            note "clocks $k $run $shape: rc=$rc, $(grep -o 'measured [0-9.]* ms' "$OUT/clocks.log" | tail -1)"
            runs+=("$k-$run=$f")
        done
        # One line a run into the summary, every run's series in one JSON and one picture.
        xrun "$SUMMARY" 120 python3 tools/clocks_summary.py --json "$OUT/clocks.json" --svg "$OUT/clocks.svg" \
            --title "$shape ${CLOCK_DTYPE:-fp16}, $GPU_NAME, ${CLOCK_REPS:-2000} runs back to back" "${runs[@]}"
        stamp "$OUT/clocks.json"
        record "$OUT/clocks.json" clocks "CLOCK_GEMM=$shape CLOCK_REPS=${CLOCK_REPS:-2000} CLOCK_RUNS=${CLOCK_RUNS:-default}"
        ;;
    esac
done
mps_stop

echo "---- summary ($OUT)"
tail -n +"$FIRST" "$SUMMARY"

# At most OUT_MAX_FILES files stay in OUT: the summary, the manifest and what KEEP names, while they
# fit; the rest goes into rest.tgz.
max=${OUT_MAX_FILES:-0}
if [ "$max" -gt 0 ] && [ "$(find "$OUT" -type f | wc -l)" -gt "$max" ]; then
    keep=(summary.log manifest.tsv)
    cd "$OUT" || exit 1
    for pat in ${KEEP:-*.svg bench*.json gemm*.json sm-budget*.json *_world*.json *_copy-world*.json}; do
        for f in $pat; do
            [ -f "$f" ] && [ "${#keep[@]}" -lt $((max - 1)) ] && [[ " ${keep[*]} " != *" $f "* ]] && keep+=("$f")
        done
    done
    mapfile -t rest < <(find . -type f ! -name rest.tgz | sed 's|^\./||' | grep -vxF -f <(printf '%s\n' "${keep[@]}"))
    if [ "${#rest[@]}" -gt 0 ]; then
        tar czf rest.tgz --remove-files "${rest[@]}"
        find . -mindepth 1 -type d -empty -delete
    fi
    echo "---- $OUT: ${keep[*]} rest.tgz"
fi
exit $FAILED
