/* langid_train - build a language-identification model from labelled text.
 *
 *   langid_train [OPTIONS] [TRAIN.tsv...] > model.txt
 *   langid_train --dev dev.tsv -o data/langid/model.txt train.tsv
 *   langid_train --select test all.tsv > test.tsv
 *   langid_train --eval model.txt --min-chars 40 test.tsv > predictions.tsv
 *
 * Input lines are "lang<TAB>text" (blank lines are skipped). The model is a
 * character n-gram naive Bayes (tokenize/langidmodel.h); the output is the
 * same bytes for the same input. --select instead copies the input lines
 * whose text falls into one part of the deterministic train/dev/test split;
 * --eval identifies each text with a model and writes "gold<TAB>guess<TAB>
 * confidence" lines, with the accuracy and speed on stderr.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/io.h"
#include "tokenize/langidfit.h"

static void usage(const LangIdTrainOpts *d) {
    printf("Usage: %s [OPTIONS] [TRAIN.tsv...]\n"
           "Train a language-identification model (character n-gram naive Bayes) from\n"
           "lines \"lang<TAB>text\". Reads stdin when no file (or -) is given; writes the\n"
           "model to stdout unless -o is given.\n\n"
           "Options:\n"
           "      --dev FILE     held-out \"lang<TAB>text\" lines for fitting the confidence\n"
           "                     temperature (repeatable)\n"
           "      --order N      longest character n-gram, 1..%d (default %d)\n"
           "      --top N        grams of each order >= 2 kept per language (default %d)\n"
           "      --min-count N  drop (gram, language) counts below N (default %d)\n"
           "      --mu X         Dirichlet smoothing mass, every order (default %g)\n"
           "      --select PART  no training: copy the input lines whose text is in PART\n"
           "                     of the fixed split (train 85%%, dev 5%%, test 10%%)\n"
           "      --eval MODEL   no training: identify each text with MODEL and write\n"
           "                     \"gold<TAB>guess<TAB>confidence\"; accuracy and speed on stderr\n"
           "      --min-chars N  with --eval: skip texts of fewer than N characters\n"
           "  -o, --output FILE  write to FILE atomically\n"
           "  -f, --force        overwrite an existing output file\n"
           "      --max-line-bytes N  longest input line (default 64M)\n"
           "  -q, --quiet        fewer messages; -v, --verbose: more\n"
           "  -h, --help         show this help; -V, --version: show the version\n\n"
           "Example:\n"
           "  bench/langid_data.sh /tmp/lid && %s --dev /tmp/lid/dev.tsv -o model.txt "
           "/tmp/lid/train.tsv\n",
           progname, LANGID_MAX_ORDER, d->order, d->top, d->min_count, d->mu[0], progname);
}

/* Next non-empty "lang<TAB>text" line of rd: 1 with the two fields set,
 * 0 at the end, -1 on a read error or a line without a language (err set). */
static int next_tsv(Reader *rd, const char **lang, size_t *lang_len, const char **text,
                    size_t *text_len, Err *err) {
    const char *line;
    size_t len;
    int r;
    while ((r = reader_next_line(rd, &line, &len, err)) == 1) {
        if (!len) continue;
        const char *tab = memchr(line, '\t', len);
        if (!tab || tab == line)
            return err_set(err, "%s:%llu: expected \"lang<TAB>text\"", rd->name,
                           (unsigned long long)rd->line);
        *lang = line;
        *lang_len = (size_t)(tab - line);
        *text = tab + 1;
        *text_len = len - *lang_len - 1;
        return 1;
    }
    return r;
}

/* Feed every "lang<TAB>text" line of rd to the trainer (or, with select >= 0,
 * copy the lines of that split part to out). Returns 0 or -1 (err set). */
static int read_tsv(Reader *rd, LangIdTrainer *t, int dev, int select, Writer *out,
                    uint64_t *nlines, Err *err) {
    const char *line, *text;
    size_t gl, n;
    int r;
    while ((r = next_tsv(rd, &line, &gl, &text, &n, err)) == 1) {
        size_t len = gl + 1 + n;
        (*nlines)++;
        if (select >= 0) {
            if (langid_split_part(text, n) == select &&
                (writer_write(out, line, len, err) || writer_write(out, "\n", 1, err)))
                return -1;
            continue;
        }
        Err e2;
        if (langid_trainer_add(t, line, gl, text, n, dev, &e2))
            return err_set(err, "%s:%llu: %s", rd->name, (unsigned long long)rd->line, e2.msg);
    }
    return r < 0 ? -1 : 0;
}

