/* test_shard.c - shard.c: index, TextSharding's balancing, shard output.
 *
 * The balancing is checked three ways: the worked example of the spec
 * (section 9.3) and hand-made cases whose expected assignments were taken
 * once from running NVIDIA's TextSharding.Sharding (@4733603) on them; a
 * plain, slow transcription of the spec's prose (ref_balance below: one
 * nominal increment per pass, linear bucket walks, counts recomputed every
 * pass) compared on random inputs, including ones that stall for hundreds
 * of passes; and the cases the original never finishes (documents without
 * sentences), where every document must still appear exactly once.
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/buf.h"
#include "common/io.h"
#include "common/rng.h"
#include "shard/shard.h"
#include "common/uniprop.h"
#include "common/utf8.h"

/* ---- reference: the spec's prose, step by step ---- */

typedef struct Vec {
    uint32_t *v;
    size_t n, cap;
} Vec;

static void vec_push(Vec *a, uint32_t x) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 8;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = x;
}

static int cmp64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t ref_median2(const uint64_t *c, size_t n) {
    uint64_t *s = malloc((n ? n : 1) * sizeof *s);
    memcpy(s, c, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp64);
    uint64_t m = n == 0 ? 0 : n % 2 ? 2 * s[n / 2] : s[n / 2 - 1] + s[n / 2];
    free(s);
    return m;
}

/* Fills shards[0..ntr+nte) and returns the number of loop passes. The
 * input must have no 0-sentence document left after the first pass. */
static uint64_t ref_balance(const uint32_t *ns, size_t n, uint32_t ntr, uint32_t nte, double f,
                            Vec *shards) {
    uint32_t S = ntr + nte, maxl = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += ns[i], maxl = ns[i] > maxl ? ns[i] : maxl;
    Vec *bucket = calloc((size_t)maxl + 1, sizeof *bucket);
    for (size_t i = 0; i < n; i++)
        vec_push(&bucket[ns[i]], (uint32_t)i);
    uint64_t ntr_sent = (uint64_t)((1 - (nte ? f : 0)) * (double)total);
    int64_t nom_tr = (int64_t)(ntr_sent / ntr),
            nom_te = nte ? (int64_t)((total - ntr_sent) / nte) : 0;
    int64_t maxs = maxl;
    size_t placed = 0;
    for (uint32_t s = 0; s < S; s++) {
        uint32_t id = bucket[maxs].v[--bucket[maxs].n];
        vec_push(&shards[s], id);
        placed++;
        while (bucket[maxs].n == 0 && maxs > 0)
            maxs--;
        int64_t *nom = s < ntr ? &nom_tr : &nom_te;
        if ((int64_t)ns[id] > *nom) *nom = ns[id];
    }
    uint64_t *cnt = calloc(S, sizeof *cnt), hist[4], passes = 0;
    int nh = 0;
    for (;;) {
        for (uint32_t s = 0; s < S; s++) {
            cnt[s] = 0;
            for (size_t j = 0; j < shards[s].n; j++)
                cnt[s] += ns[shards[s].v[j]];
        }
        if (placed == n) break;
        uint64_t med_tr = ref_median2(cnt, ntr), med_te = ref_median2(cnt + ntr, nte);
        for (uint32_t s = 0; s < S; s++) {
            int64_t nom = s < ntr ? nom_tr : nom_te;
            int64_t want = nom - (int64_t)cnt[s] < maxs ? nom - (int64_t)cnt[s] : maxs;
            while (bucket[maxs].n == 0 && maxs > 0)
                maxs--;
            while (want > 0 && bucket[want].n == 0)
                want--;
            if (want <= 0 || 2 * cnt[s] > (s < ntr ? med_tr : med_te)) continue;
            vec_push(&shards[s], bucket[want].v[--bucket[want].n]);
            placed++;
        }
        passes++;
        if (nh == 4) memmove(hist, hist + 1, 3 * sizeof *hist), nh--;
        hist[nh++] = n - placed;
        int same = 1;
        for (int i = 1; i < nh; i++)
            same &= hist[i] == hist[i - 1];
        if (same) nom_tr++;
    }
    for (uint32_t l = 0; l <= maxl; l++)
        free(bucket[l].v);
    free(bucket);
    free(cnt);
    return passes;
}

