/* test_charsmap.c - the generated nmt_nfkc table (vocab/charsmap.c) run by
 * textnorm.
 *
 * Always: hand-checked normalizations (fullwidth forms, ligatures, Roman
 * numerals, circled digits, odd spaces, deleted controls, composition of
 * combining sequences and of halfwidth katakana and jamo, whitespace
 * clean-up, invalid UTF-8), the blob's layout, a second build giving the
 * same bytes, damaged blobs refused.
 *
 * When a Python with the sentencepiece package is found (WIKIBERT_SPM_PYTHON,
 * python3, or the bench venv) and run.sh's BIN/TESTS are set, against
 * SentencePiece's own nmt_nfkc: (1) the rules of both tables, decompiled by
 * SentencePiece; (2) every code point 1..U+10FFFF alone and between two
 * letters, through both normalizers; (3) real text (Wikipedia in 120
 * languages through our prep stage, Tatoeba, BERT's sample text) through
 * both; (4) a BPE model trained by spm_train on that text, written again
 * with our table, encodes it to the same ids. Only characters that the
 * linked ICU does not know (assigned in a later Unicode version than its
 * own) may differ; they are listed, never counted as passes. Without
 * Python these checks print that they did not run and count nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/test.h"
#include "vocab/charsmap.h"
#include "common/io.h"
#include "vocab/spmodel.h"
#include "vocab/textnorm.h"
#include "common/uniprop.h"
#include "common/utf8.h"

static Buf blob;

static void norm_is(const TextNorm *sn, const char *what, const char *in, size_t n,
                    const char *want, size_t wn) {
    Buf out = {0};
    textnorm_normalize(sn, in, n, &out);
    test_mem_eq(what, out.data ? out.data : "", out.len, want, wn);
    buf_free(&out);
}
/* in and want are string literals (they may hold NUL bytes) */
#define NORM(sn, what, in, want) norm_is(sn, what, in, sizeof in - 1, want, sizeof want - 1)

/* The ICU wrappers the table is built from (uniprop.h). */
static void test_uniprop_nfk(void) {
    uint32_t out[32];
    const uint32_t e_acute[] = {'e', 0x301}, precomposed = 0xE9, fi = 0xFB01, ga = 0xAC00,
                   sur = 0xD800;
    test_cond("NFKC composes e + U+0301", uni_nfkc(e_acute, 2, out, 32) == 1 && out[0] == 0xE9);
    test_cond("NFKD decomposes U+00E9",
              uni_nfkd(&precomposed, 1, out, 32) == 2 && out[0] == 'e' && out[1] == 0x301);
    test_cond("NFKC of the ligature fi",
              uni_nfkc(&fi, 1, out, 32) == 2 && out[0] == 'f' && out[1] == 'i');
    test_cond("too small a buffer: the length needed", uni_nfkc(&fi, 1, out, 1) == 2);
    test_cond("a surrogate is refused", uni_nfkc(&sur, 1, out, 32) == -1);
    test_cond("empty input", uni_nfkd(e_acute, 0, out, 32) == 0);
    test_cond("uni_nfkd_cp: fi", uni_nfkd_cp(0xFB01, out, 32) == 2 && out[0] == 'f');
    test_cond("uni_nfkd_cp: Hangul syllable to jamo",
              uni_nfkd_cp(ga, out, 32) == 2 && out[0] == 0x1100 && out[1] == 0x1161);
    test_cond("uni_nfkd_cp: U+FDFA is 18 long", uni_nfkd_cp(0xFDFA, out, 32) == 18);
    test_cond("uni_nfkd_cp: too small a buffer", uni_nfkd_cp(0xFDFA, out, 4) == -1);
    test_cond("uni_nfkd_cp: 'a' has no decomposition", uni_nfkd_cp('a', out, 32) == 0);
    test_cond("next decomposable from 'A' is U+00A0", uni_next_decomposable('A') == 0xA0);
    test_cond("next decomposable from U+00A1 is U+00A8", uni_next_decomposable(0xA1) == 0xA8);
    test_cond("next decomposable from U+AC00 is itself", uni_next_decomposable(0xAC00) == 0xAC00);
    test_cond("none after the CJK compatibility supplement",
              uni_next_decomposable(0x2FA1E) == 0x110000 &&
                  uni_next_decomposable(0x110000) == 0x110000);
    size_t visited = 0, all = 0, agree = 1;
    for (uint32_t c = uni_next_decomposable(1); c <= 0x10FFFF; c = uni_next_decomposable(c + 1)) {
        visited++;
        agree &= uni_nfkd_cp(c, out, 32) > 0;
    }
    for (uint32_t c = 1; c <= 0x10FFFF; c++)
        all += uni_nfkd_cp(c, out, 32) > 0;
    test_cond("the walk visits decomposable code points only, and all of them",
              agree && visited == all && all > 15000);
}

