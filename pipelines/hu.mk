# pipelines/hu.mk - the Hungarian workflow (HILBERT's command sequence:
# WikiExtractor, formatting.py, quntoken, filtering.py, spmtrain.py,
# sent2wordpiece.py, sharding.py, create_hdf5_files.py) as make targets,
# one per stage, each a pipe of our filters:
#
#   DUMP -> text/wikicorpus_hu.txt         wiki_dump | wiki_strip -F lines
#        -> sentences/wikicorpus_hu.txt    sent_split -l hu
#        -> filtered/wikicorpus_hu.txt     text_filter (filtering.py's Hungarian defaults)
#        -> vocab/bert.{model,vocab}, vocab/vocab.txt   vocab_train (BPE) + WordPiece vocab
#        -> formatted_text/                shard_split -L hu (sharding.py)
#        -> hdf5_lower_case_1_strip_accents_0_seq_len_128_.../textcorpus/  hdf5gen (phase 1)
#        -> hdf5_lower_case_1_strip_accents_0_seq_len_512_.../textcorpus/  hdf5gen (phase 2)
#
# One normalization from the vocabulary to the HDF5 files: by default the
# text is lower-cased and keeps its accents (Hungarian's accented letters
# are letters: kor, kör, kór, kőr are four words), and the BPE vocabulary
# is trained on the text as BERT's tokenizer splits it (vocab_train
# --bert), so its pieces are pieces the tokenizer produces and every
# character is in vocab.txt both word-initially and as ##. HU_CASED=1 keeps
# case and accents (a cased model); HU_FAITHFUL=1 reproduces the original
# workflow's bytes (its WikiExtractor text, its spmtrain.py vocabulary, and
# create_pretraining_data.py's lower-casing and accent stripping, which
# leave [UNK] for every comma and period of Hungarian text) under its own
# HU_DIR, default $(WORKDIR)/hu-faithful. The HDF5 and vocabulary
# directory names say which normalization: lower_case_<0|1>, and
# strip_accents_<0|1> where it differs from lower_case (the vocabulary of
# the default one is vocab/, the others' vocab_lower_case_...).
#
# Everything lives under HU_DIR (default $(WORKDIR)/hu). The same sequence
# runs for another wiki with LANG=xx (make's command line) or WIKI_LANG=xx,
# under $(WORKDIR)/xx; for English, whose $(WORKDIR)/en is the English
# workflow's EN_DIR, under $(WORKDIR)/en-hu-sequence. The two workflows
# never share a directory: HU_DIR and EN_DIR set to the same one is an
# error.
# Parameters: see the README's pipelines section.

# LANG: the wiki's language code (huwiki, sent_split -l, text_filter's
# language check). Only a LANG given on make's command line counts (the
# environment's LANG is the locale); WIKI_LANG works anywhere. Another
# language than hu wants its alphabet in WORD_CHARS (text_filter -W).
HU_LANG       ?= $(or $(WIKI_LANG),$(if $(filter command line,$(origin LANG)),$(LANG)),hu)
HU_FAITHFUL   ?= 0
HU_DIR        ?= $(WORKDIR)/$(HU_LANG)$(if $(filter $(abspath $(WORKDIR)/$(HU_LANG)),$(abspath $(EN_DIR))),-hu-sequence)$(if $(filter 1,$(HU_FAITHFUL)),-faithful)
$(call wb_check,HU_LANG,word)
$(call wb_check,HU_DIR,dir)
ifeq ($(abspath $(HU_DIR)),$(abspath $(EN_DIR)))
$(error HU_DIR and EN_DIR are both $(HU_DIR): the Hungarian sequence and the English workflow need a directory each)
endif
HU_WIKI       ?= $(HU_LANG)wiki
HU_WORD_CHARS ?= $(WORD_CHARS)
HU_DUMP_KIND  ?= pages-articles-multistream.xml.bz2
HU_DUMP_DEFAULT = $(or $(DUMP),$(HU_DIR)/download/$(HU_WIKI)-$(DUMP_DATE)-$(HU_DUMP_KIND))
HU_DUMP       ?= $(HU_DUMP_DEFAULT)
HU_VOCAB_SIZE ?= $(or $(VOCAB_SIZE),32000)
HU_SHARDS     ?= $(or $(SHARDS),50)
# The vocabulary's sample: at most this many sentences, drawn at random
# (spm_train's --input_sentence_size with --shuffle_input_sentence). It is
# the one cap on vocab_train's memory, which is about
#   20 MB + 390 bytes x W + 4 bytes x S (when the text has more than S lines)
#         + 1 % of the sample's bytes (the held-out sentences of --bert)
# for a sample of S sentences holding W distinct words (vocab/README.md).
# Full enwiki (~120 M sentences, 10-20 M distinct words) in one sample
# would need 4-8 GB; 10,000,000 sentences hold about 1.5-5 M distinct words:
# 0.6-2 GB. A text with fewer sentences is used whole, as before.
# HU_FAITHFUL=1 keeps spmtrain.py's 100,000,000 (the original's vocabulary).
HU_VOCAB_SAMPLE ?= $(or $(VOCAB_SAMPLE),$(if $(filter 1,$(HU_FAITHFUL)),100000000,10000000))
HU_CASED      ?= 0
HU_LOWER      ?= $(if $(filter 1,$(HU_CASED)),0,1)
HU_STRIP_ACCENTS ?= $(if $(filter 1,$(HU_FAITHFUL)),$(HU_LOWER),0)
ifeq ($(HU_FAITHFUL)$(HU_CASED),11)
$(error HU_FAITHFUL=1 and HU_CASED=1: the original workflow always lower-cases)
endif
HU_NORM       := $(HU_LOWER)$(if $(filter-out $(HU_LOWER),$(HU_STRIP_ACCENTS)),_strip_accents_$(HU_STRIP_ACCENTS))
HU_TRAINED_VOCAB := $(HU_DIR)/vocab$(if $(filter 0,$(HU_FAITHFUL)),$(if $(filter-out 1_strip_accents_0,$(HU_NORM)),_lower_case_$(HU_NORM)))/vocab.txt
HU_VOCAB_DEFAULT = $(or $(VOCAB),$(HU_TRAINED_VOCAB))
HU_VOCAB      ?= $(HU_VOCAB_DEFAULT)
# an empty HU_DUMP or HU_VOCAB on the command line means the default, as an empty DUMP or VOCAB does
$(foreach v,HU_DUMP HU_VOCAB,$(if $(strip $($(v))),,$(eval override $(v) = $(value $(v)_DEFAULT))))
$(foreach v,HU_FAITHFUL HU_WIKI HU_DUMP_KIND HU_VOCAB_SIZE HU_SHARDS HU_CASED HU_LOWER HU_STRIP_ACCENTS,$(call \
  wb_check,$(v),word))