/* The plan equals the reference lists. */
static int plan_equals(const ShardPlan *p, Vec *ref) {
    for (uint32_t s = 0; s < p->ntrain + p->ntest; s++) {
        if (p->first[s + 1] - p->first[s] != ref[s].n) return 0;
        if (ref[s].n && memcmp(p->ids + p->first[s], ref[s].v, ref[s].n * sizeof(uint32_t)))
            return 0;
    }
    return 1;
}

/* Plan as "a b c|d e|..." for readable comparisons. */
static void plan_str(const ShardPlan *p, Buf *b) {
    buf_clear(b);
    char num[32];
    for (uint32_t s = 0; s < p->ntrain + p->ntest; s++) {
        if (s) buf_putc(b, '|');
        for (uint64_t j = p->first[s]; j < p->first[s + 1]; j++) {
            snprintf(num, sizeof num, j > p->first[s] ? " %u" : "%u", p->ids[j]);
            buf_puts(b, num);
        }
    }
}

static void check_plan(const char *what, const uint32_t *ns, size_t n, uint32_t ntr, uint32_t nte,
                       double f, const char *want) {
    ShardSpec spec = {ntr, nte, f};
    ShardPlan p;
    Err err;
    Buf b = {0};
    if (shard_balance(ns, n, &spec, &p, &err)) {
        buf_puts(&b, "ERR ");
        buf_puts(&b, err.msg);
    } else {
        plan_str(&p, &b);
        shard_plan_free(&p);
    }
    test_mem_eq(what, b.data, b.len, want, strlen(want));
    buf_free(&b);
}

