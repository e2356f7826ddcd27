/* vocab_normalize - SentencePiece normalization of text, one line at a time.
 *
 *   vocab_normalize [--model FILE.model] [--map-only] [-o FILE] [FILE...]
 *   vocab_normalize wiki.txt | head          # "▁Die▁Stadt▁Berlin ..."
 *
 * Writes each input line as SentencePiece normalizes it before training and
 * encoding (textnorm.h): with the nmt_nfkc table generated from ICU
 * (charsmap.h), or with the normalizer of a .model (its compiled table and
 * its whitespace switches). The output is what spm_train counts characters
 * and pieces in, and what a model with that normalizer encodes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "vocab/charsmap.h"
#include "common/cli.h"
#include "common/io.h"
#include "vocab/spmodel.h"
#include "vocab/textnorm.h"
#include "common/uniprop.h"

static void usage(void) {
    printf(
        "Usage: %s [OPTIONS] [FILE...]\n"
        "Write every input line normalized as SentencePiece normalizes it: NFKC with the\n"
        "nmt rules (control characters deleted; TAB, CR, U+200B and other odd spaces made\n"
        "spaces), then leading, trailing and repeated spaces removed, a space put in front\n"
        "and every space written as \"\xe2\x96\x81\" (U+2581). A line of only whitespace becomes\n"
        "empty. Bytes that are not UTF-8 become U+FFFD, one per byte. Reads stdin when no\n"
        "FILE is given or FILE is -; writes stdout unless -o.\n\n"
        "Options:\n"
        "  -m, --model FILE    use the normalizer of SentencePiece model FILE (its\n"
        "                      precompiled_charsmap and whitespace switches) instead of\n"
        "                      the nmt_nfkc table built from ICU's Unicode data\n"
        "  -n, --map-only      apply only the character map: no space in front, no\n"
        "                      whitespace clean-up, spaces stay spaces\n"
        "  -o, --output FILE   write to FILE atomically\n"
        "  -f, --force         overwrite an existing output file\n"
        "      --max-line-bytes N  longest input line (default 64M)\n"
        "  -q, --quiet         fewer messages; -v, --verbose: counts at the end\n"
        "  -h, --help          show this help; -V, --version: show the version\n\n"
        "Exit status: 0 ok; 1 a missing or unreadable input or model, a write error; 2 a\n"
        "bad option.\n\n"
        "Example:\n"
        "  %s --model bert.model corpus.txt | head\n",
        progname, progname);
}

/* The normalizer of the model at path: its table (the nmt_nfkc one built
 * here when the model names that rule without a table) and switches. */
static TextNorm *model_normalizer(const char *path, int map_only, Err *err) {
    Buf data = {0}, table = {0};
    SpModel m;
    TextNorm *sn = NULL;
    spmodel_init(&m);
    if (read_file_max(path, &data, SP_MODEL_MAX_BYTES, "a SentencePiece model", err)) goto done;
    if (spmodel_read(&m, data.data ? data.data : "", data.len, err)) {
        Err e = *err;
        err_set(err, "%s: not a SentencePiece model: %s", path, e.msg);
        goto done;
    }
    const SpField *cm = spmsg_get(&m.normalizer, SPN_PRECOMPILED_CHARSMAP);
    const SpField *name = spmsg_get(&m.normalizer, SPN_NAME);
    const char *nm = name ? m.normalizer.data.data + name->off : "nmt_nfkc";
    size_t nlen = name ? name->len : 8;
    if (cm && cm->len > 0) {
        buf_append(&table, m.normalizer.data.data + cm->off, cm->len);
    } else if (nlen == 8 && memcmp(nm, "nmt_nfkc", 8) == 0) {
        if (charsmap_nmt_nfkc(&table, err)) goto done;
    } else if (!(nlen == 8 && memcmp(nm, "identity", 8) == 0)) {
        err_set(err, "%s: normalizer '%.*s' has no precompiled_charsmap", path, (int)nlen, nm);
        goto done;
    }
    TextNormOpts o = {
        (int)spmsg_get_int(&m.normalizer, SPN_ADD_DUMMY_PREFIX, 1),
        (int)spmsg_get_int(&m.normalizer, SPN_REMOVE_EXTRA_WHITESPACES, 1),
        (int)spmsg_get_int(&m.normalizer, SPN_ESCAPE_WHITESPACES, 1),
    };
    if (map_only) o = (TextNormOpts){0, 0, 0};
    sn = textnorm_new(table.data, table.len, &o, err);
    if (!sn) {
        Err e = *err;
        err_set(err, "%s: %s", path, e.msg);
    }
done:
    buf_free(&data), buf_free(&table);
    spmodel_free(&m);
    return sn;
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    CliCommon cc;
    cli_common_init(&cc);
    const char *model = NULL;
    int map_only = 0;
    static const struct option longopts[] = {{"model", required_argument, 0, 'm'},
                                             {"map-only", no_argument, 0, 'n'},
                                             CLI_LONGOPTS_COMMON};
    char features[96];
    snprintf(features, sizeof features, "(icu %s, unicode %s)", uni_icu_version(),
             uni_unicode_version());
    int c;
    while ((c = getopt_long(argc, argv, ":m:no:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'm':
            model = optarg;
            break;
        case 'n':
            map_only = 1;
            break;
        case 'h':
            usage();
            return EXIT_OK;
        default:
            cli_common_opt(&cc, c, optarg, argv, features);
        }
    }

    Err err;
    TextNorm *sn;
    double t0 = now_sec();
    if (model) {
        sn = model_normalizer(model, map_only, &err);
    } else {
        Buf table = {0};
        TextNormOpts o = {0, 0, 0};
        sn = charsmap_nmt_nfkc(&table, &err)
                 ? NULL
                 : textnorm_new(table.data, table.len, map_only ? &o : NULL, &err);
        buf_free(&table);
    }
    if (!sn) die("%s", err.msg);
    info(3, "normalizer ready in %.3f s", now_sec() - t0);

    Reader rd;
    Writer w;
    reader_init(&rd, argv + optind, argc - optind);
    if (writer_open(&w, cc.output, cc.force, &err)) die("%s", err.msg);
    Buf out = {0};
    const char *line;
    size_t len;
    unsigned long long lines = 0, bytes_out = 0;
    int r;
    while ((r = reader_next_line(&rd, &line, &len, &err)) == 1) {
        buf_clear(&out);
        textnorm_normalize(sn, line, len, &out);
        buf_putc(&out, '\n');
        if (writer_write(&w, out.data, out.len, &err)) die("%s", err.msg);
        lines++;
        bytes_out += out.len;
    }
    if (r < 0) die("%s", err.msg);
    if (writer_close(&w, &err)) die("%s", err.msg);
    info(3, "%llu lines, %llu bytes in, %llu bytes out", lines, (unsigned long long)rd.bytes,
         bytes_out);
    buf_free(&out);
    reader_free(&rd);
    textnorm_free(sn);
    return EXIT_OK;
}
