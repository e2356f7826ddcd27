/* shard.h - split a BERT-format corpus into balanced training/test shards.
 *
 * The sharding step of the two workflows the project replaces:
 *
 *   nvidia  NVIDIA DeepLearningExamples data/TextSharding.py (class
 *           Sharding, run by `bertPrep.py --action sharding`): training and
 *           test shards, <name>_training_<i>.txt and <name>_test_<i>.txt;
 *   hu      the HILBERT workflow's sharding.py (roberthajdu92/
 *           nvidia-bert-wiki-preprocess): the same class with training
 *           shards only and blank-line separated input.
 *
 * Input is BERT's format (one sentence per line, a blank line between
 * documents) and is never held in memory. Three steps:
 *
 *   1. index (ShardIndex): one sequential read records, per document, where
 *      its bytes are (input, offset, length) and how many sentences it has;
 *   2. balance (shard_balance): the originals' assignment of documents to
 *      shards, from the sentence counts alone;
 *   3. write (shard_write): every shard is copied out of the inputs with
 *      pread into NAME.tmp.<pid>, and only when all shards are complete are
 *      they renamed into place, so an interrupted run leaves no shard that
 *      looks finished (and a signal or die() removes the temp files).
 *
 *   ShardIndex ix;
 *   shard_index_init(&ix, SHARD_NVIDIA);
 *   shard_index_read(&ix, fp, "wiki.txt", NULL, NULL, NULL, &err);   (per input)
 *   ShardSpec spec = {.ntrain = 256, .ntest = 256, .test_fraction = 0.1};
 *   ShardPlan plan;
 *   shard_balance(ix.nsent, ix.ndocs, &spec, &plan, &err);
 *   shard_write(&ix, inputs, &plan, "out", "wikicorpus_en", NULL, NULL, &ws, &err);
 *   shard_plan_free(&plan), shard_index_free(&ix);
 *
 * Documents (what becomes one "article" of the originals):
 *   nvidia  a maximal run of non-blank lines; any number of blank lines
 *           separate documents. Each line is one sentence (the original
 *           splits one-article-per-line text with NLTK Punkt here; our
 *           input is already split, by sent_split).
 *   hu      sharding.py's block rule, kept exactly: a blank line ends the
 *           pending block if it has a line, and is otherwise itself added
 *           as an empty sentence (so a doubled blank line starts the next
 *           document with an empty sentence, and a tripled one makes a
 *           document of one empty sentence). Where sharding.py drops the
 *           block pending at the end of the file, it is kept here unless it
 *           holds nothing but blank lines.
 * "Blank" is Python's: only characters for which str.isspace() is true.
 * Sentences are written without leading and trailing white space (Python's
 * str.strip(), as sharding.py writes them; Punkt's sentences have none).
 * A document never spans two inputs (both originals read file by file).
 *
 * Balancing (TextSharding.distribute_articles_over_shards; spec section
 * 9.1) with two changes that only matter where the original never ends:
 *   - documents with no sentences (possible only through this API; the
 *     readers above never make one) cannot be placed by the algorithm and
 *     made the original loop forever; here they are left to the end and
 *     then dealt round-robin to the training shards;
 *   - when a pass places nothing, the original raises the nominal training
 *     shard size by one per pass until something fits, which can take
 *     millions of passes (each re-counting every shard): the hangs users
 *     reported. Such a run of empty passes changes nothing but that number,
 *     so it is raised at once to the first value at which a document fits.
 *     The assignment is the one the original reaches.
 * Everything else, including the stale-median rule and the test shards'
 * nominal size that never grows, is the original's, so the assignment is
 * identical whenever the original terminates.
 */
#ifndef WB_SHARD_H
#define WB_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/common.h"

typedef enum ShardLayout { SHARD_NVIDIA, SHARD_HU } ShardLayout;

/* ---- Python white space (str.isspace / str.strip) ---- */

/* Strip leading and trailing white space as Python's str.strip() does on
 * the UTF-8 text s[0..*n): moves *s and shrinks *n. Bytes that are not
 * valid UTF-8 are never white space. */
void shard_strip(const char **s, size_t *n);

/* ---- index ---- */

/* Progress callback: bytes read (or written) so far and documents so far
 * (or shards written). */
typedef void (*ShardProgressFn)(void *ctx, uint64_t bytes, uint64_t items);

