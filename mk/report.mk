# mk/report.mk - `make report`: one self-contained HTML page of a run
# (report/run_report.sh): the training curves of a log.jsonl and each
# workflow's data funnel, sequence lengths, masked and [UNK] shares.

REPORT_OPTS ?=

## report: an HTML page of a training run and/or workflow (RUN=DIR, OUT=FILE.html, default RUN/report.html; REPORT_OPTS)
report: | $(call prog,hdf5_check) $(call prog,text_filter)
	$(if $(RUN),,$(error make report needs RUN=DIR: a training output directory, a workflow or a WORKDIR))
	$(Q)report/run_report.sh -b $(BIN) -f -o $(or $(OUT),$(RUN)/report.html) $(REPORT_OPTS) $(RUN)
	@echo "report: $(or $(OUT),$(RUN)/report.html)"
.PHONY: report
