/* vocab_train - train a subword vocabulary from sentences.
 *
 *   vocab_train [OPTIONS] -o PREFIX [FILE...]
 *   vocab_train -o bert --vocab-size 32000 --character-coverage 0.9999 corpus.txt
 *   vocab_train --input=corpus.txt --model_prefix=bert --vocab_size=32000 \
 *       --character_coverage=0.9999 --model_type=bpe      (spm_train's spelling)
 *
 * --model bpe (the default) learns the pieces spm_train --model_type=bpe
 * learns (bpetrain.h) and writes PREFIX.model and PREFIX.vocab as
 * SentencePiece does (spmodel.h); --wordpiece also writes the BERT
 * vocab.txt that vocab_convert would make from PREFIX.vocab.
 *
 * --bert trains the BPE on the text as BERT's tokenizer will see it
 * (BasicTokenizer: punctuation and CJK characters split off, the case and
 * accents as --do-lower-case and --strip-accents say), gives the
 * WordPiece vocab.txt every character in both forms (c and ##c), holds
 * back a share of the sentences and reports the [UNK] share of vocab.txt
 * on them: one normalization from training to tokenization.
 *
 * --model wordpiece trains a BERT WordPiece vocabulary as Hugging Face's
 * WordPieceTrainer does (wptrain.h) and writes PREFIX.txt (vocab.txt) and
 * PREFIX.json (a tokenizer.json that the tokenizers library loads).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "vocab/bpetrain.h"
#include "common/buf.h"
#include "vocab/charsmap.h"
#include "common/cli.h"
#include "common/io.h"
#include "vocab/spmodel.h"
#include "vocab/textnorm.h"
#include "common/uniprop.h"
#include "vocab/spvocab.h"
#include "vocab/wptrain.h"
#include "tokenize/wordpiece.h"

#define MAX_INPUTS 4096

typedef struct Config {
    const char *model;  /* "bpe" or "wordpiece" */
    const char *prefix; /* -o */
    int force, nthreads;
    BpeOpts bpe;
    const char *normalization; /* nmt_nfkc | identity */
    const char *norm_model;    /* --normalizer-model */
    const char *wordpiece;     /* --wordpiece FILE */
    long wordpiece_size;       /* -1: vocab_convert's default */
    char *inputs[MAX_INPUTS];
    int ninputs;
    /* options given explicitly, recorded in trainer_spec as spm_train does */
    int set_sentence_size, set_shuffle, set_max_sentence, set_max_piece, set_vocab;
    WpTrainOpts wp;                 /* --model wordpiece */
    const char *tokenizer_json;     /* --tokenizer-json FILE */
    const char *bpe_only, *wp_only; /* an option given that only one model takes */
    int bert;                       /* --bert */
    int lower, strip;               /* --do-lower-case, --strip-accents (-1: as lower) */
    int set_held_out, set_norm;     /* --held-out, --normalization given */
    int set_cover;                  /* --character-coverage given */
    long long limit_alphabet;       /* --limit-alphabet (-1: not given) */
} Config;

