/* wordpiece.h - BERT's tokenizer: BasicTokenizer + WordpieceTokenizer.
 *
 * Behaves as NVIDIA's tokenization.py BertTokenizer (the one
 * create_pretraining_data.py runs), i.e. Google's tokenization.py with
 * never_split = [UNK] [SEP] [PAD] [CLS] [MASK] and
 * max_input_chars_per_word = 100:
 *
 *   text -> clean (drop NUL, U+FFFD, C* except \t\n\r; whitespace -> ' ')
 *        -> spaces around CJK ideographs -> str.split()
 *        -> per token, unless it is a never_split string: str.lower()
 *           (WP_LOWER), NFD and drop Mn (WP_STRIP_ACCENTS), split off
 *           punctuation
 *        -> per piece: greedy longest-match-first WordPiece ("##" marks a
 *           continuation; a piece with an unmatchable rest, or longer than
 *           100 code points, becomes one [UNK]).
 *
 * A WordPiece is immutable after creation: any number of threads may use one
 * at the same time, each with its own WpScratch.
 *
 * wp_create_basic() makes a tokenizer without vocabulary for the basic steps
 * alone, in tokenization.py's flavour or in that of Hugging Face's
 * BertNormalizer + BertPreTokenizer (what its WordPiece trainer sees). The
 * two differ only in these points (the HF flavour in parentheses):
 *   - never_split strings are kept whole (lower-cased and split like any
 *     other text: "[MASK]" -> "[", "mask", "]");
 *   - str.lower() over the whole word, with the Final_Sigma rule ("ΟΔΟΣ"
 *     -> "οδος"; per code point, Rust's char::to_lowercase: "οδοσ");
 *   - cleaning deletes categories Cc Cf Co Cs Cn (Cc Cf Co: unassigned code
 *     points are kept, as the unicode_categories crate's is_other() has no
 *     Cn);
 *   - the CJK range 2B820-2CEAF (HF: 2B920-2CEAF).
 * The HF normalizer strips accents before lower-casing, tokenization.py
 * after; both give the same text (U+0130 becomes "i" either way).
 *
 *   Err err;
 *   WordPiece *wp = wp_create("data/bert/vocab.txt", WP_UNCASED, &err);
 *   WpScratch sc = {0};
 *   WpIds ids = {0};
 *   wp_encode(wp, &sc, "Hello, world!", 13, &ids);   // ids of hello , world !
 *   wp_ids_free(&ids); wp_scratch_free(&sc); wp_destroy(wp);
 */
#ifndef WB_WORDPIECE_H
#define WB_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"

/* tokenization.py's max_input_chars_per_word (Google's original: 200). */
#define WP_MAX_WORD_CHARS 100

typedef struct WordPiece WordPiece;

/* A growable array of token ids. */
typedef struct WpIds {
    int32_t *v;
    size_t n, cap;
} WpIds;

/* Per-thread working memory; zero-initialise, reuse across calls, free
 * with wp_scratch_free(). */
typedef struct WpScratch {
    Buf tok, low, nfd; /* the current token through its folding steps */
    Buf run;           /* a piece with its Mn marks dropped */
    Buf pieces;        /* basic tokens of one text, back to back */
    size_t *ends;      /* end offset of each piece in `pieces` */
    size_t nends, cap;
    size_t bad_utf8; /* invalid UTF-8 sequences met (running total) */
} WpScratch;

/* Normalization switches, or-ed into the `norm` argument below.
 * tokenization.py's do_lower_case=True is WP_UNCASED (both), False is 0;
 * Hugging Face's BertTokenizer(do_lower_case, strip_accents) allows all
 * four combinations: lower-casing alone keeps accents ("kör" stays
 * "kör"), stripping alone keeps case ("Kör" -> "Kor"). */
#define WP_LOWER 1         /* str.lower() */
#define WP_STRIP_ACCENTS 2 /* NFD, then drop code points of category Mn */
#define WP_UNCASED (WP_LOWER | WP_STRIP_ACCENTS)

/* The `norm` switches for do_lower_case `lower` (0/1) and strip_accents
 * `strip` (0/1, or -1: None, i.e. as lower-casing, HF's default). */
static inline int wp_norm(int lower, int strip) {
    if (strip < 0) strip = lower;
    return (lower ? WP_LOWER : 0) | (strip ? WP_STRIP_ACCENTS : 0);
}

/* Load a vocabulary file as tokenization.py's load_vocab (or a
 * tokenizer.json, see wp_create_mem): one token per
 * line (\n, \r\n and \r end lines), stripped of Python whitespace; the id
 * of a token is its 0-based line number, the last one where a token occurs
 * more than once; blank lines are the token "". `norm` holds the
 * normalization switches (WP_UNCASED is do_lower_case=True).
 * Returns the tokenizer (free with wp_destroy) or NULL with err set
 * ("PATH: No such file or directory", "PATH:LINE: invalid UTF-8"). */
