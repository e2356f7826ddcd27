/* test_segmenter.c - sentence boundaries: our own Hungarian, English and
 * generic cases for every rule, the English Golden Rules (pass rate >= 95%),
 * quntoken's Hungarian test cases read from the shared folder at test time
 * (pass rate >= 95%; never copied into the repository), word-list errors,
 * and the same spans from threads sharing one splitter.
 *
 *   build/tests/test_segmenter [-v]     -v lists every failing case
 */
#define _GNU_SOURCE /* memmem */
#include <pthread.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/json.h"
#include "tokenize/segmenter.h"

static int verbose;
static char data_dir[4096];

static const char *tests_dir(void) {
    const char *t = getenv("TESTS");
    return t && *t ? t : "tests";
}

static Segmenter *make(const char *lang) {
    Err err;
    int code;
    SegmenterOpts o = {.lang = lang, .data_dir = data_dir};
    Segmenter *ss = segmenter_create(&o, &code, &err);
    if (!ss) printf("cannot create splitter for %s: %s\n", lang, err.msg);
    return ss;
}

/* The sentences of text joined by '|'. */
static void split_joined(const Segmenter *ss, const char *text, size_t len, Buf *out) {
    SentSpans sp = {0};
    segmenter_split(ss, text, len, &sp);
    buf_clear(out);
    for (size_t i = 0; i < sp.n; i++) {
        if (i) buf_putc(out, '|');
        buf_append(out, text + sp.v[i].start, sp.v[i].end - sp.v[i].start);
    }
    sentspans_free(&sp);
}

static void check(const Segmenter *ss, const char *text, const char *want) {
    Buf b = {0};
    split_joined(ss, text, strlen(text), &b);
    test_str_eq(text, b.data ? b.data : "", want);
    buf_free(&b);
}

