# The environment every measuring script on the H200 machines runs in, sourced (not run) by
# tools/h200-measure.sh, tools/h200-ab.sh and tools/h200-commtile.sh after they set NP (ranks):
# NVLink multicast off, the unpacked cJSON and GSL packages on the library path, and the mpirun
# line that passes both to every rank (and MPS's pipe and log folders where a script set them:
# tools/h200-onegpu.sh). One copy, so that no script can forget a variable.
DEP=/tmp/dep
# NVLink multicast stays off on these shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# cJSON and GSL are not installed there: their Debian packages travel in .deps/ and are unpacked
# under $DEP (h200_unpack_deps). The binary's run path does not reach the libraries' own
# dependencies (libgsl -> libgslcblas), hence the library path.
export LD_LIBRARY_PATH=$DEP/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np ${NP:?NP: set the ranks before sourcing h200-env.sh} -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS${CUDA_MPS_PIPE_DIRECTORY:+ -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY}"

h200_unpack_deps() {
    mkdir -p "$DEP"
    for f in .deps/*.deb; do dpkg -x "$f" "$DEP"; done
}
