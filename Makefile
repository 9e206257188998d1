# duet: plain Makefile. `make help` lists the targets and knobs.
#
# Layout: base/, model/, sim/, tune/ and calibrate/ form the library, built both as libduet.a and as
# libduet.so.MAJOR.MINOR.PATCH (C11, cJSON and GSL); cli/ is the `duet` front end; backend/ (HIP/CUDA +
# MPI) is built only by `make gpu` and the compile checks. CC, CPPFLAGS, CFLAGS and LDFLAGS are honoured
# by every compile and link.

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

# The dependencies (cJSON, GSL, Criterion for the tests) are found by pkg-config wherever it knows them
# (a distribution's layout, Spack, a prefix on PKG_CONFIG_PATH); without a .pc file, the plain -l names
# of Debian's layout. A library outside the loader's default directories (pkg-config names it with -L)
# is also found at run time: its directory goes into the binaries' run path (DEP_RPATH=0 leaves it out).
PKG_CONFIG ?= pkg-config
DEP_RPATH  ?= 1
dep_found   = $(shell $(PKG_CONFIG) --exists $(1) 2>/dev/null && echo $(1))
CJSON_PC       := $(call dep_found,libcjson)
GSL_PC         := $(call dep_found,gsl)
CJSON_CFLAGS   := $(if $(CJSON_PC),$(shell $(PKG_CONFIG) --cflags libcjson))
CJSON_LIBS     := $(if $(CJSON_PC),$(shell $(PKG_CONFIG) --libs libcjson),-lcjson)
GSL_CFLAGS     := $(if $(GSL_PC),$(shell $(PKG_CONFIG) --cflags gsl))
GSL_LIBS       := $(if $(GSL_PC),$(shell $(PKG_CONFIG) --libs gsl),-lgsl -lgslcblas)
comma := ,
ifeq ($(DEP_RPATH),1)
dep_rpath = $(patsubst -L%,-Wl$(comma)-rpath$(comma)%,$(filter -L%,$(1)))
endif

FINAL_CFLAGS := $(CPPFLAGS) $(BASE_CFLAGS) $(CJSON_CFLAGS) $(GSL_CFLAGS) $(CFLAGS)
LDLIBS_BASE  := $(CJSON_LIBS) -lm -lpthread $(call dep_rpath,$(CJSON_LIBS))

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
# The GPU backend's plain C that the CPU tests cover too (its process group over files).
TEST_BACKEND_OBJS := $(BUILD)/backend/bootstrap_file.o

LIB        := $(BUILD)/libduet.a

# The version is written once, in include/duet/version.h; the shared library is named after it. Its
# soname carries the ABI version (docs/abi.md): MAJOR from 1.0 on, MAJOR.MINOR while MAJOR is 0, since
# every 0.x minor release may change a public struct; a program keeps running on any later release
# with the same soname.
VERSION_PART = $(shell sed -n 's/^\#define DUET_VERSION_$(1) \([0-9][0-9]*\).*/\1/p' include/duet/version.h)
VERSION_MAJOR := $(call VERSION_PART,MAJOR)
VERSION       := $(VERSION_MAJOR).$(call VERSION_PART,MINOR).$(call VERSION_PART,PATCH)
SOVERSION  := $(if $(filter 0,$(VERSION_MAJOR)),0.$(call VERSION_PART,MINOR),$(VERSION_MAJOR))
SONAME     := libduet.so.$(SOVERSION)
SHLIB      := $(BUILD)/libduet.so.$(VERSION)
# Only the public API (duet_*, declared in include/duet/) is exported; the internal duet__* functions
# stay inside the library (base/libduet.map). A plain build refuses undefined symbols in the library,
# so a missing dependency shows when it is linked, not when a program loads it; the sanitizer runtime
# is resolved only by the executable, so SAN=1 leaves that check out.
SHLIB_LDFLAGS := -shared -Wl,-soname,$(SONAME) -Wl,--version-script=base/libduet.map
ifneq ($(SAN),1)
SHLIB_LDFLAGS += -Wl,--no-undefined
endif
DUET       := $(BUILD)/duet
TESTBIN    := $(BUILD)/duet-tests

ifneq ($(CAL_SRCS),)
LDLIBS_CAL := $(GSL_LIBS) $(call dep_rpath,$(GSL_LIBS))
endif
# Criterion, for the test binary only.
CRITERION_PC     := $(call dep_found,criterion)
CRITERION_CFLAGS := $(if $(CRITERION_PC),$(shell $(PKG_CONFIG) --cflags criterion))
CRITERION_LIBS   := $(if $(CRITERION_PC),$(shell $(PKG_CONFIG) --libs criterion),-lcriterion)
$(TEST_OBJS): DEP_TEST_CFLAGS := $(CRITERION_CFLAGS)

.PHONY: all lib test demo clean help deps sanitize bench-sim format check-format valgrind mutate coverage fuzz fuzz-build \
        fuzz-smoke shared install uninstall check-install check-abi config FORCE

all: $(DUET) $(SHLIB)

lib: $(LIB) $(SHLIB)

shared: $(SHLIB)

# The library's objects are position-independent so that one set serves libduet.a and libduet.so.
$(LIB_OBJS) $(CAL_OBJS): PIC_CFLAGS := -fPIC

# The compiler and flags each object was built with: a change (a new CFLAGS, -fPIC added to the
# library's objects) rebuilds the objects instead of linking stale ones. The file is rewritten only
# when its text changes.
# $(call flags_stamp,TEXT) is such a recipe (quotes dropped from TEXT: it is only compared).
flags_stamp = @mkdir -p $(dir $@); echo '$(subst ',,$(1))' | cmp -s - $@ || echo '$(subst ',,$(1))' > $@
FLAGS_STAMP := $(BUILD)/flags.txt
$(FLAGS_STAMP): FORCE
	$(call flags_stamp,$(CC) $(FINAL_CFLAGS))
FORCE:

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FINAL_CFLAGS) $(PIC_CFLAGS) $(DEP_TEST_CFLAGS) -c $< -o $@