/* The documents of all inputs, in input order, as parallel arrays: 12
 * bytes a document. off_lo[i] is the low 32 bits of the document's first
 * byte in its input; the high ones change rarely and are kept where they
 * change (highs). The high bit of len[i] (SHARD_LEN_STRIP) marks a
 * document whose lines must be stripped (or its last line ended) when
 * written; the other bits are its byte length, or SHARD_LEN_LONG for one
 * of 2 GiB or more, whose length is in the long list. Read them with
 * shard_doc_off, shard_doc_len, shard_doc_strip and shard_doc_input.
 * Zero-initialise with shard_index_init, free with shard_index_free. */
#define SHARD_LEN_STRIP (UINT32_C(1) << 31)
#define SHARD_LEN_LONG (SHARD_LEN_STRIP - 1)
typedef struct ShardLongDoc {
    uint32_t id;
    uint64_t len;
} ShardLongDoc;
typedef struct ShardHigh {
    uint32_t id; /* from this document on (until the next entry) ... */
    uint32_t hi; /* ... the offsets' high 32 bits are these */
} ShardHigh;
typedef struct ShardIndex {
    ShardLayout layout;
    uint32_t *off_lo; /* first byte of the document in its input, low 32 bits */
    ShardHigh *highs; /* where the high 32 bits change, by id (none: 0) */
    size_t nhigh, caphigh;
    uint32_t *len;       /* bytes through the last line's '\n' | SHARD_LEN_STRIP */
    uint32_t *nsent;     /* sentences (lines) of the document */
    ShardLongDoc *longs; /* documents of SHARD_LEN_LONG bytes or more, by id */
    size_t nlong, caplong;
    uint32_t *input_end; /* ndocs when input k ended (ninputs entries) */
    size_t ndocs, cap;
    uint64_t sentences; /* total over all documents */
    uint64_t bytes;     /* bytes read from all inputs */
    uint64_t lines;     /* lines read from all inputs */
    uint32_t ninputs;   /* inputs finished */
    /* the input being read */
    uint64_t pos, line; /* offset and 1-based number of the next line */
    int open;           /* a document is pending */
    int has_text;       /* hu: the pending block has a non-blank line */
    uint64_t cur_off, cur_end, cur_line;
    uint64_t cur_nsent;
    int cur_strip;
} ShardIndex;

/* Start an empty index for `layout`. */
void shard_index_init(ShardIndex *ix, ShardLayout layout);

/* Document id's first byte in its input. */
uint64_t shard_doc_off(const ShardIndex *ix, uint32_t id);

/* Document id's byte length, through its last line's '\n'. */
uint64_t shard_doc_len(const ShardIndex *ix, uint32_t id);

/* 1 when document id's lines are stripped (or its last line ended) when
 * written, else 0. */
int shard_doc_strip(const ShardIndex *ix, uint32_t id);

/* The input (0, 1, ... in reading order) that holds document id; the id
 * must be of an ended input. */
uint32_t shard_doc_input(const ShardIndex *ix, uint32_t id);

/* Add one line of the current input: s[0..n) without its '\n'; has_nl is 0
 * only for a last line that has none. `name` is used in messages. Returns
 * 0, or -1 with err set ("name:line: ...") when a document would have more
 * than UINT32_MAX sentences or the index more than UINT32_MAX documents. */
int shard_index_line(ShardIndex *ix, const char *s, size_t n, int has_nl, const char *name,
                     Err *err);

/* End the current input: finish its pending document (see the layouts
 * above) and count the input. Returns 0 or -1 as shard_index_line. */
int shard_index_end_input(ShardIndex *ix, const char *name, Err *err);

/* Read `in` to its end as the next input, adding its lines, and end it.
 * Every byte read is also written to `copy` when non-NULL (the spool for
 * stdin and pipes: document offsets are then offsets in the copy, counted
 * from where the copy stood at the call). Memory: the longest line, which
 * may not be longer than io_max_line() (io.h). The progress callback, if
 * any, is called about every MB. Returns 0, or -1 with err set ("name:
 * read error: ...", "name:line: line longer than ...", a write error on the
 * copy, or a shard_index_line error). */
int shard_index_read(ShardIndex *ix, FILE *in, const char *name, FILE *copy,
                     ShardProgressFn progress, void *ctx, Err *err);

/* Free the arrays and zero the index. */
void shard_index_free(ShardIndex *ix);

/* ---- balance ---- */

typedef struct ShardSpec {
    uint32_t ntrain;      /* >= 1 */
    uint32_t ntest;       /* >= 0 (the nvidia original requires >= 1) */
    double test_fraction; /* share of sentences meant for test shards; 0 when ntest is 0 */
} ShardSpec;

