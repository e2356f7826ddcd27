/* docfilter.h - document quality filter of TurkuNLP's filterdocs.py.
 *
 * Input is the BERT pretraining layout: one sentence per line, a blank line
 * between documents. Each document goes through the twelve checks of
 * filterdocs.py (WikiBERT pipeline, also the Hungarian workflow's
 * filtering.py) in this order; the first failing check names the result:
 *
 *    1 avg-len        WORD_RE matches / sentences       <  avg_len
 *    2 min-sents      sentences                          <  min_sents
 *    3 max-sents      sentences                          >  max_sents
 *    4 min-toks       whitespace tokens                  <  min_toks
 *    5 max-toks       whitespace tokens                  >  max_toks
 *    6 no-word-ratio  sentences without a WORD_RE match / sentences > ratio
 *    7 punct-ratio    ASCII punctuation / chars          >  ratio
 *    8 upper-ratio    str.isupper chars / chars          >  ratio
 *    9 digit-ratio    str.isdigit chars / chars          >  ratio
 *   10 foreign-ratio  FOREIGN_LETTER chars / chars       >  ratio
 *   11 min-words      WORD_RE matches                    <  min_words
 *   12 langdetect     language of the sentences joined by " " != LANG
 *
 * "chars" counts code points of the (right-stripped) sentences without
 * their line ends. Divisions are in double precision and ties pass. A check
 * can be switched off (FilterOpts.use[]), as a None option is in the
 * original.
 *
 * WORD_RE is \b[UPPER]?[ALPHA]{w_len,}\b with Python re semantics for str
 * patterns: \b lies between a word character (str.isalnum or '_') and a
 * non-word character or the text's edge; the optional upper-case character
 * is tried first, the letter run is greedy and backs off until a boundary
 * holds; matches are counted left to right without overlap, per sentence.
 * ALPHA is --word-chars (whitespace removed); UPPER is the concatenation of
 * c.upper() (full case mapping) for each c in ALPHA whose upper-case form
 * is not a substring of ALPHA. Word characters are taken literally: the
 * original pastes them into a regex character class unescaped, so a ']',
 * '\', '^' or '-' there would change its pattern; here they are plain
 * members. FOREIGN_LETTER is a word character that is not a decimal digit
 * (Nd), not '_', and not in ALPHA or UPPER (so Cyrillic letters, 'ä', but
 * also '²', '½' and 'Ⅻ').
 *
 *   DocFilter *f = docfilter_create(&opts, &err);  // NULL: err says why
 *   FilterScratch s = {0};
 *   FilterCheck r = docfilter_check(f, &s, doc, len, NULL);
 *   filter_scratch_free(&s); docfilter_destroy(f);
 *
 * DocSplit turns a byte stream, fed in chunks of any size, into documents
 * the way filterdocs.py reads its files (see docsplit_feed).
 */
#ifndef WB_DOCFILTER_H
#define WB_DOCFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"
#include "common/pattern.h"

/* The result of filtering one document: FC_PASS or the first failed check. */
typedef enum FilterCheck {
    FC_PASS = 0,
    FC_AVG_LEN,
    FC_MIN_SENTS,
    FC_MAX_SENTS,
    FC_MIN_TOKS,
    FC_MAX_TOKS,
    FC_NO_WORD_RATIO,
    FC_PUNCT_RATIO,
    FC_UPPER_RATIO,
    FC_DIGIT_RATIO,
    FC_FOREIGN_RATIO,
    FC_MIN_WORDS,
    FC_LANGDETECT,
    FC_COUNT
} FilterCheck;

/* "avg-len", ..., "langdetect"; "all" for FC_PASS (as in "pass-all"). */
const char *filter_check_name(FilterCheck c);

/* The statistics key of a result: "pass-all" or "fail-<name>". */
const char *filter_result_key(FilterCheck c);

/* The check named `name` ("avg-len"), or -1. */
int filter_check_find(const char *name);

typedef struct FilterOpts {
    int use[FC_COUNT]; /* nonzero: the check runs (use[FC_PASS] is unused) */
    long avg_len, min_sents, max_sents, min_toks, max_toks, min_words;
    double no_word_ratio, punct_ratio, upper_ratio, digit_ratio, foreign_ratio;
    const char *word_chars; /* lower-case alphabet, UTF-8; NULL or "": a-z */
    const char *language;   /* "ja" and "ko" use fixed alphabets */
    int word_chars_given;   /* warn that ja/ko override an explicit -W */
} FilterOpts;

/* Fill *o with the Hungarian workflow's defaults (filtering.py): every
 * check on, -a 4 -s 3 -S 1000 -t 20 -T 10000 -w 30, -n 0.2 -p 0.075
 * -u 0.1 -d 0.075 -F 0.02, Hungarian word characters, language hu. */