static void test_examples(void) {
    /* spec 9.3: training_0 = [10,0,6,4,3] (21), training_1 = [2,8,1,9,11]
     * (20), test_0 = [5,7] (11) */
    uint32_t ex[] = {5, 3, 8, 1, 2, 7, 4, 4, 6, 2, 9, 1};
    check_plan("spec 9.3 worked example", ex, 12, 2, 1, 0.2, "10 0 6 4 3|2 8 1 9 11|5 7");
    ShardSpec spec = {2, 1, 0.2};
    ShardPlan p;
    Err err;
    shard_balance(ex, 12, &spec, &p, &err);
    test_cond("spec 9.3: shard sentence counts 21 20 11",
              p.nsent[0] == 21 && p.nsent[1] == 20 && p.nsent[2] == 11);
    test_cond("spec 9.3: 52 sentences, nominal 20 and 11",
              p.st.total == 52 && p.st.nominal_train0 == 20 && p.st.nominal_test0 == 11);
    test_cond("spec 9.3: 7 passes as the original prints", p.st.passes == 7);
    shard_plan_free(&p);

    /* hand-made cases; expectations from the original */
    uint32_t eq[] = {3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
    check_plan("equal lengths, 3+1 shards", eq, 10, 3, 1, 0.2, "9 5 1|8 4 0|7 3|6 2");
    check_plan("equal lengths, 2+2 shards", eq, 10, 2, 2, 0.1, "9 5 3 1|8 4 2 0|7|6");
    uint32_t one[] = {4, 1, 7, 2, 9};
    check_plan("one document per shard: longest first", one, 5, 3, 2, 0.1, "4|2|0|3|1");
    uint32_t big[] = {1, 1, 1, 1, 1, 1, 1, 1, 50};
    check_plan("one document above nominal", big, 9, 2, 1, 0.1, "8|7 5 3 1|6 4 2 0");
    uint32_t mix[] = {100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 30, 30, 30, 30};
    check_plan("long and short documents", mix, 16, 2, 1, 0.2,
               "0|15 13 12 9 7 5 3 1|14 11 10 8 6 4 2");

    /* documents without sentences */
    uint32_t z1[] = {5, 0, 0};
    check_plan("0-sentence documents taken by the first pass (as the original)", z1, 3, 2, 1, 0.1,
               "0|2|1");
    uint32_t z2[] = {0, 0, 0};
    check_plan("only 0-sentence documents", z2, 3, 1, 1, 0.1, "2 0|1");

    /* hu: no test shards, fraction ignored */
    check_plan("training shards only", ex, 12, 3, 0, 0.5, "10 7 1 4|2 8 9 11|5 0 6 3");

    check_plan("fewer documents than shards", one, 5, 4, 2, 0.1,
               "ERR 5 documents for 6 shards (4 training + 2 test): each shard needs at least one "
               "document");
    check_plan("no documents", one, 0, 1, 0, 0,
               "ERR 0 documents for 1 shards (1 training + 0 test): each shard "
               "needs at least one document");
    check_plan("bad fraction", ex, 12, 2, 1, 1.5,
               "ERR the test fraction must be in [0, 1], not 1.5");
}

/* Random inputs against the reference: assignment and pass count. */
static void test_random(void) {
    Rng rng;
    rng_seed(&rng, 20240611);
    int same = 0, passes_same = 0, stalled = 0, runs = 300;
    for (int r = 0; r < runs; r++) {
        size_t n = 3 + (uint32_t)rng_u64(&rng) % 250;
        uint32_t *ns = malloc(n * sizeof *ns);
        uint32_t base = (uint32_t[]){3, 20, 300, 1000}[(uint32_t)rng_u64(&rng) % 4];
        for (size_t i = 0; i < n; i++) {
            uint32_t spread = base / (1 + (uint32_t)rng_u64(&rng) % 8) + 1;
            ns[i] = base - spread / 2 + (uint32_t)rng_u64(&rng) % spread;
            if ((uint32_t)rng_u64(&rng) % 10 == 0) ns[i] = 1 + (uint32_t)rng_u64(&rng) % 3;
            if (!ns[i]) ns[i] = 1;
        }
        uint32_t S = 2 + (uint32_t)rng_u64(&rng) % (n < 40 ? n - 1 : 39);
        uint32_t nte = r % 5 == 0 ? 0 : 1 + (uint32_t)rng_u64(&rng) % (S - 1);
        double f = (double[]){0.1, 0.2, 0.05, 0.5}[(uint32_t)rng_u64(&rng) % 4];
        Vec *ref = calloc(S, sizeof *ref);
        uint64_t rp = ref_balance(ns, n, S - nte, nte, f, ref);
        ShardSpec spec = {S - nte, nte, f};
        ShardPlan p;
        Err err;
        if (shard_balance(ns, n, &spec, &p, &err) == 0) {
            same += plan_equals(&p, ref);
            passes_same += p.st.passes == rp;
            stalled += p.st.skipped > 0;
            shard_plan_free(&p);
        }
        for (uint32_t s = 0; s < S; s++)
            free(ref[s].v);
        free(ref);
        free(ns);
    }
    test_cond("random inputs: same assignment as the reference", same == runs);
    test_cond("random inputs: same number of passes", passes_same == runs);
    test_cond("random inputs: some stalled and were fast-forwarded", stalled >= 20);
    if (same != runs || stalled < 20) printf("  %d/%d same, %d stalled\n", same, runs, stalled);
}

/* 0-sentence documents left after the first pass: the others are placed as
 * the original places them without the empty ones, which are then dealt
 * round-robin to the training shards. */
static void test_zero_left(void) {
    uint32_t ns[] = {4, 0, 2, 7, 0, 1, 3, 0, 5, 2, 0, 6};
    uint32_t nz[] = {4, 2, 7, 1, 3, 5, 2, 6}, map[] = {0, 2, 3, 5, 6, 8, 9, 11};
    Vec ref[3] = {{0}};
    ref_balance(nz, 8, 2, 1, 0.2, ref);
    ShardSpec spec = {2, 1, 0.2};
    ShardPlan p;
    Err err;
    int rc = shard_balance(ns, 12, &spec, &p, &err);
    test_cond("zeros left: balances", rc == 0);
    if (rc) return;
    int ok = 1;
    for (uint32_t s = 0; s < 3; s++) {
        size_t k = 0;
        for (uint64_t j = p.first[s]; j < p.first[s + 1]; j++)
            if (ns[p.ids[j]]) ok &= k < ref[s].n && p.ids[j] == map[ref[s].v[k++]];
        ok &= k == ref[s].n;
    }
    test_cond("zeros left: the other documents as without them", ok);
    /* zeros go last, highest id first, to training 0, 1, 0, 1 */
    Buf b = {0};
    plan_str(&p, &b);
    const char *tail0 = " 10 4", *tail1 = " 7 1";
    test_cond("zeros left: dealt round-robin to training shards",
              b.len > 8 && strstr(b.data, tail0) && strstr(b.data, tail1));
    test_cond("zeros left: 4 empty documents counted", p.st.empty_docs == 4);
    int seen[12] = {0}, once = 1;
    for (uint64_t j = 0; j < p.first[3]; j++)
        seen[p.ids[j]]++;
    for (int i = 0; i < 12; i++)
        once &= seen[i] == 1;
    test_cond("zeros left: every document exactly once", once && p.first[3] == 12);
    buf_free(&b);
    shard_plan_free(&p);
    for (int s = 0; s < 3; s++)
        free(ref[s].v);
}

/* A stall that needs thousands of one-step increments in the original. */
static void test_long_stall(void) {
    uint32_t ns[] = {3000, 3000, 2999, 2998, 1, 1, 3001, 2997, 2996, 3003};
    Vec ref[4] = {{0}};
    uint64_t rp = ref_balance(ns, 10, 3, 1, 0.1, ref);
    ShardSpec spec = {3, 1, 0.1};
    ShardPlan p;
    Err err;
    shard_balance(ns, 10, &spec, &p, &err);
    test_cond("long stall: same assignment", plan_equals(&p, ref));
    test_cond("long stall: same pass count", p.st.passes == rp);
    test_cond("long stall: passes were skipped", p.st.skipped > 500);
    if (p.st.passes != rp)
        printf("  passes %llu, reference %llu\n", (unsigned long long)p.st.passes,
               (unsigned long long)rp);
    shard_plan_free(&p);
    for (int s = 0; s < 4; s++)
        free(ref[s].v);
}

/* ---- white space ---- */

static void test_strip(void) {
    int bad = 0, spaces = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        unsigned char u[8] = "x";
        size_t k = utf8_encode(cp, u + 1);
        u[1 + k] = 'y';
        const char *s = (const char *)u + 1;
        size_t n = k;
        shard_strip(&s, &n);
        int py = uni_is(cp, UNI_SPACE);
        spaces += py;
        if ((n == 0) != py) bad++;
        s = (const char *)u, n = k + 2; /* inside text: never stripped */
        shard_strip(&s, &n);
        if (n != k + 2) bad++;
    }
    test_cond("strip: exactly str.isspace() characters (uniprop), none inside text", bad == 0);
    test_cond("strip: 29 white-space code points", spaces == 29);
    const char *s = " \t\xc2\xa0"
                    "a b\xe3\x80\x80\r";
    size_t n = strlen(s);
    shard_strip(&s, &n);
    test_mem_eq("strip: both ends", s, n, "a b", 3);
    s = "\xc2";
    n = 1;
    shard_strip(&s, &n);
    test_cond("strip: a stray byte is not space", n == 1);
}

