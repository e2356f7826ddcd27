# pipelines/common.mk - what the Hungarian (hu.mk) and English (en.mk)
# workflows share: parameters with the workflows' defaults, the HDF5 stage
# and the download.
#
# A stage is a target with its own output; its recipe is a pipe of our
# filters run by bash with -e -u -o pipefail (the top Makefile's
# .SHELLFLAGS), every program writes with an atomic -o,
# and .DELETE_ON_ERROR (top Makefile) removes a target whose recipe failed,
# so a stage killed midway and rerun gives the bytes of an uninterrupted
# run. Directory outputs (shards, HDF5) are built in DIR.tmp and renamed;
# DIR/.complete is the target make sees; a failure or a signal removes
# DIR.tmp (pipelines/dir_stage.sh).

WORKDIR   ?= work
DUMP_DATE ?= latest
MIRROR    ?= https://dumps.wikimedia.org
SEED      ?= 12345
DUPE      ?= 5
MLM_PROB  ?= 0.15
SEQ1      ?= 128
PRED1     ?= 20
SEQ2      ?= 512
PRED2     ?= 80
# the CPUs this make may use: affinity (taskset, Slurm) and cgroup quota
JOBS      ?= $(shell mk/ncpus.sh 2>/dev/null || nproc 2>/dev/null || echo 1)

# ---- the variables, checked as make reads the workflows ----
# A value that is empty, holds whitespace or a character that the shell or
# make reads as syntax, or resolves to / would put a stage somewhere other
# than meant (an empty HU_DIR gave `rm -rf /formatted_text`; a WORKDIR with a
# space ran `rm -rf` on its first word). Such a value stops make with an
# error naming the variable, before any recipe runs. Goals that run no
# workflow (building, testing, installing, cleaning) are not held up.
WB_NO_WORKFLOW := all test check asan ubsan clean fuzz fuzz-clean format list print-config \
                  install uninstall bench gpu-check report demo
wb_checked := $(if $(filter-out $(WB_NO_WORKFLOW),$(MAKECMDGOALS)),1)
wb_none :=
wb_space := $(wb_none) $(wb_none)
wb_tab := $(wb_none)	$(wb_none)
define wb_newline


endef
wb_hash := \#
# characters the recipes' shell or make's rules would read as syntax
wb_syntax := ' " \ ` $$ ; & | < > * ? [ ] { } ( ) $(wb_hash) % :
# $(call wb_flaws,TEXT): what is wrong with TEXT as part of a path (empty if nothing)
wb_flaws = $(strip $(if $(findstring $(wb_space),$(1))$(findstring $(wb_tab),$(1))$(findstring \
  $(wb_newline),$(1)),whitespace) $(foreach c,$(wb_syntax),$(if $(findstring $c,$(1)),'$c')))
# $(call wb_check,VAR,KIND): stop make when $(VAR) is unsafe. KIND is dir (a
# directory the workflow writes and removes below), file (an input) or
# word (a name or number that becomes part of a path: no '/').
wb_kind_dir := directory
wb_kind_file := file
wb_kind_word := name
wb_check = $(if $(wb_checked),$(call wb_check_,$(1),$(wb_kind_$(2)),$($(1))))
wb_check_ = $(if $(strip $(3)),,$(error $(1) is empty: the workflows need a $(2) here))$(if \
  $(call wb_flaws,$(3)),$(error $(1)='$(3)': $(call wb_flaws,$(3)) in a path; use a $(2) \
  without it))$(if $(filter name,$(2)),$(if $(findstring /,$(3)),$(error $(1)='$(3)': a name, \
  not a path (no '/'))),$(if $(filter /,$(abspath $(3)) $(realpath $(3))),$(error $(1)='$(3)' \
  is the filesystem root /: give the workflows a $(2) of their own)))
