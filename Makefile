# duet: plain Makefile. `make help` lists the targets and knobs.
#
# Layout: model/, sim/ and tune/ form libduet.a (pure C11 + cJSON); calibrate/ adds GSL; cli/ is the
# `duet` front end; backend/ (HIP/CUDA + MPI) is built only by `make gpu` and the compile checks.

CC        ?= cc
BUILD     ?= build
SAN       ?= 0
WERROR    ?= 0
V         ?= 0
JOBS      ?= 2

ifeq ($(V),0)
Q := @
else
Q :=
endif

WARN      := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN      += -Werror
endif
OPT       ?= -O2
BASE_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) -g $(WARN) -Iinclude -I. -MMD -MP
# UBSan's float-cast-overflow check (a double out of range of the integer it is cast to, NaN
# included) is part of clang's -fsanitize=undefined but not of gcc's, which has it as a separate
# flag: name it, so `make sanitize` catches that class with either compiler.
ifeq ($(SAN),1)
BUILD     := build-san
BASE_CFLAGS += -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
               -fno-sanitize-recover=undefined,float-cast-overflow
SAN_LDFLAGS := -fsanitize=address,undefined,float-cast-overflow
endif
FINAL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
LDLIBS_BASE  := -lcjson -lm -lpthread

LIB_SRCS   := $(wildcard model/*.c) $(wildcard sim/*.c) $(wildcard tune/*.c)
CAL_SRCS   := $(wildcard calibrate/*.c)
CLI_SRCS   := $(wildcard cli/*.c)
TEST_SRCS  := $(wildcard tests/model/*.c) $(wildcard tests/sim/*.c) $(wildcard tests/cli/*.c) $(wildcard tests/calibrate/*.c) \
              $(wildcard tests/tune/*.c)
BENCH_SRCS := $(wildcard sim/bench/*.c)

LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CAL_OBJS   := $(CAL_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS   := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_OBJS  := $(TEST_SRCS:%.c=$(BUILD)/%.o)

LIB        := $(BUILD)/libduet.a
DUET       := $(BUILD)/duet
TESTBIN    := $(BUILD)/duet-tests

ifneq ($(CAL_SRCS),)
LDLIBS_CAL := -lgsl -lgslcblas
endif

.PHONY: all lib test demo clean help deps sanitize bench-sim format check-format valgrind

all: $(DUET)

lib: $(LIB)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FINAL_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS) $(CAL_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(DUET): $(CLI_OBJS) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(SAN_LDFLAGS) $(LDLIBS_BASE) $(LDLIBS_CAL)

$(TESTBIN): $(TEST_OBJS) $(LIB) $(DUET)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $(TEST_OBJS) $(LIB) $(SAN_LDFLAGS) $(LDLIBS_BASE) $(LDLIBS_CAL) -lcriterion

# Installs what is missing (apt-get, as root), or prints the command and stops.
deps:
	$(Q)./tools/deps.sh

# `make test` and `make demo` are the two set-up commands of README: each installs what is
# missing first. Tests run from the repository root so they find tests/data and the golden file.
test: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(TESTBIN)
	$(Q)DUET_BIN=$(DUET) ./$(TESTBIN) -j$(JOBS) $(TEST_ARGS)

sanitize:
	$(Q)$(MAKE) --no-print-directory test SAN=1

valgrind: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(DUET)
	valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite $(DUET) plan --hw h200 \
	    --collective all_gather --gemm 8192x8192x8192 --comm 2048x4096 --world 2 --json > /dev/null

DEMO_DIR ?= demo
demo: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(DUET)
	$(Q)./tools/demo.sh $(DUET) $(DEMO_DIR)

bench-sim: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(DUET)
	$(Q)$(DUET) bench-sim

format:
	clang-format -i $(LIB_SRCS) $(CAL_SRCS) $(CLI_SRCS) $(TEST_SRCS) $(wildcard include/duet/*.h model/*.h sim/*.h cli/*.h calibrate/*.h)

check-format:
	clang-format --dry-run --Werror $(LIB_SRCS) $(CAL_SRCS) $(CLI_SRCS) $(wildcard include/duet/*.h model/*.h sim/*.h cli/*.h)

clean:
	rm -rf build build-san build-gpu build-check-* demo

help:
	@echo "duet make targets"
	@echo "  make              build build/libduet.a and build/duet"
	@echo "  make test         install missing packages (as root), build and run the CPU test suite"
	@echo "  make demo         install missing packages, build, and write demo/*.svg and demo/*.json"
	@echo "  make sanitize     the test suite under AddressSanitizer + UBSan (build-san/)"
	@echo "  make valgrind     run 'duet plan' under valgrind"
	@echo "  make bench-sim    simulator speed benchmark (prints events per second)"
	@echo "  make gpu          build the GPU backend and a GPU-enabled duet (GPU=cuda|hip, auto-detected)"
	@echo "  make check-cuda   compile the backend with nvcc (sm_90a), no GPU needed"
	@echo "  make check-amd    compile and link the backend with hipcc (gfx90a, gfx940), no GPU needed"
	@echo "  make test-gpu     GPU tests under mpirun (needs GPUs)"
	@echo "  make format       clang-format the sources"
	@echo "  make clean        remove build outputs"
	@echo "knobs: CC=$(CC) SAN=$(SAN) WERROR=$(WERROR) V=$(V) JOBS=$(JOBS) OPT=$(OPT)"

-include backend/backend.mk
-include cli/gpu/gpu.mk

-include $(LIB_OBJS:.o=.d) $(CAL_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
