# pipelines/pretrain.mk - BERT pretraining on a workflow's HDF5 files as
# make targets: hu-pretrain and en-pretrain run pipelines/pretrain.sh
# (NVIDIA's two phases, a Hugging Face model after each, the report page)
# on the workflow's phase-1 and phase-2 files and its vocabulary, in
# HU_DIR/bert_MODEL and EN_DIR/bert_MODEL (HU_PRETRAIN_DIR, EN_PRETRAIN_DIR).
# The script holds the defaults and says which trainer it runs and why;
# make passes the variables the user gave (command line or environment).

PRETRAIN_VARS := MODEL CONFIG TRAINER GPUS STEPS1 BATCH1 MICRO1 LR1 WARMUP1 STEPS2 BATCH2 MICRO2 LR2 \
  WARMUP2 CKPT_EVERY LOG_FREQ TRAIN_OPTS TRAIN_OPTS1 TRAIN_OPTS2 TRAIN_BERT TRAIN_BERT_CPU REPORT
# the given ones as VAR='value' (TRAIN_SEED is the trainer's SEED: make's SEED is hdf5gen's)
pretrain_args = $(strip $(foreach v,$(PRETRAIN_VARS),$(if $(filter-out undefined default,$(origin $(v))),$(v)='$($(v))')) \
  $(if $(TRAIN_SEED),SEED='$(TRAIN_SEED)'))
# $(call pretrain_recipe,H5_1,H5_2,VOCAB,LOWER,STRIP,RUN_DIR,WORKFLOW_DIR)
pretrain_recipe = pipelines/pretrain.sh BIN='$(BIN)' DATA1='$(1)' DATA2='$(2)' VOCAB='$(3)' LOWER=$(4) \
  STRIP_ACCENTS=$(5) $(if $(6),RUN='$(6)',RUN_IN='$(7)') SEQ1=$(SEQ1) PRED1=$(PRED1) SEQ2=$(SEQ2) PRED2=$(PRED2) \
  WORKFLOW='$(7)' $(pretrain_args)
PRETRAIN_PROGS = $(call prog,train_bert_cpu) $(if $(NVCC),$(call prog,train_bert)) $(call prog,hdf5_check) \
  $(call prog,text_filter)

## hu-pretrain: BERT pretraining on hu's HDF5 files, NVIDIA's phase 1 then phase 2, a Hugging Face model after each, the report (MODEL=tiny|mini|small|base|large, STEPS1, BATCH1, ...: pipelines/README.md)
hu-pretrain: hu-hdf5 | $(PRETRAIN_PROGS)
	$(call pretrain_recipe,$(HU_H5_1)/textcorpus,$(HU_H5_2)/textcorpus,$(HU_VOCAB),$(HU_LOWER),$(HU_STRIP_ACCENTS),$(HU_PRETRAIN_DIR),$(HU_DIR))

## en-pretrain: the same on en's HDF5 files and EN_VOCAB (EN_DIR/bert_MODEL)
en-pretrain: en-hdf5 | $(PRETRAIN_PROGS)
	$(call pretrain_recipe,$(EN_H5_1)/$(EN_DATASET),$(EN_H5_2)/$(EN_DATASET),$(EN_VOCAB),$(EN_LOWER),$(EN_LOWER),$(EN_PRETRAIN_DIR),$(EN_DIR))

.PHONY: hu-pretrain en-pretrain
