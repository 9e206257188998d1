# The GPU-enabled duet tool (included by the top Makefile after backend/backend.mk).
#
#   make gpu   also builds $(GPU_BUILD)/duet: every CPU command plus bench, run, tune and calibrate
#              collect, linked with the backend (its measurement and baselines included), the
#              baseline libraries (cuBLASLt + NCCL, or hipBLASLt + RCCL) and MPI. Run it under
#              mpirun, one rank per GPU.

GPU_CLI_SRCS  := $(CLI_SRCS) $(wildcard cli/gpu/*.c)
GPU_CLI_OBJS  := $(GPU_CLI_SRCS:%.c=$(GPU_BUILD)/cli-gpu/%.o)
GPU_DUET      := $(GPU_BUILD)/duet

.PHONY: gpu-cli
gpu: gpu-cli
gpu-cli:
	@test "$(GPU)" != none || { echo "duet: make gpu needs nvcc or hipcc (GPU=cuda|hip)"; exit 1; }
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(GPU_DUET)

$(GPU_BUILD)/cli-gpu/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (gpu)")
	$(Q)$(CC) $(FINAL_CFLAGS) -DDUET_GPU_BUILD $(MPI_INCS) -c $< -o $@

$(GPU_DUET): $(GPU_CLI_OBJS) $(BACKEND_LIB) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(GPU_LINK) -o $@ $(GPU_CLI_OBJS) $(BACKEND_LIB) $(LIB) $(LDFLAGS) $(GPU_LDLIBS) \
	    $(BASELINE_LDLIBS) $(MPI_LIBS) $(LDLIBS_BASE) $(LDLIBS_CAL)

-include $(GPU_CLI_OBJS:.o=.d)