static void usage(void) {
    printf(
        "Usage: %s [OPTIONS] -o PREFIX [FILE...]\n"
        "Train a subword vocabulary on FILEs (one sentence per line; stdin when none\n"
        "or -). With --model bpe, learn the pieces SentencePiece's spm_train\n"
        "--model_type=bpe learns on the same text and options, and write PREFIX.model\n"
        "and PREFIX.vocab in its formats.\n\n"
        "Options:\n"
        "      --model M                bpe (default) or wordpiece\n"
        "  -o, --output PREFIX          write PREFIX.model and PREFIX.vocab (required)\n"
        "      --vocab-size N           pieces in the model, <unk> <s> </s> included\n"
        "                               (default 32000)\n"
        "      --character-coverage F   share of character occurrences the alphabet\n"
        "                               must cover; rarer characters become <unk>\n"
        "                               (default 0.9995; 1 with --bert)\n"
        "      --input-sentence-size N  use at most N sentences: a random sample (the\n"
        "                               one spm_train draws with the same --seed) or,\n"
        "                               with --no-shuffle, the first N (default 0: all).\n"
        "                               Sampling reads regular files twice; from stdin\n"
        "                               it keeps up to N sentences in memory\n"
        "      --shuffle, --no-shuffle  how --input-sentence-size picks (default shuffle)\n"
        "      --seed N                 sampling seed (default 12345678, spm_train's)\n"
        "      --max-sentence-length N  skip longer lines, in bytes (default 4192)\n"
        "      --max-piece-length N     longest piece in characters (default 16)\n"
        "      --normalization R        nmt_nfkc (default: NFKC and whitespace clean-up,\n"
        "                               SentencePiece's rule, table built from ICU)\n"
        "                               or identity (whitespace clean-up only)\n"
        "      --normalizer-model FILE  take the normalization (rule name and compiled\n"
        "                               table) from an existing SentencePiece model\n"
        "      --wordpiece FILE         also write the BERT WordPiece vocab.txt that\n"
        "                               vocab_convert makes from PREFIX.vocab\n"
        "      --wordpiece-size N       ... with exactly N lines (vocab_convert --size)\n"
        "      --bert                   train on the text as BERT's tokenizer sees it:\n"
        "                               punctuation and CJK characters split off as\n"
        "                               words, case and accents as the two options below,\n"
        "                               --normalization identity unless given; vocab.txt\n"
        "                               gets every character both as c and ##c\n"
        "                               (vocab_convert -b); --held-out defaults to 0.01,\n"
        "                               --character-coverage to 1 and --limit-alphabet\n"
        "                               to 1000\n"
        "      --hard-vocab-limit false a text that gives fewer pieces than --vocab-size\n"
        "                               makes a smaller vocabulary (one line says so)\n"
        "                               instead of an error (spm_train's option)\n"
        "      --held-out F             hold back share F of the sentences (chosen by a\n"
        "                               hash of the line and --seed) and report vocab.txt's\n"
        "                               [UNK] share on them (default 0: train on all, as\n"
        "                               spm_train)\n"
        "\nWith --model wordpiece (Hugging Face's WordPieceTrainer with BERT\n"
        "normalization; writes PREFIX.txt, a BERT vocab.txt, and PREFIX.json, a\n"
        "tokenizer.json; --vocab-size defaults to 30000 and counts every token):\n"
        "      --unused N               [unused0..N-1] after [PAD] (default 100)\n"
        "      --cased                  keep case and accents (default: lower-case and\n"
        "                               strip accents, as bert-base-uncased)\n"
        "      --strip-accents 0|1      (also with --bert) 1: drop accents; 0: keep them,\n"
        "                               where accented letters are letters of their own\n"
        "                               (default: as --do-lower-case)\n"
        "      --do-lower-case 0|1      (also with --bert) 1 (default): lower-case; 0: keep\n"
        "                               case (--cased)\n"
        "      --min-frequency N        never merge a pair seen fewer times (default 2)\n"
        "      --limit-alphabet N       keep the N most frequent characters (default\n"
        "                               1000; 0: all; also with --model bpe, where the\n"
        "                               default is 0 unless --bert)\n"
        "      --wordpiece FILE         write vocab.txt to FILE instead of PREFIX.txt\n"
        "      --tokenizer-json FILE    write tokenizer.json to FILE instead of\n"
        "                               PREFIX.json (-o is optional when both are given)\n\n"
        "Both models:\n"
        "  -j, --threads N              threads for reading (default: the usable CPUs, %d here)\n"
        "  -f, --force                  overwrite existing output files\n"
        "      --max-line-bytes N       longest input line (default 64M)\n"
        "  -q, --quiet                  no summary; -v, --verbose: more detail and\n"
        "                               progress lines when stderr is not a terminal\n"
        "  -h, --help                   show this help; -V, --version: show the version\n\n"
        "spm_train's spellings work too: --input=FILE[,FILE...] --model_prefix=PREFIX\n"
        "--model_type=bpe --vocab_size=N --character_coverage=F --input_sentence_size=N\n"
        "--shuffle_input_sentence=true|false --max_sentence_length=N\n"
        "--max_sentencepiece_length=N --normalization_rule_name=R --num_threads=N.\n\n"
        "Exit status: 0 ok; 1 a data error (no text, a vocabulary size that does not\n"
        "fit the text, a read or write error); 2 a bad option, a missing file, or\n"
        "outputs that are one file or have no name (-o '', -o DIR/).\n\n"
        "Example (the HILBERT workflow's spmtrain.py call):\n"
        "  %s --input=hu.txt --model_prefix=bert --vocab_size=32000 \\\n"
        "      --input_sentence_size=100000000 --shuffle_input_sentence=true \\\n"
        "      --character_coverage=0.9999 --model_type=bpe --wordpiece vocab.txt\n",
        progname, cli_ncpus(), progname);
}

/* ---- the one dispatch point for other models ---- */

/* PREFIX + ext as a new string. */
static char *prefixed(const char *prefix, const char *ext) {
    size_t n = strlen(prefix) + strlen(ext) + 1;
    char *p = xmalloc(n);
    snprintf(p, n, "%s%s", prefix, ext);
    return p;
}

