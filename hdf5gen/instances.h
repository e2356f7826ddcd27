/* instances.h - BERT pretraining instances (masked LM + next sentence), as
 * NVIDIA's create_pretraining_data.py makes them, without the HDF5 part.
 *
 * Input: text with one sentence per line and blank lines between documents
 * (several files are one stream, as the original's directory input). The
 * output is the list of instances the original writes, in its row order and
 * identical to it id for id, for the same vocabulary, seed and parameters
 * (DeepLearningExamples PyTorch/LanguageModeling/BERT at 4733603, which runs
 * on CPython's random.Random, common/pyrandom.h):
 *
 *   1. read: each line (\n, \r\n and a lone \r end lines) that is blank
 *      after Python's str.strip() ends the current document; any other line
 *      is tokenized (tokenize/wordpiece.h) and, if that gives tokens, is one
 *      sentence of the current document. Empty documents are dropped.
 *   2. build: seed; shuffle the documents; dupe_factor passes over them,
 *      each document cut into instances (create_instances_from_document,
 *      with its random next-sentence pairs, the skipped draw for one-sentence
 *      chunks, NVIDIA's same-document rule and truncate_seq_pair), each
 *      instance masked (create_masked_lm_predictions: candidate shuffle,
 *      80/10/10, random words from the vocabulary's distinct tokens in
 *      first-occurrence order); finally shuffle all instances.
 *
 * Everything is kept in id space, compactly, since a whole shard is held
 * (a random next segment may come from any document, and the final shuffle
 * spans all instances): all sentence tokens of the input in one array of
 * 16-bit ids (32-bit where the vocabulary has more than 65,536), sentence
 * starts as 32-bit offsets (InstDocs); an instance is two ranges of it (20
 * bytes and a 4-byte offset) plus its masks, coded in about 1.25 bytes each:
 * the position as a delta and what became of it ([MASK], kept, or a random
 * id, which follows); the final shuffle permutes 32-bit row indices only.
 * About 0.45 bytes per byte of text for the tokens and sentences, and 0.35
 * to 0.55 for the instances at dupe_factor 5 (512/80 to 128/20).
 *
 * Switches beyond the original (all off by default = the original):
 *   whole_word  Google's --do_whole_word_mask: a "##" piece joins the group
 *               of the piece before it; groups are shuffled and masked whole
 *               (google-research/bert create_pretraining_data.py)
 *   no_mask     no masking at all (and no draws for it): input_ids are the
 *               plain tokens, no masked positions
 *   no_nsp      one segment per instance: [CLS] A [SEP] with A a run of
 *               whole sentences up to the target length (max_seq_length - 2),
 *               segment ids all 0, next_sentence_label 0, no pair draws
 * Case is the tokenizer's business: a WordPiece made with lower = 0 keeps
 * case and accents (the original always lower-cases, whatever it is told).
 *
 *   InstOpts o; inst_opts_default(&o);
 *   o.max_seq_length = 512; o.max_predictions = 80; o.dupe_factor = 5;
 *   InstSet s = {0};
 *   if (inst_generate(&o, wp, "shard_0.txt", &s, &err)) die("%s", err.msg);
 *   int32_t ids[512], pos[80], lab[80];
 *   for (size_t r = 0; r < s.n; r++) { InstView v; inst_row(&s, r, &v, ids, pos, lab); ... }
 *   inst_set_free(&s);
 */
#ifndef WB_INSTANCES_H
#define WB_INSTANCES_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "hdf5gen/spill.h"
#include "tokenize/wordpiece.h"

