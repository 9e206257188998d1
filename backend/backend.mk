# duet GPU backend (included by the top Makefile; reuses BUILD, LIB, Q, FINAL_CFLAGS, LDLIBS_*).
#
#   make gpu         build build-gpu/libduet_backend.a and the GPU test binary (GPU=cuda|hip)
#   make test-gpu    build, then run the GPU tests under mpirun at every W of GPU_WORLDS (1 2 3 4),
#                    then the planted faults (--plant) at W = GPU_PLANT_NP (2)
#   make check-cuda  nvcc -gencode=arch=compute_90a,code=sm_90a compile of every backend source
#   make check-amd   Debian hipcc compile and link for gfx90a and gfx940
#
# Backend sources are HIP (.hip): hipcc compiles them as HIP, nvcc as CUDA through backend/gpu.h.

CUDA_HOME    ?= /usr/local/cuda
ifeq ($(origin NVCC),undefined)
NVCC         := $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
endif
ifeq ($(origin HIPCC),undefined)
HIPCC        := $(shell command -v hipcc 2>/dev/null)
endif
MPICC        ?= mpicc
CXX_LINK     ?= g++
GPU          ?= $(if $(NVCC),cuda,$(if $(HIPCC),hip,none))
GPU_BUILD    ?= build-gpu
# World sizes of make test-gpu. Ranks beyond the GPU count share GPUs (device = local rank modulo
# the count); run them under MPS so that their persistent kernels are resident at once.
# GPU_NP=N, the former setting, still runs W = N and W = 1.
ifdef GPU_NP
GPU_WORLDS   ?= $(GPU_NP) 1
endif
GPU_WORLDS   ?= 1 2 3 4
GPU_PLANT_NP ?= 2
AMD_ARCHS    ?= gfx90a gfx940
MPIRUN       ?= mpirun
# NVLink multicast stays off on shared machines: the lent H200 machines are shared, and multicast
# objects that a killed job leaves behind are not freed until the machine is reset; -x hands the
# variables to every rank.
GPU_ENV      := NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
MPIRUN_FLAGS ?= --allow-run-as-root --oversubscribe -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST \
                -x NVSHMEM_DISABLE_NVLS

# OpenMPI's wrapper reports its flags; nvcc takes only the -I/-D part, the host linker the rest.
MPI_CFLAGS   := $(shell $(MPICC) -showme:compile 2>/dev/null)
MPI_LIBS     := $(shell $(MPICC) -showme:link 2>/dev/null)
MPI_INCS     := $(filter -I% -D%,$(MPI_CFLAGS))