static void own_hungarian(void) {
    Segmenter *hu = make("hu");
    test_cond("hu splitter", hu != NULL);
    if (!hu) return;
    check(hu, "Budapest Magyarország fővárosa. Lakossága 1,7 millió fő.",
          "Budapest Magyarország fővárosa.|Lakossága 1,7 millió fő.");
    /* abbreviations */
    check(hu, "Dr. Kovács Péter érkezett. Ő a főorvos.", "Dr. Kovács Péter érkezett.|Ő a főorvos.");
    check(hu, "Almát, körtét stb. vettünk. Utána hazamentünk.",
          "Almát, körtét stb. vettünk.|Utána hazamentünk.");
    check(hu, "Vettünk almát, körtét stb. Utána hazamentünk.",
          "Vettünk almát, körtét stb.|Utána hazamentünk.");
    check(hu, "Sok gyümölcs, pl. Alma és körte terem itt.",
          "Sok gyümölcs, pl. Alma és körte terem itt.");
    check(hu, "A szöveg ún. Vendégszöveg, ill. Idézet.", "A szöveg ún. Vendégszöveg, ill. Idézet.");
    check(hu, "Kb. 300 ember jött el. Vö. Az előző fejezettel.",
          "Kb. 300 ember jött el.|Vö. Az előző fejezettel.");
    check(hu, "A Petőfi krt. 12. szám alatt lakik.", "A Petőfi krt. 12. szám alatt lakik.");
    check(hu, "Kiadta a Magvető Kft. A könyv sikert aratott.",
          "Kiadta a Magvető Kft.|A könyv sikert aratott.");
    check(hu, "Szabó Magda (szerk.): Novellák. Budapest, 1990.",
          "Szabó Magda (szerk.): Novellák.|Budapest, 1990.");
    check(hu, "Ford. Szabó Lőrinc. Szerk. Kiss Anna.", "Ford. Szabó Lőrinc.|Szerk. Kiss Anna.");
    /* ordinal numbers and dates */
    check(hu, "1848. március 15-én kitört a forradalom.",
          "1848. március 15-én kitört a forradalom.");
    check(hu, "Olvasd el a 2. fejezetet! A 3. Nehezebb.",
          "Olvasd el a 2. fejezetet!|A 3. Nehezebb.");
    check(hu, "A szerződést 2019. július 29. napján írták alá.",
          "A szerződést 2019. július 29. napján írták alá.");
    check(hu, "Ali (Mekka, 599. július 29. – Kúfa, 661. január 24.) kalifa volt.",
          "Ali (Mekka, 599. július 29. – Kúfa, 661. január 24.) kalifa volt.");
    check(hu, "A 2. Magyar Hadsereg a Donnál harcolt.", "A 2. Magyar Hadsereg a Donnál harcolt.");
    check(hu, "Az ülés 2001. XII. 10-én volt.", "Az ülés 2001. XII. 10-én volt.");
    check(hu, "Megjelent 2012. Júl. hónapban.", "Megjelent 2012. Júl. hónapban.");
    check(hu, "Az épület 1890-ben készült el. 1990-ben felújították.",
          "Az épület 1890-ben készült el.|1990-ben felújították.");
    check(hu, "A lakosság 2011-ben 1500. Ebből 300 gyermek.",
          "A lakosság 2011-ben 1500.|Ebből 300 gyermek.");
    check(hu, "3. A harmadik pont következik.", "3. A harmadik pont következik.");
    /* initials, Roman numerals */
    check(hu, "Kovács J. Péter írta a könyvet.", "Kovács J. Péter írta a könyvet.");
    check(hu, "XIV. Lajos francia király volt. A II. világháború 1939-ben tört ki.",
          "XIV. Lajos francia király volt.|A II. világháború 1939-ben tört ki.");
    check(hu, "Betette a CD. Szólt a zene.", "Betette a CD.|Szólt a zene.");
    /* lower case after a period, decimals, section numbers */
    check(hu, "A hőmérséklet 3,5 fok. Ez alacsony. a többi kisbetűs.",
          "A hőmérséklet 3,5 fok.|Ez alacsony. a többi kisbetűs.");
    check(hu, "Az érték 3.14 és 1.000.000 között van. A 10.30-as vonat késik.",
          "Az érték 3.14 és 1.000.000 között van.|A 10.30-as vonat késik.");
    check(hu, "Lásd a 4.2.1. szakaszt. A 4.2.1. Alfejezet rövid.",
          "Lásd a 4.2.1. szakaszt.|A 4.2.1. Alfejezet rövid.");
    check(hu, "A 25. § szerint tilos. Ez világos.", "A 25. § szerint tilos.|Ez világos.");
    /* dialogue, quotes, brackets */
    check(hu, "– Gyere ide! – mondta az anyja. – Most!", "– Gyere ide! – mondta az anyja.|– Most!");
    check(hu, "„Ez jó.” Aztán elment.", "„Ez jó.”|Aztán elment.");
    check(hu, "Azt kérdezte: „Jössz?” és elindult.", "Azt kérdezte: „Jössz?” és elindult.");
    check(hu, "A macska (nem a kutya.) Aludt.", "A macska (nem a kutya.) Aludt.");
    check(hu, "Mi történt? Senki sem tudja… Talán soha.",
          "Mi történt?|Senki sem tudja…|Talán soha.");
    /* a period standing alone before more dots ends the sentence */
    check(hu, "Az eső esik . . .", "Az eső esik .|. .");
    check(hu, "Az eső esik . . . Aztán eláll.", "Az eső esik .|. . Aztán eláll.");
    check(hu, "Az eső esik . . . de nem sokáig.", "Az eső esik . . . de nem sokáig.");
    check(hu, "Az eső esik... Aztán eláll.", "Az eső esik...|Aztán eláll.");
    /* URLs, e-mail */
    check(hu, "Honlap: www.pelda.hu. Írj a titkarsag@pelda.hu címre. Köszönjük.",
          "Honlap: www.pelda.hu.|Írj a titkarsag@pelda.hu címre.|Köszönjük.");
    check(hu, "Lásd https://hu.wikipedia.org/wiki/Budapest?a=1.2 oldalt. Ott van.",
          "Lásd https://hu.wikipedia.org/wiki/Budapest?a=1.2 oldalt.|Ott van.");
    segmenter_destroy(hu);
}