static int train_wordpiece(Config *c) {
    Err err;
    /* a missing or unreadable input is a usage error (exit 2), found before any work */
    if (inputs_check(c->inputs, c->ninputs, &err)) die_code(EXIT_USAGE, "%s", err.msg);
    char *vocab_path = c->wordpiece ? xstrdup(c->wordpiece) : prefixed(c->prefix, ".txt");
    char *json_path = c->tokenizer_json ? xstrdup(c->tokenizer_json) : prefixed(c->prefix, ".json");
    if (c->set_vocab) c->wp.vocab_size = (size_t)c->bpe.vocab_size;
    c->wp.threads = c->nthreads;
    c->wp.force = c->force;
    const char *const *in = (const char *const *)c->inputs;
    static const char *const stdin_only[] = {"-"};
    int nin = c->ninputs;
    if (nin == 0) in = stdin_only, nin = 1;
    int rc = wptrain_run(&c->wp, in, nin, vocab_path, json_path, &err);
    free(vocab_path);
    free(json_path);
    if (rc) die("%s", err.msg);
    return EXIT_OK;
}

/* ---- progress ---- */

static void show_progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
    Progress *p = ctx;
    if (!progress_due(p, total && done == total)) return;
    char line[256];
    if (total)
        snprintf(line, sizeof line, "%s: %llu of %llu (%.0f%%), %.0f s", phase,
                 (unsigned long long)done, (unsigned long long)total,
                 100.0 * (double)done / (double)total, p->last - p->start);
    else
        snprintf(line, sizeof line, "%s: %llu lines, %.0f s", phase, (unsigned long long)done,
                 p->last - p->start);
    progress_show(p, line);
}

/* ---- options ---- */

static int parse_bool(const char *s, const char *what) {
    if (!s || !strcasecmp(s, "true") || !strcmp(s, "1")) return 1;
    if (!strcasecmp(s, "false") || !strcmp(s, "0")) return 0;
    cli_bad_usage("%s: expected true or false, got '%s'", what, s);
}

static void add_input(Config *c, char *name) {
    if (c->ninputs == MAX_INPUTS) cli_bad_usage("more than %d input files", MAX_INPUTS);
    c->inputs[c->ninputs++] = name;
}

static uint64_t parse_count(const char *s, const char *what, uint64_t lo, uint64_t hi) {
    uint64_t v;
    if (cli_parse_u64(s, &v) || v < lo || v > hi)
        cli_bad_usage("%s: expected a whole number from %llu to %llu, got '%s'", what,
                      (unsigned long long)lo, (unsigned long long)hi, s);
    return v;
}

