/* fuzz_wordpiece.c - fuzz target of the WordPiece tokenizer
 * (tokenize/wordpiece.h).
 *
 * The input is text. It is encoded with data/bert/vocab.txt, lower-cased
 * (bert-base-uncased) and cased, and split by the basic tokenizer in the
 * Hugging Face flavour; every id must be a line of the vocabulary (or the
 * absent-[UNK] id), every basic piece non-empty. The input is also read as
 * a vocabulary file (wp_create_mem) and, when accepted, encodes a fixed
 * text and the input itself.
 */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "tests/fuzz/fuzz.h"
#include "tokenize/wordpiece.h"

static void check_ids(const char *what, const WordPiece *wp, const WpIds *ids) {
    size_t vs = wp_vocab_size(wp);
    for (size_t i = 0; i < ids->n; i++) {
        int32_t id = ids->v[i];
        if (id == WP_UNK_ABSENT) continue;
        if (id < 0 || (size_t)id >= vs)
            fuzz_fail("%s: id %d outside the vocabulary of %zu", what, (int)id, vs);
        if (!wp_id_token(wp, id, NULL)) fuzz_fail("%s: id %d has no token", what, (int)id);
    }
}

/* One input: data as text to tokenize and as a vocabulary. Returns 0; a
 * broken promise aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static WordPiece *uncased, *cased, *hf;
    static WpScratch sc;
    static WpIds ids;
    static Buf out;
    if (!uncased) {
        Err err;
        fuzz_quiet("fuzz_wordpiece");
        const char *dir = getenv("WIKIBERT_DATA");
        char path[1024];
        snprintf(path, sizeof path, "%s/bert/vocab.txt", dir && *dir ? dir : WB_DATADIR);
        if (!(uncased = wp_create(path, WP_UNCASED, &err)) || !(cased = wp_create(path, 0, &err))) {
            fprintf(stderr, "fuzz_wordpiece: %s\n", err.msg);
            exit(3);
        }
        hf = wp_create_basic(WP_UNCASED, WP_FLAVOR_HF);
    }
    char *text = malloc(size ? size : 1); /* exactly size bytes, for ASan */
    if (size) memcpy(text, data, size);

    ids.n = 0;
    wp_encode(uncased, &sc, text, size, &ids);
    check_ids("uncased", uncased, &ids);
    ids.n = 0;
    wp_encode(cased, &sc, text, size, &ids);
    check_ids("cased", cased, &ids);
    size_t np = wp_basic_pieces(hf, &sc, text, size);
    for (size_t k = 0; k < np; k++)
        if (sc.ends[k] <= (k ? sc.ends[k - 1] : 0) || sc.ends[k] > sc.pieces.len)
            fuzz_fail("HF basic piece %zu empty or out of range", k);
    buf_clear(&out);
    wp_basic_tokenize(uncased, &sc, text, size, &out);

    Err err;
    WordPiece *own = wp_create_mem(text, size, "fuzz-vocab", (int)(size % 4), &err);
    if (own) {
        static const char sample[] = "Hello, world! Árvíztűrő tükörfúrógép [MASK] unaffable 東京";
        WpScratch sc2 = {0};
        ids.n = 0;
        wp_encode(own, &sc2, sample, sizeof sample - 1, &ids);
        wp_encode(own, &sc2, text, size, &ids);
        check_ids("own vocabulary", own, &ids);
        int32_t unk = wp_unk_id(own);
        if (unk != WP_UNK_ABSENT && (unk < 0 || (size_t)unk >= wp_vocab_size(own)))
            fuzz_fail("own vocabulary: [UNK] id %d", (int)unk);
        wp_scratch_free(&sc2);
        wp_destroy(own);
    }
    free(text);
    return 0;
}