BACKEND_SRCS := $(wildcard backend/*.hip)
# The backend's plain C (duet bench's and calibrate collect's measurements, over include/duet/measure.h),
# compiled by the C compiler with the MPI headers.
BACKEND_C_SRCS := $(wildcard backend/*.c)
# The baselines (cuBLASLt + NCCL, hipBLASLt + RCCL): in the backend library, unless BASELINE=0
# (check-amd: Debian's ROCm has neither hipBLASLt nor RCCL). A program that calls them, or the
# measurement that uses them, links those libraries (BASELINE_LDLIBS).
BASELINE     ?= 1
BASELINE_SRCS:= $(if $(filter 1,$(BASELINE)),$(wildcard baseline/*.hip))
GPU_TEST_SRCS:= $(wildcard tests/gpu/*.hip)
GPU_INCS     := -Iinclude -I. $(MPI_INCS)

NVCC_ARCH    := -gencode=arch=compute_90a,code=sm_90a
NVCC_FLAGS   := -std=c++17 -O2 -g -lineinfo -x cu $(NVCC_ARCH) -Xcompiler -Wall,-Wno-unused-function $(GPU_INCS)
HIPCC_FLAGS  := -std=c++17 -O2 -g -x hip $(addprefix --offload-arch=,$(AMD_ARCHS)) -Wno-unused-function $(GPU_INCS)

ifeq ($(GPU),cuda)
GPU_CXX      := $(NVCC)
GPU_CXXFLAGS := $(NVCC_FLAGS)
GPU_LDLIBS   := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
GPU_LINK     := $(CXX_LINK)
else
GPU_CXX      := $(HIPCC)
GPU_CXXFLAGS := $(HIPCC_FLAGS)
GPU_LDLIBS   :=
GPU_LINK     := $(HIPCC) $(addprefix --offload-arch=,$(AMD_ARCHS))
endif

ifeq ($(GPU),cuda)
BASELINE_LDLIBS := -lcublasLt -lnccl
else
BASELINE_LDLIBS := -lhipblaslt -lrccl
endif

GPU_OBJS      := $(BACKEND_SRCS:%.hip=$(GPU_BUILD)/%.o) $(BACKEND_C_SRCS:%.c=$(GPU_BUILD)/%.o) \
                 $(BASELINE_SRCS:%.hip=$(GPU_BUILD)/%.o)
GPU_TEST_OBJS := $(GPU_TEST_SRCS:%.hip=$(GPU_BUILD)/%.o)
BACKEND_LIB   := $(GPU_BUILD)/libduet_backend.a
GPU_TESTBIN   := $(GPU_BUILD)/duet-gpu-tests
GPU_HEADERS   := $(wildcard backend/*.h) $(wildcard baseline/*.h) $(wildcard include/duet/*.h)

.PHONY: gpu test-gpu check-cuda check-amd

$(GPU_BUILD)/%.o: %.hip $(GPU_HEADERS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  $(GPU)    $<")
	$(Q)$(GPU_CXX) $(GPU_CXXFLAGS) -c $< -o $@

$(GPU_BUILD)/backend/%.o: backend/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (gpu)")
	$(Q)$(CC) $(FINAL_CFLAGS) $(MPI_INCS) -c $< -o $@

-include $(BACKEND_C_SRCS:%.c=$(GPU_BUILD)/%.d)

# The tests' own headers (harness, device helpers) are prerequisites of the test objects only.
$(GPU_TEST_OBJS): $(wildcard tests/gpu/*.h)

$(BACKEND_LIB): $(GPU_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The vendor mode's tests (DUET_TEST_VENDOR in tests/gpu/test_gpu.hip) need the baseline
# libraries: linked on NVIDIA, whose toolkit ships cuBLASLt and NCCL; Debian's ROCm (check-amd)
# has no hipBLASLt, so the AMD test binary leaves them out and says so when it runs.
ifeq ($(GPU),cuda)
GPU_TEST_BASELINE_LIBS := $(BASELINE_LDLIBS)
endif

$(GPU_TESTBIN): $(GPU_TEST_OBJS) $(BACKEND_LIB) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(GPU_LINK) -o $@ $(GPU_TEST_OBJS) $(BACKEND_LIB) $(LIB) $(LDFLAGS) $(GPU_LDLIBS) \
	    $(GPU_TEST_BASELINE_LIBS) $(MPI_LIBS) $(LDLIBS_BASE) $(LDLIBS_CAL)

gpu:
	@test "$(GPU)" != none || { echo "duet: make gpu needs nvcc or hipcc (GPU=cuda|hip)"; exit 1; }
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(LIB) $(BACKEND_LIB) $(GPU_TESTBIN)

# Every W of GPU_WORLDS (each run to the end, so one failure does not hide the others), then the
# planted faults, which every check must catch. Every device wait is bounded, so a broken run
# fails instead of hanging.
test-gpu: gpu
	@rc=0; for w in $(GPU_WORLDS); do \
	    echo "$(GPU_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $$w $(GPU_TESTBIN) $(GPU_TEST_ARGS)"; \
	    $(GPU_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $$w $(GPU_TESTBIN) $(GPU_TEST_ARGS) || rc=1; \
	done; \
	echo "$(GPU_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $(GPU_PLANT_NP) $(GPU_TESTBIN) --plant"; \
	$(GPU_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $(GPU_PLANT_NP) $(GPU_TESTBIN) --plant || rc=1; \
	exit $$rc

# Compile checks (no GPU needed): each compiles every backend and GPU-test source into its own
# folder, and the GPU commands' C sources (cli/gpu: bench, calibrate collect, ...; not linked,
# that needs the baseline libraries); check-cuda compiles the baselines too, check-amd leaves them
# out (BASELINE=0: no hipBLASLt in Debian's ROCm) and links the test binary against the host library.
CHECK_CUDA_DIR := build-check-cuda
CHECK_AMD_DIR  := build-check-amd

check-cuda:
	@test -n "$(NVCC)" || { echo "duet: check-cuda needs nvcc ($(CUDA_HOME)/bin/nvcc)"; exit 1; }
	$(Q)./tools/deps.sh mpi
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) GPU=cuda GPU_BUILD=$(CHECK_CUDA_DIR) \
	    $(addprefix $(CHECK_CUDA_DIR)/,$(BACKEND_SRCS:.hip=.o) $(BASELINE_SRCS:.hip=.o) $(GPU_TEST_SRCS:.hip=.o)) \
	    $(addprefix $(CHECK_CUDA_DIR)/,$(BACKEND_C_SRCS:.c=.o)) \
	    $(addprefix $(CHECK_CUDA_DIR)/cli-gpu/,$(GPU_CLI_SRCS:.c=.o))
	@echo "check-cuda: $(words $(BACKEND_SRCS) $(BASELINE_SRCS) $(GPU_TEST_SRCS)) sources compiled for sm_90a, the backend's C and the GPU commands (cli/gpu)"

check-amd:
	$(Q)./tools/deps.sh amd mpi
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) GPU=hip BASELINE=0 GPU_BUILD=$(CHECK_AMD_DIR) $(LIB) \
	    $(CHECK_AMD_DIR)/duet-gpu-tests \
	    $(addprefix $(CHECK_AMD_DIR)/cli-gpu/,$(GPU_CLI_SRCS:.c=.o))
	@echo "check-amd: backend compiled and linked for $(AMD_ARCHS), and the GPU commands (cli/gpu) compiled"