static void parse_args(Config *c, int argc, char **argv) {
    enum {
        O_MODEL = 256,
        O_VOCAB,
        O_COVER,
        O_NSENT,
        O_SHUFFLE,
        O_NOSHUFFLE,
        O_SEED,
        O_MAXSENT,
        O_MAXPIECE,
        O_NORM,
        O_NORMMODEL,
        O_WP,
        O_WPSIZE,
        O_INPUT,
        O_SPMSHUFFLE,
        O_UNUSED,
        O_CASED,
        O_MINFREQ,
        O_LIMITALPHA,
        O_TOKJSON,
        O_BERT,
        O_LOWER,
        O_STRIP,
        O_HELDOUT,
        O_HARD,
    };
    static const struct option longopts[] = {
        {"model", required_argument, 0, O_MODEL},
        {"model_type", required_argument, 0, O_MODEL},
        {"model_prefix", required_argument, 0, 'o'},
        {"vocab-size", required_argument, 0, O_VOCAB},
        {"vocab_size", required_argument, 0, O_VOCAB},
        {"character-coverage", required_argument, 0, O_COVER},
        {"character_coverage", required_argument, 0, O_COVER},
        {"input-sentence-size", required_argument, 0, O_NSENT},
        {"input_sentence_size", required_argument, 0, O_NSENT},
        {"shuffle", no_argument, 0, O_SHUFFLE},
        {"no-shuffle", no_argument, 0, O_NOSHUFFLE},
        {"shuffle_input_sentence", optional_argument, 0, O_SPMSHUFFLE},
        {"seed", required_argument, 0, O_SEED},
        {"max-sentence-length", required_argument, 0, O_MAXSENT},
        {"max_sentence_length", required_argument, 0, O_MAXSENT},
        {"max-piece-length", required_argument, 0, O_MAXPIECE},
        {"max_sentencepiece_length", required_argument, 0, O_MAXPIECE},
        {"normalization", required_argument, 0, O_NORM},
        {"normalization_rule_name", required_argument, 0, O_NORM},
        {"normalizer-model", required_argument, 0, O_NORMMODEL},
        {"wordpiece", required_argument, 0, O_WP},
        {"wordpiece-size", required_argument, 0, O_WPSIZE},
        {"input", required_argument, 0, O_INPUT},
        {"unused", required_argument, 0, O_UNUSED},
        {"cased", no_argument, 0, O_CASED},
        {"min-frequency", required_argument, 0, O_MINFREQ},
        {"limit-alphabet", required_argument, 0, O_LIMITALPHA},
        {"tokenizer-json", required_argument, 0, O_TOKJSON},
        {"bert", no_argument, 0, O_BERT},
        {"do-lower-case", required_argument, 0, O_LOWER},
        {"do_lower_case", required_argument, 0, O_LOWER},
        {"strip-accents", required_argument, 0, O_STRIP},
        {"strip_accents", required_argument, 0, O_STRIP},
        {"held-out", required_argument, 0, O_HELDOUT},
        {"hard-vocab-limit", required_argument, 0, O_HARD},
        {"hard_vocab_limit", required_argument, 0, O_HARD},
        {"threads", required_argument, 0, 'j'},
        {"num_threads", required_argument, 0, 'j'},
        CLI_LONGOPTS_COMMON};
    CliCommon cc;
    cli_common_init(&cc);
    int opt;
    while ((opt = getopt_long(argc, argv, ":j:o:fqvhV", longopts, NULL)) != -1) {
        switch (opt) {
        case O_MODEL:
            if (strcmp(optarg, "bpe") && strcmp(optarg, "wordpiece"))
                cli_bad_usage("--model: expected bpe or wordpiece, got '%s'", optarg);
            c->model = optarg;
            break;
        case O_VOCAB:
            c->bpe.vocab_size = (int)parse_count(optarg, "--vocab-size", 1, 100000000);
            c->set_vocab = 1;
            break;
        case O_UNUSED:
            c->wp.unused = (int)parse_count(optarg, "--unused", 0, WPTRAIN_MAX_UNUSED),
            c->wp_only = "--unused";
            break;
        case O_CASED:
            c->lower = 0, c->wp_only = "--cased";
            break;
        case O_BERT:
            c->bert = 1, c->bpe_only = "--bert";
            break;
        case O_LOWER:
            c->lower = (int)cli_parse_int(optarg, "--do-lower-case", 0, 1);
            break;
        case O_STRIP:
            c->strip = (int)cli_parse_int(optarg, "--strip-accents", 0, 1);
            break;
        case O_HARD:
            c->bpe.soft_limit = !parse_bool(optarg, "--hard-vocab-limit"),
            c->bpe_only = "--hard-vocab-limit";
            break;
        case O_HELDOUT:
            c->bpe.held_out = cli_parse_double_in(optarg, "--held-out", 0, 0.5);
            c->set_held_out = 1, c->bpe_only = "--held-out";
            break;
        case O_MINFREQ:
            c->wp.min_frequency = parse_count(optarg, "--min-frequency", 0, UINT64_MAX),
            c->wp_only = "--min-frequency";
            break;
        case O_LIMITALPHA:
            c->limit_alphabet = (long long)parse_count(optarg, "--limit-alphabet", 0, 0x110000);
            break;
        case O_TOKJSON:
            c->tokenizer_json = optarg, c->wp_only = "--tokenizer-json";
            break;
        case O_COVER: {
            c->bpe_only = "--character-coverage", c->set_cover = 1;
            char *end;
            float f = strtof(optarg, &end);
            if (end == optarg || *end || !(f > 0 && f <= 1))
                cli_bad_usage("--character-coverage: expected a number in (0, 1], got '%s'",
                              optarg);
            c->bpe.character_coverage = f;
            break;
        }
        case O_NSENT:
            c->bpe.input_sentence_size =
                parse_count(optarg, "--input-sentence-size", 0, UINT64_MAX / 16);
            c->set_sentence_size = 1;
            c->bpe_only = "--input-sentence-size";
            break;
        case O_SHUFFLE:
            c->bpe.shuffle = 1, c->set_shuffle = 1, c->bpe_only = "--shuffle";
            break;
        case O_NOSHUFFLE:
            c->bpe.shuffle = 0, c->set_shuffle = 1, c->bpe_only = "--no-shuffle";
            break;
        case O_SPMSHUFFLE:
            c->bpe.shuffle = parse_bool(optarg, "--shuffle_input_sentence"), c->set_shuffle = 1;
            c->bpe_only = "--shuffle_input_sentence";
            break;
        case O_SEED:
            c->bpe.seed = parse_count(optarg, "--seed", 0, UINT32_MAX);
            break;
        case O_MAXSENT:
            c->bpe.max_sentence_length = parse_count(optarg, "--max-sentence-length", 1, 1u << 30);
            c->set_max_sentence = 1;
            c->bpe_only = "--max-sentence-length";
            break;
        case O_MAXPIECE:
            c->bpe.max_piece_length = (int)parse_count(optarg, "--max-piece-length", 1, 255);
            c->set_max_piece = 1;
            c->bpe_only = "--max-piece-length";
            break;
        case O_NORM:
            if (strcmp(optarg, "nmt_nfkc") && strcmp(optarg, "identity"))
                cli_bad_usage("--normalization: expected nmt_nfkc or identity, got '%s'", optarg);
            c->normalization = optarg;
            c->set_norm = 1;
            c->bpe_only = "--normalization";
            break;
        case O_NORMMODEL:
            c->norm_model = optarg, c->bpe_only = "--normalizer-model";
            break;
        case O_WP:
            c->wordpiece = optarg;
            break;
        case O_WPSIZE:
            c->wordpiece_size = (long)parse_count(optarg, "--wordpiece-size", 0, 100000000);
            c->bpe_only = "--wordpiece-size";
            break;
        case O_INPUT:
            for (char *s = optarg, *comma; s; s = comma ? comma + 1 : NULL) {
                comma = strchr(s, ',');
                if (comma) *comma = '\0';
                if (*s) add_input(c, s);
            }
            break;
        case 'h':
            usage();
            exit(EXIT_OK);
        case 'V': {
            char feat[64];
            snprintf(feat, sizeof feat, "icu=%s", uni_icu_version());
            cli_version(feat);
        }
        default:
            cli_common_opt(&cc, opt, optarg, argv, "");
        }
    }
    for (int i = optind; i < argc; i++)
        add_input(c, argv[i]);
    c->prefix = cc.output;
    c->force = cc.force;
    c->nthreads = cc.nthreads;
    Err err;
    /* -o '' or -o DIR/ would write the hidden files .model and .vocab */
    if (c->prefix && output_name_check(c->prefix, "-o", &err))
        cli_bad_usage("%s (PREFIX.model, PREFIX.vocab: a name to put before the extensions)",
                      err.msg);
    if (!strcmp(c->model, "bpe")) {
        if (c->wp_only) cli_bad_usage("%s: only with --model wordpiece", c->wp_only);
        if (!c->prefix)
            cli_bad_usage(
                "-o PREFIX is required (the model goes to PREFIX.model and PREFIX.vocab)");
        if (c->wordpiece_size >= 0 && !c->wordpiece)
            cli_bad_usage("--wordpiece-size needs --wordpiece FILE");
        if (!c->bert && (c->lower != 1 || c->strip >= 0))
            cli_bad_usage("--do-lower-case and --strip-accents: only with --bert or --model "
                          "wordpiece");
        if (c->bert && !c->set_norm && !c->norm_model) c->normalization = "identity";
        if (c->set_held_out && c->bpe.held_out > 0 && !c->wordpiece)
            cli_bad_usage("--held-out: the [UNK] share is that of --wordpiece FILE; give it");
        if (c->bert && !c->set_held_out && c->wordpiece) c->bpe.held_out = 0.01;
        /* a BERT vocabulary turns a whole word into [UNK] for one missing
         * character: keep them all, up to the 1000 most frequent (as
         * Hugging Face's BertWordPieceTokenizer.train does) */
        if (c->bert && !c->set_cover) c->bpe.character_coverage = 1.0f;
        if (c->limit_alphabet >= 0)
            c->bpe.limit_alphabet = (size_t)c->limit_alphabet;
        else if (c->bert)
            c->bpe.limit_alphabet = 1000;
    } else {
        if (c->limit_alphabet >= 0) c->wp.limit_alphabet = (size_t)c->limit_alphabet;
        c->wp.cased = !c->lower;
        c->wp.strip_accents = c->strip;
        if (c->bpe_only) cli_bad_usage("%s: only with --model bpe", c->bpe_only);
        if (!c->prefix && !(c->wordpiece && c->tokenizer_json))
            cli_bad_usage("-o PREFIX is required (vocab.txt goes to PREFIX.txt, tokenizer.json to "
                          "PREFIX.json)");
    }
    /* the outputs, before any work: no two may be one file */
    int bpe = !strcmp(c->model, "bpe");
    char *outs[3] = {bpe ? prefixed(c->prefix, ".model") : NULL,
                     bpe ? prefixed(c->prefix, ".vocab") : NULL, NULL};
    if (bpe)
        outs[2] = c->wordpiece ? xstrdup(c->wordpiece) : NULL;
    else {
        outs[0] = c->wordpiece ? xstrdup(c->wordpiece) : prefixed(c->prefix, ".txt");
        outs[1] = c->tokenizer_json ? xstrdup(c->tokenizer_json) : prefixed(c->prefix, ".json");
    }
    int clash = outputs_check((const char *const *)outs, 3, &err);
    for (int i = 0; i < 3; i++)
        free(outs[i]);
    if (clash) cli_bad_usage("%s", err.msg);
}

