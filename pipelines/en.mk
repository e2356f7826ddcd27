# pipelines/en.mk - NVIDIA's English workflow (bertPrep.py: download,
# text_formatting, sharding, create_hdf5_files) as make targets, one per
# stage, in bertPrep's directory layout under EN_DIR (= its
# $BERT_PREP_WORKING_DIR, default $(WORKDIR)/en), so NVIDIA's launch
# scripts find the HDF5 directories:
#
#   DUMP -> formatted_one_article_per_line/wikicorpus_en_one_article_per_line.txt
#                                              wiki_dump | wiki_strip -F lines
#        -> sentences/wikicorpus_en.txt        sent_split -l en (bertPrep runs NLTK
#                                              Punkt inside its sharding step)
#        -> sharded_training_shards_256_test_shards_256_fraction_0.1/wikicorpus_en/
#                                              shard_split -L nvidia (TextSharding.py)
#        -> hdf5_lower_case_1_seq_len_128_max_pred_20_..._dupe_factor_5/wikicorpus_en/
#        -> hdf5_lower_case_1_seq_len_512_max_pred_80_..._dupe_factor_5/wikicorpus_en/
#                                              hdf5gen (create_pretraining_data.py)
#
# The vocabulary is given (EN_VOCAB, default bert-base-uncased's vocab.txt
# in data/bert/), as in bertPrep; the workflow has no filter stage.

EN_DIR           ?= $(WORKDIR)/en
EN_WIKI          ?= enwiki
EN_DUMP_KIND     ?= pages-articles.xml.bz2
EN_DUMP_DEFAULT   = $(or $(DUMP),$(EN_DIR)/download/wikicorpus_en/wikicorpus_en.xml.bz2)
EN_DUMP          ?= $(EN_DUMP_DEFAULT)
EN_VOCAB_DEFAULT  = $(or $(VOCAB),data/bert/vocab.txt)
EN_VOCAB         ?= $(EN_VOCAB_DEFAULT)
EN_LOWER         ?= 1
EN_TRAIN_SHARDS  ?= $(or $(SHARDS),256)
EN_TEST_SHARDS   ?= $(or $(TEST_SHARDS),256)
EN_TEST_FRACTION ?= 0.1
EN_DATASET       ?= wikicorpus_en
# an empty EN_DUMP or EN_VOCAB on the command line means the default, as an empty DUMP or VOCAB does
$(foreach v,EN_DUMP EN_VOCAB,$(if $(strip $($(v))),,$(eval override $(v) = $(value $(v)_DEFAULT))))
$(call wb_check,EN_DIR,dir)
$(foreach v,EN_WIKI EN_DUMP_KIND EN_LOWER EN_TRAIN_SHARDS EN_TEST_SHARDS EN_TEST_FRACTION EN_DATASET,$(call \
  wb_check,$(v),word))
$(foreach v,EN_DUMP EN_VOCAB,$(call wb_check,$(v),file))

EN_TEXT  := $(EN_DIR)/formatted_one_article_per_line/$(EN_DATASET)_one_article_per_line.txt
EN_SENT  := $(EN_DIR)/sentences/$(EN_DATASET).txt
EN_SHARD := $(EN_DIR)/sharded_training_shards_$(EN_TRAIN_SHARDS)_test_shards_$(EN_TEST_SHARDS)_fraction_$(EN_TEST_FRACTION)
EN_H5_1  := $(EN_DIR)/$(call h5_name,$(EN_LOWER),$(SEQ1),$(PRED1))
EN_H5_2  := $(EN_DIR)/$(call h5_name,$(EN_LOWER),$(SEQ2),$(PRED2))


## en: NVIDIA's English workflow from DUMP to both HDF5 phases (EN_DIR, default work/en)
en: en-hdf5

## en-download: fetch enwiki's pages-articles dump (DUMP_DATE, MIRROR), resumable, sha1-checked
en-download: $(EN_DIR)/download/wikicorpus_en/wikicorpus_en.xml.bz2

## en-text: dump -> one article per line, bertPrep's formatted_one_article_per_line/
en-text: $(EN_TEXT)

## en-sentences: articles -> one sentence per line (sent_split -l en)
en-sentences: $(EN_SENT)

## en-shards: EN_TRAIN_SHARDS training + EN_TEST_SHARDS test shards, EN_TEST_FRACTION of the sentences for test
en-shards: $(EN_SHARD)/.complete

## en-hdf5: both HDF5 phases (en-hdf5-phase1: SEQ1/PRED1, en-hdf5-phase2: SEQ2/PRED2) with EN_VOCAB
en-hdf5: en-hdf5-phase1 en-hdf5-phase2
en-hdf5-phase1: $(EN_H5_1)/.complete
en-hdf5-phase2: $(EN_H5_2)/.complete

## en-check: hdf5_check statistics of the English HDF5 files (warnings as hu-check's)
en-check: en-hdf5 | $(call prog,hdf5_check)
	$(BIN)/hdf5_check --vocab $(EN_VOCAB) $(EN_H5_1)/$(EN_DATASET)/*.hdf5 $(EN_H5_2)/$(EN_DATASET)/*.hdf5
	@$(call shard_docs_warn,$(EN_SHARD)/$(EN_DATASET)/*.txt)

$(EN_DIR)/download/wikicorpus_en/wikicorpus_en.xml.bz2:
	@mkdir -p $(@D)
	$(call fetch_recipe,$(EN_WIKI),$(EN_DUMP_KIND),$@)

$(EN_TEXT): $(EN_DUMP) | $(call prog,wiki_dump) $(call prog,wiki_strip)
	@mkdir -p $(@D)
	$(BIN)/wiki_dump -q -j $(JOBS) $< | $(BIN)/wiki_strip -q -j $(JOBS) -F lines -f -o $@

$(EN_SENT): $(EN_TEXT) | $(call prog,sent_split)
	@mkdir -p $(@D)
	$(BIN)/sent_split -q -j $(JOBS) $(nocache) -l en -f -o $@ $<
	$(call prune,$<)

# fewer sentences' documents than shards: fewer shards (--fit-shards says
# how many; the directory keeps the name of the counts asked for)
$(EN_SHARD)/.complete: $(EN_SENT) | $(call prog,shard_split)
	$(call dir_stage,$(EN_SHARD),$(BIN)/shard_split -q $(nocache) --fit-shards -L nvidia --train $(EN_TRAIN_SHARDS) \
	  --test $(EN_TEST_SHARDS) --test-fraction $(EN_TEST_FRACTION) -N $(EN_DATASET) \
	  -o $(EN_SHARD).tmp/$(EN_DATASET) $<)
	$(call prune,$<)

$(EN_H5_1)/.complete: $(EN_SHARD)/.complete $(EN_VOCAB) | $(call prog,hdf5gen)
	$(call h5_recipe,$(EN_SHARD)/$(EN_DATASET),$(EN_VOCAB),$(EN_LOWER),$(SEQ1),$(PRED1),$(EN_H5_1),$(EN_DATASET))
	$(call prune,$(EN_SHARD),$(EN_H5_2)/.complete)

$(EN_H5_2)/.complete: $(EN_SHARD)/.complete $(EN_VOCAB) | $(call prog,hdf5gen)
	$(call h5_recipe,$(EN_SHARD)/$(EN_DATASET),$(EN_VOCAB),$(EN_LOWER),$(SEQ2),$(PRED2),$(EN_H5_2),$(EN_DATASET))
	$(call prune,$(EN_SHARD),$(EN_H5_1)/.complete)

.PHONY: en en-download en-text en-sentences en-shards en-hdf5 en-hdf5-phase1 en-hdf5-phase2 en-check
