/* tokjson.h - tokenizer.json, the file of Hugging Face's fast tokenizers,
 * for a WordPiece vocabulary (BERT's tokenizer).
 *
 * The layout is that of huggingface/tokenizers 0.23's Tokenizer.save()
 * (2-space indent, no final newline): the special tokens as added_tokens,
 * BertNormalizer (clean_text, handle_chinese_chars, strip_accents,
 * lowercase), BertPreTokenizer, the TemplateProcessing post-processor
 * "[CLS] $A [SEP]" / "[CLS] $A:0 [SEP]:0 $B:1 [SEP]:1", the WordPiece
 * decoder and the WordPiece model (unk_token [UNK], prefix "##",
 * max_input_chars_per_word 100 as tokenize/wordpiece.h, the vocabulary as
 * a token -> id map). vocab_train writes it beside vocab.txt and the
 * trainers' Hugging Face export writes it beside the model, so that
 * tokenizers.Tokenizer.from_file() and AutoTokenizer load the vocabulary
 * with the normalization the data had.
 *
 * The reader, tokjson_read(), takes such a file back (any tokenizer.json
 * of a WordPiece model: bert-base-uncased's, one that transformers 5 saves
 * instead of vocab.txt): the vocabulary as vocab.txt text, the
 * BertNormalizer's switches and the WordPiece model's settings. Other
 * models (BPE, Unigram, WordLevel), normalizers and pre-tokenizers are
 * refused, naming what the file has.
 *
 *   Buf js = {0};
 *   if (tokjson_wordpiece(&js, vocab_txt, len, 1, -1, &err)) ... err.msg
 *   TokJson t;
 *   if (tokjson_read(&t, js.data, js.len, "tokenizer.json", &err)) ... err.msg
 *   ... t.vocab is vocab.txt's text; tokjson_free(&t);
 */
#ifndef WB_TOKJSON_H
#define WB_TOKJSON_H

#include <stddef.h>

#include "common/buf.h"
#include "common/common.h"

/* tokenizers' WordPiece max_input_chars_per_word: longer words are [UNK] */
#define TOKJSON_MAX_WORD_CHARS 100

/* Append tokenizer.json for the vocabulary vocab[0..len) (vocab.txt: one
 * token a line, the line number its id; a final newline and a CR before
 * each newline are not part of a token; valid UTF-8). lower: BertNormalizer
 * lowercase; strip_accents: 1, 0, or -1 (null: as lower). The added
 * (special) tokens are [PAD], [UNK], [CLS], [SEP], [MASK] and [unusedN]
 * wherever they are, in id order, as tokenizers' trainer marks them.
 * Returns 0, or -1 with err when the vocabulary has no [CLS] or no [SEP]
 * line (the post-processor needs their ids); out is then unchanged. */
int tokjson_wordpiece(Buf *out, const char *vocab, size_t len, int lower, int strip_accents,
                      Err *err);

/* A tokenizer.json's WordPiece tokenizer, as tokjson_read() finds it. */
typedef struct TokJson {
    Buf vocab;                /* vocab.txt's text: the tokens in id order, one a line */
    size_t ntokens;           /* lines of vocab */
    int lowercase;            /* BertNormalizer lowercase (0/1) */
    int strip_accents;        /* 1, 0, or -1 (null: as lowercase) */
    int clean_text;           /* 1: control characters deleted, whitespace made spaces */
    int handle_chinese_chars; /* 1: spaces around CJK ideographs */
    char prefix[32];          /* continuing_subword_prefix ("##") */
    char unk[64];             /* unk_token ("[UNK]") */
    int max_chars;            /* max_input_chars_per_word (100) */
} TokJson;

/* 1 when data[0..len) looks like a JSON object (after a UTF-8 BOM and
 * whitespace, '{' then '"', or "{}" alone), so that it is read as
 * tokenizer.json rather than as vocab.txt lines; else 0. */
int tokjson_is(const char *data, size_t len);

/* Read the tokenizer.json text data[0..len) (name for messages) into t:
 * the WordPiece model's vocabulary (model.vocab, with the added tokens
 * whose ids follow it) as vocab.txt text, ids 0..n-1 each exactly once;
 * the normalizer (BertNormalizer, or null: no normalization at all); the
 * pre-tokenizer (BertPreTokenizer). Returns 0, or -1 with err
 * naming the file and the problem ("NAME: model type BPE: only WordPiece
 * (BERT's tokenizer) is read ...", "NAME: byte 17: ':' expected", "NAME: no
 * token has id 5"); t is then empty. Free with tokjson_free(). */
int tokjson_read(TokJson *t, const char *data, size_t len, const char *name, Err *err);

/* Free what tokjson_read() allocated; t is zeroed. */
void tokjson_free(TokJson *t);

#endif
