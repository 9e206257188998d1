#!/bin/bash
# One device call that builds and measures everything a round of kernel work needs, in one machine
# session (docs/performance.md, docs/calibration.md): build, the GPU tests (W = 2 and 1), the bench,
# the calibration corpus, the traced timeline and the two sanitizers (W = 1, quick set). Logs and
# results go to a scratch folder; the results and one archive of the logs are copied to $OUT, which
# keeps what comes back from the device tool under its eight files.
#   tools/h200-session.sh          (on the 2 x H200 machine; about 400 s with the build: the collect step grew by
#                                   about 10 s with rounds and the K-split rows)
set -u
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/duet-session}
W=/tmp/duet-session-work
mkdir -p "$R" "$W"
export OUT=$W
tools/h200-measure.sh build > $W/session.txt 2>&1
NP=2 tests/gpu/h200.sh tests >> $W/session.txt 2>&1
PROFILE=tuning_data/h200.json NP=2 BENCH_LIMIT=300 tools/h200-measure.sh bench >> $W/session.txt 2>&1
NP=2 tools/h200-measure.sh collect >> $W/session.txt 2>&1
PROFILE=tuning_data/h200.json \
    TIMELINE_ARGS="--collective all_gather --gemm 8192x8192x8192 --comm 4096x8192 --gemm-wgs 101 --tile 256x256x64" \
    tools/h200-measure.sh timeline >> $W/session.txt 2>&1
NP=1 tests/gpu/h200.sh memcheck racecheck >> $W/session.txt 2>&1
cp $W/bench-h200-w2.json $W/bench-h200-w2.svg $W/h200_world2.json $W/timeline-measured.json $W/timeline.svg "$R"/ 2>/dev/null
tar czf "$R/logs.tgz" -C $W --exclude='*.json' --exclude='*.svg' .
grep "^==" $W/session.txt