/* Characters (code points) in s[0..n). */
static size_t nchars(const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* --eval: identify every text of rd with m; write one line per text to out.
 * The time counted is that of langid_identify alone. */
static int evaluate(Reader *rd, const LangId *m, size_t min_chars, FILE *out, Err *err) {
    const char *line, *text;
    size_t gl, tl;
    int r;
    uint64_t n = 0, right = 0, bytes = 0;
    double secs = 0;
    while ((r = next_tsv(rd, &line, &gl, &text, &tl, err)) == 1) {
        if (nchars(text, tl) < min_chars) continue;
        LangScore s;
        double t0 = now_sec();
        langid_identify(m, text, tl, &s);
        secs += now_sec() - t0;
        n++;
        bytes += tl;
        right += strlen(s.lang) == gl && memcmp(s.lang, line, gl) == 0;
        fprintf(out, "%.*s\t%s\t%.4f\n", (int)gl, line, s.lang, s.conf);
    }
    if (r < 0) return -1;
    info(2, "%llu texts, %llu right (%.2f%%); %.0f texts/s, %.1f MB/s", (unsigned long long)n,
         (unsigned long long)right, n ? 100.0 * right / n : 0.0, secs > 0 ? n / secs : 0.0,
         secs > 0 ? bytes / secs / 1e6 : 0.0);
    return 0;
}

/* The options. */
typedef struct Config {
    CliCommon cc;
    LangIdTrainOpts o;
    const char *eval_model; /* --eval */
    size_t min_chars;
    char **devs;      /* --dev files (the array is owned) */
    int ndev, select; /* select: -1, or the --select part 0..2 */
    char **inputs;
    int ninputs;
} Config;

/* Options into cfg; the inputs and --dev files must be readable. Returns 1
 * when -h printed the help (exit 0), else 0; bad options exit 2. */
static int parse_args(int argc, char **argv, Config *cfg) {
    langid_train_defaults(&cfg->o);
    LangIdTrainOpts *o = &cfg->o;
    cli_common_init(&cfg->cc);
    cfg->eval_model = NULL;
    cfg->min_chars = 0;
    cfg->devs = NULL;
    cfg->ndev = 0, cfg->select = -1;
    enum { O_DEV = 256, O_ORDER, O_TOP, O_MIN, O_MU, O_SELECT, O_EVAL, O_MINCH };
    static const struct option longopts[] = {{"dev", required_argument, 0, O_DEV},
                                             {"order", required_argument, 0, O_ORDER},
                                             {"top", required_argument, 0, O_TOP},
                                             {"min-count", required_argument, 0, O_MIN},
                                             {"mu", required_argument, 0, O_MU},
                                             {"select", required_argument, 0, O_SELECT},
                                             {"eval", required_argument, 0, O_EVAL},
                                             {"min-chars", required_argument, 0, O_MINCH},
                                             CLI_LONGOPTS_COMMON};
    int c;
    while ((c = getopt_long(argc, argv, ":o:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case O_DEV:
            cfg->devs = xrealloc(cfg->devs, (size_t)(cfg->ndev + 1) * sizeof *cfg->devs);
            cfg->devs[cfg->ndev++] = optarg;
            break;
        case O_ORDER:
            o->order = (int)cli_parse_int(optarg, "--order", 1, LANGID_MAX_ORDER);
            break;
        case O_TOP:
            o->top = (int)cli_parse_int(optarg, "--top", 1, 1 << 24);
            break;
        case O_MIN:
            o->min_count = (int)cli_parse_int(optarg, "--min-count", 1, 1 << 30);
            break;
        case O_MU: {
            double mu = cli_parse_double(optarg, "--mu");
            if (!(mu > 0)) cli_bad_usage("--mu: must be positive, got '%s'", optarg);
            for (int i = 0; i < LANGID_MAX_ORDER; i++)
                o->mu[i] = mu;
            break;
        }
        case O_SELECT:
            if (!strcmp(optarg, "train"))
                cfg->select = 0;
            else if (!strcmp(optarg, "dev"))
                cfg->select = 1;
            else if (!strcmp(optarg, "test"))
                cfg->select = 2;
            else
                cli_bad_usage("--select: expected train, dev or test, got '%s'", optarg);
            break;
        case O_EVAL:
            cfg->eval_model = optarg;
            break;
        case O_MINCH:
            cfg->min_chars = (size_t)cli_parse_int(optarg, "--min-chars", 0, 1 << 30);
            break;
        case 'h':
            usage(o);
            return 1;
        default:
            cli_common_opt(&cfg->cc, c, optarg, argv, "");
        }
    }
    cfg->inputs = argv + optind;
    cfg->ninputs = argc - optind;
    Err err;
    if (inputs_check(cfg->inputs, cfg->ninputs, &err) || inputs_check(cfg->devs, cfg->ndev, &err))
        die_code(EXIT_USAGE, "%s", err.msg);
    return 0;
}

/* --eval: the predictions of cfg->eval_model for the inputs, to the
 * output. A missing model exits 2, an unreadable one 1. */
static void run_eval(const Config *cfg) {
    Err err;
    LangId *m = langid_load(cfg->eval_model, &err);
    if (!m)
        die_code(access(cfg->eval_model, R_OK) != 0 ? EXIT_USAGE : EXIT_DATA, "%s",
                 err.msg); /* missing: usage */
    Writer w;
    Reader rd;
    if (writer_open(&w, cfg->cc.output, cfg->cc.force, &err)) die("%s", err.msg);
    reader_init(&rd, cfg->inputs, cfg->ninputs);
    if (evaluate(&rd, m, cfg->min_chars, w.fp, &err)) die("%s", err.msg);
    if (writer_close(&w, &err)) die("%s", err.msg);
    reader_free(&rd);
    langid_free(m);
}

/* The model from the trainer t (fed with the training and --dev texts),
 * to w; it must load again. The summary line at -v. */
static void write_model(const Config *cfg, LangIdTrainer *t, Writer *w, uint64_t ntrain,
                        double t0) {
    Err err;
    Reader rd;
    uint64_t nheld = 0;
    reader_init(&rd, cfg->devs, cfg->ndev);
    if (cfg->ndev && read_tsv(&rd, t, 1, -1, NULL, &nheld, &err)) die("%s", err.msg);
    reader_free(&rd);
    Buf model = {0};
    if (langid_trainer_write(t, &model, &err)) die("%s", err.msg);
    if (writer_write(w, model.data, model.len, &err)) die("%s", err.msg);
    Err e2;
    LangId *m = langid_load_mem(model.data, model.len, "model", &e2);
    if (!m) die("internal error: the model written does not load: %s", e2.msg);
    info(2, "%llu training texts, %llu held out; %d languages; %.1f MB model; T = %.3g; %.1f s",
         (unsigned long long)ntrain, (unsigned long long)nheld, langid_nlangs(m),
         (double)model.len / 1e6, langid_temperature(m), now_sec() - t0);
    langid_free(m);
    buf_free(&model);
}

/* Training (or --select): read the inputs, then write the model (or the
 * selected lines were written on the way). */
static void run_train(const Config *cfg) {
    Err err;
    double t0 = now_sec();
    LangIdTrainer *t = langid_trainer_create(&cfg->o);
    Writer w;
    if (writer_open(&w, cfg->cc.output, cfg->cc.force, &err)) die("%s", err.msg);
    Reader rd;
    uint64_t ntrain = 0;
    reader_init(&rd, cfg->inputs, cfg->ninputs);
    if (read_tsv(&rd, t, 0, cfg->select, &w, &ntrain, &err)) die("%s", err.msg);
    reader_free(&rd);
    if (cfg->select >= 0)
        info(2, "%llu lines read", (unsigned long long)ntrain);
    else
        write_model(cfg, t, &w, ntrain, t0);
    if (writer_close(&w, &err)) die("%s", err.msg);
    langid_trainer_free(t);
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    Config cfg;
    if (parse_args(argc, argv, &cfg)) return EXIT_OK;
    if (cfg.eval_model)
        run_eval(&cfg);
    else
        run_train(&cfg);
    free(cfg.devs);
    return EXIT_OK;
}
