/* langid.h - language identification from character n-gram profiles.
 *
 * A model is a data file written by langid_train (tokenize/langid_train.c)
 * from real text, shipped as data/LANGID_DEFAULT_FILE with its sources.
 * Identification is deterministic (no sampling) and thread safe: a loaded
 * model is read-only, so worker threads may share one.
 *
 *   Err err; LangScore s;
 *   LangId *m = langid_load(path, &err);          // NULL: err says why
 *   if (langid_identify(m, text, len, &s) == 0) printf("%s %.3f\n", s.lang, s.conf);
 *   langid_free(m);
 */
#ifndef WB_LANGID_H
#define WB_LANGID_H

#include <stddef.h>

#include "common/common.h"

/* The model file under the data directory (see cli_data_path). */
#define LANGID_DEFAULT_FILE "langid/model.txt"

typedef struct LangId LangId;

typedef struct LangScore {
    const char *lang; /* language code as in the model ("hu", "en", ...) */
    double conf;      /* confidence in [0, 1]: posterior of the best language */
} LangScore;

/* Load a model file. Returns NULL and fills err (file and line or offset)
 * if it cannot be opened or is malformed. Pair with langid_free(). */
LangId *langid_load(const char *path, Err *err);

void langid_free(LangId *m);

/* Number of languages in the model, and the code of language i. */
int langid_nlangs(const LangId *m);
const char *langid_lang(const LangId *m, int i);

/* Index of language `code` in the model, or -1 if it has none. */
int langid_find(const LangId *m, const char *code);

/* Identify the language of UTF-8 text[0..n). Returns 0 and fills *out, or
 * -1 when the text has nothing to go on (no letters, or only letters of
 * scripts the model has never seen); then out->lang is "und" and out->conf
 * 0. out->lang points into the model (valid until langid_free) or is the
 * static "und". */
int langid_identify(const LangId *m, const char *text, size_t n, LangScore *out);

#endif