static void own_english(void) {
    Segmenter *en = make("en");
    test_cond("en splitter", en != NULL);
    if (!en) return;
    check(en, "Mr. Smith met Dr. Jones at St. Mary's. Prof. Lee joined later.",
          "Mr. Smith met Dr. Jones at St. Mary's.|Prof. Lee joined later.");
    check(en, "Use tools, e.g. Hammers, i.e. Heavy ones. They work.",
          "Use tools, e.g. Hammers, i.e. Heavy ones.|They work.");
    check(en, "Bring apples, pears, etc. The rest is provided.",
          "Bring apples, pears, etc.|The rest is provided.");
    check(en, "He moved to the U.S. in 1990. The U.S. Army drafted him.",
          "He moved to the U.S. in 1990.|The U.S. Army drafted him.");
    check(en, "She earned a Ph.D. She then taught.", "She earned a Ph.D.|She then taught.");
    check(en, "It opened at 9 a.m. Sharp. No. 5 was first.",
          "It opened at 9 a.m. Sharp.|No. 5 was first.");
    check(en, "I said no. Then I left.", "I said no.|Then I left.");
    check(en, "It was written by J. R. R. Tolkien in 1937. It sold well.",
          "It was written by J. R. R. Tolkien in 1937.|It sold well.");
    check(en, "Pi is 3.14 and the total is 1,000,000.00 dollars. Nice.",
          "Pi is 3.14 and the total is 1,000,000.00 dollars.|Nice.");
    check(en, "The train leaves at 10.30 today. Wait... What? Really!",
          "The train leaves at 10.30 today.|Wait...|What?|Really!");
    check(en, "He said, \"Stop.\" Then he left. (See the notes.) Later he came back.",
          "He said, \"Stop.\"|Then he left.|(See the notes.)|Later he came back.");
    check(en, "Louis XIV. He ruled France.", "Louis XIV.|He ruled France.");
    check(en, "It froze at -40 °C. In spring it thawed.",
          "It froze at -40 °C.|In spring it thawed.");
    check(en, "Write to info@example.com. Or visit http://example.com/a.b?c=1. Thanks!",
          "Write to info@example.com.|Or visit http://example.com/a.b?c=1.|Thanks!");
    /* informal text: a sentence may start in lower case */
    check(en, "The case is nice. the inside is too bad. too many bugs",
          "The case is nice.|the inside is too bad.|too many bugs");
    check(en, "i went there since i was four. now i will go back",
          "i went there since i was four.|now i will go back");
    check(en, "did anyone have this issue? is it worth sending in!! yes it is",
          "did anyone have this issue?|is it worth sending in!!|yes it is");
    check(en, "what about downtown...? like 4th street", "what about downtown...?|like 4th street");
    check(en, "whose better looking ? cant decide", "whose better looking ?|cant decide");
    check(en, "I left Houston. looks fine", "I left Houston.|looks fine");
    check(en, "See (figure 2). then turn left.", "See (figure 2).|then turn left.");
    /* ... but not after abbreviations, initials, acronyms, numbers */
    check(en, "It costs approx. five dollars, e.g. this one, i.e. the red one.",
          "It costs approx. five dollars, e.g. this one, i.e. the red one.");
    check(en, "Apples vs. the rest: pears, plums etc. and more.",
          "Apples vs. the rest: pears, plums etc. and more.");
    check(en, "We met Dr. smith and J. doe in the U.S. and left Smith Co. early.",
          "We met Dr. smith and J. doe in the U.S. and left Smith Co. early.");
    check(en, "The claim is void; 2. the claim is late; 3. the rest.",
          "The claim is void; 2. the claim is late; 3. the rest.");
    check(en, "He led a pro-U.S. stance after World War II. the end came later.",
          "He led a pro-U.S. stance after World War II. the end came later.");
    check(en, "Called abacus (lit. counting tray) and Quercus alba var. alba here.",
          "Called abacus (lit. counting tray) and Quercus alba var. alba here.");
    check(en, "Smith et al. found it; the word . is gone.",
          "Smith et al. found it; the word . is gone.");
    /* ... nor after "?" or "!" in a title, a quote or a formula */
    check(en, "He worked at Yahoo! and then for the Got Milk? ads.",
          "He worked at Yahoo! and then for the Got Milk? ads.");
    check(en, "\"Where are you?\" she asked. The factorial n! is large.",
          "\"Where are you?\" she asked.|The factorial n! is large.");
    check(en, "He said it (really?) and left.", "He said it (really?) and left.");
    check(en, "I dunno... maybe later", "I dunno... maybe later");
    check(en, "It was the BEST!!! and cheap. WOW! great staff. Oops??? that hurt",
          "It was the BEST!!!|and cheap.|WOW!|great staff.|Oops???|that hurt");
    check(en, "Move the B=0? test out. Got Milk? ads ran.",
          "Move the B=0? test out.|Got Milk? ads ran.");
    /* an amount or a separator line opens a sentence */
    check(en, "Prices rose. $5 is the least. Thanks. ***** Notice follows",
          "Prices rose.|$5 is the least.|Thanks.|***** Notice follows");
    check(en, "It weighs 5 oz. The box is light. I got there at 8 a.m. Can we meet?",
          "It weighs 5 oz.|The box is light.|I got there at 8 a.m.|Can we meet?");
    /* a smiley after the final mark stays with the sentence */
    check(en, "You know, nature hates a void. :) Richard, I agree.",
          "You know, nature hates a void. :)|Richard, I agree.");
    check(en, "Have fun! ;-) see you", "Have fun! ;-)|see you");
    check(en, "Done. ^_^", "Done. ^_^");
    check(en, "", "");
    check(en, "   ", "");
    check(en, "  No period at the end  ", "No period at the end");
    segmenter_destroy(en);
}