# $(call wb_check_url,VAR): a URL, which the recipe puts in double quotes
wb_check_url = $(if $(wb_checked),$(if $(strip $($(1))),,$(error $(1) is empty))$(if $(findstring \
  $(wb_space),$($(1)))$(findstring ",$($(1)))$(findstring $$,$($(1)))$(findstring `,$($(1)))$(findstring \
  \,$($(1))),$(error $(1)='$($(1))': whitespace, '"', '$$', '`' or '\' in a URL)))

$(call wb_check,WORKDIR,dir)
$(call wb_check,BIN,dir)
$(foreach v,DUMP_DATE SEED DUPE MLM_PROB SEQ1 PRED1 SEQ2 PRED2 JOBS,$(call wb_check,$(v),word))
$(call wb_check_url,MIRROR)
$(foreach v,DUMP VOCAB,$(if $($(v)),$(call wb_check,$(v),file)))
$(foreach v,SHARDS TEST_SHARDS VOCAB_SIZE,$(if $($(v)),$(call wb_check,$(v),word)))

# PRUNE=1: a stage's text (articles, sentences, the filtered text, the
# shards) is removed as soon as every stage that reads it is done, so the
# disk holds at most two stages' text at a time (pipelines/README.md).
# Make does not remake what was removed while the stages after it are up to
# date (.SECONDARY in the top Makefile); a stage that needs it again (a new
# dump, a touched vocabulary) remakes it from the dump.
PRUNE     ?= 0

# NOCACHE=1 (the default): the stages that read a file once, front to
# back (sent_split, text_filter, hdf5gen), drop it from the page cache as
# they go, and shard_split and hdf5gen drop each file they write once it is
# on disk, so that the page cache holds about one stage's text at a time
# instead of growing by every file written (common/pagecache.h; the files
# are the same).
# NOCACHE=0: the kernel's default, every file cached.
NOCACHE   ?= 1
nocache = $(if $(filter 1,$(NOCACHE)),--nocache)

# $(call prune,PATH,READERS): a recipe line that, with PRUNE=1, removes
# PATH (a file or a directory) when each of READERS (the other targets that
# read it) exists; nothing without PRUNE=1.
prune = $(if $(filter 1,$(PRUNE)),$(if $(strip $(2)),for t in $(2); do [ -e "$$t" ] || exit 0; done; )rm -rf $(1))

# A stage needs its programs: $(call prog,NAME) is $(BIN)/NAME as an
# order-only prerequisite (built if missing); NOBUILD=1 uses $(BIN) as it is.
prog = $(if $(NOBUILD),,$(BIN)/$(1))

# bertPrep's HDF5 directory name: $(call h5_name,LOWER,SEQ,PRED)
h5_name = hdf5_lower_case_$(1)_seq_len_$(2)_max_pred_$(3)_masked_lm_prob_$(MLM_PROB)_random_seed_$(SEED)_dupe_factor_$(DUPE)

# $(call dir_stage,DIR,COMMAND): a directory stage (pipelines/dir_stage.sh).
# COMMAND writes into DIR.tmp; when it succeeds DIR.tmp/.complete is made
# and DIR.tmp renamed to DIR, when it fails or is stopped by a signal
# DIR.tmp is removed. An older DIR goes first, so a stage that fails never
# leaves a complete-looking directory behind. One recipe line, exec'd: the
# script is the process make signals, and it waits for COMMAND.
define dir_stage
exec pipelines/dir_stage.sh $(1) $(2)
endef

# $(call h5_recipe,SHARD_DIR,VOCAB,LOWER,SEQ,PRED,OUT_DIR,DATASET): every
# *.txt shard of SHARD_DIR -> OUT_DIR/DATASET/<shard>.hdf5.
h5_recipe = $(call dir_stage,$(6),$(BIN)/hdf5gen -q -j $(JOBS) $(nocache) --vocab $(2) --do-lower-case $(3) \
  --max-seq-length $(4) --max-predictions-per-seq $(5) --masked-lm-prob $(MLM_PROB) --random-seed $(SEED) \
  --dupe-factor $(DUPE) -o $(6).tmp/$(7)/ $(1)/*.txt)

# $(call shard_docs_warn,FILES): a warning on stderr for each shard file of
# fewer than two documents (blank-line separated): a random next sentence
# comes from another document of the shard, so it has none (hu-check,
# en-check; nothing where PRUNE=1 removed the shards)
define shard_docs_warn
for f in $(1); do [ -e "$$f" ] || exit 0; done; awk 'function w() { if (f != "" && d < 2) printf "check: warning: %s: %d document%s: no random next sentence (next-sentence prediction learns nothing): give each shard more documents\n", f, d, d == 1 ? "" : "s" >"/dev/stderr" } FNR == 1 { w(); f = FILENAME; d = 0; r = 0 } NF && !r { d++ } { r = NF > 0 } END { w() }' $(1)
endef

# $(call fetch_recipe,WIKI,KIND,OUT): the dump from $(MIRROR), resumable,
# checked against the dump's sha1sums.txt
define fetch_recipe
pipelines/fetch_dump.sh "$(MIRROR)" $(1) $(DUMP_DATE) $(2) $(3)
endef

# print-demo-dirs: the two workflows' directories and the Hungarian
# pretraining run's as shell assignments (for pipelines/demo.sh)
print-demo-dirs:
	@echo "HU_DIR='$(HU_DIR)' EN_DIR='$(EN_DIR)' HU_RUN='$(or $(HU_PRETRAIN_DIR),$(HU_DIR)/bert_$(MODEL))'"
.PHONY: print-demo-dirs