/* ---- bpe ---- */

/* The normalizer: from --normalizer-model, or built in (nmt_nfkc: the
 * table charsmap.c builds from the linked ICU). Sets name/blob for
 * the model's normalizer_spec (blob points into *model). */
static TextNorm *load_normalizer(const Config *c, SpModel *from, const char **name,
                                 const char **blob, size_t *blob_len) {
    Err err;
    *blob = NULL;
    *blob_len = 0;
    if (c->norm_model) {
        Buf data = {0};
        if (read_file_max(c->norm_model, &data, SP_MODEL_MAX_BYTES, "a SentencePiece model", &err))
            die_code(EXIT_USAGE, "%s", err.msg);
        if (spmodel_read(from, data.data ? data.data : "", data.len, &err))
            die_code(EXIT_USAGE, "%s: not a SentencePiece model: %s", c->norm_model, err.msg);
        buf_free(&data);
        const SpField *nf = spmsg_get(&from->normalizer, SPN_NAME);
        const SpField *cf = spmsg_get(&from->normalizer, SPN_PRECOMPILED_CHARSMAP);
        static char nm[128];
        snprintf(nm, sizeof nm, "%.*s", nf ? (int)nf->len : 0,
                 nf ? from->normalizer.data.data + nf->off : "");
        *name = nm[0] ? nm : "identity";
        if (cf && cf->len) {
            *blob = from->normalizer.data.data + cf->off;
            *blob_len = cf->len;
        }
    } else if (!strcmp(c->normalization, "identity")) {
        *name = "identity";
    } else {
        static Buf table;
        if (charsmap_nmt_nfkc(&table, &err)) die("nmt_nfkc table: %s", err.msg);
        *name = "nmt_nfkc";
        *blob = table.data;
        *blob_len = table.len;
    }
    TextNorm *sn = textnorm_new(*blob, *blob_len, NULL, &err);
    if (!sn) die_code(EXIT_USAGE, "%s: %s", c->norm_model ? c->norm_model : "nmt_nfkc", err.msg);
    return sn;
}