/* ---- index ---- */

static void index_text(ShardIndex *ix, ShardLayout layout, const char *text) {
    shard_index_init(ix, layout);
    FILE *fp = fmemopen((void *)text, strlen(text), "r");
    Err err;
    shard_index_read(ix, fp, "t.txt", NULL, NULL, NULL, &err);
    fclose(fp);
}

/* "off+len[s]:nsent " per document. */
static void index_str(const ShardIndex *ix, Buf *b) {
    buf_clear(b);
    char t[64];
    for (size_t i = 0; i < ix->ndocs; i++) {
        snprintf(t, sizeof t, "%llu+%llu%s:%u ", (unsigned long long)shard_doc_off(ix, (uint32_t)i),
                 (unsigned long long)shard_doc_len(ix, (uint32_t)i),
                 shard_doc_strip(ix, (uint32_t)i) ? "s" : "", ix->nsent[i]);
        buf_puts(b, t);
    }
}

static void test_index(void) {
    ShardIndex ix;
    Buf b = {0};
    const char *messy = "\n\na1\n a2 \n\n\n\nb1\n\n\n";
    index_text(&ix, SHARD_NVIDIA, messy);
    index_str(&ix, &b);
    test_str_eq("nvidia: runs of non-blank lines", b.data, "2+8s:2 13+3:1 ");
    test_cond("nvidia: 3 sentences, 20 bytes",
              ix.sentences == 3 && ix.bytes == 18 && ix.ninputs == 1);
    shard_index_free(&ix);
    /* hu: [""] [a1 a2] [""] [b1]; the trailing blank-only block dropped */
    index_text(&ix, SHARD_HU, messy);
    index_str(&ix, &b);
    test_str_eq("hu: sharding.py's blocks", b.data, "0+1:1 2+8s:2 11+1:1 13+3:1 ");
    shard_index_free(&ix);
    index_text(&ix, SHARD_HU, "a\nb\n\nc\n");
    index_str(&ix, &b);
    test_str_eq("hu: the last block is kept without a final blank line", b.data, "0+4:2 5+2:1 ");
    shard_index_free(&ix);
    index_text(&ix, SHARD_NVIDIA, "a\n\nb c");
    index_str(&ix, &b);
    test_str_eq("nvidia: a last line without newline is flagged", b.data, "0+2:1 3+3s:1 ");
    shard_index_free(&ix);
    index_text(&ix, SHARD_NVIDIA, "a\r\n\xe2\x80\x83\n\t\nb\n");
    index_str(&ix, &b);
    test_str_eq("nvidia: CR and Unicode white space", b.data, "0+3s:1 9+2:1 ");
    shard_index_free(&ix);

    /* two inputs: documents never span them; offsets restart */
    shard_index_init(&ix, SHARD_NVIDIA);
    Err err;
    FILE *a = fmemopen("x\ny", 3, "r"), *c = fmemopen("z\n\nw\n", 5, "r");
    shard_index_read(&ix, a, "a", NULL, NULL, NULL, &err);
    shard_index_read(&ix, c, "c", NULL, NULL, NULL, &err);
    fclose(a), fclose(c);
    index_str(&ix, &b);
    test_str_eq("two inputs", b.data, "0+3s:2 0+2:1 3+2:1 ");
    test_cond("two inputs: input numbers", ix.ndocs == 3 && shard_doc_input(&ix, 0) == 0 &&
                                               shard_doc_input(&ix, 1) == 1 &&
                                               shard_doc_input(&ix, 2) == 1);
    shard_index_free(&ix);

    /* inputs without documents between and before them */
    shard_index_init(&ix, SHARD_NVIDIA);
    const char *texts[] = {"", "x\n\ny\n", "\n\n", "", "z\n"};
    for (int i = 0; i < 5; i++) {
        FILE *f = *texts[i] ? fmemopen((void *)texts[i], strlen(texts[i]), "r")
                            : fopen("/dev/null", "r"); /* (fmemopen: no empty buffer) */
        shard_index_read(&ix, f, "e", NULL, NULL, NULL, &err);
        fclose(f);
    }
    test_cond("empty inputs: documents 0, 1, 2 in inputs 1, 1, 4",
              ix.ninputs == 5 && ix.ndocs == 3 && shard_doc_input(&ix, 0) == 1 &&
                  shard_doc_input(&ix, 1) == 1 && shard_doc_input(&ix, 2) == 4);
    shard_index_free(&ix);

    /* offsets past 4 GiB as the index records them: the first input's
     * lines placed there (pos set by hand), the second's from 0 */
    shard_index_init(&ix, SHARD_NVIDIA);
    ix.pos = (UINT64_C(1) << 32) - 2;
    shard_index_line(&ix, "a", 1, 1, "big", &err); /* 4 GiB - 2 */
    shard_index_line(&ix, "", 0, 1, "big", &err);
    shard_index_line(&ix, "b", 1, 1, "big", &err); /* 4 GiB + 1 */
    shard_index_line(&ix, "", 0, 1, "big", &err);
    shard_index_line(&ix, "c", 1, 1, "big", &err); /* 4 GiB + 4 */
    shard_index_end_input(&ix, "big", &err);
    shard_index_line(&ix, "d", 1, 1, "small", &err);
    shard_index_end_input(&ix, "small", &err);
    index_str(&ix, &b);
    test_str_eq("offsets past 4 GiB", b.data,
                "4294967294+2:1 4294967297+2:1 4294967300+2:1 0+2:1 ");
    test_cond("... their high bits kept where they change",
              ix.nhigh == 2 && shard_doc_input(&ix, 2) == 0 && shard_doc_input(&ix, 3) == 1);
    shard_index_free(&ix);

    /* lengths of 2 GiB and more (SHARD_LEN_LONG: the length in the long
     * list) and offsets past 4 GiB (their high bits where they change; a
     * second input starts at 0 again) */
    {
        uint32_t off_lo[5] = {0, 10, 705032714, 705032724, 7};
        ShardHigh highs[2] = {{2, 1}, {4, 0}};
        uint32_t len[5] = {10, SHARD_LEN_LONG | SHARD_LEN_STRIP, 10, SHARD_LEN_LONG, 3};
        ShardLongDoc longs[2] = {{1, 5000000000ULL}, {3, UINT64_C(1) << 40}};
        ShardIndex h = {.off_lo = off_lo,
                        .highs = highs,
                        .nhigh = 2,
                        .len = len,
                        .longs = longs,
                        .nlong = 2,
                        .ndocs = 5};
        test_cond("long documents: lengths and flags",
                  shard_doc_len(&h, 0) == 10 && shard_doc_len(&h, 1) == 5000000000ULL &&
                      shard_doc_strip(&h, 1) && shard_doc_len(&h, 2) == 10 &&
                      shard_doc_len(&h, 3) == UINT64_C(1) << 40 && !shard_doc_strip(&h, 3) &&
                      !shard_doc_strip(&h, 0) && shard_doc_len(&h, 4) == 3);
        test_cond("... offsets past 4 GiB",
                  shard_doc_off(&h, 0) == 0 && shard_doc_off(&h, 1) == 10 &&
                      shard_doc_off(&h, 2) == 5000000010ULL &&
                      shard_doc_off(&h, 3) == 5000000020ULL && shard_doc_off(&h, 4) == 7);
    }

    /* a line longer than the read buffer (4 MB), chunk boundaries */
    size_t big = (9u << 20) + 7;
    char *text = malloc(big + 16);
    memset(text, 'q', big);
    memcpy(text + big, "\n\nr\n", 5);
    index_text(&ix, SHARD_NVIDIA, text);
    index_str(&ix, &b);
    char want[64];
    snprintf(want, sizeof want, "0+%zu:1 %zu+2:1 ", big + 1, big + 2);
    test_str_eq("a 9 MB line", b.data, want);
    shard_index_free(&ix);
    free(text);
    buf_free(&b);
}