typedef struct ShardStats {
    uint64_t total;          /* sentences */
    uint64_t nominal_train0; /* int((1 - f) * total) // ntrain */
    uint64_t nominal_test0;  /* (total - int((1 - f) * total)) // ntest */
    uint64_t nominal_train;  /* at the end */
    uint64_t nominal_test;   /* at the end (raised only in the first pass) */
    uint64_t oversize;       /* first-pass documents longer than the nominal size */
    uint64_t passes;         /* passes of the original's loop, skipped ones included */
    uint64_t skipped;        /* empty passes not run (see above) */
    uint64_t empty_docs;     /* documents with no sentences, dealt at the end */
} ShardStats;

/* The assignment: shard s (training 0..ntrain-1, then test 0..ntest-1)
 * holds documents ids[first[s] .. first[s+1]) in the order written. */
typedef struct ShardPlan {
    uint32_t ntrain, ntest;
    uint64_t *first; /* ntrain + ntest + 1 */
    uint32_t *ids;   /* every document id exactly once */
    uint64_t *nsent; /* sentences per shard */
    ShardStats st;
} ShardPlan;

/* Fewer shards for n documents when spec asks for more than n (each shard
 * needs one): about four documents a shard (the balancing by sentences
 * leaves a long document alone in its shard, and a shard needs two for
 * its random next sentences to come from another document), the test shards in proportion
 * to test_fraction (at least one when spec has any), never more than spec
 * asked for. Returns 1 when the counts changed, 0 when n fills spec's
 * shards as they are (then nothing changes: the originals' assignment). */
int shard_fit(ShardSpec *spec, size_t n);

/* Assign documents 0..n-1 with nsent[i] sentences to shards as described
 * above. Returns 0 with *plan filled (free with shard_plan_free), or -1
 * with err set when there are fewer documents than shards ("N documents
 * for S shards ...") or the spec is invalid. */
int shard_balance(const uint32_t *nsent, size_t n, const ShardSpec *spec, ShardPlan *plan,
                  Err *err);

/* Free the plan's arrays. */
void shard_plan_free(ShardPlan *plan);

/* ---- write ---- */

/* Where input k of the index is read from: pread(fd, base + offset). */
typedef struct ShardInput {
    int fd;
    uint64_t base;
    const char *name; /* for messages */
} ShardInput;

typedef struct ShardWriteStats {
    uint64_t bytes;   /* written to all shards */
    uint64_t removed; /* earlier shards of the same name deleted (remove_stale) */
} ShardWriteStats;

/* Shard s's file name: "<name>_training_<s>.txt" or "<name>_test_<s -
 * ntrain>.txt", written into out[cap]. Returns out. */
const char *shard_file_name(const ShardPlan *plan, uint32_t s, const char *name, char *out,
                            size_t cap);

/* shard_write's flags. */
enum {
    SHARD_FORCE = 1,  /* replace existing shard files (-f) */
    SHARD_NOCACHE = 2 /* drop each shard from the page cache once it is on disk
                       * (--nocache, common/pagecache.h) */
};

/* Write every shard of `plan` into the existing directory `dir`: for each
 * document in order its sentences one per line, then an empty line (the
 * originals' layout; an empty shard is an empty file). Files go to
 * <file>.tmp.<pid> first and are renamed into place after all are written
 * and closed without error; SIGINT/SIGTERM/SIGHUP/SIGPIPE (those not
 * inherited as ignored) or die() in the meantime removes them. An existing
 * file of the same name is replaced only with SHARD_FORCE in flags:
 * without, a shard file that appeared meanwhile is kept and the run fails
 * with none of its shards in place (all or none). With it, files in dir
 * named like shards of `name` but beyond this plan's counts (left by an
 * earlier run with more shards) are deleted afterwards. A shard name that is one of
 * the run's inputs (input_note) is refused, forced or not. With
 * SHARD_NOCACHE each shard is dropped from the page cache once it is on
 * disk, which the run waits for (a window at a time, and each shard while
 * the next is written); the files are the same. Returns 0, or -1 with err
 * set and no temp file left (a read error, an input that changed since it
 * was indexed, a write error, a shard file that appeared). */
int shard_write(const ShardIndex *ix, const ShardInput *inputs, const ShardPlan *plan,
                const char *dir, const char *name, int flags, ShardProgressFn progress, void *ctx,
                ShardWriteStats *ws, Err *err);

#endif