static void own_generic(void) {
    Segmenter *de = make("de");
    test_cond("generic splitter", de && segmenter_lang(de) == SENT_GENERIC);
    if (!de) return;
    check(de, "Am 3. Oktober feiern wir. Das ist schön.",
          "Am 3. Oktober feiern wir.|Das ist schön.");
    check(de, "Er kam im Jahr 1990. Danach blieb er.", "Er kam im Jahr 1990.|Danach blieb er.");
    check(de, "Hans M. Müller kam. \"Hallo!\" rief er. 2 Tage später ging er.",
          "Hans M. Müller kam.|\"Hallo!\" rief er.|2 Tage später ging er.");
    check(de, "Es kostet 1.5 Euro usw. und mehr, etc. Fertig.",
          "Es kostet 1.5 Euro usw. und mehr, etc.|Fertig.");
    segmenter_destroy(de);
}

/* ---- the English Golden Rules (tests/data/sentseg/golden_rules_en.jsonl) ---- */

static void golden_rules(void) {
    char path[4200];
    snprintf(path, sizeof path, "%s/data/sentseg/golden_rules_en.jsonl", tests_dir());
    FILE *fp = fopen(path, "rb");
    test_cond("golden rules file present", fp != NULL);
    if (!fp) return;
    Segmenter *en = make("en");
    if (!en) return;
    char line[8192];
    int total = 0, pass = 0;
    Buf text = {0}, got = {0}, want = {0}, one = {0}, failed = {0};
    while (fgets(line, sizeof line, fp)) {
        JsonIter it, arr;
        const char *k, *v, *e;
        size_t kn, vn, en_;
        long id = 0;
        buf_clear(&text), buf_clear(&want);
        json_iter_init(&it, line, strlen(line), '{');
        while (json_iter_next(&it, &k, &kn, &v, &vn) == 1) {
            if (json_key_is(k, kn, "id"))
                id = strtol(v, NULL, 10);
            else if (json_key_is(k, kn, "text"))
                json_decode_string(&text, v, vn);
            else if (json_key_is(k, kn, "sentences")) {
                json_iter_init(&arr, v, vn, '[');
                while (json_iter_next(&arr, &k, &kn, &e, &en_) == 1) {
                    buf_clear(&one);
                    json_decode_string(&one, e, en_);
                    if (want.len) buf_putc(&want, '|');
                    buf_append(&want, one.data, one.len);
                }
            }
        }
        total++;
        split_joined(en, text.data, text.len, &got);
        if (got.len == want.len && !memcmp(got.data, want.data, got.len)) {
            pass++;
        } else {
            char num[32];
            snprintf(num, sizeof num, " %ld", id);
            buf_puts(&failed, num);
            if (verbose)
                printf("  golden %ld: got  [%s]\n             want [%s]\n", id, got.data,
                       want.data);
        }
    }
    fclose(fp);
    printf("English Golden Rules: %d/%d passed (%.1f%%); failing ids:%s\n", pass, total,
           total ? 100.0 * pass / total : 0.0, failed.len ? failed.data : " none");
    test_cond("golden rules: 48 cases read", total == 48);
    test_cond("golden rules: pass rate >= 95%", pass * 100 >= total * 95);
    buf_free(&text), buf_free(&got), buf_free(&want), buf_free(&one), buf_free(&failed);
    segmenter_destroy(en);
}