WordPiece *wp_create(const char *path, int norm, Err *err);

/* The same from a vocabulary held in memory; `name` is used in messages.
 * Text that is a JSON object is read as Hugging Face's tokenizer.json
 * (common/tokjson.h: a WordPiece model; its vocabulary, unk_token,
 * continuing_subword_prefix, max_input_chars_per_word, and the
 * BertNormalizer's clean_text and handle_chinese_chars; `norm` still gives
 * lower-casing and accents: wp_open() takes those from the file). */
WordPiece *wp_create_mem(const char *data, size_t len, const char *name, int norm, Err *err);

/* Open a vocabulary file for tokenizing as a program's --vocab does:
 * vocab.txt, or a tokenizer.json (above) with its normalization. lower and
 * strip are the command line's do_lower_case and strip_accents: 0 or 1,
 * or -1 when not given. For vocab.txt the defaults are tokenization.py's
 * (lower 1, strip as lower); for a tokenizer.json they are its
 * BertNormalizer's lowercase and strip_accents (null: as lower-casing), and
 * a given value that differs from the file's is used and said in one line
 * appended to note (when not NULL: "--do-lower-case 0, but FILE has
 * lowercase true: the command line's setting is used"). *norm gets the
 * switches in use (when norm is not NULL). Returns the tokenizer (free
 * with wp_destroy) or NULL with err (the file's name and the problem). */
WordPiece *wp_open(const char *path, int lower, int strip, Buf *note, int *norm, Err *err);

/* Flavours of the basic tokenizer (see above). */
typedef enum WpFlavor {
    WP_FLAVOR_BERT = 0, /* tokenization.py's BasicTokenizer, as wp_create() */
    WP_FLAVOR_HF = 1,   /* Hugging Face's BertNormalizer + BertPreTokenizer */
} WpFlavor;

/* A tokenizer with an empty vocabulary, for wp_basic_tokenize() and
 * wp_basic_pieces() only, normalizing as `norm` says (WP_UNCASED is HF's
 * BertNormalizer lowercase=true, strip_accents=None). Free with
 * wp_destroy(). */
WordPiece *wp_create_basic(int norm, WpFlavor flavor);

/* Free a tokenizer (NULL is fine). */
void wp_destroy(WordPiece *wp);

/* Number of vocabulary lines (ids are 0 .. size-1). */
size_t wp_vocab_size(const WordPiece *wp);

/* The token of line `id` (NUL-terminated, *len set when len is non-NULL),
 * or "[UNK]" for WP_UNK_ABSENT, or NULL when id is out of range. */
const char *wp_id_token(const WordPiece *wp, int32_t id, size_t *len);

/* The id of token s[0..n) (exact match), or -1 if it is not in the vocab. */
int32_t wp_token_id(const WordPiece *wp, const char *s, size_t n);

/* The id used for [UNK]: the vocab's, or WP_UNK_ABSENT when the vocab has
 * no "[UNK]" line (the token text is still "[UNK]"; it has no real id). */
#define WP_UNK_ABSENT INT32_MAX
int32_t wp_unk_id(const WordPiece *wp);

/* The tokenizer's normalization switches (WP_LOWER | WP_STRIP_ACCENTS). */
int wp_norm_of(const WordPiece *wp);

/* BasicTokenizer only: append the basic tokens of text[0..len) (any bytes;
 * invalid UTF-8 counts in sc->bad_utf8 and is dropped as U+FFFD is) to out,
 * separated by single spaces. Returns the number of tokens. */
size_t wp_basic_tokenize(const WordPiece *wp, WpScratch *sc, const char *text, size_t len,
                         Buf *out);

/* BasicTokenizer only, without joining: replace sc->pieces and sc->ends
 * with the basic tokens of text[0..len), token k being the bytes
 * sc->pieces.data[k ? sc->ends[k-1] : 0 .. sc->ends[k]) (never empty, no
 * whitespace inside). Returns the number of tokens, sc->nends. The pieces
 * stay valid until the next call with the same scratch. */
size_t wp_basic_pieces(const WordPiece *wp, WpScratch *sc, const char *text, size_t len);

/* Full tokenization (tokenization.py's BertTokenizer.tokenize followed by
 * convert_tokens_to_ids): append the ids of text[0..len) to ids. Returns
 * the number of ids appended. Time is linear in len (each WordPiece step
 * walks a trie once, at most the longest vocab token's length ahead). */
size_t wp_encode(const WordPiece *wp, WpScratch *sc, const char *text, size_t len, WpIds *ids);

/* Release an id array / a scratch; both are reusable afterwards. */
void wp_ids_free(WpIds *ids);
void wp_scratch_free(WpScratch *sc);

#endif
