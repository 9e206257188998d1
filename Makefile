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

LIB_SRCS   := $(wildcard base/*.c) $(wildcard model/*.c) $(wildcard sim/*.c) $(wildcard tune/*.c)
CAL_SRCS   := $(wildcard calibrate/*.c)
CLI_SRCS   := $(wildcard cli/*.c)
TEST_SRCS  := $(wildcard tests/base/*.c) $(wildcard tests/model/*.c) $(wildcard tests/sim/*.c) $(wildcard tests/cli/*.c) $(wildcard tests/calibrate/*.c) \
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

.PHONY: all lib test demo clean help deps sanitize bench-sim format check-format valgrind mutate fuzz fuzz-build \
        fuzz-smoke

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
# Then every repository path the documentation and the sources cite must exist (tools/check_doc_paths.py,
# whose self-test plants stale citations it must catch), and the mutation runner must leave no process
# behind (tests/mutate/test_mutate.py).
test: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(TESTBIN)
	$(Q)DUET_BIN=$(DUET) ./$(TESTBIN) -j$(JOBS) $(TEST_ARGS)
	$(Q)python3 tools/check_doc_paths.py
	$(Q)python3 tools/check_doc_paths.py --self-test
	$(Q)python3 tests/mutate/test_mutate.py -q

sanitize:
	$(Q)$(MAKE) --no-print-directory test SAN=1

valgrind: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(DUET)
	valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite $(DUET) plan --hw h200 \
	    --collective all_gather --gemm 8192x8192x8192 --comm 2048x4096 --world 2 --json > /dev/null

# Mutation testing: every mutant of tests/mutate/mutants.txt built in a scratch copy of the tree
# (build/mutate/tree; the working tree is never written) and tested with --fail-fast under a time
# limit. MUTATE_ARGS passes options, e.g. MUTATE_ARGS="--only cost-*" (tests/mutate/mutate.py -h).
mutate: deps
	$(Q)python3 tests/mutate/mutate.py --jobs $(JOBS) $(MUTATE_ARGS)

# libFuzzer harnesses (tests/fuzz/, docs/testing.md): the library and cli/common.c built with clang
# under ASan + UBSan (float-cast-overflow included), one binary per harness. `make fuzz` runs each
# for FUZZ_SECONDS from its committed seeds (new inputs go to build-fuzz/corpus/, findings to
# build-fuzz/artifacts/); `make fuzz-smoke` (CI) runs each on its seeds only (each seed once: the same
# inputs every time, so CI cannot fail by chance) and keeps nothing.
FUZZ_CC            ?= clang
FUZZ_BUILD         := build-fuzz
FUZZ_SECONDS       ?= 60
FUZZ_SAN           := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined,float-cast-overflow
FUZZ_CFLAGS        := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O1 -g -fno-omit-frame-pointer $(WARN) \
                      -Iinclude -I. -MMD -MP $(FUZZ_SAN)
FUZZ_HARNESSES     := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJS          := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o) $(FUZZ_BUILD)/cli/common.o
FUZZ_BINS          := $(FUZZ_HARNESSES:%=$(FUZZ_BUILD)/%)
# Closes the harness's stdout and stderr (the CLI parser's usage errors); libFuzzer keeps its own.
FUZZ_RUN_FLAGS     := -close_fd_mask=3 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(FUZZ_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS_BASE)

fuzz-build:
	$(Q)./tools/deps.sh cpu fuzz
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(FUZZ_BINS)

fuzz: fuzz-build
	$(Q)set -e; for h in $(FUZZ_HARNESSES); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$h $(FUZZ_BUILD)/artifacts; \
	    echo "== $$h ($(FUZZ_SECONDS) s)"; \
	    ./$(FUZZ_BUILD)/$$h $(FUZZ_RUN_FLAGS) -max_total_time=$(FUZZ_SECONDS) -dict=tests/fuzz/$$h.dict \
	        -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$h- $(FUZZ_BUILD)/corpus/$$h tests/fuzz/corpus/$$h; \
	done

fuzz-smoke: fuzz-build
	$(Q)set -e; mkdir -p $(FUZZ_BUILD)/smoke; for h in $(FUZZ_HARNESSES); do \
	    if ./$(FUZZ_BUILD)/$$h $(FUZZ_RUN_FLAGS) -runs=0 -artifact_prefix=$(FUZZ_BUILD)/smoke/$$h- \
	        tests/fuzz/corpus/$$h > $(FUZZ_BUILD)/smoke/$$h.log 2>&1; then \
	        echo "  FUZZ    $$h: $$(ls tests/fuzz/corpus/$$h | wc -l) seeds, no finding"; \
	    else \
	        tail -40 $(FUZZ_BUILD)/smoke/$$h.log >&2; echo "fuzz-smoke: $$h failed (log: $(FUZZ_BUILD)/smoke/$$h.log)" >&2; exit 1; \
	    fi; \
	done; rm -rf $(FUZZ_BUILD)/smoke

DEMO_DIR ?= demo
demo: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(DUET)
	$(Q)./tools/demo.sh $(DUET) $(DEMO_DIR)

bench-sim: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(DUET)
	$(Q)$(DUET) bench-sim

# Every C, C++ and HIP source of the repository, in every layer, the tests and the examples.
FORMAT_SRCS := $(sort $(wildcard include/duet/*.h base/*.[ch] model/*.[ch] sim/*.[ch] calibrate/*.[ch] tune/*.[ch] \
	cli/*.[ch] cli/gpu/*.[ch] backend/*.[ch] backend/*.hip baseline/*.[ch] baseline/*.hip \
	tests/*.h tests/*/*.[ch] tests/*/*.hip examples/*.[ch] examples/*.hip))

format:
	clang-format -i $(FORMAT_SRCS)

check-format:
	$(Q)clang-format --dry-run --Werror $(FORMAT_SRCS)
	@echo "check-format: $(words $(FORMAT_SRCS)) files clean"

clean:
	rm -rf build build-san build-gpu build-check-* build-fuzz demo

help:
	@echo "duet make targets"
	@echo "  make              build build/libduet.a and build/duet"
	@echo "  make test         install missing packages (as root), build and run the CPU test suite, check the docs' paths"
	@echo "  make demo         install missing packages, build, and write demo/*.svg and demo/*.json"
	@echo "  make sanitize     the test suite under AddressSanitizer + UBSan (build-san/)"
	@echo "  make valgrind     run 'duet plan' under valgrind"
	@echo "  make mutate       mutation testing: build and test each mutant of tests/mutate/mutants.txt"

	@echo "  make fuzz         build the libFuzzer harnesses (clang) and run each FUZZ_SECONDS (default 60)"
	@echo "  make fuzz-smoke   run each harness once on each of its committed seeds (CI)"
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

-include $(LIB_OBJS:.o=.d) $(CAL_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d)
