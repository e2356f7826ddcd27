/* test_bzdec.c - the fast bzip2 stream decoder (prep/bzdec.c).
 *
 * Test data is compressed here with libbz2 at block sizes 1, 5 and 9:
 * varied text, byte runs of every length around the run-length coding's
 * thresholds (4 equal bytes + a count byte, counts up to 255), a single
 * repeated byte (one-symbol alphabet, very long RUNA/RUNB runs), all 256
 * byte values, and a skewed distribution that yields Huffman codes longer
 * than the 10-bit lookup table. Each must decode to exactly the input with
 * the whole stream consumed. Corrupted (bit flips) and truncated streams
 * must be declined (-1, output untouched) or, where a flip only hits
 * padding, still give the exact input. The real samples in tests/data are
 * decoded stream by stream and compared with `bzip2 -dc`.
 */
#include <bzlib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "prep/bzdec.h"

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 11);
}

static unsigned char *compress(const unsigned char *in, size_t n, int level, size_t *clen) {
    unsigned int cap = (unsigned int)(n + n / 50 + 1024);
    unsigned char *c = malloc(cap);
    int r = BZ2_bzBuffToBuffCompress((char *)c, &cap, (char *)in, (unsigned int)n, level, 0, 30);
    if (r != BZ_OK) {
        printf("compress failed %d\n", r);
        exit(1);
    }
    *clen = cap;
    return c;
}

/* Decode with bzdec; 1 if the output equals want and all input was used. */
static int roundtrip(BzDec *d, const unsigned char *want, size_t n, int level) {
    size_t clen, used = 0, olen = 0, ocap = 0;
    unsigned char *c = compress(want, n, level, &clen), *out = NULL;
    int r = bzdec_stream(d, c, clen, &out, &olen, &ocap, &used);
    int ok = r == 0 && used == clen && olen == n && (n == 0 || memcmp(out, want, n) == 0);
    free(c);
    free(out);
    return ok;
}

static void test_crc(void) {
    const unsigned char *s = (const unsigned char *)"123456789";
    test_cond("CRC-32/BZIP2 check value", ~bzdec_crc_update(~0u, s, 9) == 0xFC891918u);
    unsigned char buf[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = (unsigned char)rnd();
    uint32_t whole = bzdec_crc_update(~0u, buf, 1000);
    int same = 1;
    for (size_t cut = 0; cut <= 1000; cut += 37) {
        uint32_t c = bzdec_crc_update(~0u, buf, cut);
        c = bzdec_crc_update(c, buf + cut, 1000 - cut);
        same &= c == whole;
    }
    test_cond("CRC same however the data is split", same);
}

static void test_shapes(BzDec *d) {
    size_t n = 1500000;
    unsigned char *b = malloc(n);
    const char *words[] = {"the ",  "bzip2 ",           "format ",    "uses ",
                           "a ",    "Burrows",          "-Wheeler ",  "transform, ",
                           "then ", "move-to-front.\n", "Árvíztűrő ", "tükörfúrógép "};
    size_t k = 0;
    while (k < n) {
        const char *w = words[rnd() % 12];
        size_t l = strlen(w);
        if (k + l > n) l = n - k;
        memcpy(b + k, w, l);
        k += l;
    }
    for (int level = 1; level <= 9; level += 4) {
        char name[64];
        snprintf(name, sizeof name, "text, level %d (several blocks)", level);
        test_cond(name, roundtrip(d, b, n, level));
    }

    /* runs of every length 1..300 of varying bytes */
    k = 0;
    for (int len = 1; len <= 300; len++) {
        unsigned char c = (unsigned char)('a' + len % 26);
        for (int i = 0; i < len; i++)
            b[k++] = c;
        b[k++] = '|';
    }
    test_cond("runs of length 1..300", roundtrip(d, b, k, 9));
    test_cond("runs of length 1..300, level 1", roundtrip(d, b, k, 1));

    memset(b, 'x', n);
    test_cond("one byte repeated 1.5M times", roundtrip(d, b, n, 9));
    test_cond("a single byte", roundtrip(d, b, 1, 9));
    test_cond("four equal bytes at the end", roundtrip(d, b, 4, 9));
    test_cond("five equal bytes", roundtrip(d, b, 5, 9));

    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)rnd();
    test_cond("random bytes (all 256 values)", roundtrip(d, b, 400000, 9));

    /* skewed: symbol i with probability ~ 2^-(i/8), so rare symbols get
     * codes longer than the lookup table */
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rnd(), s = 0;
        while (s < 200 && (r & 1)) {
            s++;
            r >>= 1;
            if (s % 20 == 0) r = rnd();
        }
        b[i] = (unsigned char)(s * 7 + (rnd() % 3));
    }
    test_cond("skewed distribution (long codes)", roundtrip(d, b, n, 9));

    /* the inverse BWT is walked in segments of about 8 KB: block sizes
     * around one and several segments, random and repetitive text */
    static const size_t sizes[] = {2,     3,     7,     255,   8191,  8192,  8193,
                                   16383, 16384, 16385, 49152, 65537, 131071};
    int all = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (size_t j = 0; j < sizes[i]; j++)
            b[j] = i % 2 ? (unsigned char)rnd() : (unsigned char)"abcab"[rnd() % 5];
        if (!roundtrip(d, b, sizes[i], 1)) {
            fprintf(stderr, "  block of %zu bytes\n", sizes[i]);
            all = 0;
        }
    }
    test_cond("blocks of 2..131071 bytes around walk segment sizes", all);
    free(b);
}

