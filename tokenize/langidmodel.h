/* langidmodel.h - internals of the language identifier (langid.c) shared
 * with its trainer (langidfit.h): text normalization into n-gram features,
 * the train/dev/test split rule, the model file format, raw scores.
 *
 * Features. Text is read as UTF-8 and turned into a stream of code points:
 * letters (and the combining marks that belong to them) lower-cased, every
 * run of other characters (digits, punctuation, spaces, invalid bytes) one
 * ' ', with a ' ' at both ends. The features are all n-grams of 1 to
 * `order` consecutive code points of that stream, except the lone ' '.
 * "Hi, there!" gives " hi there " and the grams " ", "h", " h", "hi", ...
 *
 * Model. Multinomial naive Bayes with Dirichlet smoothing towards a
 * background distribution (Zhai and Lafferty, "A study of smoothing methods
 * for language models applied to information retrieval", SIGIR 2001):
 *
 *   p_L(g) = (c_L(g) + mu_o * bg(g)) / (N_L,o + mu_o)
 *   bg(g)  = mean over languages K of c_K(g) / N_K,o
 *
 * for a gram g of order o, c_L(g) its count in language L's training text
 * and N_L,o the number of order-o grams in it. The log-likelihood of a text
 * then splits into a part shared by all languages (dropped) plus sparse
 * per-(gram, language) weights log(1 + c_L(g) / (mu_o bg(g))) minus a
 * length term log(N_L,o + mu_o) per scored gram, so scoring touches only
 * the languages in which each gram of the text was seen. Priors are uniform.
 * The confidence is the posterior under a temperature T fitted on held-out
 * data (softmax of score / T), because n-grams of one text overlap and the
 * raw naive Bayes posterior is far too sure of itself.
 *
 * Model file (text, one record per line, fields separated by TAB):
 *   wikibert-langid <version>
 *   order <n>
 *   mu <mu_1> ... <mu_n>
 *   temp <T>
 *   langs <count>
 *   lang <code> <N_1> ... <N_n>                  one per language
 *   grams <count>
 *   <gram> <idx>:<count>[ <idx>:<count>...]     one per gram
 * A gram is written with '_' for the boundary ' '; idx is the 0-based line
 * order of the `lang` records. Lines starting with '#' are comments.
 */
#ifndef WB_LANGIDMODEL_H
#define WB_LANGIDMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/common.h"
#include "tokenize/langid.h"

#define LANGID_MAGIC "wikibert-langid"
#define LANGID_VERSION 1
#define LANGID_MAX_ORDER 5
#define LANGID_MAX_LANGS 512
#define LANGID_CODE_MAX 15

/* ---- normalization ---- */

/* Cursor over one text for langid_next_cp(). */
typedef struct LangIdCursor {
    const unsigned char *s;
    size_t n, pos;
    int state;   /* 0 start, 1 inside a word, 2 after a boundary, 3 done */
    int letters; /* letters seen so far */
} LangIdCursor;

/* Start reading text[0..n). */
void langid_cursor_init(LangIdCursor *c, const char *text, size_t n);

/* Next code point of the normalized stream (letters lower-cased, ' ' for
 * boundaries, leading and trailing ' '), or 0 at the end. */
uint32_t langid_next_cp(LangIdCursor *c);

/* Which part of a train/dev/test split a text belongs to: 0 train, 1 dev
 * (one in 20), 2 test (one in 10). Decided by a hash of the normalized
 * letters alone, so the same sentence with other case, spacing or
 * punctuation always falls into the same part, whichever file it is in. */
int langid_split_part(const char *text, size_t n);

/* Load a model from memory (data[0..n)); `name` is used in messages.
 * Same contract as langid_load(). */
LangId *langid_load_mem(const char *data, size_t n, const char *name, Err *err);

/* Raw naive-Bayes scores (log-likelihood up to a shared constant) of every
 * language into score[0..langid_nlangs) and the number of scored grams into
 * *ngrams. Returns the best index, or -1 when no gram of the text is known
 * to the model (then the scores are all 0). */
int langid_scores(const LangId *m, const char *text, size_t n, double *score, size_t *ngrams);

/* The temperature the model turns scores into confidences with. */
double langid_temperature(const LangId *m);

#endif
