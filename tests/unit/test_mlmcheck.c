/* test_mlmcheck.c - the row rules of hdf5_check: the spec's test-vector rows
 * pass, and each rule broken once is reported with its reason; statistics
 * count what the rows hold. */
#include <stdint.h>
#include <string.h>

#include "tests/test.h"
#include "hdf5gen/mlmcheck.h"

enum { L = 16, P = 3 };
static const MlmCheckOpts opts = {32, 3, 4, 5, -1, 0, NULL};

typedef struct Row {
    int32_t ids[L], mask[L], seg[L], pos[P], lab[P], nsp;
} Row;

/* row 0 of spec 16.2: [CLS] [MASK] bird ##s . [SEP] dog ran fast . a bird sang [MASK] song [SEP] */
static Row good(void) {
    Row r = {{3, 5, 22, 20, 15, 4, 12, 13, 14, 15, 11, 22, 23, 5, 24, 4},
             {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
             {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
             {1, 13, 0},
             {2, 11, 0},
             1};
    return r;
}

static int check(const Row *r, char *why) {
    return mlmcheck_row(&opts, L, P, r->ids, r->mask, r->seg, r->pos, r->lab, r->nsp, NULL, why,
                        256);
}

#define BROKEN(descr, edit, want)                                                                  \
    do {                                                                                           \
        Row r = good();                                                                            \
        edit;                                                                                      \
        char why[256] = "";                                                                        \
        int rc = check(&r, why);                                                                   \
        test_cond(descr, rc == -1 && strstr(why, want) != NULL);                                   \
        if (rc != -1 || !strstr(why, want)) printf("  reason: '%s', want '%s'\n", why, want);      \
    } while (0)

static void test_good(void) {
    char why[256];
    Row r = good();
    test_cond("test-vector row 0 passes", check(&r, why) == 0);
    /* row 6: a short row with padding */
    Row s = {{3, 6, 7, 8, 9, 5, 5, 15, 4, 2, 22, 20, 15, 4, 0, 0},
             {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},
             {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0},
             {5, 6, 0},
             {6, 10, 0},
             1};
    test_cond("test-vector row 6 (padded) passes", check(&s, why) == 0);
    MlmCheckStats st = {0};
    mlmcheck_row(&opts, L, P, r.ids, r.mask, r.seg, r.pos, r.lab, r.nsp, &st, why, sizeof why);
    mlmcheck_row(&opts, L, P, s.ids, s.mask, s.seg, s.pos, s.lab, s.nsp, &st, why, sizeof why);
    test_cond("stats: 2 instances, 30 tokens, 4 masked",
              st.instances == 2 && st.tokens == 30 && st.masked == 4);
    test_cond("stats: masked positions holding [MASK]",
              st.masked_as_mask == 4 && st.masked_kept == 0);
    test_cond("stats: lengths in the last two eighths", st.hist[7] == 1 && st.hist[6] == 1);
}

int main(void) {
    test_good();

    BROKEN("mask not ones then zeros", r.mask[14] = 0; r.ids[14] = 0;
           r.seg[14] = 0, "input_mask is not ones then zeros");
    BROKEN("ids in the padding", (void)0; r.mask[15] = 0; r.seg[15] = 0;
           r.ids[14] = 4, "input_ids not 0 in the padding");
    BROKEN("no [CLS]", r.ids[0] = 7, "not [CLS]");
    BROKEN("no final [SEP]", r.ids[15] = 7, "not [SEP]");
    BROKEN("segments not 0 then 1", r.seg[8] = 0, "segment_ids not 0...0 1...1");
    BROKEN("segment A without [SEP]", r.ids[5] = 7, "segment A does not end with [SEP]");
    BROKEN("label 2", r.nsp = 2, "next_sentence_label 2");
    BROKEN("label 1 without segment B", for (int i = 0; i < L; i++) r.seg[i] = 0,
           "without a segment B");
    BROKEN("positions not increasing", r.pos[0] = 13; r.pos[1] = 1, "not increasing (13 then 1)");
    BROKEN("position after the padding", r.pos[0] = 0; r.lab[0] = 0; r.pos[2] = 0;
           r.pos[1] = 13, "after the padding");
    BROKEN("negative position", r.pos[0] = -1, "masked position -1 outside 1..14");
    BROKEN("position outside", r.pos[1] = 15, "outside 1..14");
    BROKEN("position on the [SEP] of A", r.pos[0] = 5, "is the [SEP] of segment A");
    BROKEN("label ids in the padding", r.lab[2] = 9, "masked_lm_ids not 0 in the padding");
    BROKEN("id outside the vocabulary", r.ids[3] = 32, "outside the vocabulary");
    BROKEN("label outside the vocabulary", r.lab[0] = 40, "masked_lm_ids: 40 outside");
    BROKEN("too short", for (int i = 1; i < L; i++) r.mask[i] = r.ids[i] = r.seg[i] = 0;
           r.pos[0] = r.pos[1] = 0; r.lab[0] = r.lab[1] = 0, "sequence of 1 tokens");
    return test_report();
}