/* Write the WordPiece vocab.txt made of the SentencePiece vocab text to w
 * (and into text); returns its number of tokens. */
static int write_wordpiece(const Config *c, const Buf *vocab, Writer *w, Buf *text) {
    Err err;
    VocabList pieces = {0}, out = {0};
    VocabConvOpts vo = VOCABCONV_DEFAULTS;
    VocabConvStats st;
    vo.size = c->wordpiece_size;
    if (c->bert) vo.add_chars = VOCABCONV_CHARS_BOTH;
    if (spm_vocab_parse(vocab->data, vocab->len, "vocab", &pieces, NULL, &err) ||
        vocab_convert(&pieces, &vo, &out, &st, &err))
        die("%s: %s", c->wordpiece, err.msg);
    for (size_t i = 0; i < out.n; i++) {
        buf_append(text, vocablist_at(&out, i), out.len[i]);
        buf_putc(text, '\n');
    }
    if (writer_write(w, text->data, text->len, &err)) die("%s", err.msg);
    if (st.dropped)
        warn("--wordpiece-size %ld: dropped the last %zu of %zu tokens", c->wordpiece_size,
             st.dropped, st.with_chars);
    if (st.padded)
        warn("--wordpiece-size %ld: padded %zu tokens with %zu [unusedK] tokens", c->wordpiece_size,
             st.with_chars, st.padded);
    size_t n = out.n;
    vocablist_free(&pieces);
    vocablist_free(&out);
    return (int)n;
}

/* ---- --bert: BERT's basic tokenization before training ---- */

typedef struct Pretok {
    WordPiece *basic;
    WpScratch *sc; /* one per counting thread */
    int nsc;
} Pretok;

static void pretok_line(void *ctx, int worker, const char *line, size_t len, Buf *out) {
    Pretok *p = ctx;
    wp_basic_tokenize(p->basic, &p->sc[worker], line, len, out);
}

