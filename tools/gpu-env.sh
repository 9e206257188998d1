# tools/gpu-env.sh: the environment of tools/gpu.sh, sourced (not run) from the repository root.
# One copy, so that no step can forget a variable. It works out the node and sets:
#
#   GPU_VENDOR   nvidia | amd | none (nvidia-smi first, then amd-smi, rocm-smi or rocminfo; set it to
#                override the detection)
#   GPU_COUNT    GPUs of the node;  GPU_NAME  the first one's name;  GPU_ARCH  sm_90, gfx942, gfx950, ...
#   GPU_SMS      its SMs (CUs): set it, or it comes from the device name (H100 SXM/H200 132, H100
#                PCIe 114, MI300X/MI325X 304, MI350X/MI355X 256) or rocminfo; 0 when unknown
#   DEVICE_TAG   a short name for output files, from the device's name: the model's word and any
#                variant's ("NVIDIA H100 80GB HBM3" h100, "NVIDIA H100 PCIe" h100-pcie, "NVIDIA GH200
#                480GB" gh200, "AMD Instinct MI300X" mi300x), else the architecture
#   PROFILE      the hardware profile the measuring steps pass with --hw; unset: the device's built-in
#                by its name (`duet hw for-device`, the table the GPU commands use: h100 on an H100,
#                h200 on an H200, mi300x, mi350x; an unknown device gets its architecture's, with a
#                note); set it to a name or file to choose
#   NP           ranks of the multi-GPU steps: $NP, or one per GPU (at most 8, duet's world bound)
#   MAKE_VARS    extra make variables (AMD_ARCHS for the device's architecture, the unpacked packages)
#   MPIRUN_BIN, MPIRUN_FLAGS, and the function duet_mpirun W, which prints the mpirun line of W ranks
#
# NVLink SHARP (NVLS, multicast) stays off in NCCL unless DUET_NVLS=1: duet's kernels never use it,
# `duet bench` compares against NCCL without it, and on shared hosts a multicast object can take the
# other tenants' GPUs out of service. The variables reach every rank.
#
# cJSON and GSL from Debian packages, for nodes that lack them and where nothing may be installed:
# put the .deb files in DUET_DEBS (default .deps, ignored by git), e.g.
#   mkdir -p .deps && (cd .deps && apt-get download libgsl27 libgslcblas0 libgsl-dev libcjson1 libcjson-dev)
# When that folder holds packages and the headers are not installed (or DUET_USE_DEBS=1), they are
# unpacked under DUET_DEP (default /tmp/duet-dep) and the build and the ranks use them from there.
# shellcheck shell=bash disable=SC2034

# --- the GPUs ------------------------------------------------------------------------------------
if [ -z "${GPU_VENDOR:-}" ]; then
    if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L > /dev/null 2>&1; then
        GPU_VENDOR=nvidia
    elif command -v amd-smi > /dev/null 2>&1 || command -v rocm-smi > /dev/null 2>&1 \
        || command -v rocminfo > /dev/null 2>&1; then
        GPU_VENDOR=amd
    else
        GPU_VENDOR=none
    fi
fi
GPU_COUNT=0 GPU_NAME=unknown GPU_ARCH=unknown
case $GPU_VENDOR in
nvidia)
    GPU_COUNT=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
    GPU_NAME=$(nvidia-smi -i 0 --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
    cc=$(nvidia-smi -i 0 --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d '. ')
    [[ $cc =~ ^[0-9]+$ ]] && GPU_ARCH=sm_$cc
    ;;
amd)
    # rocminfo lists CPU and GPU agents; each agent's Name (gfx...) and Marketing Name come before
    # its Device Type.
    if command -v rocminfo > /dev/null 2>&1; then
        GPU_COUNT=$(rocminfo 2> /dev/null | grep -c 'Device Type: *GPU')
        IFS='|' read -r GPU_ARCH GPU_NAME GPU_CUS < <(rocminfo 2> /dev/null | awk '
            /^Agent [0-9]+/ { n = ""; m = ""; c = "" }
            /^ *Name:/ && n == "" { n = $2 }
            /Marketing Name:/ { sub(/.*Marketing Name: */, ""); m = $0 }
            /Compute Unit:/ { c = $NF }
            /Device Type: *GPU/ { g = 1 }
            g && c != "" { print n "|" m "|" c; exit }')
    fi
    # ROCm's tools without a GPU (a build machine): nothing to run on.
    [ "${GPU_COUNT:-0}" -gt 0 ] || GPU_VENDOR=none
    ;;
esac
GPU_COUNT=${GPU_COUNT:-0} GPU_NAME=${GPU_NAME:-unknown} GPU_ARCH=${GPU_ARCH:-unknown}
# The tag: the name's words but the vendor's and the memory's (80GB, HBM3, HBM3e) and "VF" (a
# virtual function of the same GPU), joined by "-".
tag=$(printf '%s' "$GPU_NAME" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9\n' ' ' | awk '{
    t = ""
    for (i = 1; i <= NF; i++)
        if ($i !~ /^(nvidia|amd|instinct|vf|[0-9]+gb|hbm[0-9a-z]*)$/) t = t (t == "" ? "" : "-") $i
    print t }')
case $tag in
h100-pcie) sms=114 ;;
h100* | h200* | gh200*) sms=132 ;;
mi300x* | mi325x*) sms=304 ;;
mi350x* | mi355x*) sms=256 ;;
*) sms=${GPU_CUS:-0} ;;
esac
[ -n "$tag" ] && [ "$GPU_NAME" != unknown ] && DEVICE_TAG=$tag || DEVICE_TAG=$GPU_ARCH
GPU_SMS=${GPU_SMS:-$sms}
PROFILE=${PROFILE:-}
unset tag sms cc

