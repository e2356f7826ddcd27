/* test_wikitext.c - unit tests for prep/wikitext.c (wikitext -> paragraphs).
 *
 * Each case is real-looking wikitext with the exact expected output. Most
 * run with WikiTextOpts.faithful (the WikiExtractor 3.0 text): cases marked
 * "WE" produce the same output as WikiExtractor 3.0.6 (checked by running
 * it); the others document a deliberate difference (see the header of
 * prep/wikitext.c). test_default checks the default (tidy) text, cases
 * marked "WE31" being WikiExtractor 3.1.0's output. The last tests feed
 * large malformed pages and only check that the call returns with
 * well-formed output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "common/buf.h"
#include "common/common.h"
#include "prep/wikitext.h"

/* ---- helpers ---- */

static WikiText *wt_def;

/* Clean `len` bytes with `wt` and compare with `want`. */
static void check_n(WikiText *wt, const char *name, const char *in, size_t len, const char *want) {
    Buf out = {0};
    int rc = wikitext_clean(wt, in, len, &out);
    test_cond(name, rc == 0);
    test_mem_eq(name, out.len ? out.data : "", out.len, want, strlen(want));
    buf_free(&out);
}

static void check(const char *name, const char *in, const char *want) {
    check_n(wt_def, name, in, strlen(in), want);
}

static void check_opts(const WikiTextOpts *o, const char *name, const char *in, const char *want) {
    WikiText *wt = wikitext_create(o);
    check_n(wt, name, in, strlen(in), want);
    wikitext_destroy(wt);
}

