/* vocab_convert - SentencePiece .vocab to BERT WordPiece vocab.txt.
 *
 *   vocab_convert [OPTIONS] [bert.vocab]
 *   vocab_convert bert.vocab -o vocab.txt
 *
 * The sent2wordpiece.py step of the HILBERT workflow (spvocab.h has the
 * rules), plus --size to make the vocab exactly as long as the model's
 * embedding table.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/cli.h"
#include "common/io.h"
#include "vocab/spvocab.h"

static void usage(void) {
    printf("Usage: %s [OPTIONS] [VOCAB]\n"
           "Turn a SentencePiece vocabulary (VOCAB, lines \"PIECE<TAB>SCORE\", as spm_train\n"
           "writes it) into a BERT WordPiece vocab.txt, as sent2wordpiece.py does: <unk> <s>\n"
           "</s> are dropped; a piece starting with \"\xe2\x96\x81\" loses it and becomes a "
           "word-initial\n"
           "token, any other piece gets \"##\"; the bare piece \"\xe2\x96\x81\" disappears. The "
           "output starts\n"
           "with [PAD] [unused0]..[unused99] [UNK] [CLS] [SEP] [MASK], so a 32000-piece model\n"
           "gives 32101 lines. Reads stdin when VOCAB is absent or -; writes stdout unless -o.\n\n"
           "Options:\n"
           "  -c, --add-chars     also add every character of the vocabulary as a token\n"
           "                      (in code-point order)\n"
           "  -b, --both-forms    add every character of the pieces that is missing both as\n"
           "                      a word-initial token and as a ## continuation (c, ##c),\n"
           "                      as Hugging Face's WordPiece trainer does: BERT splits\n"
           "                      punctuation into words of its own, so \",\" is needed\n"
           "                      where BPE only learned \"##,\"\n"
           "  -n, --no-special    do not add [PAD] [unusedN] [UNK] [CLS] [SEP] [MASK]\n"
           "  -k, --keep-special  keep <unk> <s> </s>\n"
           "  -u, --unused N      number of [unusedN] tokens (default 100)\n"
           "      --size N        write exactly N lines: a longer list loses its LAST tokens\n"
           "                      (in a BPE vocab the rarest single characters, which then\n"
           "                      become [UNK]; with -c the added characters go first); a\n"
           "                      shorter one is padded with [unusedK], K counting on from\n"
           "                      -u's value. Either way a warning says how many. To keep\n"
           "                      every piece, lower -u instead (e.g. -u 0 with a 32000-piece\n"
           "                      model and --size 32000 drops 1 piece rather than 101)\n"
           "  -o, --output FILE   write to FILE atomically\n"
           "  -f, --force         overwrite an existing output file\n"
           "      --max-line-bytes N  longest line of VOCAB (default 64M)\n"
           "  -q, --quiet         fewer messages; -v, --verbose: counts at the end\n"
           "  -h, --help          show this help; -V, --version: show the version\n\n"
           "Exit status: 0 ok; 1 a malformed or repeated line (reported as FILE:LINE), an\n"
           "input without pieces, a missing input or a write error; 2 a bad option.\n\n"
           "Example:\n"
           "  %s bert.vocab -o vocab.txt\n",
           progname, progname);
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    VocabConvOpts opts = VOCABCONV_DEFAULTS;
    CliCommon cc;
    cli_common_init(&cc);
    enum { O_SIZE = 256 };
    static const struct option longopts[] = {{"add-chars", no_argument, 0, 'c'},
                                             {"both-forms", no_argument, 0, 'b'},
                                             {"no-special", no_argument, 0, 'n'},
                                             {"keep-special", no_argument, 0, 'k'},
                                             {"unused", required_argument, 0, 'u'},
                                             {"size", required_argument, 0, O_SIZE},
                                             CLI_LONGOPTS_COMMON};
    int c;
    while ((c = getopt_long(argc, argv, ":cbnku:o:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            opts.add_chars = VOCABCONV_CHARS_ADD;
            break;
        case 'b':
            opts.add_chars = VOCABCONV_CHARS_BOTH;
            break;
        case 'n':
            opts.no_special = 1;
            break;
        case 'k':
            opts.keep_special = 1;
            break;
        case 'u':
            opts.unused = (int)cli_parse_int(optarg, "--unused", 0, 1000000);
            break;
        case O_SIZE:
            opts.size = cli_parse_int(optarg, "--size", 1, 100000000);
            break;
        case 'h':
            usage();
            return EXIT_OK;
        default:
            cli_common_opt(&cc, c, optarg, argv, "");
        }
    }
    if (argc - optind > 1) cli_bad_usage("one VOCAB file at most, got %d", argc - optind);
    const char *input = optind < argc ? argv[optind] : "-";
    const char *name = strcmp(input, "-") ? input : "<stdin>";

    Err err;
    Buf data = {0};
    VocabList pieces = {0}, out = {0};
    VocabConvStats st;
    if (read_text_file(input, &data, &err)) die("%s", err.msg);
    if (spm_vocab_parse(data.data ? data.data : "", data.len, name, &pieces, NULL, &err))
        die("%s", err.msg);
    if (vocab_convert(&pieces, &opts, &out, &st, &err)) die("%s", err.msg);
    /* special tokens alone are no vocabulary: every word would be [UNK] */
    if (st.converted == 0) die("%s: no pieces", name);

    Writer w;
    if (writer_open(&w, cc.output, cc.force, &err)) die("%s", err.msg);
    for (size_t i = 0; i < out.n; i++) {
        fwrite(vocablist_at(&out, i), 1, out.len[i], w.fp);
        putc('\n', w.fp);
    }
    if (writer_close(&w, &err)) die("%s", err.msg);

    if (st.dropped) {
        if (st.first_dropped_line)
            warn("--size %lld: dropped the last %zu of %zu tokens, from \"%s\" (%s:%llu) on",
                 (long long)opts.size, st.dropped, st.with_chars, st.first_dropped, name,
                 (unsigned long long)st.first_dropped_line);
        else
            warn("--size %lld: dropped the last %zu of %zu tokens, from \"%s\" on",
                 (long long)opts.size, st.dropped, st.with_chars, st.first_dropped);
    }
    if (st.padded)
        warn("--size %lld: padded %zu tokens with %zu [unusedK] tokens", (long long)opts.size,
             st.with_chars, st.padded);
    if (st.duplicates)
        warn("%zu output tokens repeat an earlier one (first: \"%s\"); BERT's load_vocab maps such "
             "a token "
             "to its last line",
             st.duplicates, st.first_duplicate);
    info(3,
         "read %zu pieces from %s; %zu after dropping <unk> <s> </s>; %zu converted; %zu with the "
         "BERT "
         "special tokens; %zu with characters; %zu written",
         st.read, name, st.filtered, st.converted, st.extended, st.with_chars, st.total);
    buf_free(&data);
    vocablist_free(&pieces);
    vocablist_free(&out);
    return EXIT_OK;
}