typedef struct InstOpts {
    int max_seq_length;    /* 128 (original default; bertPrep passes 128 or 512) */
    int max_predictions;   /* max_predictions_per_seq: 20 */
    double masked_lm_prob; /* 0.15 */
    double short_seq_prob; /* 0.1 */
    int dupe_factor;       /* 10 (bertPrep passes 5) */
    uint64_t seed;         /* random_seed: 12345 (abs() of a negative one) */
    int whole_word;        /* see the file comment; 0 */
    int no_mask;           /* 0 */
    int no_nsp;            /* 0 */
    int strict;            /* invalid UTF-8 is an error (the original raises);
                              otherwise it is dropped and counted */
    int threads;           /* tokenization and masking threads (the result does not
                              depend on it); 0 or 1: the calling thread */
    int spill;             /* keep the tokens and instances in temporary files in
                              tmp_dir, not in memory (see "Spilled" below) */
    const char *tmp_dir;   /* spill's directory (NULL: the current one) */
    const char *tmp_label; /* what spill's files are for, in messages (or NULL) */
    int nocache;           /* drop the input files from the page cache as they are
                              read (common/pagecache.h) */
    /* Called from the reading thread after each batch of lines (may be NULL):
     * bytes and lines read so far. */
    void (*on_read)(void *arg, uint64_t bytes, uint64_t lines);
    void *on_read_arg;
} InstOpts;

/* Fill o with the original's defaults (listed above). */
void inst_opts_default(InstOpts *o);

/* Check o for values the algorithm cannot run with (max_seq_length < 5,
 * max_predictions < 0 or > 65535, probabilities outside [0, 1] or NaN,
 * dupe_factor < 0). Returns 0, or -1 with err naming the option. */
int inst_opts_check(const InstOpts *o, Err *err);

/* The documents of a shard, tokenized. Sentence k is tokens
 * inst_docs_sent(d, k) .. inst_docs_sent(d, k + 1), document d is
 * sentences doc[d] .. doc[d + 1] (in input order; build shuffles an index,
 * not this). Token i is inst_docs_id(d, i): tok16[i] when the vocabulary's
 * ids fit 16 bits, else tok32[i]. A shard holds fewer than 2^32 tokens.
 * The sentences take 1.25 bytes each, not an offset's 4 (held while a
 * spilled shard is read and built, they grow with it): a length byte, 255
 * for 255 tokens or more (the length is then in lng), and every 16th
 * sentence's first token. */
typedef struct InstDocs {
    uint16_t *tok16; /* one of the two is used; the other is NULL */
    int32_t *tok32;
    size_t ntok, tokcap;
    uint8_t *slen;   /* nsent lengths, 255: in lng */
    uint32_t *smark; /* sentence 16 m starts at token smark[m], m <= nsent / 16 */
    size_t nsent, sentcap;
    uint32_t (*lng)[2]; /* {sentence, length} of each sentence of 255 tokens or more, in order */
    size_t nlng, lngcap;
    size_t *doc; /* ndoc + 1 sentence indices */
    size_t ndoc, doccap;
    uint64_t lines;    /* text lines read (universal newlines) */
    uint64_t bytes;    /* input bytes */
    uint64_t bad_utf8; /* invalid UTF-8 sequences dropped */
    int specials;      /* some token is [CLS] or [SEP] */
    int tokbytes;      /* 2 (tok16) or 4 (tok32) */
    Spill tokf;        /* spilled: the tokens, tokbytes each (tok16 and tok32 NULL) */
} InstDocs;

/* The length of sentence k < d->nsent. */
static inline size_t inst_docs_sent_len(const InstDocs *d, size_t k) {
    if (d->slen[k] < 255) return d->slen[k];
    size_t lo = 0, hi = d->nlng; /* the long sentences, by index */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->lng[mid][0] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return d->lng[lo][1];
}

/* The first token of sentence k <= d->nsent (d->ntok for k = nsent). */
static inline size_t inst_docs_sent(const InstDocs *d, size_t k) {
    size_t t = d->smark[k >> 4];
    for (size_t j = k & ~(size_t)15; j < k; j++)
        t += inst_docs_sent_len(d, j);
    return t;
}

/* Token i of d (not spilled). */
static inline int32_t inst_docs_id(const InstDocs *d, size_t i) {
    return d->tok16 ? (int32_t)d->tok16[i] : d->tok32[i];
}

/* Read and tokenize `n` inputs ("-" = stdin) into d (zero-initialised or
 * freed before). Returns 0, or -1 with err set ("FILE: No such file or
 * directory", "FILE:LINE: invalid UTF-8" when strict, "FILE:LINE: the
 * vocabulary has no [UNK] token" when one is needed, "FILE: more than
 * 4294967295 tokens in one shard" past 32-bit offsets). Free with
 * inst_docs_free(). */
