# mk/report.mk - `make report`: one self-contained HTML page of a run
# (report/run_report.sh): the training curves of a log.jsonl and each
# workflow's data funnel, sequence lengths, masked and [UNK] shares.

REPORT_OPTS ?=

# The workflows' own dumps (their pages are counted) and the en workflow's
# vocabulary, where they are files: those of make demo when RUN is its
# WORKDIR (DEMO_VARS, Makefile), else this make's HU_DUMP, EN_DUMP and
# EN_VOCAB. REPORT_OPTS comes after them and may name others.
demo_var = $(patsubst $(1)=%,%,$(filter $(1)=%,$(DEMO_VARS)))
report_file_opt = $(if $(wildcard $(3)),--$(1) $(2)=$(3))
REPORT_AUTO = $(if $(filter $(abspath $(call demo_var,WORKDIR)),$(abspath $(RUN))), \
  $(call report_file_opt,dump,hu,$(call demo_var,HU_DUMP)) $(call report_file_opt,dump,en,$(call demo_var,EN_DUMP)), \
  $(call report_file_opt,dump,$(notdir $(HU_DIR)),$(HU_DUMP)) \
  $(call report_file_opt,dump,$(notdir $(EN_DIR)),$(EN_DUMP))) \
  $(call report_file_opt,vocab,$(notdir $(EN_DIR)),$(EN_VOCAB))

## report: an HTML page of a training run and/or workflow (RUN=DIR, OUT=FILE.html, default RUN/report.html; REPORT_OPTS)
report: | $(call prog,hdf5_check) $(call prog,text_filter)
	$(if $(RUN),,$(error make report needs RUN=DIR: a training output directory, a workflow or a WORKDIR))
	$(Q)report/run_report.sh -b $(BIN) -f -o $(or $(OUT),$(RUN)/report.html) $(strip $(REPORT_AUTO)) $(REPORT_OPTS) $(RUN)
	@echo "report: $(or $(OUT),$(RUN)/report.html)"
.PHONY: report