void filter_opts_default(FilterOpts *o);

/* Called for check 12 with the document's sentences joined by single
 * spaces (NUL-terminated). Returns nonzero if the text is in the wanted
 * language. `worker` is the index passed to docfilter_check. */
typedef int (*FilterLangFn)(void *ctx, int worker, const char *text, size_t n);

typedef struct DocFilter DocFilter;

/* Build a filter: the alphabets, WORD_RE and FOREIGN_LETTER classes, and a
 * per-code-point class table. Warnings of the original (empty word
 * characters, whitespace removed, ja/ko override) go to stderr through
 * warn(). Returns NULL and fills err if word_chars is not valid UTF-8.
 * The filter is read-only afterwards, so threads may share it. Pair with
 * docfilter_destroy(). */
DocFilter *docfilter_create(const FilterOpts *o, Err *err);

void docfilter_destroy(DocFilter *f);

/* Install the language test for check 12 (without one, check 12 is off). */
void docfilter_set_lang(DocFilter *f, FilterLangFn fn, void *ctx);

/* The alphabet and upper-case set in use (UTF-8), and the minimum number
 * of alphabet characters in a word (2, or 1 for ja/ko). */
const char *docfilter_alpha(const DocFilter *f);
const char *docfilter_upper(const DocFilter *f);
int docfilter_word_len(const DocFilter *f);

/* Per-thread working memory of the checks; reused from document to
 * document so the hot loop allocates nothing. Zero-initialise; free with
 * filter_scratch_free(). */
typedef struct FilterScratch {
    unsigned char *cls; /* class bits of each code point of a sentence */
    size_t cap;
    Buf joined; /* the sentences joined by spaces, for check 12 */
} FilterScratch;

void filter_scratch_free(FilterScratch *s);

/* What the checks measure on one document. */
typedef struct DocMeasure {
    uint64_t sents;   /* sentences (lines) */
    uint64_t words;   /* WORD_RE matches */
    uint64_t no_word; /* sentences without a match */
    uint64_t toks;    /* whitespace-separated tokens (str.split) */
    uint64_t chars;   /* code points */
    uint64_t punct;   /* ASCII punctuation (string.punctuation) */
    uint64_t upper;   /* str.isupper */
    uint64_t digit;   /* str.isdigit */
    uint64_t foreign; /* FOREIGN_LETTER */
} DocMeasure;

/* Measure document doc[0..len): sentences, each followed by '\n', in valid
 * UTF-8 (a missing final '\n' is tolerated). */
void docfilter_measure(const DocFilter *f, FilterScratch *s, const char *doc, size_t len,
                       DocMeasure *m);

/* Apply checks 1..11 to a measurement: FC_PASS or the first failure. */
FilterCheck docfilter_decide(const DocFilter *f, const DocMeasure *m);

/* All twelve checks on one document (layout as docfilter_measure; at
 * least one sentence). Check 12 runs only when 1..11 pass. `worker` is
 * handed to the language callback. Fills *m when m is not NULL. */
FilterCheck docfilter_check(const DocFilter *f, FilterScratch *s, int worker, const char *doc,
                            size_t len, DocMeasure *m);

/* WORD_RE matches in one sentence s[0..n) (valid UTF-8, no '\n'). */
size_t docfilter_count_words(const DocFilter *f, FilterScratch *s, const char *sent, size_t n);

/* ---- pattern rules (text_filter --drop-lines, --drop-docs, --keep-docs) ---- */

/* User regular expressions (common/pattern.h: PCRE2, UTF-8) applied to a
 * document's lines before the checks, in this order:
 *   1. drop-lines: every line that any of these patterns matches is removed;
 *      a document left without lines is dropped (PR_EMPTIED);
 *   2. drop-docs:  a document with a (remaining) line that any of these
 *      matches is dropped (PR_DROP_DOCS);
 *   3. keep-docs:  when there are any, a document is dropped unless one of
 *      its (remaining) lines matches one of them (PR_KEEP_DOCS).
 * Several patterns of one kind act as alternatives (any of them). A
 * pattern matches anywhere in a line unless anchored (^, $ match at the
 * line's start and end). Zero-initialise; pair with pattern_rules_free().
 * Read-only once built: threads share it, each with its own RuleScratch. */
enum { PR_DROP_LINES, PR_DROP_DOCS, PR_KEEP_DOCS, PR_KINDS };

/* The verdict on a document: kept, or why not. */
typedef enum RuleVerdict { PR_KEEP = 0, PR_EMPTIED, PR_DROPPED, PR_NOT_KEPT } RuleVerdict;

typedef struct PatternRules {
    Pattern **pat[PR_KINDS];
    int n[PR_KINDS];
    int total; /* patterns of all kinds */
} PatternRules;

