# wikibert - Wikipedia dumps to BERT pretraining data, as Unix filters.
#
#   make            build every program into bin/
#   make test       build and run every test; ends with "N passed, N failed"
#   make demo       run both workflows (Hungarian, English) on the samples
#   make hu, make en   the workflows on a real dump (pipelines/*.mk)
#   make list       list the documented targets
.DELETE_ON_ERROR:
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
Q := $(if $(filter 1,$(V)),,@)

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS  += -std=gnu11 $(WARN) -pthread -fopenmp -I.
# Data files (abbreviation lists, language profiles) are found here unless
# WIKIBERT_DATA names another directory.
DATADIR ?= $(abspath data)
CFLAGS  += -DWB_DATADIR='"$(DATADIR)"'
LDFLAGS += -pthread -fopenmp
SAN     ?=
CFLAGS  += $(SAN)
LDFLAGS += $(SAN)

BUILD   := build$(if $(SAN),-san)
BIN     := bin

# A program is <area>/<name>.c holding main() (found by its line `int main`,
# so the list cannot drift); every other .c file of an area is library code,
# archived into libwikibert.a for programs and tests.
AREAS      := prep tokenize vocab shard hdf5gen train
PROG_SRC   := $(shell grep -lw '^int main' $(AREAS:%=%/*.c))
PROG_NAMES := $(notdir $(PROG_SRC:.c=))
PROGRAMS   := $(PROG_NAMES)
LIB_SRC    := $(wildcard common/*.c) $(filter-out $(PROG_SRC),$(wildcard $(AREAS:%=%/*.c)))
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o)
# HDF5 lives in Debian's serial subdirectories; found when used, after mk/deps.sh
# may have installed it ($(shell), not $(wildcard): make caches directory
# listings read before the install).
# (With DEVLIBS, the bundle's alone: the system's are not looked for.)
HDF5_INC    = $(if $(DEVLIBS),,$(shell ls -d /usr/include/hdf5/serial 2>/dev/null))
HDF5_LIB    = $(if $(DEVLIBS),,$(firstword $(shell ls -d /usr/lib/*/hdf5/serial 2>/dev/null)))
CFLAGS     += $(if $(HDF5_INC),-I$(HDF5_INC))
LIBS        = -lbz2 -lexpat -lpcre2-8 -licuuc -licudata $(if $(HDF5_LIB),-L$(HDF5_LIB)) -lhdf5 -ldeflate -lm
# glibc's vector math (libmvec: exp and erf 8 lanes at a time for the CPU
# trainer's AVX2 kernels, train/cpukern.c); without it those use libm.
# Probed once, on first use by a recipe: a make that builds nothing (the
# pipelines' stages) runs no compiler.
MVEC        = $(eval MVEC := $(shell printf 'int main(void){return 0;}' | $(CC) -x c - -lmvec -o /dev/null 2>/dev/null && echo -lmvec))$(MVEC)
LIBS       += $(MVEC)
CFLAGS     += $(if $(MVEC),-DWB_HAVE_MVEC)
UNIT_TESTS := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test_*.c))
# Test drivers (tests/unit/*.c not named test_*): built for the CLI tests, not run as suites.
TEST_TOOLS := $(patsubst tests/unit/%.c,%,$(filter-out $(wildcard tests/unit/test_*.c),$(wildcard tests/unit/*.c)))

DEPS_OK := $(BUILD)/.deps-ok

# DEVLIBS=DIR: headers and libraries from a bundle of mk/devlibs.sh, for a
# machine without the -dev packages and without a package mirror.
# DEVLIBS_RPATH: where the programs look for the bundle's libraries when
# they run (default DIR/lib; bench/gpu_prep.sh gives a path relative to
# the program, \$$ORIGIN/..., for programs built here and run elsewhere).
ifneq ($(DEVLIBS),)
DEVLIBS_ABS := $(abspath $(DEVLIBS))
DEVLIBS_RPATH ?= $(DEVLIBS_ABS)/lib
CFLAGS  += -I$(DEVLIBS_ABS)/include
LDFLAGS += -L$(DEVLIBS_ABS)/lib -Wl,--disable-new-dtags,-rpath,$(DEVLIBS_RPATH) # RPATH: for their own dependencies too
endif

# ---- train_bert: the CUDA trainer (train/cuda/), built when mk/cuda.sh finds
# nvcc with cuBLAS; NCCL and MPI are optional (found by test compiles).
CUDA_MK := $(BUILD)/cuda.mk
CUDA_LIBS := -lcublas -lcudart
ifeq ($(filter clean list print-config format,$(MAKECMDGOALS)),)
-include $(CUDA_MK)
endif

## all: build every program into bin/ (train_bert where nvcc is found)
all: $(PROGRAMS:%=$(BIN)/%) $(if $(NVCC),$(BIN)/train_bert)

$(CUDA_MK): mk/cuda.sh
	$(Q)mkdir -p $(@D)
	$(Q)mk/cuda.sh $(CC) > $@.tmp && mv $@.tmp $@
# sm_80 (A100), sm_90 (H100/H200) and PTX for newer GPUs
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -std=c++17 $(CUDA_ARCH) -Xcompiler -Wall,-Wno-unused-parameter
CUDA_OBJ := $(BUILD)/train/cuda/train_bert.o $(BUILD)/train/cuda/comm.o $(BUILD)/train/cuda/backend.o
# backend.cu is one translation unit: it includes the header-only modules
CUDA_CUH := $(addprefix train/cuda/,profiler.cuh reduce.cuh forward.cuh backward.cuh attention.cuh optimizer.cuh)

$(BUILD)/train/cuda/backend.o: train/cuda/backend.cu $(CUDA_CUH) $(DEPS_OK) $(CUDA_MK)
	$(Q)mkdir -p $(@D)
	@echo "  NVCC $<"
	$(Q)$(NVCC) $(NVCCFLAGS) -I. -MMD -MP -c $< -o $@

$(BUILD)/train/cuda/%.o: train/cuda/%.c $(DEPS_OK) $(CUDA_MK)
	$(Q)mkdir -p $(@D)
	@echo "  CC  $<"
	$(Q)$(CC) $(CFLAGS) -isystem $(CUDA_INC) $(NCCL_FLAGS) $(MPI_FLAGS) -MMD -MP -c $< -o $@

$(BIN)/train_bert: $(CUDA_OBJ) $(BUILD)/libwikibert.a
	$(Q)mkdir -p $(@D)
	@echo "  LD  $@"
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LIBS) -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) $(CUDA_LIBS) $(NCCL_LIBS) \
	  $(MPI_LIBS) -lstdc++

## gpu-check: train_bert on this machine's GPU against the CPU reference (skips without a GPU)
gpu-check: all $(BUILD)/tests/check_gpu
	$(Q)tests/gpu/check.sh $(BUILD)/tests $(BIN)

$(BUILD)/tests/check_gpu: $(BUILD)/tests/gpu/check_gpu.o $(filter-out %/train_bert.o,$(CUDA_OBJ)) $(BUILD)/libwikibert.a
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LIBS) -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) $(CUDA_LIBS) $(NCCL_LIBS) \
	  $(MPI_LIBS) -lstdc++

# the fused attention kernels alone (no cuBLAS), for compute-sanitizer's
# racecheck and initcheck of them on a GPU (bench/gpu_first.sh 3)
$(BUILD)/tests/attn_kernels: tests/gpu/attn_kernels.cu $(CUDA_CUH) $(DEPS_OK) $(CUDA_MK)
	$(Q)mkdir -p $(@D)
	@echo "  NVCC $<"
	$(Q)$(NVCC) $(NVCCFLAGS) -I. $< -o $@

$(BUILD)/tests/gpu/%.o: tests/gpu/%.c $(DEPS_OK)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The CUDA backend once more, compiled by the C++ compiler against
# train/cuda/emu/cuda_emu.h (CUDA's execution model and cuBLAS's semantics on the
# CPU): make test runs its kernels and matmul calls on any machine
# (test_gpu_emu: check_gpu against the reference file; train_bert_emu:
# the trainer, for tests/cli/train_bert_emu.sh). Ranks meet through
# train/cuda/emu/comm_emu.h (shared-memory collectives) instead of NCCL.
CXX ?= g++
EMU_CXXFLAGS := -std=c++17 -O2 -g -x c++ -DWB_CUDA_EMU -I. -Wall -Wno-unused-parameter
EMU_OBJ := $(BUILD)/tests/emu/backend.o $(BUILD)/tests/emu/comm.o
$(BUILD)/tests/emu/backend.o: train/cuda/backend.cu $(CUDA_CUH) train/cuda/emu/cuda_emu.h $(DEPS_OK)
	$(Q)mkdir -p $(@D)
	@echo "  CXX $< (CPU emulation, for the tests)"
	$(Q)$(CXX) $(EMU_CXXFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/tests/emu/%.o: train/cuda/%.c $(DEPS_OK)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DWB_COMM_EMU -MMD -MP -c $< -o $@
$(BUILD)/tests/test_gpu_emu: $(BUILD)/tests/gpu/check_gpu.o $(EMU_OBJ) $(BUILD)/libwikibert.a
	$(Q)$(CXX) $(LDFLAGS) $^ -o $@ $(LIBS)
# ... and the fused attention kernels alone, against a reference on the host
$(BUILD)/tests/test_attn_emu: tests/gpu/attn_kernels.cu $(CUDA_CUH) train/cuda/emu/cuda_emu.h $(DEPS_OK)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) $(EMU_CXXFLAGS) $< -o $@ -pthread
$(BUILD)/tests/train_bert_emu: $(BUILD)/tests/emu/train_bert.o $(EMU_OBJ) $(BUILD)/libwikibert.a
	$(Q)$(CXX) $(LDFLAGS) $^ -o $@ $(LIBS)
# ... and once more computing as a GPU may, differently from the CPU and from
# the build above: multiply-adds contracted to FMAs (-ffp-contract=fast, as
# nvcc contracts by default; with -mfma where this CPU has FMA, else it has
# no effect) and other sum orders (WB_EMU_ALT_ORDER: the emulated matmuls
# add k in another order, the warp sums run their butterfly the other way):
# train_bert_emu_alt, for tests/cli/compare_alt.sh (train_bert against
# train_bert_cpu within the derived tolerances of tests/gpu/compare_cpu.sh).
EMU_FMA := $(shell grep -qw fma /proc/cpuinfo 2>/dev/null && echo -mfma)
$(BUILD)/tests/emu_alt/backend.o: train/cuda/backend.cu $(CUDA_CUH) train/cuda/emu/cuda_emu.h $(DEPS_OK)
	$(Q)mkdir -p $(@D)
	@echo "  CXX $< (CPU emulation, FMA and other sum orders, for the tests)"
	$(Q)$(CXX) $(EMU_CXXFLAGS) -DWB_EMU_ALT_ORDER -ffp-contract=fast $(EMU_FMA) -MMD -MP -c $< -o $@
$(BUILD)/tests/train_bert_emu_alt: $(BUILD)/tests/emu/train_bert.o $(BUILD)/tests/emu_alt/backend.o \
                                   $(BUILD)/tests/emu/comm.o $(BUILD)/libwikibert.a
	$(Q)$(CXX) $(LDFLAGS) $^ -o $@ $(LIBS)

$(DEPS_OK):
	$(Q)mkdir -p $(@D)
	$(Q)$(if $(DEVLIBS),echo "deps: from $(DEVLIBS)",mk/deps.sh $(CC))
	$(Q)touch $@

# the trainer's kernels: -O3 vectorises their loops (the order of every sum is
# fixed in the code, so results stay the same for any thread count)
$(BUILD)/train/%.o: OPT := -O3

$(BUILD)/%.o: %.c $(DEPS_OK)
	$(Q)mkdir -p $(@D)
	@echo "  CC  $<"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libwikibert.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

define program_rule
$(BIN)/%: $(BUILD)/$(1)/%.o $(BUILD)/libwikibert.a
	$(Q)mkdir -p $$(@D)
	@echo "  LD  $$@"
	$(Q)$(CC) $$(LDFLAGS) $$^ -o $$@ $$(LIBS)
endef
$(foreach a,$(AREAS),$(eval $(call program_rule,$(a))))

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libwikibert.a
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LIBS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

$(BUILD)/tests/inject.so: tests/inject/inject.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -Wall -shared -fPIC $< -o $@ -ldl

## test: build and run every unit and CLI test (the CI gate)
# (a test program whose source is gone, left in the build by an older tree,
# is removed first: tests/run.sh runs every build/tests/test_*)
test: all $(UNIT_TESTS:%=$(BUILD)/tests/%) $(TEST_TOOLS:%=$(BUILD)/tests/%) $(BUILD)/tests/inject.so $(BUILD)/.testdeps-tried \
      $(BUILD)/tests/test_gpu_emu $(BUILD)/tests/test_attn_emu $(BUILD)/tests/train_bert_emu \
      $(BUILD)/tests/train_bert_emu_alt
	$(Q)for t in $(BUILD)/tests/test_*; do case " $(UNIT_TESTS) test_gpu_emu test_attn_emu " in \
	  *" $${t##*/} "*) ;; *) rm -f "$$t";; esac; done
	$(Q)tests/run.sh $(BUILD)/tests $(BIN)

# Optional packages for the comparison tests: tried once, never fatal.
$(BUILD)/.testdeps-tried:
	$(Q)mkdir -p $(@D)
	$(Q)mk/testdeps.sh
	$(Q)touch $@

## check: same as test
check: test

## asan: rebuild with AddressSanitizer + UBSan and run the tests
asan:
	$(Q)$(MAKE) --no-print-directory test SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" BIN=build-san/bin OPT=-O1

## ubsan: same as asan (both sanitizers run together)
ubsan: asan

# The workflows: hu.mk (HILBERT's Hungarian sequence) and en.mk (NVIDIA
# bertPrep's English one), sharing common.mk. en.mk comes first: hu.mk
# keeps its directory apart from EN_DIR.
include pipelines/common.mk pipelines/en.mk pipelines/hu.mk pipelines/pretrain.mk
include mk/install.mk
include mk/report.mk

## demo: both workflows (hu, en) on the samples in tests/data into out/demo, hdf5_check's statistics, then make hu-pretrain of a tiny BERT for 200 steps
DEMO_VARS := WORKDIR=out/demo HU_DUMP=tests/data/huwiki-berlin.xml.bz2 EN_DUMP=tests/data/enwiki-206.xml.bz2 \
             HU_VOCAB_SIZE=1000 HU_SHARDS=1 EN_TRAIN_SHARDS=4 EN_TEST_SHARDS=2 \
             MODEL=tiny STEPS1=160 BATCH1=16 MICRO1=16 STEPS2=40 BATCH2=8 MICRO2=8 CKPT_EVERY=50
demo: all
	$(Q)pipelines/demo.sh $(MAKE) --no-print-directory $(DEMO_VARS)

## bench: run every benchmark in bench/ (needs network for the peers)
BENCHES := prep_speed prep_memory long_line strip_fidelity bz2par_bench sent_split text_filter langid wp_tokenize hdf5gen_compare shard_split vocab_train vocab_unk wp_train train_cpu
bench: all
	$(Q)for b in $(BENCHES); do echo "== bench/$$b.sh"; bash bench/$$b.sh; done

## print-config: show compiler, flags and detected libraries
print-config:
	@echo "CC=$(CC)"; echo "CFLAGS=$(CFLAGS)"; echo "LIBS=$(LIBS)"
	@mk/deps.sh $(CC) && echo "libraries: ✓ bz2 ✓ expat ✓ pcre2 ✓ icu ✓ hdf5 ✓ libdeflate"
	@mk/cuda.sh $(CC) >/dev/null

## format: reformat every C, CUDA and header file with clang-format (make test checks it)
format:
	mk/format-files.sh | xargs clang-format -i

## list: list the documented targets
list:
	@grep -h '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'

## clean: remove build outputs
clean:
	rm -rf build build-san bin out

# ---- fuzzing (tests/fuzz/README.md): one program per entry point
# tests/fuzz/fuzz_<target>.c, linked with libFuzzer (clang) or with the plain
# mutation driver tests/fuzz/driver.c. make test replays tests/fuzz/corpus/
# and tests/fuzz/crashes/ through the plain drivers of this build.
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CC      ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_ENGINE  ?= auto
SECONDS      ?= 60
test: $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz_%)
$(BUILD)/tests/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/driver.o $(BUILD)/libwikibert.a
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LIBS)
$(BUILD)/fuzzer_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/libwikibert.a
	@echo "  LD  $@ (libFuzzer)"
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer $^ -o $@ $(LIBS)
build-fuzz/seeds/.made: tests/fuzz/seeds.sh $(PROGRAMS:%=$(BIN)/%)
	$(Q)tests/fuzz/seeds.sh $(BIN) $(@D) && touch $@