/* ---- quntoken's Hungarian cases, from the shared folder ---- */

/* Drop every <...> tag from s[0..n) into out. */
static void strip_tags(Buf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<') {
            const char *gt = memchr(s + i, '>', n - i);
            if (gt) {
                i = (size_t)(gt - s);
                continue;
            }
        }
        buf_putc(out, s[i]);
    }
}

/* Expected sentences of an OUT block: the <s> contents joined by '|'. */
static void expected_sentences(const Buf *outb, Buf *want) {
    const char *p = outb->data ? outb->data : "", *end = p + outb->len;
    buf_clear(want);
    while ((p = memmem(p, (size_t)(end - p), "<s>", 3))) {
        p += 3;
        const char *q = memmem(p, (size_t)(end - p), "</s>", 4);
        if (!q) break;
        if (want->len) buf_putc(want, '|');
        strip_tags(want, p, (size_t)(q - p));
        p = q + 4;
    }
}

/* Our sentences of an IN block: paragraphs are separated by blank lines,
 * single newlines are white space inside a paragraph. */
static void our_sentences(const Segmenter *ss, const Buf *in, Buf *got) {
    const char *p = in->data ? in->data : "", *end = p + in->len;
    Buf one = {0};
    buf_clear(got);
    while (p < end) {
        const char *q = p;
        while (q < end && !(q[0] == '\n' && q + 1 < end && q[1] == '\n'))
            q++;
        split_joined(ss, p, (size_t)(q - p), &one);
        if (one.len) {
            if (got->len) buf_putc(got, '|');
            buf_append(got, one.data, one.len);
        }
        while (q < end && *q == '\n')
            q++;
        p = q;
    }
    buf_free(&one);
}