/* Compile `re` and add it to the rules of `kind` (PR_DROP_LINES ...).
 * Returns 0, or -1 with err holding PCRE2's message and offset. */
int pattern_rules_add(PatternRules *r, int kind, const char *re, Err *err);

void pattern_rules_free(PatternRules *r);

/* Per-thread state of pattern_rules_apply; zero-initialise, free with
 * rule_scratch_free(). */
typedef struct RuleScratch {
    PatternData **pd; /* one per pattern, made on first use */
    int npd;
    Buf kept;        /* the document without its dropped lines */
    uint64_t errors; /* lines PCRE2 could not match (its limits): kept */
} RuleScratch;

void rule_scratch_free(RuleScratch *s);

/* Apply r to document doc[0..len) (lines each ending in '\n', valid
 * UTF-8). With drop-lines rules, s->kept receives the remaining lines and
 * *nsent their number; *dropped gets the number of lines removed. Returns
 * the verdict. A line PCRE2 fails to match (match or depth limit) counts
 * as not matching and adds one to s->errors. */
RuleVerdict pattern_rules_apply(const PatternRules *r, RuleScratch *s, const char *doc, size_t len,
                                size_t *nsent, size_t *dropped);

/* ---- statistics in filterdocs.py's report format ---- */

typedef struct FilterCounts {
    uint64_t docs;             /* documents read */
    uint64_t output;           /* documents written */
    uint64_t result[FC_COUNT]; /* pass-all and fail-<name> counts */
} FilterCounts;

/* Add b into a. */
void filter_counts_add(FilterCounts *a, const FilterCounts *b);

/* Append the report for input `name` to out, as filterdocs.py prints it:
 *   name:\t<key>\t<count> (<pct>%)        for each key seen, sorted by key
 *   name: output X/Y documents (<pct>%)
 * Percentages have one decimal; with no documents they read 0.0%. */
void filter_report(Buf *out, const char *name, const FilterCounts *c);

/* ---- reading documents ---- */

/* Receives a finished document: sentences each followed by '\n' (right-
 * stripped, valid UTF-8), their count, and the input line of the first. */
typedef void (*DocSink)(void *ctx, const char *doc, size_t len, size_t nsent, uint64_t line);

/* A streaming splitter with filterdocs.py's reading rules: universal
 * newlines ("\n", "\r\n" and a lone "\r" end a line, wherever the chunks
 * are cut); invalid UTF-8 replaced by U+FFFD and counted; trailing
 * whitespace (str.isspace) stripped; a line empty after stripping ends the
 * current document if there is one; then, when a limit is set and that
 * many documents were finished, the rest of the input is ignored. With
 * `lines` set every line (blank ones too) is a document of its own.
 * Memory is bounded: a line, or a document, longer than max_bytes stops
 * the input with too_long set (the caller reports it), so at most that
 * much is held besides the chunk fed.
 * Zero-initialise, set limit (-1: none) and lines, then feed; pair with
 * docsplit_free(). */
typedef struct DocSplit {
    int64_t limit;    /* documents per input, -1 for no limit */
    int lines;        /* emit every line as a one-line document */
    size_t max_bytes; /* longest line and document held; 0: io_max_line() */
    /* set by a feed or finish, and kept: 1 a line, 2 a document was longer
     * than max_bytes (that input stopped there, as at the limit); the
     * line where it starts. The caller ends the run with an error. */
    int too_long;
    uint64_t too_long_line;
    DocSink sink;
    void *ctx;
    /* state */
    Buf carry; /* start of a line cut by the chunk end */
    Buf doc;   /* the document being collected */
    Buf fix;   /* a line with invalid UTF-8 repaired */
    size_t nsent;
    int pending_cr;          /* the last chunk ended in '\r' */
    int stopped;             /* the limit was reached */
    uint64_t line;           /* lines seen in this input */
    uint64_t doc_line;       /* line of the current document's first sentence */
    uint64_t ndocs;          /* documents finished in this input */
    uint64_t bad_utf8;       /* invalid sequences replaced, all inputs */
    uint64_t first_bad_line; /* line of the first one in this input, 0: none */
} DocSplit;

/* Feed the next n bytes of the input; finished documents go to the sink.
 * Returns nonzero once the limit or a line or document longer than
 * max_bytes (too_long) stopped this input (more bytes are then ignored, so
 * the caller may stop reading). */
int docsplit_feed(DocSplit *ds, const char *p, size_t n);

/* End of the input: the last line and document are finished. The state is
 * reset for the next input (line numbers and the limit start again, as
 * filterdocs.py counts them per file); bad_utf8 and too_long are kept. */
void docsplit_finish(DocSplit *ds);

void docsplit_free(DocSplit *ds);

#endif
