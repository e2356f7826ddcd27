/* charsmap.h - build SentencePiece's nmt_nfkc normalization table.
 *
 * SentencePiece models carry their normalization as a compiled character
 * map (NormalizerSpec.precompiled_charsmap; format in textnorm.h). For the
 * default rule, nmt_nfkc, the map is NFKC of every code point and of the
 * sequences that NFKC composes, plus the nmt rules (ASCII control
 * characters deleted; TAB, LF, CR, U+200B and other odd spaces mapped to
 * ' '). This module derives it from the Unicode data the build links
 * (ICU, through uniprop) and compiles it into a Darts-clone double-array
 * trie, so a model written here normalizes the same way in the
 * sentencepiece library as in textnorm.
 */
#ifndef WB_CHARSMAP_H
#define WB_CHARSMAP_H

#include "common/buf.h"
#include "common/common.h"

/* Append the compiled nmt_nfkc map (the precompiled_charsmap bytes) to
 * blob. Returns 0, or -1 with err set. */
int charsmap_nmt_nfkc(Buf *blob, Err *err);

#endif