$(foreach v,HU_DUMP HU_VOCAB,$(call wb_check,$(v),file))

HU_TEXT  := $(HU_DIR)/text/wikicorpus_$(HU_LANG).txt
HU_SENT  := $(HU_DIR)/sentences/wikicorpus_$(HU_LANG).txt
HU_FILT  := $(HU_DIR)/filtered/wikicorpus_$(HU_LANG).txt
HU_SHARD := $(HU_DIR)/formatted_text
HU_H5_1  := $(HU_DIR)/$(call h5_name,$(HU_NORM),$(SEQ1),$(PRED1))
HU_H5_2  := $(HU_DIR)/$(call h5_name,$(HU_NORM),$(SEQ2),$(PRED2))
HU_TEXT_OPTS  := $(if $(filter 1,$(HU_FAITHFUL)),--faithful)
HU_VOCAB_OPTS := $(if $(filter 1,$(HU_FAITHFUL)),--character-coverage 0.9999,--bert --do-lower-case $(HU_LOWER) --strip-accents $(HU_STRIP_ACCENTS))


## hu: the Hungarian workflow from DUMP to both HDF5 phases (HU_DIR, default work/hu)
hu: hu-hdf5

## hu-download: fetch huwiki's pages-articles-multistream dump (DUMP_DATE, MIRROR), resumable, sha1-checked
hu-download: $(HU_DIR)/download/$(HU_WIKI)-$(DUMP_DATE)-$(HU_DUMP_KIND)

## hu-text: dump -> one article per line (wiki_dump | wiki_strip -F lines)
hu-text: $(HU_TEXT)

## hu-sentences: articles -> one sentence per line (sent_split -l hu)
hu-sentences: $(HU_SENT)

## hu-filtered: filtering.py's document checks with the Hungarian defaults (text_filter)
hu-filtered: $(HU_FILT)

## hu-vocab: BPE vocabulary of HU_VOCAB_SIZE pieces and its WordPiece vocab.txt (vocab_train)
hu-vocab: $(HU_VOCAB)

## hu-shards: HU_SHARDS training shards, formatted_text/formatted_text_training_<i>.txt (shard_split -L hu)
hu-shards: $(HU_SHARD)/.complete

## hu-hdf5: both HDF5 phases (hu-hdf5-phase1: SEQ1/PRED1, hu-hdf5-phase2: SEQ2/PRED2)
hu-hdf5: hu-hdf5-phase1 hu-hdf5-phase2
hu-hdf5-phase1: $(HU_H5_1)/.complete
hu-hdf5-phase2: $(HU_H5_2)/.complete