/* ---- write ---- */

static char *slurp(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    Buf b = {0};
    char tmp[4096];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, fp)) > 0)
        buf_append(&b, tmp, k);
    fclose(fp);
    *n = b.len;
    if (!b.data) buf_reserve(&b, 1);
    return b.data;
}

/* What the signal actions are while shard_write runs (its progress
 * callback looks). */
typedef struct SigSeen {
    int calls, hup_ignored, term_caught;
} SigSeen;

static void note_signals(void *ctx, uint64_t bytes, uint64_t items) {
    (void)bytes, (void)items;
    SigSeen *s = ctx;
    struct sigaction hup, term;
    sigaction(SIGHUP, NULL, &hup);
    sigaction(SIGTERM, NULL, &term);
    s->hup_ignored = (s->calls == 0 || s->hup_ignored) && hup.sa_handler == SIG_IGN;
    s->term_caught = (s->calls == 0 || s->term_caught) && term.sa_handler != SIG_DFL &&
                     term.sa_handler != SIG_IGN;
    s->calls++;
}

static void test_write(void) {
    char dir[] = "/tmp/test_shard.XXXXXX";
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    char path[256];
    const char *text = "d0a\nd0b\n\n  d1 \n\n\nd2a\nd2b\nd2c\n\nd3\nd4\n\n";
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *fp = fopen(path, "wb");
    fputs(text, fp);
    fclose(fp);
    /* a stale shard and unrelated files */
    const char *others[] = {"x_training_9.txt", "x_test_3.txt", "x_training_01.txt", "notes.txt"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, others[i]);
        fclose(fopen(path, "w"));
    }
    ShardIndex ix;
    FILE *fp2;
    index_text(&ix, SHARD_NVIDIA, text);
    ShardSpec spec = {2, 1, 0.2};
    ShardPlan p;
    Err err;
    test_cond("write: balance", shard_balance(ix.nsent, ix.ndocs, &spec, &p, &err) == 0);
    snprintf(path, sizeof path, "%s/in.txt", dir);
    fp = fopen(path, "rb");
    ShardInput in = {fileno(fp), 0, "in.txt"};
    ShardWriteStats ws;
    /* SIGHUP inherited as ignored (nohup) stays ignored while the shards
     * are written; SIGTERM gets the cleanup handler */
    struct sigaction ign = {0}, before;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGHUP, &ign, &before);
    SigSeen seen = {0};
    int rc = shard_write(&ix, &in, &p, dir, "x", 1, note_signals, &seen, &ws, &err);
    test_cond("write: ok", rc == 0);
    test_cond("write: SIGHUP inherited as ignored stays ignored while writing",
              seen.calls && seen.hup_ignored);
    test_cond("write: SIGTERM is caught while writing", seen.term_caught);
    sigaction(SIGHUP, &before, NULL);
    /* counts 2 1 3 2 (d3 d4 is one document): first pass 2->train0,
     * 3->train1, 1->test0 ... */
    Buf want = {0}, got = {0};
    const char *docs[] = {"d0a\nd0b\n\n", "d1\n\n", "d2a\nd2b\nd2c\n\n", "d3\nd4\n\n"};
    uint64_t total = 0;
    for (uint32_t s = 0; s < 3; s++) {
        buf_clear(&want);
        for (uint64_t j = p.first[s]; j < p.first[s + 1]; j++)
            buf_puts(&want, docs[p.ids[j]]);
        char fname[64];
        snprintf(path, sizeof path, "%s/%s", dir, shard_file_name(&p, s, "x", fname, sizeof fname));
        size_t n = 0;
        char *data = slurp(path, &n);
        test_cond("write: shard exists", data != NULL);
        if (data)
            test_mem_eq("write: shard content", data, n, want.data ? want.data : "", want.len);
        total += n;
        free(data);
    }
    test_cond("write: byte count", ws.bytes == total && total == 33);
    test_cond("write: removed the 2 stale shards", ws.removed == 2);
    int entries = 0, temps = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        entries++;
        temps += strstr(e->d_name, ".tmp.") != NULL;
    }
    closedir(d);
    test_cond("write: in.txt, 3 shards, 2 unrelated files, no temp files",
              entries == 6 && temps == 0);
    snprintf(path, sizeof path, "%s/x_training_01.txt", dir);
    test_cond("write: a non-canonical number is not a shard name", access(path, F_OK) == 0);

    /* without force a shard file that is there is kept, and none of this
     * run's shards is put in place (all or none) */
    snprintf(path, sizeof path, "%s/x_test_0.txt", dir);
    fp2 = fopen(path, "wb");
    fputs("precious\n", fp2);
    fclose(fp2);
    char t0[256];
    snprintf(t0, sizeof t0, "%s/x_training_0.txt", dir);
    truncate(t0, 0); /* so that a replaced x_training_0 would show */
    rc = shard_write(&ix, &in, &p, dir, "x", 0, NULL, NULL, &ws, &err);
    test_cond("write: no force, a shard there: fails",
              rc == -1 && strstr(err.msg, "x_training_0.txt: created by another process"));
    size_t n = 0;
    char *kept = slurp(t0, &n);
    test_cond("write: ... the file there is kept", kept && n == 0);
    free(kept);
    kept = slurp(path, &n);
    test_cond("write: ... and the others too", kept && n == 9 && !memcmp(kept, "precious\n", 9));
    free(kept);
    int tmps = 0;
    d = opendir(dir);
    while ((e = readdir(d)) != NULL)
        tmps += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    test_cond("write: ... no temp file left", tmps == 0);

    /* the input changed since it was indexed */
    snprintf(path, sizeof path, "%s/in.txt", dir);
    truncate(path, 10);
    rc = shard_write(&ix, &in, &p, dir, "y", 0, NULL, NULL, &ws, &err);
    test_cond("write: truncated input fails",
              rc == -1 && strstr(err.msg, "changed while being sharded"));
    snprintf(path, sizeof path, "%s/y_training_0.txt", dir);
    int leftover = access(path, F_OK) == 0;
    d = opendir(dir);
    while ((e = readdir(d)) != NULL)
        leftover |= strncmp(e->d_name, "y_", 2) == 0;
    closedir(d);
    test_cond("write: a failed run leaves no shard and no temp file", !leftover);
    fclose(fp);
    shard_plan_free(&p);
    shard_index_free(&ix);
    buf_free(&want), buf_free(&got);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    test_cond("cleanup", system(cmd) == 0);
}