int inst_docs_read(InstDocs *d, const WordPiece *wp, char **paths, int n, const InstOpts *o,
                   Err *err);

/* Release d; it is reusable (empty) afterwards. */
void inst_docs_free(InstDocs *d);

/* One instance, [CLS] A [SEP] B [SEP] (or [CLS] A [SEP] when has_b is 0):
 * A and B are runs of whole sentences, so they are ranges of the document
 * tokens and are not copied. Its masks are bytes moff[k] .. moff[k + 1] of
 * its block's mbytes (k its index in the block), in increasing position;
 * the label of a position is the document token there. */
typedef struct Inst {
    uint32_t a, b;               /* first token of A / B */
    uint32_t na : 24, has_b : 1; /* segment lengths (nb is 0 without B) */
    uint32_t nb : 24;
    int8_t next; /* next_sentence_label: 1 = B is a random segment */
    uint16_t nmask;
} Inst;

#define INST_BLOCK 1024 /* instances per block of storage (and of parallel masking) */

/* INST_BLOCK instances (fewer in the last block) and their masks, each
 * array allocated once at its final size. A mask is one byte,
 * (min(delta - 1, 63) << 2) | kind, with delta the distance from the
 * previous masked position (from 0 for the first); a 63 is followed by
 * delta - 64 as a LEB128 varint; kind 0 is [MASK], 1 the token kept, 2 a
 * random id, which follows as a varint. */
typedef struct InstBlock {
    Inst *inst;
    uint32_t *moff; /* count + 1 offsets into mbytes */
    uint8_t *mbytes;
} InstBlock;

typedef struct InstStats {
    uint64_t instances, tokens, masked, random_next;
    uint64_t truncated; /* tokens removed by truncate_seq_pair */
    uint64_t same_doc;  /* random-next pairs turned into label 0 (NVIDIA rule) */
} InstStats;

/* The instances of a shard; it refers to the InstDocs it was built from,
 * which must stay alive (and unchanged) as long as rows are read.
 * Instance i (creation order) is blk[i / INST_BLOCK].inst[i % INST_BLOCK],
 * unless spilled: then each block, once masked, is written to instf as
 * one record per instance (instance.c, "Spilled") and freed, and only the
 * row order stays; inst_rows_prepare makes the row file. */
typedef struct InstSet {
    InstBlock *blk;
    size_t nblk, blkcap;
    size_t n;        /* instances (fewer than 2^32) */
    uint32_t *order; /* output row r is instance order[r] */
    const InstDocs *docs;
    InstDocs own; /* the documents when inst_generate read them */
    int32_t cls, sep, mask;
    InstStats st;
    int spilled;
    int tokbytes;        /* the documents' */
    const char *tmp_dir; /* spilled: where the temporary files are */
    const char *tmp_label;
    Spill instf;               /* spilled: the instance records, in no particular order */
    Spill rowf;                /* spilled: the output rows (inst_rows_prepare) */
    uint64_t rowsec[4];        /* rowf's sections: heads, ids, positions, labels */
    int row_l, row_p;          /* the row file's widths */
    uint64_t ids_band, ids_cw; /* the ids section's layout (inst_rows_layout; 0: whole rows) */
} InstSet;

/* Build the instances of docs into s (zero-initialised or freed before):
 * seeds the generator with o->seed and makes exactly the original's random
 * draws. The draws are made on one thread; the masking itself runs on the
 * other o->threads - 1 threads meanwhile, block by block, from recorded
 * generator states (the result does not depend on the count). The vocabulary must hold [CLS] and
 * [SEP], and [MASK] unless no_mask; docs were read with it (inst_docs_read). docs must outlive s.
 * Returns 0, or -1 with err set. Free with inst_set_free(). */
int inst_build(InstSet *s, const InstDocs *docs, const WordPiece *wp, const InstOpts *o, Err *err);