## hu-check: hdf5_check statistics of the Hungarian HDF5 files (warnings: a shard of one document, a random-next share far from 50 %)
hu-check: hu-hdf5 | $(call prog,hdf5_check)
	$(BIN)/hdf5_check --vocab $(HU_VOCAB) $(HU_H5_1)/textcorpus/*.hdf5 $(HU_H5_2)/textcorpus/*.hdf5
	@$(call shard_docs_warn,$(HU_SHARD)/*.txt)

$(HU_DIR)/download/%:
	@mkdir -p $(@D)
	$(call fetch_recipe,$(HU_WIKI),$(HU_DUMP_KIND),$@)

# The text of HU_FAITHFUL=1 differs: a directory holds one kind only.
HU_TEXT_KIND := $(if $(filter 1,$(HU_FAITHFUL)),faithful,default)
HU_KIND_FILE := $(HU_DIR)/text/.kind
ifneq ($(wildcard $(HU_KIND_FILE)),)
ifneq ($(file <$(HU_KIND_FILE)),$(HU_TEXT_KIND))
$(error $(HU_DIR) holds the text of HU_FAITHFUL=$(if $(filter faithful,$(HU_TEXT_KIND)),0,1): give this run another HU_DIR)
endif
endif

$(HU_TEXT): $(HU_DUMP) | $(call prog,wiki_dump) $(call prog,wiki_strip)
	@mkdir -p $(@D)
	@printf '%s' $(HU_TEXT_KIND) >$(HU_KIND_FILE)
	$(BIN)/wiki_dump -q -j $(JOBS) $< | $(BIN)/wiki_strip -q -j $(JOBS) -F lines $(HU_TEXT_OPTS) -f -o $@

$(HU_SENT): $(HU_TEXT) | $(call prog,sent_split)
	@mkdir -p $(@D)
	$(BIN)/sent_split -q -j $(JOBS) $(nocache) -l $(HU_LANG) -f -o $@ $<
	$(call prune,$<)

$(HU_FILT): $(HU_SENT) | $(call prog,text_filter)
	@mkdir -p $(@D)
	$(BIN)/text_filter -q $(nocache) --fail-if-none-kept --langdetect $(HU_LANG) --language $(HU_LANG) $(if $(HU_WORD_CHARS),-W '$(HU_WORD_CHARS)') \
	  -f -o $@ $<
	$(call prune,$<)

# A text too small for HU_SHARDS shards or HU_VOCAB_SIZE pieces gets
# fewer (shard_split --fit-shards, vocab_train --hard-vocab-limit false,
# each saying so in one line); a text big enough gets exactly those.
# spmtrain.py's options; vocab.txt is what sent2wordpiece.py makes of
# bert.vocab; --bert (unless HU_FAITHFUL=1) and the normalization as above,
# with --bert's alphabet (every character up to the 1000 most frequent, where
# spmtrain.py's --character-coverage 0.9999 drops the rarest, digits among
# them in some texts, and BERT's tokenizer then loses their whole words)
$(HU_TRAINED_VOCAB): $(HU_FILT) | $(call prog,vocab_train)
	@mkdir -p $(@D)
	$(BIN)/vocab_train -q -j $(JOBS) -f -o $(@D)/bert --vocab-size $(HU_VOCAB_SIZE) --hard-vocab-limit false \
	  --input-sentence-size $(HU_VOCAB_SAMPLE) --shuffle $(HU_VOCAB_OPTS) --wordpiece $@ $<
	$(call prune,$<,$(HU_SHARD)/.complete)

$(HU_SHARD)/.complete: $(HU_FILT) | $(call prog,shard_split)
	$(call dir_stage,$(HU_SHARD),$(BIN)/shard_split -q $(nocache) --fit-shards -L hu --train $(HU_SHARDS) -o $(HU_SHARD).tmp $<)
	$(call prune,$<,$(HU_VOCAB))

$(HU_H5_1)/.complete: $(HU_SHARD)/.complete $(HU_VOCAB) | $(call prog,hdf5gen)
	$(call h5_recipe,$(HU_SHARD),$(HU_VOCAB),$(HU_LOWER) --strip-accents $(HU_STRIP_ACCENTS),$(SEQ1),$(PRED1),$(HU_H5_1),textcorpus)
	$(call prune,$(HU_SHARD),$(HU_H5_2)/.complete)

$(HU_H5_2)/.complete: $(HU_SHARD)/.complete $(HU_VOCAB) | $(call prog,hdf5gen)
	$(call h5_recipe,$(HU_SHARD),$(HU_VOCAB),$(HU_LOWER) --strip-accents $(HU_STRIP_ACCENTS),$(SEQ2),$(PRED2),$(HU_H5_2),textcorpus)
	$(call prune,$(HU_SHARD),$(HU_H5_1)/.complete)

.PHONY: hu hu-download hu-text hu-sentences hu-filtered hu-vocab hu-shards hu-hdf5 hu-hdf5-phase1 hu-hdf5-phase2 hu-check