static void test_vectors(void) {
    Err err;
    TextNorm *sn = textnorm_new(blob.data, blob.len, NULL, &err);
    test_cond("textnorm accepts the table", sn != NULL);
    if (!sn) return;
    NORM(sn, "fullwidth ASCII",
         "\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3\xef\xbc\x91\xef\xbc\x92\xef\xbc\x81",
         "\xe2\x96\x81"
         "ABC12!");
    NORM(sn, "ligature fi", "\xef\xac\x81nd",
         "\xe2\x96\x81"
         "find");
    NORM(sn, "Roman numeral twelve", "\xe2\x85\xab", "\xe2\x96\x81XII");
    NORM(sn, "circled one", "\xe2\x91\xa0",
         "\xe2\x96\x81"
         "1");
    NORM(sn, "superscript two, one half", "x\xc2\xb2 \xc2\xbd",
         "\xe2\x96\x81x2\xe2\x96\x81"
         "1\xe2\x81\x84"
         "2");
    NORM(sn, "ideographic space",
         "a\xe3\x80\x80"
         "b",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b");
    NORM(sn, "no-break space",
         "a\xc2\xa0"
         "b",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b");
    NORM(sn, "zero width space",
         "a\xe2\x80\x8b"
         "b",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b");
    NORM(sn, "LRM, RLM, ALM are spaces",
         "a\xe2\x80\x8e"
         "b\xe2\x80\x8f"
         "c\xd8\x9c"
         "d",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b\xe2\x96\x81"
         "c\xe2\x96\x81"
         "d");
    NORM(sn, "zero width joiner kept",
         "a\xe2\x80\x8d"
         "b",
         "\xe2\x96\x81"
         "a\xe2\x80\x8d"
         "b");
    NORM(sn, "TAB, CR, FF, LF", "a\tb\rc\fd\ne",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b\xe2\x96\x81"
         "c\xe2\x96\x81"
         "d\xe2\x96\x81"
         "e");
    NORM(sn, "ASCII controls deleted",
         "a\x01\x02\x1b"
         "b\x7f"
         "c\x0b",
         "\xe2\x96\x81"
         "abc");
    NORM(sn, "C1 controls U+008F, U+009F deleted, U+0085 kept",
         "a\xc2\x8f"
         "b\xc2\x9f"
         "c\xc2\x85"
         "d",
         "\xe2\x96\x81"
         "abc\xc2\x85"
         "d");
    NORM(sn, "U+2581 is a space",
         "a\xe2\x96\x81\xe2\x96\x81"
         "b",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b");
    NORM(sn, "U+FFFD is a space",
         "a\xef\xbf\xbd"
         "b",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b");
    NORM(sn, "fullwidth tilde kept",
         "\xef\xbd\x9e"
         "a",
         "\xe2\x96\x81\xef\xbd\x9e"
         "a");
    NORM(sn, "e + combining acute composes",
         "Pe\xcc\x81"
         "cs",
         "\xe2\x96\x81"
         "P\xc3\xa9"
         "cs");
    NORM(sn, "o + double acute (Hungarian)", "o\xcc\x8b", "\xe2\x96\x81\xc5\x91");
    NORM(sn, "fullwidth e + acute composes", "\xef\xbd\x85\xcc\x81", "\xe2\x96\x81\xc3\xa9");
    NORM(sn, "three-character composition (c cedilla acute)", "c\xcc\xa7\xcc\x81",
         "\xe2\x96\x81\xe1\xb8\x89");
    NORM(sn, "Angstrom and Kelvin signs", "\xe2\x84\xab\xe2\x84\xaa", "\xe2\x96\x81\xc3\x85K");
    NORM(sn, "halfwidth katakana ka + voiced mark", "\xef\xbd\xb6\xef\xbe\x9e",
         "\xe2\x96\x81\xe3\x82\xac");
    NORM(sn, "compatibility jamo compose to a syllable", "\xe3\x84\xb1\xe3\x85\x8f",
         "\xe2\x96\x81\xea\xb0\x80");
    NORM(sn, "conjoining jamo L V T compose", "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8",
         "\xe2\x96\x81\xea\xb0\x81");
    NORM(sn, "already NFKC: unchanged", "\xc3\xa1rv\xc3\xadzt\xc5\xb1r\xc5\x91",
         "\xe2\x96\x81\xc3\xa1rv\xc3\xadzt\xc5\xb1r\xc5\x91");
    NORM(sn, "leading, trailing, double spaces", "  a  b  ",
         "\xe2\x96\x81"
         "a\xe2\x96\x81"
         "b");
    NORM(sn, "all-whitespace line is empty", " \t\xe3\x80\x80\xe2\x80\x8b ", "");
    NORM(sn, "controls only: empty", "\x01\x02", "");
    NORM(sn, "invalid byte becomes U+FFFD, not a space",
         "a\xff"
         "b",
         "\xe2\x96\x81"
         "a\xef\xbf\xbd"
         "b");
    NORM(sn, "truncated sequence: one U+FFFD per byte", "a\xe2\x82",
         "\xe2\x96\x81"
         "a\xef\xbf\xbd\xef\xbf\xbd");
    NORM(sn, "NUL passes through", "a\0b",
         "\xe2\x96\x81"
         "a\0b");
    const char *rep;
    size_t rlen;
    test_cond("a deleted control: empty replacement, one byte consumed",
              textnorm_prefix(sn, "\x01x", 2, &rep, &rlen) == 1 && rlen == 0);
    test_cond("longest match: fullwidth e + acute is one 5-byte rule",
              textnorm_prefix(sn, "\xef\xbd\x85\xcc\x81!", 6, &rep, &rlen) == 5 && rlen == 2);
    textnorm_free(sn);

    TextNormOpts keep = {0, 0, 0};
    sn = textnorm_new(blob.data, blob.len, &keep, &err);
    NORM(sn, "map only (no whitespace rules)", " \xef\xbc\xa1\t ", " A  ");
    textnorm_free(sn);
}

static void test_layout(void) {
    uint32_t tsize =
        (uint32_t)(unsigned char)blob.data[0] | (uint32_t)(unsigned char)blob.data[1] << 8 |
        (uint32_t)(unsigned char)blob.data[2] << 16 | (uint32_t)(unsigned char)blob.data[3] << 24;
    test_cond("trie size: whole 256-unit blocks inside the blob",
              tsize % 1024 == 0 && tsize + 4 < blob.len);
    test_cond("strings start with the empty replacement", blob.data[4 + tsize] == '\0');
    test_cond("strings end with NUL", blob.data[blob.len - 1] == '\0');
    test_cond("table size plausible (SentencePiece 0.2.3's is 240007 bytes)",
              blob.len > 200000 && blob.len < 300000);
    Buf again = {0};
    Err err;
    test_cond("second build", charsmap_nmt_nfkc(&again, &err) == 0);
    test_mem_eq("second build: same bytes", again.data, again.len > 64 ? 64 : again.len, blob.data,
                blob.len > 64 ? 64 : blob.len);
    test_cond("second build: identical",
              again.len == blob.len && memcmp(again.data, blob.data, blob.len) == 0);
    buf_free(&again);

    /* damaged blobs */
    char small[4] = {8, 0, 0, 0};
    test_cond("4-byte blob refused", textnorm_new(small, 4, NULL, &err) == NULL);
    Buf bad = {0};
    buf_append(&bad, blob.data, blob.len);
    bad.data[3] = 0x7F; /* trie size far beyond the blob */
    test_cond("trie size beyond the blob refused",
              textnorm_new(bad.data, bad.len, NULL, &err) == NULL);
    bad.data[3] = blob.data[3];
    bad.data[0] = (char)(bad.data[0] + 2); /* not a whole number of units */
    test_cond("trie size not a multiple of 4 refused",
              textnorm_new(bad.data, bad.len, NULL, &err) == NULL);
    test_cond("blob cut inside the trie refused",
              textnorm_new(blob.data, 4 + tsize / 2, NULL, &err) == NULL);
    memset(bad.data, 0, 4);
    test_cond("empty trie refused", textnorm_new(bad.data, bad.len, NULL, &err) == NULL);
    buf_free(&bad);
}

/* ---- against SentencePiece ---- */

/* Append the file at path to b (read_file, its message dropped). */
static int slurp(const char *path, Buf *b) {
    Err e;
    return read_file(path, b, &e);
}

static int spit(const char *path, const void *p, size_t n) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    size_t w = fwrite(p, 1, n, fp);
    return (fclose(fp) || w != n) ? -1 : 0;
}

/* A code point the linked ICU has no character for (a noncharacter or
 * surrogate is known: it is not "unassigned" in a later version). */
static int unknown_cp(uint32_t c) {
    if (c >= 0xD800 && c <= 0xDFFF) return 0;
    if ((c & 0xFFFE) == 0xFFFE || (c >= 0xFDD0 && c <= 0xFDEF)) return 0;
    return uni_gc(c) == UNI_GC_CN;
}

/* Does s[0..n) hold a character unknown to the linked ICU? */
static int has_unknown(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t k = utf8_decode((const unsigned char *)s + i, n - i, &c);
        if (!k) {
            i++;
            continue;
        }
        if (unknown_cp(c)) return 1;
        i += k;
    }
    return 0;
}

/* Next '\n'-terminated line of b from *pos (the last may lack '\n'). */
static int next_line(const Buf *b, size_t *pos, const char **line, size_t *len) {
    if (*pos >= b->len) return 0;
    const char *s = b->data + *pos, *e = memchr(s, '\n', b->len - *pos);
    *line = s;
    *len = e ? (size_t)(e - s) : b->len - *pos;
    *pos += *len + 1;
    return 1;
}

/* Print ranges of code points: "U+1CCD6-U+1CCF9 U+A7F1 ..." (at most 40). */
static void print_ranges(const char *what, const uint32_t *cp, size_t n) {
    printf("test_charsmap: %s:", what);
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 40; shown++) {
        size_t j = i;
        while (j + 1 < n && cp[j + 1] == cp[j] + 1)
            j++;
        if (j > i)
            printf(" U+%04X-U+%04X", (unsigned)cp[i], (unsigned)cp[j]);
        else
            printf(" U+%04X", (unsigned)cp[i]);
        i = j + 1;
    }
    printf("%s\n", shown == 40 ? " ..." : "");
}

static const char py_rules[] =
    "import sentencepiece as s, sys\n"
    "def v(n):\n"
    "    o = b''\n"
    "    while True:\n"
    "        b = n & 0x7f; n >>= 7\n"
    "        if n: o += bytes([b | 0x80])\n"
    "        else: return o + bytes([b])\n"
    "blob = open('ours.blob', 'rb').read()\n"
    "spec = b'\\x0a\\x08nmt_nfkc\\x12' + v(len(blob)) + blob\n"
    "ours = dict(s.SentencePieceNormalizer(normalizer_spec=spec).decompile())\n"
    "ref = dict(s.SentencePieceNormalizer(rule_name='nmt_nfkc').decompile())\n"
    "h = lambda t: ' '.join('%04X' % ord(c) for c in t)\n"
    "with open('rules.diff', 'w') as f:\n"
    "    f.write('%d %d\\n' % (len(ours), len(ref)))\n"
    "    for k in sorted(set(ours) | set(ref)):\n"
    "        if ours.get(k) != ref.get(k): f.write(h(k) + '\\n')\n";

static const char py_norm[] = "import sentencepiece as s, sys\n"
                              "n = s.SentencePieceNormalizer(rule_name='nmt_nfkc')\n"
                              "for src, dst in zip(sys.argv[1::2], sys.argv[2::2]):\n"
                              "    lines = open(src, 'rb').read().split(b'\\n')\n"
                              "    open(dst, 'wb').write(b'\\n'.join(n.normalize(lines)))\n";

static const char py_encode[] = "import sentencepiece as s\n"
                                "a = s.SentencePieceProcessor(model_file='ref.model'); b = "
                                "s.SentencePieceProcessor(model_file='ours.model')\n"
                                "assert a.get_piece_size() == b.get_piece_size()\n"
                                "lines = open('texts.txt', 'rb').read().split(b'\\n')\n"
                                "ea, eb = a.encode(lines), b.encode(lines)\n"
                                "with open('encode.diff', 'w') as f:\n"
                                "    f.write('%d\\n' % len(lines))\n"
                                "    for i, (x, y) in enumerate(zip(ea, eb)):\n"
                                "        if x != y: f.write('%d\\n' % i)\n";

/* (1) rules: every key whose rule differs must hold a character unknown
 * to ICU. */
static void check_rules(const char *dir) {
    char path[600];
    Buf d = {0};
    snprintf(path, sizeof path, "%s/rules.diff", dir);
    test_cond("SentencePiece decompiled both tables", slurp(path, &d) == 0 && d.len > 0);
    size_t pos = 0, len, nours = 0, nref = 0, ndiff = 0, nknown = 0;
    const char *line;
    uint32_t unknown[4096];
    size_t nunk = 0;
    if (next_line(&d, &pos, &line, &len)) sscanf(line, "%zu %zu", &nours, &nref);
    while (next_line(&d, &pos, &line, &len)) {
        ndiff++;
        int unk = 0;
        for (const char *p = line; p < line + len;) {
            char *end;
            unsigned long c = strtoul(p, &end, 16);
            if (end == p) break;
            if (unknown_cp((uint32_t)c)) {
                unk = 1;
                if (nunk < 4096 && (nunk == 0 || unknown[nunk - 1] < c))
                    unknown[nunk++] = (uint32_t)c;
            }
            p = end;
        }
        if (!unk) {
            if (nknown++ < 10)
                printf("  rule differs for known characters: %.*s\n", (int)len, line);
        }
    }
    printf("test_charsmap: rules: ours %zu, SentencePiece's %zu; %zu keys differ, all of them with "
           "characters "
           "that ICU %s (Unicode %s) does not know: %s\n",
           nours, nref, ndiff, uni_icu_version(), uni_unicode_version(), nknown ? "NO" : "yes");
    if (nunk) print_ranges("first characters unknown to ICU in differing rules", unknown, nunk);
    test_cond("rules: SentencePiece's table has its ~225,000 rules", nref > 200000);
    test_cond("rules: equal except for characters ICU does not know",
              nknown == 0 && nours > 200000);
    buf_free(&d);
}

/* (2) every code point, alone and between two letters. */
static void check_codepoints(const char *dir, const TextNorm *sn, const Buf *want) {
    size_t pos = 0, len, bad = 0, unk_diff = 0;
    const char *line;
    Buf got = {0};
    uint32_t *unk = xmalloc(0x110000 * sizeof *unk);
    size_t nunk = 0, lines = 0;
    for (uint32_t c = 1; c <= 0x10FFFF; c++) {
        if (c == '\n') continue;
        unsigned char u[4];
        size_t k = utf8_encode(c, u);
        for (int form = 0; form < 2; form++) {
            char in[6];
            size_t n = 0;
            if (form) in[n++] = 'a';
            memcpy(in + n, u, k);
            n += k;
            if (form) in[n++] = 'b';
            buf_clear(&got);
            textnorm_normalize(sn, in, n, &got);
            if (!next_line(want, &pos, &line, &len)) {
                bad++;
                continue;
            }
            lines++;
            if (len == got.len && memcmp(line, got.data, len) == 0) continue;
            if (unknown_cp(c)) {
                unk_diff++;
                if (nunk == 0 || unk[nunk - 1] != c) unk[nunk++] = c;
            } else if (bad++ < 10) {
                printf("  U+%04X (%s): ours [%.*s], SentencePiece's [%.*s]\n", (unsigned)c,
                       form ? "a_b" : "alone", (int)got.len, got.data, (int)len, line);
            }
        }
    }
    printf("test_charsmap: code points: %zu lines compared; %zu differ at %zu code points ICU %s "
           "does not know\n",
           lines, unk_diff, nunk, uni_icu_version());
    if (nunk) print_ranges("they are", unk, nunk);
    test_cond("every code point 1..U+10FFFF (and surrogate bytes) normalizes as in SentencePiece",
              bad == 0 && lines == 2 * 0x10FFFE);
    (void)dir;
    free(unk);
    buf_free(&got);
}

/* (3) real text, line by line. */
static void check_texts(const TextNorm *sn, const Buf *texts, const Buf *want) {
    size_t pt = 0, pw = 0, lt, lw, lines = 0, bad = 0, unk = 0, bytes = 0;
    const char *t, *w;
    Buf got = {0};
    while (next_line(texts, &pt, &t, &lt)) {
        if (!next_line(want, &pw, &w, &lw)) {
            bad++;
            break;
        }
        lines++;
        bytes += lt;
        buf_clear(&got);
        textnorm_normalize(sn, t, lt, &got);
        if (got.len == lw && memcmp(got.data, w, lw) == 0) continue;
        if (has_unknown(t, lt))
            unk++;
        else if (bad++ < 5)
            printf("  line %zu differs: ours [%.*s]\n", lines, (int)(got.len > 300 ? 300 : got.len),
                   got.data);
    }
    printf("test_charsmap: real text: %zu lines (%zu bytes); %zu differ, %zu of them with "
           "characters ICU does not know\n",
           lines, bytes, bad + unk, unk);
    test_cond("real text normalizes as in SentencePiece", bad == 0 && lines > 1000);
    buf_free(&got);
}

/* (4) spm_train's model with our table encodes like the original. */
static void check_model(const char *dir, const char *py, const Buf *texts) {
    char path[600], cmd[2000];
    Buf ref = {0}, ours = {0};
    snprintf(path, sizeof path, "%s/ref.model", dir);
    test_cond("spm_train on the texts", slurp(path, &ref) == 0 && ref.len > 0);
    SpModel m;
    spmodel_init(&m);
    Err err;
    int ok = ref.len > 0 && spmodel_read(&m, ref.data, ref.len, &err) == 0;
    test_cond("read spm_train's model", ok);
    const SpField *cm = ok ? spmsg_get(&m.normalizer, SPN_PRECOMPILED_CHARSMAP) : NULL;
    test_cond("spm_train's model carries its own table",
              cm && cm->len > 1000 &&
                  !(cm->len == blob.len &&
                    !memcmp(m.normalizer.data.data + cm->off, blob.data, blob.len)));
    spmodel_set_normalizer(&m, "nmt_nfkc", blob.data, blob.len);
    spmodel_write(&m, &ours);
    snprintf(path, sizeof path, "%s/ours.model", dir);
    spit(path, ours.data, ours.len);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' encode.py", dir, py);
    test_cond("SentencePiece loads the model with our table and encodes", system(cmd) == 0);
    Buf d = {0};
    snprintf(path, sizeof path, "%s/encode.diff", dir);
    slurp(path, &d);
    size_t pos = 0, len, nlines = 0, bad = 0, unk = 0;
    const char *line;
    if (next_line(&d, &pos, &line, &len)) nlines = strtoul(line, NULL, 10);
    /* line offsets of texts, to look the differing ones up */
    size_t tp = 0, tl = 0, idx = 0;
    const char *t = NULL;
    while (next_line(&d, &pos, &line, &len)) {
        size_t want = strtoul(line, NULL, 10);
        while (idx <= want && next_line(texts, &tp, &t, &tl))
            idx++;
        if (idx == want + 1 && has_unknown(t, tl))
            unk++;
        else
            bad++;
    }
    printf("test_charsmap: encode: %zu lines; %zu encode differently, %zu of them with characters "
           "ICU does not know\n",
           nlines, bad + unk, unk);
    test_cond("same ids for every line with the generated table", nlines > 1000 && bad == 0);
    buf_free(&d);
    buf_free(&ref), buf_free(&ours);
    spmodel_free(&m);
}

static void test_against_spm(void) {
    char pybuf[1024];
    const char *py = test_find_python("import sentencepiece; sentencepiece.SentencePieceNormalizer",
                                      pybuf, sizeof pybuf);
    const char *bin = getenv("BIN"), *tests = getenv("TESTS");
    if (!py || !bin || !tests) {
        printf("test_charsmap: not run: the checks against SentencePiece (%s)\n",
               !py ? "no Python with the sentencepiece package"
                   : "BIN/TESTS not set; run through tests/run.sh");
        return;
    }
    char dir[] = "/tmp/test_charsmap.XXXXXX";
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return;
    }
    char path[600], cmd[8192];
    snprintf(path, sizeof path, "%s/ours.blob", dir);
    spit(path, blob.data, blob.len);
    snprintf(path, sizeof path, "%s/rules.py", dir);
    spit(path, py_rules, sizeof py_rules - 1);
    snprintf(path, sizeof path, "%s/norm.py", dir);
    spit(path, py_norm, sizeof py_norm - 1);
    snprintf(path, sizeof path, "%s/encode.py", dir);
    spit(path, py_encode, sizeof py_encode - 1);

    /* every code point except LF, alone and as "a<cp>b"; surrogates as
     * their (invalid) three bytes */
    Buf cps = {0};
    for (uint32_t c = 1; c <= 0x10FFFF; c++) {
        if (c == '\n') continue;
        unsigned char u[4];
        size_t k = utf8_encode(c, u);
        buf_append(&cps, u, k);
        buf_putc(&cps, '\n');
        buf_putc(&cps, 'a');
        buf_append(&cps, u, k);
        buf_append(&cps, "b\n", 2);
    }
    cps.len--; /* no empty last line */
    snprintf(path, sizeof path, "%s/cps.txt", dir);
    spit(path, cps.data, cps.len);
    buf_free(&cps);

    /* real text: Wikipedia through our prep stage, Tatoeba, BERT's sample;
     * the samples in tests/data when the shared data is absent */
    const char *shared = getenv("WIKIBERT_SHARED");
    snprintf(cmd, sizeof cmd,
             "cd '%s' && D='%s%s/data' B='%s' T='%s/data'; "
             "if [ -d \"$D/wiki-multilang\" ]; then "
             "  for f in \"$D\"/wiki-en/enwiki-pages-articles-sample.xml.bz2 "
             "\"$D\"/wiki-hu/wiki.xml.bz2 "
             "           \"$D\"/wiki-multilang/minidumps/*/wiki.xml.bz2; do "
             "    \"$B/wiki_dump\" \"$f\" | \"$B/wiki_strip\" -F lines | \"$B/sent_split\" -j1 -l "
             "en || exit 1; done; "
             "  for f in \"$D\"/langid/tatoeba-manythings/*.txt; do head -n 2000 \"$f\"; done; "
             "  cat \"$D\"/bert/sample_text.txt; "
             "else "
             "  for f in \"$T\"/*.xml.bz2; do "
             "    \"$B/wiki_dump\" \"$f\" 2>/dev/null | \"$B/wiki_strip\" -F lines | "
             "\"$B/sent_split\" -j1 -l en; done; "
             "fi > texts.txt",
             dir, shared && *shared ? shared : tests, shared && *shared ? "" : "/../../shared", bin,
             tests);
    int rc = system(cmd);
    test_cond("real text gathered", rc == 0);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' rules.py && '%s' norm.py cps.txt cps.want texts.txt texts.want && "
             "'%s' -c \"import sentencepiece as s; s.SentencePieceTrainer.Train('--input=texts.txt "
             "--model_prefix=ref "
             "--vocab_size=4000 --character_coverage=0.9995 --model_type=bpe "
             "--input_sentence_size=40000 "
             "--minloglevel=2')\" 2>/dev/null",
             dir, py, py, py);
    rc = system(cmd);
    test_cond("SentencePiece ran (decompile, normalize, train)", rc == 0);

    Err err;
    TextNorm *sn = textnorm_new(blob.data, blob.len, NULL, &err);
    Buf want = {0}, texts = {0};
    check_rules(dir);
    snprintf(path, sizeof path, "%s/cps.want", dir);
    slurp(path, &want);
    check_codepoints(dir, sn, &want);
    buf_clear(&want);
    snprintf(path, sizeof path, "%s/texts.want", dir);
    slurp(path, &want);
    snprintf(path, sizeof path, "%s/texts.txt", dir);
    slurp(path, &texts);
    check_texts(sn, &texts, &want);
    check_model(dir, py, &texts);
    textnorm_free(sn);
    buf_free(&want), buf_free(&texts);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) printf("could not remove %s\n", dir);
}

int main(void) {
    Err err;
    double t0 = now_sec();
    int rc = charsmap_nmt_nfkc(&blob, &err);
    double t1 = now_sec();
    test_cond("charsmap_nmt_nfkc builds the table", rc == 0);
    if (rc) {
        printf("  %s\n", err.msg);
        return test_report();
    }
    printf("test_charsmap: nmt_nfkc table: %zu bytes in %.3f s (ICU %s, Unicode %s)\n", blob.len,
           t1 - t0, uni_icu_version(), uni_unicode_version());
    test_uniprop_nfk();
    test_vectors();
    test_layout();
    test_against_spm();
    buf_free(&blob);
    return test_report();
}