/* inst_docs_read of one file then inst_build; the set keeps the documents. */
int inst_generate(const InstOpts *o, const WordPiece *wp, const char *shard_path, InstSet *out,
                  Err *err);

/* Release s (and the documents inst_generate read); it is reusable (empty)
 * afterwards. */
void inst_set_free(InstSet *s);

/* The shape of an output row. */
typedef struct InstView {
    size_t len;   /* tokens: input_mask has len ones */
    size_t seg0;  /* segment_ids: seg0 zeros, then ones */
    size_t nmask; /* masked positions */
    int next_sentence_label;
} InstView;

/* Row r (0 <= r < s->n) of the output, in the original's order (not
 * for a spilled set; see inst_rows_fill): its shape
 * in *v, and, for each buffer that is not NULL, its unpadded contents:
 * input_ids (len ids, after masking), masked_lm_positions and masked_lm_ids
 * (nmask each; max_predictions is always enough). */
void inst_row(const InstSet *s, size_t r, InstView *v, int32_t *input_ids, int32_t *positions,
              int32_t *label_ids);

/* The same for instance i in creation order (not for a spilled set). */
void inst_get(const InstSet *s, size_t i, InstView *v, int32_t *input_ids, int32_t *positions,
              int32_t *label_ids);

/* ---- output rows, for the HDF5 datasets (both kinds of set) ----
 *
 * Spilled: the rows are put in output order with a bucket sort over
 * temporary files, never holding more than about 3 MB of them: the
 * instance records are read in file order and each appended to the
 * buffer of its bucket of R consecutive output rows (written to a stage
 * file when full), then each bucket is read back, ordered and written to
 * the row file as fixed-size rows in four sections (shape, ids, positions,
 * labels; 16-bit where the values fit), which inst_rows_fill reads with a
 * few large preads per call. */

enum { INST_IDS, INST_MASK, INST_SEG, INST_POS, INST_LAB, INST_NSP };

/* Check that every row fits max_seq_length L and max_predictions P and,
 * for a spilled set, make the row file (L and P wide) in the build's
 * tmp_dir; a spilled set's documents are no longer needed after that (nor
 * after inst_build). Returns 0, or -1 with err ("PATH: instance 12 does
 * not fit max_seq_length 128 / max_predictions 20", PATH the `path` given;
 * "LABEL: temporary file in DIR: No space left on device"). */
int inst_rows_prepare(InstSet *s, int L, int P, const char *path, Err *err);

/* Before inst_rows_prepare: a spilled set's row file keeps input_ids by
 * chunk, bands of band_rows rows, each in strips of strip_cols columns
 * (input_ids' chunk shape), so that inst_rows_strip reads one chunk with
 * one pread; 0, 0: whole rows (the default). No effect on a set in memory. */
void inst_rows_layout(InstSet *s, uint64_t band_rows, uint64_t strip_cols);

/* Rows r0 .. r0 + n of dataset `what` (INST_*) into buf, rows `width`
 * values apart, zero-filled by the caller: input_ids, masked_lm_positions
 * and masked_lm_ids as int32 (L, P and P of each row written), input_mask
 * and segment_ids int8 (L), next_sentence_labels one int8 per row. Safe
 * from several threads at once. A read error of the row file is kept in
 * s->rowf (spill_failed); the rows read are then zeros. */
void inst_rows_fill(InstSet *s, int what, uint64_t r0, uint64_t n, size_t width, void *buf);

/* Columns c0 .. c0 + nc of those rows of input_ids, input_mask or
 * segment_ids (INST_IDS, INST_MASK, INST_SEG) into buf, rows `width`
 * values apart, zero-filled by the caller: one HDF5 chunk, read without
 * the rest of its rows (input_mask and segment_ids from the rows' shapes,
 * input_ids from its section, one read per chunk in the layout of
 * inst_rows_layout). Safe from several threads at once; errors as
 * inst_rows_fill. */
void inst_rows_strip(InstSet *s, int what, uint64_t r0, uint64_t n, uint64_t c0, uint64_t nc,
                     size_t width, void *buf);

#endif
