# duet GPU backend (included by the top Makefile; reuses BUILD, LIB, Q, FINAL_CFLAGS, LDLIBS_*).
#
#   make gpu         build build-gpu/libduet_backend.a and the GPU test binary (GPU=cuda|hip)
#   make test-gpu    build, then run the GPU tests under mpirun at every W of GPU_WORLDS (1 2 3 4),
#                    then the planted faults (--plant) at W = GPU_PLANT_NP (2)
#   make check-cuda  nvcc -gencode=arch=compute_90a,code=sm_90a compile of every backend source
#   make check-amd   Debian hipcc compile and link for gfx90a, and Debian clang 19 for gfx942 (MI300X)
#
# AMD_ARCHS: the AMD targets of make gpu (GPU=hip). Default: the GPUs of this machine, as a ROCm
# toolchain names them (offload-arch, amdgpu-arch, or rocminfo), else gfx942 (MI300X) and gfx950
# (MI350X). A context on a GPU whose architecture is not among them fails at creation, naming the
# AMD_ARCHS to rebuild with. E.g. make gpu AMD_ARCHS="gfx942 gfx950".
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
# Detected only when a HIP build needs it (the first use sets it once; a missing tool prints
# nothing). rocminfo without a GPU driver exits at once; its time limit is for a driver that hangs.
AMD_ARCHS_FOUND = $(shell { offload-arch 2>/dev/null || amdgpu-arch 2>/dev/null || \
                    timeout 20 rocminfo 2>/dev/null | awk '/^ *Name: *gfx/ { print $$2 }'; } | \
                    grep -o '^gfx[0-9a-z]*' | sort -u | tr '\n' ' ')