/* shard_fit: the counts of a spec too large for its documents, left alone
 * when the documents fill it (the originals' assignment). */
static void test_fit(void) {
    static const struct {
        uint32_t ntrain, ntest;
        double f;
        size_t n;
        int changed;
        uint32_t want_train, want_test;
    } cases[] = {
        {50, 0, 0, 1, 1, 1, 0},            /* hu: one document, one shard */
        {256, 256, 0.1, 105, 1, 23, 3},    /* the 206-page sample: about four documents each */
        {256, 256, 0.1, 512, 0, 256, 256}, /* enough documents: as asked */
        {256, 256, 0.1, 600, 0, 256, 256},
        {3, 1, 0.1, 3, 1, 1, 1}, /* a test shard stays when asked for */
        {4, 0, 0, 9, 0, 4, 0},   /* 9 documents fill 4 shards */
        {4, 2, 0.5, 5, 1, 1, 1}, /* never more than asked for, at least one each */
        {2, 0, 0, 1, 1, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ShardSpec sp = {cases[i].ntrain, cases[i].ntest, cases[i].f};
        int ch = shard_fit(&sp, cases[i].n);
        char name[96];
        snprintf(name, sizeof name, "shard_fit %u+%u for %zu documents -> %u+%u", cases[i].ntrain,
                 cases[i].ntest, cases[i].n, cases[i].want_train, cases[i].want_test);
        test_cond(name, ch == cases[i].changed && sp.ntrain == cases[i].want_train &&
                            sp.ntest == cases[i].want_test);
        if (ch) { /* and the documents then fill the shards */
            uint32_t *ns = xcalloc(cases[i].n, sizeof *ns);
            for (size_t k = 0; k < cases[i].n; k++)
                ns[k] = 1 + (uint32_t)k % 7;
            ShardPlan plan;
            Err err;
            test_cond("... a plan for them", shard_balance(ns, cases[i].n, &sp, &plan, &err) == 0);
            shard_plan_free(&plan);
            free(ns);
        }
    }
}

/* Bounded memory: a line longer than io_max_line() stops the index; a
 * document far longer than the copy chunk, whose lines are stripped as
 * they are written, is written line by line with the same bytes. */
static void test_long(void) {
    Buf text = {0}, want = {0};
    buf_puts(&text, "a\n\n");
    for (int i = 0; i < 2000; i++)
        buf_putc(&text, 'x');
    buf_puts(&text, "\n\nb\n");
    io_set_max_line(1000);
    ShardIndex ix;
    shard_index_init(&ix, SHARD_NVIDIA);
    FILE *fp = fmemopen(text.data, text.len, "r");
    Err err;
    test_cond("a line over the limit: the index fails",
              shard_index_read(&ix, fp, "t.txt", NULL, NULL, NULL, &err) == -1);
    test_str_eq("... naming the line and the option", err.msg,
                "t.txt:3: line longer than 1000 bytes (--max-line-bytes raises the limit)");
    fclose(fp);
    shard_index_free(&ix);
    io_set_max_line(0);

    char dir[] = "/tmp/test_shard.XXXXXX";
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    buf_clear(&text);
    for (int i = 0; i < 150000; i++) { /* 3.3 MB, trailing blanks to strip */
        char line[64];
        snprintf(line, sizeof line, "sentence %d of the long one  \n", i);
        buf_puts(&text, line);
        buf_append(&want, line, strlen(line) - 3);
        buf_putc(&want, '\n');
    }
    buf_puts(&want, "\n");
    char path[256];
    snprintf(path, sizeof path, "%s/in.txt", dir);
    fp = fopen(path, "wb");
    fwrite(text.data, 1, text.len, fp);
    fclose(fp);
    shard_index_init(&ix, SHARD_NVIDIA);
    fp = fopen(path, "rb");
    test_cond("long document: indexed",
              shard_index_read(&ix, fp, "in.txt", NULL, NULL, NULL, &err) == 0);
    test_cond("... one document to strip", ix.ndocs == 1 && (ix.len[0] & SHARD_LEN_STRIP));
    ShardSpec spec = {1, 0, 0.0};
    ShardPlan p;
    test_cond("... balanced", shard_balance(ix.nsent, ix.ndocs, &spec, &p, &err) == 0);
    ShardInput in = {fileno(fp), 0, "in.txt"};
    ShardWriteStats ws;
    test_cond("... written", shard_write(&ix, &in, &p, dir, "z", 1, NULL, NULL, &ws, &err) == 0);
    snprintf(path, sizeof path, "%s/z_training_0.txt", dir);
    size_t n = 0;
    char *data = slurp(path, &n);
    test_cond("... the shard exists", data != NULL);
    if (data) test_mem_eq("... every line stripped, across chunks", data, n, want.data, want.len);
    free(data);
    fclose(fp);
    shard_plan_free(&p);
    shard_index_free(&ix);
    buf_free(&text), buf_free(&want);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    test_cond("cleanup", system(cmd) == 0);
}

int main(void) {
    test_long();
    test_examples();
    test_fit();
    test_random();
    test_zero_left();
    test_long_stall();
    test_strip();
    test_index();
    test_write();
    return test_report();
}