# Build provenance (base/build_info.c): the commit of the backend's last change (kernels and
# baselines: what a corpus measures), a hash of those sources' content (which needs no .git: a
# copy of the tree on a GPU machine hashes the same), and the commit of the whole tree. Outside a
# git checkout the commits are DUET_KERNEL_COMMIT / DUET_COMMIT from the environment, else
# "unknown". The header is rewritten only when a value changes, so nothing rebuilds needlessly.
KERNEL_SRCS   := $(sort $(wildcard backend/*.hip backend/*.h backend/*.c backend/*.mk baseline/*.hip baseline/*.h))
KERNEL_COMMIT := $(or $(DUET_KERNEL_COMMIT),$(shell test -e .git && git log -1 --format=%h -- backend/ baseline/ 2>/dev/null),unknown)
SOURCE_COMMIT := $(or $(DUET_COMMIT),$(shell test -e .git && git rev-parse --short HEAD 2>/dev/null),unknown)
KERNEL_HASH   := $(shell cat $(KERNEL_SRCS) /dev/null | sha256sum | cut -c1-12)
BUILD_INFO_H  := $(BUILD)/gen/duet_build_info.h
.PHONY: FORCE
$(BUILD_INFO_H): FORCE
	@mkdir -p $(dir $@)
	@printf '#define DUET_KERNEL_COMMIT "%s"\n#define DUET_KERNEL_HASH "%s"\n#define DUET_SOURCE_COMMIT "%s"\n' \
	    '$(KERNEL_COMMIT)' '$(KERNEL_HASH)' '$(SOURCE_COMMIT)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/base/build_info.o: $(BUILD_INFO_H)
$(BUILD)/base/build_info.o: FINAL_CFLAGS += -I$(BUILD)/gen

$(LIB): $(LIB_OBJS) $(CAL_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# $(call so_links,DIR,FILE,SONAME): in DIR, the links SONAME -> FILE and the name without the ABI
# version (libduet.so) -> SONAME.
so_links = ln -sf $(2) $(1)/$(3) && ln -sf $(3) $(1)/$(firstword $(subst .so.,.so ,$(3)))

# libduet.so.X.Y.Z with the links libduet.so.SOVERSION (the soname, what a program loads) and
# libduet.so (what -lduet finds at link time).
$(SHLIB): $(LIB_OBJS) $(CAL_OBJS) base/libduet.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FINAL_CFLAGS) $(SHLIB_LDFLAGS) -o $@ $(LIB_OBJS) $(CAL_OBJS) $(LDFLAGS) $(SAN_LDFLAGS) \
	    $(LDLIBS_BASE) $(LDLIBS_CAL)
	$(Q)$(call so_links,$(BUILD),$(notdir $@),$(SONAME))

# The CLI and the tests link the static library: they use internal functions the .so does not export.
$(DUET): $(CLI_OBJS) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDFLAGS) $(SAN_LDFLAGS) $(LDLIBS_BASE) $(LDLIBS_CAL)

# The tests make allocations fail on demand (tests/alloc_fail.h): malloc, calloc and realloc reach
# tests/base/alloc_fail.c's wrappers first.
TEST_WRAP_LDFLAGS := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
$(TESTBIN): $(TEST_OBJS) $(TEST_BACKEND_OBJS) $(LIB) $(DUET)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $(TEST_OBJS) $(TEST_BACKEND_OBJS) $(LIB) $(TEST_WRAP_LDFLAGS) $(LDFLAGS) $(SAN_LDFLAGS) $(LDLIBS_BASE) $(LDLIBS_CAL) \
	    $(CRITERION_LIBS) $(call dep_rpath,$(CRITERION_LIBS))

# ------------------------------------------------------------------------------------------------
# make install PREFIX=... DESTDIR=...: the CLI, libduet.so.X.Y.Z (with its soname and -lduet links),
# libduet.a, the public headers, duet.pc, and LICENSE, README.md and CHANGELOG.md. The GPU backend's
# library and duet-backend.pc are installed by `make install-gpu` (backend/backend.mk). `duet help
# COMMAND` is the manual of each command.
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DOCDIR       ?= $(PREFIX)/share/doc/duet
INSTALL      ?= install
# The headers of the CPU library; those of the GPU backend need MPI and go with it.
GPU_PUBLIC_HEADERS := include/duet/backend.h include/duet/measure.h include/duet/baseline.h
PUBLIC_HEADERS     := $(filter-out $(GPU_PUBLIC_HEADERS),$(wildcard include/duet/*.h))
PC_FILE            := $(BUILD)/duet.pc
# A directory under PREFIX is written relative to ${prefix}, so a moved tree only needs prefix changed.
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

# A .pc file: $(call pc_write,NAME,DESCRIPTION,LIBS,LIBS_PRIVATE,CFLAGS) writes $@. It names the
# dependencies pkg-config knows as packages (Requires.private) and the others by their -l names
# (Libs.private), for static linking; a shared library carries its own.
# Libs also puts libdir into the program's run path, so that `cc prog.c $(pkg-config --cflags --libs
# duet)` builds a program that runs as it is, wherever PREFIX is (without it the loader finds no
# libduet.so.* outside its default directories and the program exits 127). A run path, not static
# linking: the program keeps loading the shared library, so a later release with the same soname
# (docs/abi.md) reaches it. Where LIBDIR is one of the loader's default directories the run path is
# left out (the loader already looks there, and distributions refuse needless run paths); PC_RPATH=0
# leaves it out anywhere.
PC_REQUIRES := $(strip $(CJSON_PC) $(GSL_PC))
PC_LIBS_DEPS := $(strip $(if $(CJSON_PC),,-lcjson) $(if $(GSL_PC),,-lgsl -lgslcblas)) -lm -lpthread
LOADER_DIRS := /lib /lib64 /usr/lib /usr/lib64 /lib/$(shell $(CC) -dumpmachine 2>/dev/null) \
               /usr/lib/$(shell $(CC) -dumpmachine 2>/dev/null)
PC_RPATH    ?= $(if $(filter $(patsubst %/,%,$(LIBDIR)),$(LOADER_DIRS)),0,1)
pc_write = printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(call pc_dir,$(LIBDIR))' 'includedir=$(call pc_dir,$(INCLUDEDIR))' \
    '' 'Name: $(1)' 'Description: $(2)' 'Version: $(VERSION)' 'Requires.private: $(PC_REQUIRES)' \
    'Libs: -L$${libdir}$(if $(filter 1,$(PC_RPATH)), -Wl$(comma)-rpath$(comma)$${libdir}) $(strip $(3))' \
    'Libs.private: $(strip $(4))' 'Cflags: -I$${includedir}$(if $(strip $(5)), $(strip $(5)))' > $@.tmp && mv $@.tmp $@

$(PC_FILE): FORCE
	@mkdir -p $(dir $@)
	$(Q)$(call pc_write,duet,GEMM + collective split prediction: cost model and simulator and calibration and tuner,\
	    -lduet,$(PC_LIBS_DEPS))

install: $(DUET) $(SHLIB) $(LIB) $(PC_FILE)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/duet $(DESTDIR)$(PKGCONFIGDIR) \
	    $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 755 $(DUET) $(DESTDIR)$(BINDIR)/duet
	$(INSTALL) -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	$(call so_links,$(DESTDIR)$(LIBDIR),$(notdir $(SHLIB)),$(SONAME))
	$(INSTALL) -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/duet/
	$(INSTALL) -m 644 $(PC_FILE) $(DESTDIR)$(PKGCONFIGDIR)/duet.pc
	$(INSTALL) -m 644 LICENSE README.md CHANGELOG.md $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/duet $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	    $(DESTDIR)$(LIBDIR)/libduet.so $(DESTDIR)$(LIBDIR)/libduet.a $(DESTDIR)$(PKGCONFIGDIR)/duet.pc \
	    $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(PUBLIC_HEADERS:include/%=%)) \
	    $(addprefix $(DESTDIR)$(DOCDIR)/,LICENSE README.md CHANGELOG.md)
	-rmdir $(DESTDIR)$(INCLUDEDIR)/duet $(DESTDIR)$(DOCDIR) 2>/dev/null

# Installs into a temporary prefix, checks the shared library's soname and exports and the CLI's
# version, and builds and runs examples/ against the installed copy through pkg-config
# (tools/check_install.sh; part of make test).
check-install: $(DUET) $(SHLIB) $(LIB)
	$(Q)MAKE="$(MAKE)" CC="$(CC)" ./tools/check_install.sh

# Every public struct's layout is the one recorded for the ABI version in tools/abi_layout.txt, and the
# check catches a planted change (tools/check_abi.py; docs/abi.md; part of make test).
check-abi:
	$(Q)CC="$(CC)" python3 tools/check_abi.py
	$(Q)CC="$(CC)" python3 tools/check_abi.py --self-test

# Where each dependency's flags come from: pkg-config (name found) or the Debian fallback.
config:
	@echo "PKG_CONFIG=$(PKG_CONFIG) PKG_CONFIG_PATH=$(PKG_CONFIG_PATH)"
	@echo "cJSON     ($(if $(CJSON_PC),pkg-config libcjson,fallback)): $(CJSON_CFLAGS) $(CJSON_LIBS)"
	@echo "GSL       ($(if $(GSL_PC),pkg-config gsl,fallback)): $(GSL_CFLAGS) $(GSL_LIBS)"
	@echo "Criterion ($(if $(CRITERION_PC),pkg-config criterion,fallback)): $(CRITERION_CFLAGS) $(CRITERION_LIBS)"
	@echo "compile:   $(CC) $(FINAL_CFLAGS)"
	@echo "link:      $(LDFLAGS) $(LDLIBS_BASE) $(LDLIBS_CAL)"
	@echo "version:   $(VERSION) (soname $(SONAME)); install: PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) LIBDIR=$(LIBDIR)"

# Installs what is missing (apt-get, as root), or prints the command and stops. A dependency that
# pkg-config finds counts as present, whatever installed it (tools/deps.sh).
deps:
	$(Q)./tools/deps.sh

# `make test` and `make demo` are the two set-up commands of README: each installs what is
# missing first. Tests run from the repository root so they find tests/data and the golden file.
# Then the install check (not under SAN=1: a sanitized libduet.so would need the sanitizer runtime
# preloaded into the example), every repository path the documentation and the sources cite must
# exist (tools/check_doc_paths.py, whose self-test plants stale citations it must catch), no public
# struct may change without an ABI version bump (make check-abi), and the mutation runner must leave
# no process behind (tests/mutate/test_mutate.py).
test: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(TESTBIN) $(SHLIB)
	$(Q)DUET_BIN=$(DUET) ./$(TESTBIN) -j$(JOBS) $(TEST_ARGS)
	$(Q)$(PYTHON_TESTS)
	$(Q)$(if $(filter 1,$(SAN)),,$(MAKE) --no-print-directory check-install)
	$(Q)python3 tools/check_doc_paths.py
	$(Q)python3 tools/check_doc_paths.py --self-test
	$(Q)$(MAKE) --no-print-directory check-abi
	$(Q)python3 tests/mutate/test_mutate.py -q

# The Python package (python/duet_overlap, ctypes over the shared library) with the system python3's unittest.
# Under SAN=1 the library needs the sanitizer runtime loaded first, which python3 is not built with.
ifeq ($(SAN),1)
PYTHON_TESTS := echo "  PYTHON  tests/python skipped under SAN=1 (the sanitizer runtime must load first)"
else
PYTHON_TESTS := DUET_BIN=$(DUET) DUET_LIBRARY=$(abspath $(SHLIB)) python3 -m unittest discover -s tests/python \
	-t tests/python
endif

sanitize:
	$(Q)$(MAKE) --no-print-directory test SAN=1

valgrind: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(DUET)
	valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite $(DUET) plan --hw h200 \
	    --collective all_gather --gemm 8192x8192x8192 --comm 2048x4096 --world 2 --json > /dev/null

# Line and branch coverage of the CPU test suite per layer (tools/coverage.py over gcovr, which
# `tools/deps.sh cov` installs): the library, the CLI and the tests built with gcc --coverage at -O0
# into build-cov/, the Criterion suite run once (the CLI tests run build-cov/duet, so the CLI counts
# too), then one row per layer. COVERAGE_MIN=85 fails when model, sim, calibrate or tune is below it.
COV_BUILD    := build-cov
COVERAGE_MIN ?=
coverage:
	$(Q)./tools/deps.sh cpu cov
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) BUILD=$(COV_BUILD) OPT=-O0 CFLAGS="$(CFLAGS) --coverage" \
	    LDFLAGS="$(LDFLAGS) --coverage" $(COV_BUILD)/duet-tests
	$(Q)find $(COV_BUILD) -name '*.gcda' -delete
	$(Q)DUET_BIN=$(COV_BUILD)/duet ./$(COV_BUILD)/duet-tests -j$(JOBS) $(TEST_ARGS)
	$(Q)python3 tools/coverage.py $(COV_BUILD) $(if $(COVERAGE_MIN),--min-branch $(COVERAGE_MIN))

# Mutation testing: every mutant of tests/mutate/mutants.txt built in a scratch copy of the tree
# (build/mutate/tree; the working tree is never written) and tested with --fail-fast under a time
# limit. MUTATE_ARGS passes options, e.g. MUTATE_ARGS="--only cost-*" (tests/mutate/mutate.py -h).
mutate: deps
	$(Q)python3 tests/mutate/mutate.py --jobs $(JOBS) $(MUTATE_ARGS)

# libFuzzer harnesses (tests/fuzz/, docs/testing.md): the library (calibrate/ included), cli/common.c
# and cli/bench_plot.c built with clang under ASan + UBSan (float-cast-overflow included), one binary per harness. `make fuzz` runs each
# for FUZZ_SECONDS from its committed seeds (new inputs go to build-fuzz/corpus/, findings to
# build-fuzz/artifacts/); `make fuzz-smoke` (CI) runs each on its seeds only (each seed once: the same
# inputs every time, so CI cannot fail by chance) and keeps nothing.
FUZZ_CC            ?= clang
FUZZ_BUILD         := build-fuzz
FUZZ_SECONDS       ?= 60
FUZZ_SAN           := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined,float-cast-overflow
FUZZ_CFLAGS        := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O1 -g -fno-omit-frame-pointer $(WARN) \
                      -Iinclude -I. -MMD -MP $(CJSON_CFLAGS) $(GSL_CFLAGS) $(FUZZ_SAN)
FUZZ_HARNESSES     := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJS          := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o) $(CAL_SRCS:%.c=$(FUZZ_BUILD)/%.o) $(FUZZ_BUILD)/cli/common.o \
                      $(FUZZ_BUILD)/cli/bench_plot.o
FUZZ_BINS          := $(FUZZ_HARNESSES:%=$(FUZZ_BUILD)/%)
# Closes the harness's stdout and stderr (the CLI parser's usage errors); libFuzzer keeps its own.
FUZZ_RUN_FLAGS     := -close_fd_mask=3 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(FUZZ_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS_BASE) $(LDLIBS_CAL)

# The objects are prerequisites of a pattern rule only: without this, make deletes them as
# intermediate files after linking, and every fuzz-build compiles the whole library again.
.SECONDARY: $(FUZZ_OBJS)

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
	$(Q)python3 tools/check_function_length.py --max 60 cli

clean:
	rm -rf build build-san build-cov build-gpu build-check-* build-fuzz demo

help:
	@echo "duet make targets"
	@echo "  make              build build/libduet.a, build/libduet.so.$(VERSION) and build/duet"
	@echo "  make shared       build only the shared library (soname $(SONAME))"
	@echo "  make install      install CLI, libraries, headers, duet.pc (PREFIX=$(PREFIX) DESTDIR=, LIBDIR=...)"
	@echo "  make check-install  install into a temporary prefix, build and run examples/ from it (in make test)"
	@echo "  make check-abi    no public struct changed without an ABI version bump (docs/abi.md; in make test)"
	@echo "  make config       print each dependency's flags and whether pkg-config found it"
	@echo "  make test         install missing packages (as root), build and run the CPU test suite, check the docs' paths"
	@echo "  make demo         install missing packages, build, and write demo/*.svg and demo/*.json"
	@echo "  make sanitize     the test suite under AddressSanitizer + UBSan (build-san/)"
	@echo "  make valgrind     run 'duet plan' under valgrind"
	@echo "  make mutate       mutation testing: build and test each mutant of tests/mutate/mutants.txt"
	@echo "  make coverage     line and branch coverage of the test suite per layer (gcovr; COVERAGE_MIN=85 to enforce)"

	@echo "  make fuzz         build the libFuzzer harnesses (clang) and run each FUZZ_SECONDS (default 60)"
	@echo "  make fuzz-smoke   run each harness once on each of its committed seeds (CI)"
	@echo "  make bench-sim    simulator speed benchmark (prints events per second)"
	@echo "  make gpu          build the GPU backend and a GPU-enabled duet (GPU=cuda|hip, auto-detected)"
	@echo "  make check-cuda   compile the backend with nvcc (sm_90a), no GPU needed"
	@echo "  make check-amd    compile and link the backend for gfx90a (hipcc) and gfx942 (clang 19), no GPU needed"
	@echo "  make test-gpu     GPU tests under mpirun (needs GPUs)"
	@echo "  make format       clang-format the sources"
	@echo "  make clean        remove build outputs"
	@echo "knobs: CC=$(CC) CPPFLAGS=$(CPPFLAGS) CFLAGS=$(CFLAGS) LDFLAGS=$(LDFLAGS) SAN=$(SAN) WERROR=$(WERROR) V=$(V) JOBS=$(JOBS) OPT=$(OPT)"

-include backend/backend.mk
-include cli/gpu/gpu.mk

-include $(LIB_OBJS:.o=.d) $(CAL_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(TEST_BACKEND_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d)
