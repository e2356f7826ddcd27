/* langidfit.h - the trainer behind langid_train: count character n-grams
 * of labelled texts, prune them, fit the confidence temperature on held-out
 * texts, and write a model file (format and features: langidmodel.h).
 *
 *   LangIdTrainOpts o; langid_train_defaults(&o);
 *   LangIdTrainer *t = langid_trainer_create(&o);
 *   langid_trainer_add(t, "hu", 2, text, n, 0, &err);    // for every text
 *   Buf model = {0}; langid_trainer_write(t, &model, &err);
 *   langid_trainer_free(t);
 */
#ifndef WB_LANGIDFIT_H
#define WB_LANGIDFIT_H

#include <stddef.h>

#include "common/buf.h"
#include "common/common.h"
#include "tokenize/langidmodel.h"

typedef struct LangIdTrainOpts {
    int order;                   /* longest n-gram, 1..LANGID_MAX_ORDER */
    int top;                     /* grams of each order >= 2 kept per language (by count) */
    int min_count;               /* a (gram, language) count below this is dropped */
    double mu[LANGID_MAX_ORDER]; /* Dirichlet prior mass per order */
} LangIdTrainOpts;

/* The defaults used for the shipped model. */
void langid_train_defaults(LangIdTrainOpts *o);

typedef struct LangIdTrainer LangIdTrainer;

/* New trainer; pair with langid_trainer_free(). */
LangIdTrainer *langid_trainer_create(const LangIdTrainOpts *o);
void langid_trainer_free(LangIdTrainer *t);

/* Add one training text (dev = 0) or one held-out text for fitting the
 * temperature (dev = 1) of language `lang` (a code of 1..15 bytes without
 * blanks). Returns 0, or -1 with err set for a bad code or too many
 * languages. */
int langid_trainer_add(LangIdTrainer *t, const char *lang, size_t langlen, const char *text,
                       size_t n, int dev, Err *err);

/* Count, prune and write the model file text into out (appended). The
 * output depends only on the texts added (in order within each language)
 * and the options. If dev texts were added the temperature is fitted on
 * them, else it is 1. Returns 0, or -1 with err set (no training text). */
int langid_trainer_write(LangIdTrainer *t, Buf *out, Err *err);

#endif