static void quntoken_cases(void) {
    static const char *const files[] = {
        "test_default_snt_boundary.txt", "test_default_snt_newline.txt",
        "test_default_sntcorr_all.txt", "test_default_sntcorr_segfault.txt"};
    char dir[4200];
    const char *shared = getenv("WIKIBERT_SHARED");
    if (shared && *shared)
        snprintf(dir, sizeof dir, "%s/data/sentseg-hu", shared);
    else
        snprintf(dir, sizeof dir, "%s/../../shared/data/sentseg-hu", tests_dir());
    if (access(dir, R_OK) != 0) {
        printf("quntoken Hungarian cases: NOT RUN (%s absent; set WIKIBERT_SHARED)\n", dir);
        return;
    }
    Segmenter *hu = make("hu");
    if (!hu) return;
    int total = 0, pass = 0;
    Buf in = {0}, outb = {0}, got = {0}, want = {0}, failed = {0};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        FILE *fp = fopen(path, "rb");
        test_cond("quntoken case file readable", fp != NULL);
        if (!fp) continue;
        char line[4096];
        int state = 0, lineno = 0, case_line = 0; /* 0 none, 1 in IN block, 2 in OUT block */
        for (int more = 1; more;) {
            more = fgets(line, sizeof line, fp) != NULL;
            lineno += more;
            size_t n = more ? strlen(line) : 0;
            if (n && line[n - 1] == '\n') line[--n] = 0;
            int is_in = more && !strncmp(line, "IN :", 4),
                is_out = more && !strncmp(line, "OUT:", 4);
            if (state == 2 && !is_out) { /* a case is complete */
                expected_sentences(&outb, &want);
                our_sentences(hu, &in, &got);
                total++;
                if (got.len == want.len && (!got.len || !memcmp(got.data, want.data, got.len))) {
                    pass++;
                } else {
                    char id[128];
                    snprintf(id, sizeof id, " %s:%d", files[f], case_line);
                    buf_puts(&failed, id);
                    if (verbose)
                        printf("  quntoken %s:%d: got  [%s]\n    want [%s]\n", files[f], case_line,
                               got.data ? got.data : "", want.data ? want.data : "");
                }
                state = 0;
            }
            const char *rest = line + (n > 4 && line[4] == ' ' ? 5 : 4);
            if (is_in) {
                if (state != 1)
                    buf_clear(&in), buf_clear(&outb), case_line = lineno;
                else
                    buf_putc(&in, '\n');
                buf_puts(&in, rest);
                state = 1;
            } else if (is_out && state) {
                if (state == 2) buf_putc(&outb, '\n');
                buf_puts(&outb, rest);
                state = 2;
            }
        }
        fclose(fp);
    }
    printf("quntoken Hungarian cases: %d/%d passed (%.1f%%); failing:%s\n", pass, total,
           total ? 100.0 * pass / total : 0.0, failed.len ? failed.data : " none");
    test_cond("quntoken cases: at least 90 read", total >= 90);
    test_cond("quntoken cases: pass rate >= 95%", pass * 100 >= total * 95);
    buf_free(&in), buf_free(&outb), buf_free(&got), buf_free(&want), buf_free(&failed);
    segmenter_destroy(hu);
}

/* ---- word lists ---- */

static void word_lists(void) {
    Err err;
    int code = 0;
    const char *missing = "/nonexistent/abbrev.txt";
    SegmenterOpts o = {.lang = "en", .data_dir = data_dir, .extra = &missing, .nextra = 1};
    test_cond("missing extra list fails", segmenter_create(&o, &code, &err) == NULL);
    test_cond("missing extra list: code", code == SEGMENTER_EMISSING);
    test_cond("missing extra list: path in message", strstr(err.msg, missing) != NULL);
    o = (SegmenterOpts){.lang = "../etc", .data_dir = data_dir};
    test_cond("bad language code refused",
              segmenter_create(&o, &code, &err) == NULL && code == SEGMENTER_ELANG);
    o = (SegmenterOpts){.lang = "hu", .data_dir = "/nonexistent"};
    test_cond("missing data dir fails",
              segmenter_create(&o, &code, &err) == NULL && code == SEGMENTER_EMISSING);
    o = (SegmenterOpts){.lang = "xx", .data_dir = data_dir};
    Segmenter *ss = segmenter_create(&o, &code, &err);
    test_cond("unknown language: generic rules", ss && segmenter_lang(ss) == SENT_GENERIC);
    if (!ss) return;
    check(ss, "Sie wohnt in der Hauptstr. Zehn Leute.", "Sie wohnt in der Hauptstr.|Zehn Leute.");
    test_cond("add entry", segmenter_add(ss, "Hauptstr.", 9, &err) == 0);
    check(ss, "Sie wohnt in der Hauptstr. Zehn Leute.", "Sie wohnt in der Hauptstr. Zehn Leute.");
    test_cond("comment line accepted", segmenter_add(ss, "# x", 3, &err) == 0);
    test_cond("unknown flag refused", segmenter_add(ss, "Str. =bogus", 11, &err) == SEGMENTER_EBAD);
    test_cond("unknown flag named", strstr(err.msg, "=bogus") != NULL);
    test_cond("=end without period refused",
              segmenter_add(ss, "Str =end", 8, &err) == SEGMENTER_EBAD);
    check(ss, "Er kam mit Fa. Schulz. Dann ging er.", "Er kam mit Fa.|Schulz.|Dann ging er.");
    test_cond("=end entry", segmenter_add(ss, "Fa. =end", 8, &err) == 0);
    check(ss, "Er kam mit Fa. Schulz. Dann ging er.", "Er kam mit Fa.|Schulz.|Dann ging er.");
    test_cond("plain entry", segmenter_add(ss, "fa.", 3, &err) == 0);
    check(ss, "Er kam mit Fa. Schulz. Dann ging er.", "Er kam mit Fa.|Schulz.|Dann ging er.");
    segmenter_destroy(ss);
}