/* The held-out sentences through vocab.txt (text) as the tokenizer of the
 * same normalization: tokens and [UNK] tokens into *ntok, *nunk. */
static void held_out_unk(const Config *c, BpeTrainer *t, const Buf *text, uint64_t *ntok,
                         uint64_t *nunk) {
    Err err;
    Buf held = {0};
    bpe_held_out(t, &held);
    WordPiece *wp = wp_create_mem(text->data ? text->data : "", text->len, c->wordpiece,
                                  wp_norm(c->lower, c->strip), &err);
    if (!wp) die("%s", err.msg);
    WpScratch sc = {0};
    WpIds ids = {0};
    int32_t unk = wp_unk_id(wp);
    *ntok = *nunk = 0;
    for (size_t i = 0; i < held.len;) {
        const char *nl = memchr(held.data + i, '\n', held.len - i);
        size_t e = nl ? (size_t)(nl - held.data) : held.len;
        ids.n = 0;
        wp_encode(wp, &sc, held.data + i, e - i, &ids);
        for (size_t k = 0; k < ids.n; k++)
            *nunk += ids.v[k] == unk;
        *ntok += ids.n;
        i = e + 1;
    }
    wp_ids_free(&ids);
    wp_scratch_free(&sc);
    wp_destroy(wp);
    buf_free(&held);
}