static void test_damage(BzDec *d) {
    size_t n = 300000, clen;
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)("abcdefgh  \n"[rnd() % 11]);
    unsigned char *c = compress(b, n, 1, &clen);
    unsigned char *out = malloc(16);
    size_t ocap = 16;
    int bad = 0, declined = 0;
    for (int t = 0; t < 300; t++) {
        size_t bit = rnd() % (clen * 8);
        c[bit / 8] ^= (unsigned char)(0x80 >> (bit % 8));
        size_t olen = 3, used;
        memcpy(out, "abc", 3);
        int r = bzdec_stream(d, c, clen, &out, &olen, &ocap, &used);
        if (r < 0) {
            declined++;
            if (olen != 3 || memcmp(out, "abc", 3) != 0) bad++;
        } else if (olen != n + 3 || memcmp(out + 3, b, n) != 0) {
            bad++;
        }
        c[bit / 8] ^= (unsigned char)(0x80 >> (bit % 8));
    }
    test_cond("bit flips: declined or exact, never wrong output", bad == 0);
    test_cond("bit flips: nearly all declined", declined >= 290);
    int trunc_ok = 1;
    for (size_t cut = 0; cut < clen; cut += 1 + clen / 97) {
        size_t olen = 0, used;
        if (bzdec_stream(d, c, cut, &out, &olen, &ocap, &used) == 0 || olen != 0) trunc_ok = 0;
    }
    test_cond("truncated streams declined", trunc_ok);
    size_t olen = 0, used;
    test_cond("not bz2 declined", bzdec_stream(d, (const unsigned char *)"BZh0xxxxxxxx", 12, &out,
                                               &olen, &ocap, &used) < 0);
    free(out);
    free(c);
    free(b);
}

static unsigned char *slurp_cmd(const char *cmd, size_t *n) {
    FILE *p = popen(cmd, "r");
    size_t cap = 1 << 20, len = 0;
    unsigned char *b = malloc(cap);
    size_t r;
    while (p && (r = fread(b + len, 1, cap - len, p)) > 0) {
        len += r;
        if (len == cap) b = realloc(b, cap *= 2);
    }
    if (p) pclose(p);
    *n = len;
    return b;
}

static void test_samples(BzDec *d) {
    static const char *files[] = {"enwiki-206.xml.bz2", "elwikivoyage-17.multistream.xml.bz2",
                                  "huwiki-berlin.xml.bz2",
                                  "elwikivoyage-17.multistream-index.txt.bz2"};
    const char *dir = getenv("TESTS");
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096], cmd[4200], name[128];
        snprintf(path, sizeof path, "%s/data/%s", dir ? dir : "tests", files[i]);
        snprintf(cmd, sizeof cmd, "bzip2 -dc '%s'", path);
        size_t wn, cn;
        unsigned char *want = slurp_cmd(cmd, &wn);
        snprintf(cmd, sizeof cmd, "cat '%s'", path);
        unsigned char *c = slurp_cmd(cmd, &cn);
        unsigned char *out = NULL;
        size_t olen = 0, ocap = 0, pos = 0, used;
        int streams = 0, ok = cn > 0 && wn > 0;
        while (ok && pos < cn) {
            ok = bzdec_stream(d, c + pos, cn - pos, &out, &olen, &ocap, &used) == 0;
            pos += used;
            streams++;
        }
        snprintf(name, sizeof name, "%s: %d stream(s) = bzip2 -dc", files[i], streams);
        test_cond(name, ok && olen == wn && memcmp(out, want, wn) == 0);
        free(want);
        free(c);
        free(out);
    }
}

int main(void) {
    BzDec d = {0};
    test_crc();
    test_shapes(&d);
    test_damage(&d);
    test_samples(&d);
    bzdec_free(&d);
    return test_report();
}