/* ---- spans: shape, and threads sharing one splitter ---- */

static const char *const mixed[] = {
    "Dr. Kovács J. Péter 1848. március 15-én a II. világháború előtt? Nem! 3.14 és www.x.hu. "
    "„Igen.” Vége…",
    "Mr. Smith went to Washington, D.C. He arrived at 5 p.m. on Jan. 3. It rained... The end!",
    "1. The first item 2. The second item • 3. ok",
    "  \t leading and trailing   ",
    "(Unclosed bracket. Still one? Yes.",
};

typedef struct Job {
    const Segmenter *ss;
    Buf out;
} Job;

static void *thread_main(void *arg) {
    Job *j = arg;
    Buf one = {0};
    for (int rep = 0; rep < 200; rep++)
        for (size_t i = 0; i < sizeof mixed / sizeof *mixed; i++) {
            split_joined(j->ss, mixed[i], strlen(mixed[i]), &one);
            if (rep == 0) buf_append(&j->out, one.data, one.len), buf_putc(&j->out, '\n');
        }
    buf_free(&one);
    return NULL;
}

static void spans_and_threads(void) {
    Segmenter *hu = make("hu");
    if (!hu) return;
    SentSpans sp = {0};
    int shape_ok = 1;
    for (size_t i = 0; i < sizeof mixed / sizeof *mixed; i++) {
        const char *t = mixed[i];
        segmenter_split(hu, t, strlen(t), &sp);
        size_t prev = 0;
        for (size_t k = 0; k < sp.n; k++) {
            SentSpan s = sp.v[k];
            if (s.start < prev || s.end <= s.start || s.end > strlen(t)) shape_ok = 0;
            if (t[s.start] == ' ' || t[s.start] == '\t' || t[s.end - 1] == ' ') shape_ok = 0;
            for (size_t b = prev; b < s.start; b++) /* only white space between sentences */
                if (t[b] != ' ' && t[b] != '\t' && k > 0) shape_ok = 0;
            prev = s.end;
        }
    }
    test_cond("spans ordered, trimmed, covering all but white space", shape_ok);
    sentspans_free(&sp);
    Job single = {hu, {0}}, jobs[4];
    thread_main(&single);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (Job){hu, {0}};
        pthread_create(&th[i], NULL, thread_main, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        test_mem_eq("thread result equals single-thread result", jobs[i].out.data, jobs[i].out.len,
                    single.out.data, single.out.len);
        buf_free(&jobs[i].out);
    }
    buf_free(&single.out);
    segmenter_destroy(hu);
}

int main(int argc, char **argv) {
    verbose = argc > 1 && !strcmp(argv[1], "-v");
    snprintf(data_dir, sizeof data_dir, "%s/../data", tests_dir());
    own_hungarian();
    own_english();
    own_generic();
    golden_rules();
    quntoken_cases();
    word_lists();
    spans_and_threads();
    return test_report();
}