/* Whole buffer is well-formed UTF-8. */
static int utf8_ok(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t l;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c < 0xE0) {
            l = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c < 0xF0) {
            l = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c < 0xF5) {
            l = 4;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + l > n) return 0;
        for (size_t k = 1; k < l; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((l == 3 && cp < 0x800) || (l == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
        if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
        i += l;
    }
    return 1;
}

/* Every paragraph non-empty, without surrounding blanks, '\n'-terminated. */
static int paragraphs_ok(const char *s, size_t n) {
    if (n && s[n - 1] != '\n') return 0;
    size_t a = 0;
    while (a < n) {
        const char *e = memchr(s + a, '\n', n - a);
        size_t b = (size_t)(e - s);
        if (b == a || s[a] == ' ' || s[b - 1] == ' ' || s[a] == '\t' || s[b - 1] == '\t') return 0;
        a = b + 1;
    }
    return 1;
}

/* ---- templates and tables ---- */

static void test_templates(void) {
    check("template removed (WE)", "Hello {{foo|bar}} world.", "Hello world.\n");
    check("nested templates (WE)", "A {{outer|{{inner|x}}|y}} B", "A B\n");
    check("parameters", "A {{{1}}} B {{{name|{{x}}}}} C", "A B C\n");
    check("parser function", "{{#if:{{{a|}}}|yes|no}}Text {{lc:ABC}}{{PAGENAME}}.", "Text .\n");
    check("infobox over lines (WE)",
          "{{Infobox person\n| name = X\n| image = [[File:X.jpg|thumb]]\n| birth = {{birth "
          "date|1950|1|1}}\n}}\n"
          "'''X''' is a thing.",
          "X is a thing.\n");
    check("unclosed template eats its line", "Unclosed {{template here\nNext line.",
          "Unclosed\nNext line.\n");
    check("unclosed template keeps closed ones out", "A {{x {{y}} z\nB {{c}} d", "A\nB d\n");
    check("stray closers removed", "Stray }} and ]] here.", "Stray and here.\n");
    check("four braces", "{{{{a}}}}x", "x\n");
    check("braces inside ref do not count", "A<ref>{{cite|}}}}</ref> B {{t}} C", "A B C\n");
    check("braces inside math do not count", "A <math>\\left\\{{x</math> B", "A formula_1 B\n");
    check("template with link inside", "{{a|[[b|c]]}}d", "d\n");
}

static void test_tables(void) {
    check("table removed (WE)",
          "Before\n{| class=\"wikitable\"\n|-\n| a || b\n|-\n| colspan=2 | c\n|}\nAfter",
          "Before\nAfter\n");
    check("nested tables (WE)", "Nested {| a\n{| b\n|}\n|} end", "Nested end\n");
    check("indented table", ":{|\n| a\n|}\nText", "Text\n");
    check("unclosed table: rows go, prose stays",
          "Before\n{| class=x\n| cell\n|-\n! h !! h2\nProse after.", "Before\nProse after.\n");
    check("table debris from templates",
          "{{table start}}\n! colspan=2 | Header\n|-\n| style=\"x\" | cell\n  | indented "
          "cell\nProse.",
          "Prose.\n");
    check("header row debris", "! Year !! Title\nText.", "Text.\n");
    check("!Kung is prose", "!Kung people live here.", "!Kung people live here.\n");
}

/* ---- links ---- */

static void test_links(void) {
    check("link, trail, anchor", "The [[bus]]es and [[car|automobiles]] and [[1990]]s.",
          "The buses and automobiles and 1990s.\n");
    check("colon in title kept",
          "See [[Star Wars: Episode IV|Star Wars]] and [[Help:IPA/English|/ˈæ/]].",
          "See Star Wars and /ˈæ/.\n");
    check("file with nested links (WE)",
          "[[File:Foo.jpg|thumb|A caption with [[link]] inside]]Text after.", "Text after.\n");
    check("image with link as caption (WE)", "[[Image:A.png|left|[[x]]]]Next", "Next\n");
    check("category dropped (WE)", "Text [[Category:Foo|Sort]] more.", "Text more.\n");
    check("lower-case namespace", "A [[file:x.png|thumb|c]] [[category:Y]] B", "A B\n");
    check("interlanguage dropped", "A [[fr:Paris]] b [[zh-yue:x]] c [[simple:Foo]] d", "A b c d\n");
    check("inline colon links keep text",
          "[[:Category:Foo|Foo cats]] and [[:fr:Paris|Paris]] and [[:Foo]].",
          "Foo cats and Paris and Foo.\n");
    check("interwiki keeps text (WE)", "[[wikt:word|word]] [[w:Foo|foo]]", "word foo\n");
    check("wikisource link keeps text", "[[s:Bar|bar]] baz", "bar baz\n");
    check("localized defaults",
          "[[Datei:A.png|mini|Bild]] and [[Kategorie:X]] [[Catégorie:Y]] done.", "and done.\n");
    check("file by extension", "[[Plik:Foo.svg|thumb|Opis]] tekst", "tekst\n");
    check("unclosed link", "Unclosed [[link here\nNext line.", "Unclosed link here\nNext line.\n");
    check("unclosed file link at blank line",
          "Text [[File:X.jpg|thumb|Caption [[a]] b\n\nNext para.", "Text\nNext para.\n");
    check("unclosed file link at end", "Text [[File:X.jpg|thumb|[[a|b]]", "Text\n");
    check("later links survive an unclosed one", "A [[b c\nD [[e|f]] g [[h]].",
          "A b c\nD f g h.\n");
    check("empty anchor (WE)", "x [[foo|]] y", "x y\n");
    check("several pipes (WE)", "x [[a|b|c]] y", "x b|c y\n");
    check("template as target", "[[{{foo}}|bar]] baz", "bar baz\n");
    check("three brackets", "[[[x]]] y", "[x] y\n");
    check("multi-line anchor (WE)", "Multi [[a|b\nc]] line link.", "Multi b\nc line link.\n");
    check("external links (WE)",
          "See [http://example.com Example site] and [http://bare.com] and http://plain.com here.",
          "See Example site and and http://plain.com here.\n");
    check("external link protocols (WE)",
          "[//proto.rel Rel] [HTTP://UP.com Up] [mailto:a@b.c mail].", "Rel Up mail.\n");
    check("image url label (WE)", "[http://x.com/a.png http://x.com/b.png] img", "img\n");
    check("not a url", "[notaurl text] and [[http://x.org y]]", "[notaurl text] and [y]\n");
    check("external link label after newline (WE)", "[http://x.com\nlabel] end", "label end\n");
}

/* ---- tags, references, entities ---- */

static void test_tags(void) {
    check("refs (WE)", "Ref<ref name=\"a\">{{cite web|url=x}}</ref> here<ref name=\"b\"/>.",
          "Ref here.\n");
    check("ref with slash in name", "A<ref name=\"c/d\">x</ref> B<ref name=e />.", "A B.\n");
    check("references block",
          "Text.\n<references>\n<ref name=a>x</ref>\n</references>\n<references/>", "Text.\n");
    check("comment (WE)", "Comment <!-- hidden --> shown.", "Comment shown.\n");
    check("comment over lines", "A <!-- x\ny\nz --> B", "A B\n");
    check("unclosed comment runs to the end", "Text <!-- unclosed comment\nmore", "Text\n");
    check("placeholders (WE)",
          "Math <math>x^2</math> and <math>y</math> and <math>x^2</math> code <code>int x</code>.",
          "Math formula_1 and formula_2 and formula_1 code codice_1.\n");
    check("placeholders count survivors only",
          "{{a|<math>z</math>}}<ref><math>r</math></ref><math>q</math> <chem>H2O</chem>",
          "formula_1 formula_2\n");
    check("nowiki content is literal", "<nowiki>[[not a link]]</nowiki> and <nowiki/> end.",
          "[[not a link]] and end.\n");
    check("nowiki star is not a list", "<nowiki>*</nowiki> star &amp; <nowiki>&amp; ''x''</nowiki>",
          "* star & & ''x''\n");
    check("dropped extension tags",
          "<gallery>\nFile:A.jpg|cap\n</gallery>\n<pre>code</pre><syntaxhighlight lang=c>int "
          "x;</syntaxhighlight>"
          "<timeline>x</timeline><score>c</score>After.",
          "After.\n");
    check(
        "html tags (WE)",
        "<small>small text</small> big <span style=\"x\">span</span> <sup>sup</sup> <div>div</div>",
        "big span sup div\n");
    check("br forms", "a<br/>b <br> c<br />d", "ab cd\n");
    check("html table and list (WE)",
          "<table><tr><td>cell</td></tr></table>After <ul><li>one</li></ul>ul.", "After ul.\n");
    check("unknown tags and less-than kept", "a <foo> b and x<y", "a <foo> b and x<y\n");
    check("poem and onlyinclude tags", "<onlyinclude><poem>\nLine a\nLine b\n</poem></onlyinclude>",
          "Line a\nLine b\n");
    check("unclosed ref keeps text", "A <ref>b", "A b\n");
    check("entities", "Entities: &amp; &nbsp;x &ndash; &#8212; &#x2013; &lt;b&gt; &bogus; &apos;",
          "Entities: & \xC2\xA0x \xE2\x80\x93 \xE2\x80\x94 \xE2\x80\x93 <b> &bogus; '\n");
    check("bad numeric references", "&#0; &#55296; &#1;x &#x110000;",
          "\xEF\xBF\xBD \xEF\xBF\xBD x &#x110000;\n");
    check("entity decoded once", "&amp;nbsp; and &amp;amp;", "&nbsp; and &amp;\n");
}

/* ---- quotes, headings, lists ---- */

static void test_quotes(void) {
    check("bold and italic (WE)", "'''Bold''' and ''italic'' and '''''both''''' here.",
          "Bold and \"italic\" and both here.\n");
    check("italic per line (WE)", "''a'' b ''c\nd'' e", "\"a\" b \"c\nd\" e\n");
    check("quote runs (WE)", "x''''y'''z", "x'yz\n");
    check("possessive (WE)", "Hello ''world'''s end.", "Hello \"world\"'s end.\n");
    check("quoted italics (WE)", "A ''\"quoted\"'' b \"\"double\"\" c.",
          "A \"quoted\" b \"double\" c.\n");
    check("dropped ref keeps line structure (WE)", "Foo<ref>a\nb\nc</ref> bar ''baz\nqux'' end",
          "Foo bar \"baz\nqux\" end\n");
}

static void test_headings(void) {
    check("sections (WE)",
          "Intro.\n== Section ==\nBody text.\n=== Sub ===\n== Empty ==\n== Next ==\nMore text.",
          "Intro.\nSection.\nBody text.\nNext.\nMore text.\n");
    check("question heading (WE)", "== Why? ==\nContent.", "Why?\nContent.\n");
    check("heading trailing text (WE)", "==A== trailing\nContent.", "A.\nContent.\n");
    check("unbalanced heading (WE)", "===A==\nContent.", "=A.\nContent.\n");
    check("heading with markup (WE)", "==Heading with [[link|text]] and ''italic''==\nContent.",
          "Heading with text and \"italic\".\nContent.\n");
    check("level one heading", "= Level one =\nContent.", "Level one.\nContent.\n");
    check("section of lists vanishes (WE)", "== H ==\n* a\n* b\n== H2 ==\nText", "H2.\nText\n");
    check("pending headings (WE)", "== A ==\n=== B ===\ntext", "A.\nB.\ntext\n");
    WikiTextOpts o = {.faithful = 1};
    o.keep_sections = WIKITEXT_SECTIONS_DROP;
    check_opts(&o, "sections dropped",
               "Intro.\n== Section ==\nBody.\n== Empty ==\n* x\n== Next ==\nMore.",
               "Intro.\nBody.\nMore.\n");
}

static void test_lists_and_cleanup(void) {
    check("lists dropped (WE)", "Para.\n* item one\n# numbered\n: indent\n; term\nAfter list.",
          "Para.\nAfter list.\n");
    WikiTextOpts o = {.faithful = 1};
    o.keep_lists = 1;
    check_opts(&o, "lists kept",
               "Para.\n* item one\n** [[sub]]\n# numbered\n: indent\n; term : def\n*\nAfter.",
               "Para.\nitem one\nsub\nnumbered\nindent\nterm : def\nAfter.\n");
    check("behaviour switches (WE)", "__NOTOC__Text after switch.__TOC__ __FILE__",
          "Text after switch. __FILE__\n");
    check("localized switches", "__БЕЗ_ОГЛАВЛЕНИЯ__Текст __NINCSTARTALOM__", "Текст\n");
    check("language converter", "-{zh-hans:联邦州; zh-hant:邦}-之一 (-{THF}-) -{H|zh-cn:x;}-end",
          "联邦州之一 (THF) end\n");
    check("punctuation cleanup (WE)", "Dots.... and ,, and ,. and << >>",
          "Dots... and , and . and \xC2\xAB \xC2\xBB\n");
    check("irrelevant lines (WE)", "(Parenthesized line)\n----\n...\nReal line.", "Real line.\n");
    check("punctuation-only lines", "A.\n\xE2\x80\x94\nB.\n\n\n!!!\nC.", "A.\nB.\nC.\n");
    check("blanks trimmed", " Leading space.\n\tTab\tseparated\ttext.   ",
          "Leading space.\nTab separated text.\n");
    check("brace lines dropped (WE)", "A line ending with brace }\n{ starts with brace\nok",
          "ok\n");
    check("redirect page (WE)", "#REDIRECT [[Computer accessibility]] {{R from move}}", "");
    check("empty input", "", "");
}

/* ---- encoding ---- */

static void test_encoding(void) {
    WikiTextOpts so = {.count_leftover = 1, .faithful = 1};
    WikiText *wt = wikitext_create(&so);
    WikiTextStats st;
    check_n(wt, "invalid utf-8",
            "a\xff"
            "b\xc3(c\xe2\x82",
            8,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD(c\xEF\xBF\xBD\n");
    wikitext_get_stats(wt, &st);
    test_cond("invalid utf-8 counted", st.invalid_utf8 == 3);
    check_n(wt, "overlong and surrogate", "x\xc0\xaf\xed\xa0\x80y", 7,
            "x\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDy\n");
    check_n(wt, "controls dropped",
            "a\0b\x01"
            "c\x7f"
            "d",
            7, "abcd\n");
    check_n(wt, "carriage returns", "a\r\nb\rc", 6, "a\nb\nc\n");
    check_n(wt, "invalid utf-8 in nowiki", "<nowiki>\xff</nowiki>", 18, "\xEF\xBF\xBD\n");
    check_n(wt, "NULL text", NULL, 0, "");
    wikitext_get_stats(wt, &st);
    test_cond("pages counted", st.pages == 6);
    test_cond("paragraphs counted", st.paragraphs == 7);
    test_cond("nothing unbalanced yet", st.unbalanced == 0 && st.leftover_lines == 0);
    const char *bad = "a {{b\nc ]] [[d\ne <nowiki>[[x]]</nowiki>";
    check_n(wt, "repairs counted", bad, strlen(bad), "a\nc d\ne [[x]]\n");
    wikitext_get_stats(wt, &st);
    test_cond("unbalanced counted", st.unbalanced == 3);
    test_cond("leftover counted", st.leftover_lines == 1);
    wikitext_destroy(wt);
}

static void test_namespaces(void) {
    static const char *const hu[] = {"Fájl", "Kép", "Kategória", NULL};
    WikiTextOpts o = {.faithful = 1};
    o.drop_ns = hu;
    check_opts(&o, "custom namespaces",
               "[[Fájl:A.jpg|bélyegkép|Kép]] Szöveg [[kategória:X]] [[KATEGÓRIA:Y]] [[Kép:B.png]] "
               "[[Sablon:Y|z]] [[Datei:Y|d]] "
               "[[File:C.jpg]] [[Category:Z]]",
               "Szöveg z\n");
    check("built-in localized namespace", "[[Datei:Y|z]] w", "w\n");
}

static void test_has_markup(void) {
    test_cond("plain text", !wikitext_has_markup("A plain sentence, with (parens).", 32));
    test_cond("link", wikitext_has_markup("see [[x]]", 9));
    test_cond("template", wikitext_has_markup("a }} b", 6));
    test_cond("table row", wikitext_has_markup("  | cell", 8));
    test_cond("attribute", wikitext_has_markup("x colspan=2", 11));
    test_cond("entity", wikitext_has_markup("a&nbsp;b", 8));
    test_cond("quotes", wikitext_has_markup("''a", 3));
    test_cond("closing tag", wikitext_has_markup("a</b>", 5));
    test_cond("ref", wikitext_has_markup("a<ref", 5));
}

/* ---- robustness ---- */

static uint64_t rng = 88172645463325252ULL;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static void test_robustness(void) {
    static const char *const frags[] = {
        "{{",
        "}}",
        "[[",
        "]]",
        "{|",
        "|}",
        "|",
        "\n",
        "\n\n",
        "''",
        "'''",
        "<ref>",
        "</ref>",
        "<ref name=x/>",
        "<!--",
        "-->",
        "<math>",
        "</math>",
        "[http://x.org ",
        "]",
        "&amp;",
        "&#123;",
        "&#",
        "<nowiki>",
        "</nowiki>",
        "== ",
        " ==",
        "* ",
        "#",
        ":",
        "word ",
        "W\xc3\xb6rter ",
        "\xe6\x97\xa5\xe6\x9c\xac ",
        "<small>",
        "</small>",
        "<code>",
        "</code>",
        "__NOTOC__",
        "-{",
        "}-",
        "<br/>",
        "[[File:x.jpg|thumb|",
        "[[Category:",
        "<table>",
        "</table>",
        "\xff",
        "\xc3",
        "\xf4\x8f\xbc",
        "\r",
        "<",
        ">",
        "&",
        "\"",
        "{{{",
        "}}}",
        "<li>",
        "!!",
        "=",
        "....",
        ",,",
        "\t",
        "<gallery>",
        "[[:",
        "[[fr:",
        "<div>",
    };
    const size_t nf = sizeof frags / sizeof frags[0];
    size_t size = 20u << 20;
    char *page = malloc(size + 64);
    size_t n = 0;
    while (n < size) {
        const char *f = frags[rnd() % nf];
        size_t l = strlen(f);
        memcpy(page + n, f, l);
        n += l;
    }
    Buf out = {0};
    WikiText *wt = wikitext_create(NULL);
    wikitext_clean(wt, page, n, &out);
    test_cond("random 20 MB page: valid UTF-8", utf8_ok((unsigned char *)out.data, out.len));
    test_cond("random 20 MB page: clean paragraphs", paragraphs_ok(out.data, out.len));

    /* 100k unclosed templates, then text */
    n = 0;
    for (int k = 0; k < 100000; k++) {
        memcpy(page + n, "{{a ", 4);
        n += 4;
    }
    memcpy(page + n, "\nTail text.", 11);
    n += 11;
    buf_clear(&out);
    wikitext_clean(wt, page, n, &out);
    test_str_eq("100k unclosed {{", out.len ? out.data : "", "Tail text.\n");

    /* other pathological shapes: each must return with clean output */
    static const char *const unit[] = {"[[",         "[[a|",   "{|\n",    "<ref>", "<math>",
                                       "[http://a ", "<!--",   "<small>", "-{",    "&#",
                                       "<b ",        "<code>", "''",      "==",    "[[File:x|"};
    for (size_t u = 0; u < sizeof unit / sizeof unit[0]; u++) {
        size_t l = strlen(unit[u]);
        n = 0;
        while (n + l <= 4u << 20) {
            memcpy(page + n, unit[u], l);
            n += l;
        }
        buf_clear(&out);
        wikitext_clean(wt, page, n, &out);
        char name[64];
        snprintf(name, sizeof name, "pathological run of \"%s\"", unit[u]);
        test_cond(name,
                  utf8_ok((unsigned char *)out.data, out.len) && paragraphs_ok(out.data, out.len));
    }
    wikitext_destroy(wt);
    buf_free(&out);
    free(page);
}

/* ---- the default text (not faithful) ---- */

static void test_default(void) {
    WikiText *wt = wikitext_create(NULL);
#define D(name, in, want) check_n(wt, name, in, strlen(in), want)
    D("no blank before punctuation after a template (WE31)",
      "from the Greek {{lang|grc|ἀναρχία}}, i.e. \"anarchy\" (from {{lang|grc|x}}, y).",
      "from the Greek, i.e. \"anarchy\" (from, y).\n");
    D("no blank inside parentheses (WE31)", "Achilles ({{IPAc-en|ə|k}}; {{lang|grc|x}}) was",
      "Achilles (;) was\n");
    D("no blank before a period or colon (WE31)",
      "at a height of {{convert|2407|ft}}. He said {{q}}: yes", "at a height of. He said: yes\n");
    D("brackets and guillemets (WE31)", "[ {{x}} a ] « {{x}} word »", "[a] «word»\n");
    D("a spaced ellipsis keeps its blank", "In 1961, ... the legislature; wait ...",
      "In 1961, ... the legislature; wait ...\n");
    D("blanks elsewhere kept", "a ; b ! c ? d - e", "a ; b ! c ? d - e\n");
    D("indented quotation kept (WE31)",
      "He said:\n:Both parties deprecated war.<ref>x</ref>\n::Second level.\nAfter.",
      "He said:\nBoth parties deprecated war.\nSecond level.\nAfter.\n");
    D("poem lines kept (WE31)",
      "Intro.\n<poem>\n:Sing, Goddess, of the rage\n:of Achilles,\n</poem>",
      "Intro.\nSing, Goddess, of the rage\nof Achilles,\n");
    D("blockquote kept (WE31)", "<blockquote>Four score and seven years ago</blockquote>",
      "Four score and seven years ago\n");
    D("indented list item and empty indent dropped", ":* item\n:# item\n:\n: {{quote}}\nText.",
      "Text.\n");
    D("indented table debris dropped", ":{{x|\n:| a = b\n:}}\nText.", "Text.\n");
    D("indented line under a heading", "== H ==\n: Quoted.\n== Empty ==\n* list", "H.\nQuoted.\n");
    D("lists still dropped (WE31)", "Para.\n* item one\n# numbered\n; term\nAfter list.",
      "Para.\nAfter list.\n");
    D("line break tags separate words (WE31)", "one<br>two<br />three <br/>four<hr>five",
      "one two three four five\n");
    D("block tags separate lines (WE31)", "First<p>Second</p>Third<center>x</center>",
      "First\nSecond\nThird\nx\n");
    D("tags at a blank add nothing", "one <br> two\n<p>Three</p>", "one two\nThree\n");
    D("formatnum shows its number",
      "Lakossága {{formatnum: 10000}} fő, {{Formatnum:-3.5}} és {{formatnum:x}}.",
      "Lakossága 10000 fő, -3.5 és.\n");
    D("formatnum in a template dropped", "A {{convert|{{formatnum:3003}}|m}} b", "A b\n");
    D("CURRENTYEAR dropped: the text does not depend on the day",
      "net present value in {{CURRENTYEAR}} dollars ({{CURRENTMONTHNAME}} {{CURRENTDAY}})",
      "net present value in dollars ()\n");
    D("interlanguage link labels kept (WE31 drops them)",
      "localizată în [[:en:Zehlendorf (Berlin)|Zehlendorf]], este [[:de:Kiez|Kiez]].",
      "localizată în Zehlendorf, este Kiez.\n");
#undef D
    wikitext_destroy(wt);
    WikiTextOpts f = {.faithful = 1};
    check_opts(&f, "faithful: blanks and indents as WikiExtractor 3.0 (WE)",
               "Greek {{lang|x}}, i.e. (from {{x}}, y) one<br>two {{formatnum:12}}\n:Quote.\nEnd.",
               "Greek , i.e. (from , y) onetwo\nEnd.\n");
}

int main(void) {
    wt_def = wikitext_create(&(WikiTextOpts){.faithful = 1});
    test_templates();
    test_tables();
    test_links();
    test_tags();
    test_quotes();
    test_headings();
    test_lists_and_cleanup();
    test_encoding();
    test_namespaces();
    test_has_markup();
    test_default();
    test_robustness();
    wikitext_destroy(wt_def);
    return test_report();
}