static int train_bpe(Config *c) {
    SpModel from, model;
    spmodel_init(&from);
    spmodel_init(&model);
    const char *norm_name, *blob;
    size_t blob_len;
    TextNorm *sn = load_normalizer(c, &from, &norm_name, &blob, &blob_len);

    /* outputs first, so that a refused file is reported before the work */
    Err err;
    char *model_path = prefixed(c->prefix, ".model"), *vocab_path = prefixed(c->prefix, ".vocab");
    Writer wm, wv, ww;
    if (writer_open(&wm, model_path, c->force, &err)) die("%s", err.msg);
    if (writer_refuse_tty(&wm, &err)) die("%s", err.msg);
    if (writer_open(&wv, vocab_path, c->force, &err)) die("%s", err.msg);
    if (c->wordpiece && writer_open(&ww, c->wordpiece, c->force, &err)) die("%s", err.msg);

    Progress prog;
    progress_init(&prog, 0);
    c->bpe.norm = sn;
    c->bpe.nthreads = c->nthreads;
    c->bpe.progress = show_progress;
    c->bpe.progress_ctx = &prog;
    Pretok pre = {0};
    if (c->bert) {
        pre.basic = wp_create_basic(wp_norm(c->lower, c->strip), WP_FLAVOR_BERT);
        pre.nsc = c->nthreads > 0 ? c->nthreads : 1;
        pre.sc = xcalloc((size_t)pre.nsc, sizeof *pre.sc);
        c->bpe.pretok = pretok_line;
        c->bpe.pretok_ctx = &pre;
    }
    BpeTrainer *t = bpe_create(&c->bpe);
    int rc = bpe_read(t, c->inputs, c->ninputs, &err);
    progress_done(&prog);
    if (rc) die_code(rc == -2 ? EXIT_USAGE : EXIT_DATA, "%s", err.msg);
    const BpeStats *st = bpe_stats(t);
    info(3,
         "read %llu lines: %llu sentences%s, %llu empty, %llu longer than %zu bytes, %llu with "
         "U+2585 "
         "(skipped); %.1f s",
         (unsigned long long)st->lines, (unsigned long long)st->sentences,
         st->sampled ? " (sampled)" : "", (unsigned long long)st->empty,
         (unsigned long long)st->too_long, c->bpe.max_sentence_length,
         (unsigned long long)st->reserved, now_sec() - prog.start);
    if (bpe_train(t, &err)) {
        progress_done(&prog);
        die("%s", err.msg);
    }
    progress_done(&prog);

    if (bpe_vocab_size(t) != c->bpe.vocab_size) {
        /* said even with -q: the vocabulary is not the size asked for */
        info(1,
             "the text gives %d pieces, fewer than --vocab-size %d: a vocabulary of %d "
             "(--hard-vocab-limit false)",
             bpe_vocab_size(t), c->bpe.vocab_size, bpe_vocab_size(t));
        c->bpe.vocab_size = bpe_vocab_size(t);
    }
    bpe_model(t, &model);
    spmodel_set_bpe_trainer(&model, NULL, c->prefix, c->bpe.vocab_size, c->bpe.character_coverage);
    for (int i = 0; i < c->ninputs; i++)
        spmsg_add_bytes(&model.trainer, SPT_INPUT, c->inputs[i], strlen(c->inputs[i]));
    if (c->set_sentence_size)
        spmsg_set_varint(&model.trainer, SPT_INPUT_SENTENCE_SIZE,
                         (int64_t)c->bpe.input_sentence_size);
    if (c->set_shuffle)
        spmsg_set_varint(&model.trainer, SPT_SHUFFLE_INPUT_SENTENCE, c->bpe.shuffle);
    if (c->set_max_sentence)
        spmsg_set_varint(&model.trainer, 18, (int64_t)c->bpe.max_sentence_length);
    if (c->set_max_piece) spmsg_set_varint(&model.trainer, 20, c->bpe.max_piece_length);
    spmodel_set_normalizer(&model, norm_name, blob, blob_len);

    Buf mb = {0}, vb = {0};
    spmodel_write(&model, &mb);
    spmodel_write_vocab(&model, &vb);
    if (writer_write(&wm, mb.data, mb.len, &err) || writer_write(&wv, vb.data, vb.len, &err))
        die("%s", err.msg);
    Buf wtext = {0};
    int nwp = c->wordpiece ? write_wordpiece(c, &vb, &ww, &wtext) : 0;
    if (writer_close(&wm, &err) || writer_close(&wv, &err) ||
        (c->wordpiece && writer_close(&ww, &err)))
        die("%s", err.msg);

    info(3,
         "%llu characters, alphabet %llu (coverage %.6f); %llu words, %llu distinct; %llu merges, "
         "%llu "
         "duplicate pieces skipped; %llu pairs at most; active-set window: %llu picks changed, "
         "%llu ties at "
         "the cut decided by rank",
         (unsigned long long)st->chars, (unsigned long long)st->alphabet, st->coverage,
         (unsigned long long)st->words, (unsigned long long)st->distinct_words,
         (unsigned long long)st->merges, (unsigned long long)st->duplicates,
         (unsigned long long)st->pairs, (unsigned long long)st->window_skips,
         (unsigned long long)st->cut_ties_used);
    info(3, "seconds: reading %.2f, alphabet and words %.2f, pairs %.2f, merges %.2f", st->sec_read,
         st->sec_alphabet, st->sec_pairs, st->sec_merges);
    char wp[64] = "", held[160] = "";
    if (c->wordpiece) snprintf(wp, sizeof wp, ", %d WordPiece tokens", nwp);
    if (st->held_out && c->wordpiece) {
        uint64_t ntok, nunk;
        held_out_unk(c, t, &wtext, &ntok, &nunk);
        double share = ntok ? 100.0 * (double)nunk / (double)ntok : 0.0;
        snprintf(held, sizeof held, "; held out %llu sentences, %llu tokens, [UNK] %.2f %%",
                 (unsigned long long)st->held_out, (unsigned long long)ntok, share);
        if (share > 1.0)
            warn("%s: %.2f %% of the held-out tokens are [UNK] (more than 1 %%): a larger "
                 "--character-coverage or --bert may help",
                 c->wordpiece, share);
    }
    info(2,
         "%llu sentences, %llu words, %llu lines skipped, alphabet %llu (coverage %.2f %%), %zu "
         "pieces%s%s, %.1f s",
         (unsigned long long)st->sentences, (unsigned long long)st->words,
         (unsigned long long)(st->too_long + st->reserved), (unsigned long long)st->alphabet,
         100.0 * st->coverage, model.n, wp, held, now_sec() - prog.start);
    buf_free(&wtext);
    if (pre.basic) {
        for (int i = 0; i < pre.nsc; i++)
            wp_scratch_free(&pre.sc[i]);
        free(pre.sc);
        wp_destroy(pre.basic);
    }
    buf_free(&mb);
    buf_free(&vb);
    bpe_destroy(t);
    textnorm_free(sn);
    spmodel_free(&model);
    spmodel_free(&from);
    free(model_path);
    free(vocab_path);
    return EXIT_OK;
}

int main(int argc, char **argv) {
    cli_init(argv[0]);
    static Config c;
    c.model = "bpe";
    c.normalization = "nmt_nfkc";
    c.wordpiece_size = -1;
    c.lower = 1, c.strip = -1, c.limit_alphabet = -1;
    c.bpe = (BpeOpts)BPE_OPTS_DEFAULT;
    c.wp = (WpTrainOpts)WPTRAIN_DEFAULTS;
    parse_args(&c, argc, argv);
    if (!strcmp(c.model, "wordpiece")) return train_wordpiece(&c);
    return train_bpe(&c);
}