# duet's world bound (DUET_OP_MAX_WORLD) is 8 ranks.
if [ -z "${NP:-}" ]; then
    NP=$GPU_COUNT
    [ "$NP" -gt 8 ] && NP=8
    [ "$NP" -lt 1 ] && NP=1
fi

MAKE_VARS=()
# The AMD build compiles for the device's architecture (what backend/backend.mk detects too, where
# the node's ROCm has offload-arch, amdgpu-arch or rocminfo).
[ "$GPU_VENDOR" = amd ] && [[ $GPU_ARCH == gfx* ]] && MAKE_VARS+=("AMD_ARCHS=$GPU_ARCH")

# --- NCCL: no NVLink multicast -------------------------------------------------------------------
MPI_VARS=()
if [ "${DUET_NVLS:-0}" != 1 ]; then
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    MPI_VARS+=(NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS)
fi

# --- cJSON and GSL from .deb files, where the node has none ----------------------------------------
DUET_DEBS=${DUET_DEBS:-.deps}
DUET_DEP=${DUET_DEP:-/tmp/duet-dep}
if ls "$DUET_DEBS"/*.deb > /dev/null 2>&1 && { [ "${DUET_USE_DEBS:-0}" = 1 ] \
    || [ ! -f /usr/include/cjson/cJSON.h ] || [ ! -f /usr/include/gsl/gsl_multifit_nlinear.h ]; }; then
    mkdir -p "$DUET_DEP"
    for f in "$DUET_DEBS"/*.deb; do dpkg -x "$f" "$DUET_DEP"; done
    multiarch=$(gcc -print-multiarch 2> /dev/null)
    deplib=$DUET_DEP/usr/lib/${multiarch:-x86_64-linux-gnu}
    MAKE_VARS+=("CFLAGS=-I$DUET_DEP/usr/include" "LDFLAGS=-L$deplib -Wl,-rpath,$deplib")
    # The run path of the binaries does not reach the libraries' own dependencies (libgsl needs
    # libgslcblas), hence the library path too.
    export LD_LIBRARY_PATH=$deplib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    MPI_VARS+=(LD_LIBRARY_PATH)
    DUET_DEBS_USED=1
    unset multiarch deplib
fi

# --- mpirun --------------------------------------------------------------------------------------
# Open MPI needs -x to hand a variable to the ranks and --allow-run-as-root for root; --oversubscribe
# lets ranks that share a GPU outnumber its slots. MPICH's launcher passes the whole environment.
MPIRUN_BIN=${MPIRUN_BIN:-mpirun}
if [ -z "${MPIRUN_FLAGS+x}" ]; then
    MPIRUN_FLAGS=""
    if "$MPIRUN_BIN" --version 2>&1 | grep -qi 'open mpi\|openrte'; then
        MPIRUN_FLAGS="--oversubscribe"
        [ "$(id -u)" = 0 ] && MPIRUN_FLAGS="--allow-run-as-root $MPIRUN_FLAGS"
        for v in "${MPI_VARS[@]}"; do MPIRUN_FLAGS="$MPIRUN_FLAGS -x $v"; done
    fi
fi

# duet_mpirun W: the mpirun line of W ranks (MPS's folders passed on while it runs).
duet_mpirun() {
    local line="$MPIRUN_BIN $MPIRUN_FLAGS"
    if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && [[ $MPIRUN_FLAGS == *-x* ]]; then
        line="$line -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY"
    fi
    echo "$line -np $1"
}