## fuzz: every tests/fuzz target under ASan/UBSan for SECONDS (60) each; libFuzzer where clang has it (FUZZ_ENGINE=driver: the plain driver)
fuzz: all build-fuzz/seeds/.made
	$(Q)if [ "$(FUZZ_ENGINE)" != driver ] && tests/fuzz/engine.sh $(FUZZ_CC); then \
	  $(MAKE) --no-print-directory CC=$(FUZZ_CC) BUILD=build-fuzz/lf SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" OPT=-O1 \
	    $(FUZZ_TARGETS:%=build-fuzz/lf/fuzzer_%) && \
	  tests/fuzz/run.sh libfuzzer build-fuzz/lf/fuzzer_ $(SECONDS) $(FUZZ_TARGETS); \
	else \
	  $(MAKE) --no-print-directory SAN="$(FUZZ_SAN)" OPT=-O1 $(FUZZ_TARGETS:%=build-san/tests/fuzz_%) && \
	  tests/fuzz/run.sh driver build-san/tests/fuzz_ $(SECONDS) $(FUZZ_TARGETS); \
	fi
clean: fuzz-clean
fuzz-clean:
	rm -rf build-fuzz
.PHONY: fuzz fuzz-clean

.PHONY: all test check asan ubsan demo bench print-config format list clean gpu-check
.SECONDARY:
