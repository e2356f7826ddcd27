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
 *   Buf js = {0};
 *   if (tokjson_wordpiece(&js, vocab_txt, len, 1, -1, &err)) ... err.msg
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

#endif