AMD_ARCHS    ?= $(eval AMD_ARCHS := $(or $(strip $(AMD_ARCHS_FOUND)),gfx942 gfx950))$(AMD_ARCHS)
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
# The GPU examples (examples/*.hip: one program each, build-gpu/NAME), built by make gpu.
GPU_EXAMPLE_SRCS := $(wildcard examples/*.hip)
GPU_INCS     := -Iinclude -I. $(MPI_INCS)

# The architectures built are recorded as a string (duet_backend_archs()), which the context
# compares with the GPU's when it is created.
NVCC_ARCH    := -gencode=arch=compute_90a,code=sm_90a
NVCC_FLAGS   := -std=c++17 -O2 -g -lineinfo -x cu $(NVCC_ARCH) -Xcompiler -Wall,-Wno-unused-function $(GPU_INCS) \
                -DDUET_BUILT_ARCHS='"sm_90a"'
# HIPCC_EXTRA: flags of another HIP compiler (check-amd's clang 19: where the device libraries are).
HIPCC_EXTRA  ?=
HIPCC_FLAGS   = -std=c++17 -O2 -g -x hip $(addprefix --offload-arch=,$(AMD_ARCHS)) -Wno-unused-function $(GPU_INCS) \
                -DDUET_BUILT_ARCHS='"$(strip $(AMD_ARCHS))"' $(HIPCC_EXTRA)

ifeq ($(GPU),cuda)
GPU_CXX      := $(NVCC)
GPU_CXXFLAGS := $(NVCC_FLAGS)
GPU_LDLIBS   := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
GPU_LINK     := $(CXX_LINK)
else
GPU_CXX      := $(HIPCC)
GPU_CXXFLAGS  = $(HIPCC_FLAGS)
GPU_LDLIBS   :=
GPU_LINK      = $(HIPCC) $(addprefix --offload-arch=,$(AMD_ARCHS)) $(HIPCC_EXTRA)
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
GPU_EXAMPLES  := $(GPU_EXAMPLE_SRCS:examples/%.hip=$(GPU_BUILD)/%)
GPU_HEADERS   := $(wildcard backend/*.h) $(wildcard baseline/*.h) $(wildcard include/duet/*.h)

# ------------------------------------------------------------------------------------------------
# The GPU build as one shared library, and its installation. libduet_backend.so.X.Y.Z (soname
# libduet_backend.so.SOVERSION, as libduet's) holds the backend, the baselines and all of libduet
# (the backend calls the library's internals, which libduet.so does not export), and exports the
# public API of both (duet_*, base/libduet.map): a program links it instead of libduet, through
# duet-backend.pc. The objects are position-independent so that one set serves libduet_backend.a
# and the .so.
# make install-gpu installs the CPU parts (make install), then the GPU duet in
# place of the CPU one, both backend libraries, the headers that need MPI and duet-backend.pc.
ifeq ($(GPU),cuda)
GPU_CXXFLAGS += -Xcompiler -fPIC
else
GPU_CXXFLAGS += -fPIC
endif
$(BACKEND_C_SRCS:%.c=$(GPU_BUILD)/%.o): FINAL_CFLAGS += -fPIC
# A change of flags (-fPIC added here) rebuilds the objects of a GPU build folder made before.
$(GPU_BUILD)/flags.txt: FORCE
	$(call flags_stamp,$(GPU_CXX) $(GPU_CXXFLAGS) $(CC) $(FINAL_CFLAGS))
$(GPU_OBJS) $(GPU_TEST_OBJS): $(GPU_BUILD)/flags.txt

BACKEND_SONAME := libduet_backend.so.$(SOVERSION)
BACKEND_SHLIB  := $(GPU_BUILD)/libduet_backend.so.$(VERSION)
BACKEND_PC     := $(GPU_BUILD)/duet-backend.pc
BACKEND_LIBS   := $(GPU_LDLIBS) $(if $(BASELINE_SRCS),$(BASELINE_LDLIBS)) $(MPI_LIBS) $(LDLIBS_BASE) $(LDLIBS_CAL)

$(BACKEND_SHLIB): $(GPU_OBJS) $(LIB) base/libduet.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(GPU_LINK) -shared -Wl,-soname,$(BACKEND_SONAME) -Wl,--version-script=base/libduet.map -o $@ $(GPU_OBJS) \
	    -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(LDFLAGS) $(BACKEND_LIBS)
	$(Q)$(call so_links,$(GPU_BUILD),$(notdir $@),$(BACKEND_SONAME))

$(BACKEND_PC): FORCE
	@mkdir -p $(dir $@)
	$(Q)$(call pc_write,duet-backend,duet with its GPU backend (HIP/CUDA + MPI) and vendor baselines,\
	    -lduet_backend,$(BACKEND_LIBS),$(MPI_INCS))

# make gpu-shared builds the .so alone (make gpu builds the static library and the programs only);
# $(GPU_BUILD)/duet is named here because cli/gpu/gpu.mk, which defines GPU_DUET, is read after this file.
.PHONY: install-gpu gpu-shared
gpu-shared:
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(BACKEND_SHLIB)
install-gpu: install $(GPU_BUILD)/duet $(BACKEND_SHLIB) $(BACKEND_LIB) $(BACKEND_PC)
	$(INSTALL) -m 755 $(GPU_DUET) $(DESTDIR)$(BINDIR)/duet
	$(INSTALL) -m 755 $(BACKEND_SHLIB) $(DESTDIR)$(LIBDIR)/
	$(call so_links,$(DESTDIR)$(LIBDIR),$(notdir $(BACKEND_SHLIB)),$(BACKEND_SONAME))
	$(INSTALL) -m 644 $(BACKEND_LIB) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(GPU_PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/duet/
	$(INSTALL) -m 644 $(BACKEND_PC) $(DESTDIR)$(PKGCONFIGDIR)/duet-backend.pc

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

# An example links like the test binary (the backend's MPI provider is in the library, so MPI's
# libraries are linked, though the example itself calls no MPI).
$(GPU_EXAMPLES): $(GPU_BUILD)/%: $(GPU_BUILD)/examples/%.o $(BACKEND_LIB) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(GPU_LINK) -o $@ $< $(BACKEND_LIB) $(LIB) $(LDFLAGS) $(GPU_LDLIBS) $(MPI_LIBS) $(LDLIBS_BASE) $(LDLIBS_CAL)

gpu:
	@test "$(GPU)" != none || { echo "duet: make gpu needs nvcc or hipcc (GPU=cuda|hip)"; exit 1; }
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(LIB) $(BACKEND_LIB) $(GPU_TESTBIN) $(GPU_EXAMPLES)

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
	    $(addprefix $(CHECK_CUDA_DIR)/,$(GPU_EXAMPLE_SRCS:.hip=.o)) \
	    $(addprefix $(CHECK_CUDA_DIR)/,$(BACKEND_C_SRCS:.c=.o)) \
	    $(addprefix $(CHECK_CUDA_DIR)/cli-gpu/,$(GPU_CLI_SRCS:.c=.o))
	@echo "check-cuda: $(words $(BACKEND_SRCS) $(BASELINE_SRCS) $(GPU_TEST_SRCS) $(GPU_EXAMPLE_SRCS)) sources compiled for sm_90a, the backend's C and the GPU commands (cli/gpu)"

# check-amd's second compiler: Debian's ROCm 5.2 hipcc does not know gfx942 (MI300X); Debian's
# clang 19 does, and compiles HIP against the packaged HIP headers and device libraries. Those
# lack gfx942's ISA-version bitcode, which holds one constant (__oclc_ISA_version = 9402, as
# ROCm's own oclc_isa_version_942.bc), so a copy of the library folder gets it, generated from
# its one line of LLVM IR. clang 19 does not know gfx950 (MI350X: LLVM 20), so nothing here
# compiles for it. The test binary is linked against the packaged HIP runtime.
CLANG_HIP        ?= clang++-19
CLANG_HIP_ARCHS  ?= gfx942
ROCM_BITCODE     ?= /usr/lib/x86_64-linux-gnu/amdgcn/bitcode
CHECK_AMD942_DIR := build-check-amd942
CLANG_HIP_BC     := $(CHECK_AMD942_DIR)/bitcode

$(CLANG_HIP_BC)/oclc_isa_version_942.bc:
	@mkdir -p $(CLANG_HIP_BC)
	$(Q)for f in $(ROCM_BITCODE)/*.bc; do ln -sf "$$f" $(CLANG_HIP_BC)/; done
	$(Q)printf '%s\n' 'target triple = "amdgcn-amd-amdhsa"' \
	    '@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 9402, align 4' \
	    > $(CLANG_HIP_BC)/isa942.ll
	$(Q)$(CLANG_HIP) -target amdgcn-amd-amdhsa -mcpu=gfx942 -nogpulib -c -emit-llvm $(CLANG_HIP_BC)/isa942.ll -o $@

check-amd:
	$(Q)./tools/deps.sh amd mpi
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) GPU=hip BASELINE=0 AMD_ARCHS=gfx90a GPU_BUILD=$(CHECK_AMD_DIR) $(LIB) \
	    $(CHECK_AMD_DIR)/duet-gpu-tests $(GPU_EXAMPLE_SRCS:examples/%.hip=$(CHECK_AMD_DIR)/%) \
	    $(addprefix $(CHECK_AMD_DIR)/cli-gpu/,$(GPU_CLI_SRCS:.c=.o))
	$(Q)$(MAKE) --no-print-directory $(CLANG_HIP_BC)/oclc_isa_version_942.bc
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) GPU=hip BASELINE=0 AMD_ARCHS="$(CLANG_HIP_ARCHS)" HIPCC=$(CLANG_HIP) \
	    HIPCC_EXTRA="--rocm-path=/usr --rocm-device-lib-path=$(CURDIR)/$(CLANG_HIP_BC)" GPU_LDLIBS=-lamdhip64 \
	    GPU_BUILD=$(CHECK_AMD942_DIR) $(CHECK_AMD942_DIR)/duet-gpu-tests \
	    $(GPU_EXAMPLE_SRCS:examples/%.hip=$(CHECK_AMD942_DIR)/%)
	@echo "check-amd: backend compiled and linked for gfx90a (hipcc) and $(CLANG_HIP_ARCHS) ($(CLANG_HIP)), and the GPU commands (cli/gpu) compiled"
