/* ckpt.c - checkpoints, the Hugging Face export and import (see ckpt.h).
 * The safetensors format: a little-endian u64 header length, a JSON
 * header (name -> dtype, shape, data_offsets into the data that follows;
 * "__metadata__" aside), the data (huggingface/safetensors' README). */
#include "train/ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/io.h"
#include "common/json.h"
#include "common/tokjson.h"

static const char MAGIC[8] = "WBCKPT1", END[8] = "WBCKEND";

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

static int put(Writer *w, uint64_t *h, const void *p, size_t n) {
    *h = fnv(*h, p, n);
    return fwrite(p, 1, n, w->fp) == n ? 0 : -1;
}

int ckpt_save(const char *path, const Bert *m, const Optim *o, const CkptInfo *info, Err *err) {
    Buf hdr = {0};
    char t[512];
    buf_append(&hdr, "{\"config\": ", 11);
    bert_config_json(&m->c, &hdr);
    snprintf(t, sizeof t,
             ", \"nparams\": %zu, \"step\": %" PRId64
             ", \"optimizer\": \"%s\", \"opt_step\": %" PRId64 ", \"epoch\": %" PRId64
             ", \"file_step\": %" PRId64 ", \"row\": %" PRId64 ", \"seed\": %" PRIu64 "}",
             m->nparams, info->step, o ? (o->c.kind == OPT_LAMB ? "lamb" : "adamw") : "none",
             o ? o->step : 0, info->data.epoch, info->data.file_step, info->data.row, info->seed);
    buf_append(&hdr, t, strlen(t));
    if (info->run[0]) { /* a plain string of options: no character JSON escapes */
        hdr.len--;      /* the closing brace */
        buf_puts(&hdr, ", \"run\": \"");
        buf_puts(&hdr, info->run);
        buf_puts(&hdr, "\"}");
    }
    if (info->nranks > 1) { /* every data-parallel rank's position: "e,f,r;e,f,r;..." */
        static const char key[] = ", \"rank_data\": \"";
        hdr.len--; /* the closing brace */
        buf_append(&hdr, key, sizeof key - 1);
        for (int r = 0; r < info->nranks; r++) {
            const DataState *d = &info->ranks[r];
            snprintf(t, sizeof t, "%s%" PRId64 ",%" PRId64 ",%" PRId64, r ? ";" : "", d->epoch,
                     d->file_step, d->row);
            buf_append(&hdr, t, strlen(t));
        }
        buf_append(&hdr, "\"}", 2);
    }
    Writer w;
    if (writer_open(&w, path, 1, err)) {
        buf_free(&hdr);
        return -1;
    }
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t hl = (uint32_t)hdr.len;
    size_t n = m->nparams * sizeof(float);
    int bad = put(&w, &h, MAGIC, 8) || put(&w, &h, &hl, 4) || put(&w, &h, hdr.data, hdr.len) ||
              put(&w, &h, m->params, n);
    if (o && !bad) bad = put(&w, &h, o->m, n) || put(&w, &h, o->v, n);
    buf_free(&hdr);
    if (!bad) bad = fwrite(END, 1, 8, w.fp) != 8 || fwrite(&h, 1, 8, w.fp) != 8;
    if (bad) {
        writer_abort(&w);
        return err_set(err, "%s: write error: %s", path, strerror(errno));
    }
    return writer_close(&w, err);
}

/* The raw value of key in the header object, or -1. */
static int hdr_value(const char *hdr, size_t n, const char *key, const char **v, size_t *vn) {
    JsonIter it;
    const char *k;
    size_t kn;
    if (json_iter_init(&it, hdr, n, '{')) return -1;
    while (json_iter_next(&it, &k, &kn, v, vn) == 1)
        if (json_key_is(k, kn, key)) return 0;
    return -1;
}

static int64_t hdr_i64(const char *hdr, size_t n, const char *key) {
    const char *v;
    size_t vn;
    int64_t x = 0;
    if (hdr_value(hdr, n, key, &v, &vn) || json_to_i64(v, vn, &x)) return 0;
    return x;
}

/* Read and verify the whole file; on success b holds it and *hdr / *hl the
 * header, *data the arrays. */
static int read_verified(const char *path, Buf *b, const char **hdr, uint32_t *hl,
                         const char **data, size_t *ndata, Err *err) {
    if (read_file(path, b, err)) return -1;
    if (b->len < 8 + 4 + 16 || memcmp(b->data, MAGIC, 8))
        return err_set(err, "%s: not a wikibert checkpoint", path);
    memcpy(hl, b->data + 8, 4);
    if ((size_t)*hl > b->len - 28) return err_set(err, "%s: cut short (header)", path);
    size_t body = b->len - 16;
    uint64_t h = fnv(0xcbf29ce484222325ull, b->data, body), want;
    memcpy(&want, b->data + body + 8, 8);
    if (memcmp(b->data + body, END, 8) || h != want)
        return err_set(
            err, "%s: incomplete or damaged (no completion marker, or its hash does not match)",
            path);
    *hdr = b->data + 12;
    *data = b->data + 12 + *hl;
    *ndata = body - 12 - *hl;
    return 0;
}

int ckpt_load(const char *path, Bert *m, Optim *o, CkptInfo *info, Err *err) {
    Buf b = {0}, optname = {0};
    const char *hdr, *data, *v;
    uint32_t hl;
    size_t ndata, vn;
    int rc = -1;
    if (read_verified(path, &b, &hdr, &hl, &data, &ndata, err)) goto out;
    BertConfig c;
    Err e2;
    if (hdr_value(hdr, hl, "config", &v, &vn) || bert_config_parse(&c, v, vn, path, &e2)) {
        err_set(err, "%s: bad header", path);
        goto out;
    }
    const BertConfig *mc = &m->c;
    const struct {
        const char *name;
        int ckpt, model;
    } dims[] = {{"vocab_size", c.vocab_size, mc->vocab_size},
                {"hidden_size", c.hidden_size, mc->hidden_size},
                {"num_hidden_layers", c.num_hidden_layers, mc->num_hidden_layers},
                {"num_attention_heads", c.num_attention_heads, mc->num_attention_heads},
                {"intermediate_size", c.intermediate_size, mc->intermediate_size},
                {"max_position_embeddings", c.max_position_embeddings, mc->max_position_embeddings},
                {"type_vocab_size", c.type_vocab_size, mc->type_vocab_size}};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        if (dims[i].ckpt != dims[i].model) {
            err_set(err, "%s: a checkpoint of another model: %s %d, the config says %d", path,
                    dims[i].name, dims[i].ckpt, dims[i].model);
            goto out;
        }
    size_t n = m->nparams * sizeof(float);
    int64_t np = hdr_i64(hdr, hl, "nparams");
    if ((size_t)np != m->nparams || ndata < n) {
        err_set(err, "%s: %lld parameters, the model has %zu", path, (long long)np, m->nparams);
        goto out;
    }
    memcpy(m->params, data, n);
    if (o) {
        const char *want = o->c.kind == OPT_LAMB ? "lamb" : "adamw";
        if (hdr_value(hdr, hl, "optimizer", &v, &vn) == 0) json_decode_string(&optname, v, vn);
        if (ndata != 3 * n || optname.len != strlen(want) ||
            memcmp(optname.data, want, optname.len)) {
            err_set(err, "%s: no %s optimizer state in it (it has: %.*s)", path, want,
                    (int)optname.len, optname.data ? optname.data : "");
            goto out;
        }
        memcpy(o->m, data + n, n);
        memcpy(o->v, data + 2 * n, n);
        o->step = hdr_i64(hdr, hl, "opt_step");
    }
    if (info) {
        *info = (CkptInfo){
            hdr_i64(hdr, hl, "step"),
            {hdr_i64(hdr, hl, "epoch"), hdr_i64(hdr, hl, "file_step"), hdr_i64(hdr, hl, "row")},
            (uint64_t)hdr_i64(hdr, hl, "seed"),
            1,
            NULL,
            ""};
        Buf run = {0};
        if (hdr_value(hdr, hl, "run", &v, &vn) == 0 && json_decode_string(&run, v, vn) == 0 &&
            run.len < sizeof info->run) {
            memcpy(info->run, run.data, run.len);
            info->run[run.len] = '\0';
        }
        buf_free(&run);
        Buf rd = {0};
        if (hdr_value(hdr, hl, "rank_data", &v, &vn) == 0 && json_decode_string(&rd, v, vn) == 0 &&
            rd.len) {
            buf_append(&rd, "", 1); /* NUL */
            int nr = 1;
            for (size_t i = 0; i < rd.len; i++)
                nr += rd.data[i] == ';';
            info->ranks = xcalloc((size_t)nr, sizeof *info->ranks);
            info->nranks = nr;
            const char *p = rd.data;
            for (int r = 0; r < nr; r++) {
                long long e, f, w;
                int used = 0;
                if (sscanf(p, "%lld,%lld,%lld%n", &e, &f, &w, &used) != 3) {
                    buf_free(&rd), free(info->ranks), info->ranks = NULL;
                    err_set(err, "%s: bad rank_data in the header", path);
                    goto out;
                }
                info->ranks[r] = (DataState){e, f, w};
                p += used + (p[used] == ';');
            }
        } else {
            info->ranks = xmalloc(sizeof *info->ranks);
            info->ranks[0] = info->data;
        }
        buf_free(&rd);
    }
    rc = 0;
out:
    buf_free(&b), buf_free(&optname);
    return rc;
}

typedef struct Found {
    int64_t step;
    char *path;
} Found;

static int newer_first(const void *a, const void *b) {
    int64_t x = ((const Found *)a)->step, y = ((const Found *)b)->step;
    return x < y ? 1 : x > y ? -1 : strcmp(((const Found *)a)->path, ((const Found *)b)->path);
}

int ckpt_latest(const char *dir, char *path, size_t cap, CkptSkipFn skip, void *arg, int *ndamaged,
                Err *err) {
    *ndamaged = 0;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : err_set(err, "%s: %s", dir, strerror(errno));
    Found *f = NULL;
    size_t n = 0, fcap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long long s;
        char tail[16];
        if (sscanf(e->d_name, "ckpt_%lld.%15s", &s, tail) != 2 || strcmp(tail, "wbckpt") || s < 0)
            continue;
        if (n == fcap) f = xrealloc(f, (fcap = fcap ? 2 * fcap : 16) * sizeof *f);
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        f[n].step = s;
        f[n].path = xmalloc(len);
        snprintf(f[n++].path, len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n) qsort(f, n, sizeof *f, newer_first);
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        Buf b = {0};
        const char *h, *dd;
        uint32_t hl;
        size_t nd;
        Err why;
        if (read_verified(f[i].path, &b, &h, &hl, &dd, &nd, &why) == 0) {
            snprintf(path, cap, "%s", f[i].path);
            found = 1;
        } else {
            ++*ndamaged;
            if (skip) skip(arg, &why);
        }
        buf_free(&b);
    }
    for (size_t i = 0; i < n; i++)
        free(f[i].path);
    free(f);
    return found;
}

/* ---- Hugging Face ---- */

static int write_text(const char *path, const char *s, size_t n, Err *err) {
    Writer w;
    if (writer_open(&w, path, 1, err)) return -1;
    if (fwrite(s, 1, n, w.fp) != n) {
        writer_abort(&w);
        return err_set(err, "%s: write error", path);
    }
    return writer_close(&w, err);
}

/* the special tokens, the end of both tokenizer_config.json and
 * special_tokens_map.json */
#define SPECIAL_TOKENS_JSON                                                                        \
    "  \"unk_token\": \"[UNK]\",\n  \"sep_token\": \"[SEP]\",\n"                                   \
    "  \"pad_token\": \"[PAD]\",\n  \"cls_token\": \"[CLS]\",\n"                                   \
    "  \"mask_token\": \"[MASK]\"\n}\n"

/* "yes", "no", or for strip_accents -1 "as lower-casing" */
static const char *yes_no(int x) { return x < 0 ? "as lower-casing" : x ? "yes" : "no"; }

/* README.md: the model card (Hugging Face's YAML header, then what the
 * model is, how it was made and how to load it). */
static void model_card(Buf *b, const Bert *m, const HfTokenizer *tk, const HfCard *c) {
    char t[1024];
    const BertConfig *k = &m->c;
    buf_puts(b, "---\nlibrary_name: transformers\npipeline_tag: fill-mask\ntags:\n- bert\n"
                "- wikibert\n---\n\n# BERT pretrained with wikibert\n\n");
    snprintf(t, sizeof t,
             "A BERT model (BertForPreTraining: masked LM and next-sentence heads) made by "
             "`%s` of wikibert, the C toolkit that turns Wikipedia dumps into BERT pretraining "
             "data and pretrains BERT.\n\n"
             "- Model: %d layers, hidden size %d, %d attention heads, intermediate size %d, "
             "vocabulary %d, at most %d positions.\n",
             c->program, k->num_hidden_layers, k->hidden_size, k->num_attention_heads,
             k->intermediate_size, k->vocab_size, k->max_position_embeddings);
    buf_puts(b, t);
    buf_puts(b, "- Data: ");
    snprintf(t, sizeof t, "%d HDF5 training file%s of `", c->nfiles, c->nfiles == 1 ? "" : "s");
    buf_puts(b, t);
    buf_puts(b, c->input_dir ? c->input_dir : "");
    snprintf(t, sizeof t,
             "`.\n- Training: %lld optimizer steps%s; the last step's loss %.4f (masked LM %.4f, "
             "next sentence %.4f).\n"
             "- Tokenizer: WordPiece (`vocab.txt`, `tokenizer.json`); lower-cased: %s; accents "
             "stripped: %s, as the training data's text (`AutoTokenizer` does the same).\n"
             "\nThe command line:\n\n```\n",
             (long long)c->steps, c->phase2 ? " (phase 2)" : "", c->loss, c->mlm, c->nsp,
             yes_no(tk->lower), yes_no(tk->strip));
    buf_puts(b, t);
    buf_puts(b, c->cmdline ? c->cmdline : "");
    buf_puts(b, "\n```\n\nUse:\n\n```python\nfrom transformers import pipeline\n"
                "fill = pipeline(\"fill-mask\", model=\"THIS_DIRECTORY\")\n"
                "print(fill(\"Budapest is the capital of [MASK].\"))\n```\n");
}

int export_hf(const char *dir, const Bert *m, const char *vocab, size_t vocab_len,
              const HfTokenizer *tk, const HfCard *card, Err *err) {
    if (make_dirs(dir, err)) return -1;
    char path[4096];
    Buf b = {0};
    char t[1024];
    bert_config_json(&m->c, &b);
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = write_text(path, b.data, b.len, err);
    buf_clear(&b);
    if (rc) {
        buf_free(&b);
        return -1;
    }

    /* safetensors: u64 header length, JSON header, the data */
    buf_append(&b, "{\"__metadata__\":{\"format\":\"pt\"}", 31);
    size_t off = 0;
    for (int i = 0; i < m->ntensors; i++) {
        const BertTensor *bt = bert_tensor(m, i);
        if (bt->rank == 2)
            snprintf(t, sizeof t,
                     ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}",
                     bt->name, (long long)bt->shape[0], (long long)bt->shape[1], off,
                     off + bt->n * 4);
        else
            snprintf(t, sizeof t,
                     ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}",
                     bt->name, (long long)bt->shape[0], off, off + bt->n * 4);
        buf_append(&b, t, strlen(t));
        off += bt->n * 4;
    }
    buf_putc(&b, '}');
    while (b.len % 8)
        buf_putc(&b, ' '); /* the data starts 8-aligned */
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    Writer w;
    if (writer_open(&w, path, 1, err)) {
        buf_free(&b);
        return -1;
    }
    uint64_t hl = b.len;
    int bad = fwrite(&hl, 8, 1, w.fp) != 1 || fwrite(b.data, 1, b.len, w.fp) != b.len;
    for (int i = 0; i < m->ntensors && !bad; i++) {
        const BertTensor *bt = bert_tensor(m, i);
        bad = fwrite(m->params + bt->off, 4, bt->n, w.fp) != bt->n;
    }
    buf_free(&b);
    if (bad) {
        writer_abort(&w);
        return err_set(err, "%s: write error: %s", path, strerror(errno));
    }
    if (writer_close(&w, err)) return -1;
    if (vocab) {
        snprintf(path, sizeof path, "%s/vocab.txt", dir);
        if (write_text(path, vocab, vocab_len, err)) return -1;
        char cfg[1024];
        int n = snprintf(cfg, sizeof cfg,
                         "{\n  \"tokenizer_class\": \"BertTokenizer\",\n"
                         "  \"do_lower_case\": %s,\n  \"strip_accents\": %s,\n"
                         "  \"tokenize_chinese_chars\": true,\n  \"model_max_length\": "
                         "%d,\n" SPECIAL_TOKENS_JSON,
                         tk->lower ? "true" : "false",
                         tk->strip < 0 ? "null"
                         : tk->strip   ? "true"
                                       : "false",
                         m->c.max_position_embeddings);
        snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
        if (write_text(path, cfg, (size_t)n, err)) return -1;
        static const char map[] = "{\n" SPECIAL_TOKENS_JSON;
        snprintf(path, sizeof path, "%s/special_tokens_map.json", dir);
        if (write_text(path, map, sizeof map - 1, err)) return -1;
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        Err e2;
        if (tokjson_wordpiece(&b, vocab, vocab_len, tk->lower, tk->strip, &e2)) {
            buf_free(&b);
            return err_set(err, "%s: %s", path, e2.msg);
        }
        rc = write_text(path, b.data, b.len, err);
        buf_clear(&b);
        if (rc) {
            buf_free(&b);
            return -1;
        }
    }
    if (card) {
        model_card(&b, m, tk, card);
        snprintf(path, sizeof path, "%s/README.md", dir);
        rc = write_text(path, b.data, b.len, err);
    }
    buf_free(&b);
    return rc;
}

/* ---- Hugging Face import ---- */

/* Bytes per element of a safetensors dtype we convert, or 0. */
static int dtype_size(const char *v, size_t vn) {
    if (vn == 5 && !memcmp(v, "\"F32\"", 5)) return 4;
    if (vn == 5 && !memcmp(v, "\"F16\"", 5)) return 2;
    if (vn == 6 && !memcmp(v, "\"BF16\"", 6)) return 2;
    return 0;
}

static float half_to_float(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, f = h & 0x3ff, u;
    if (e == 0x1f)
        u = s | 0x7f800000u | f << 13; /* inf, nan */
    else if (e)
        u = s | (e + 112) << 23 | f << 13;
    else if (!f)
        u = s; /* zero */
    else {     /* subnormal: normalize */
        e = 113;
        while (!(f & 0x400))
            f <<= 1, e--;
        u = s | e << 23 | (f & 0x3ff) << 13;
    }
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* n elements of width w (4: F32, 2: F16 or BF16 as bf) at src into dst. */
static void convert(float *dst, const unsigned char *src, size_t n, int w, int bf) {
    if (w == 4) {
        memcpy(dst, src, n * 4);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint16_t h = (uint16_t)(src[2 * i] | src[2 * i + 1] << 8);
        uint32_t u = (uint32_t)h << 16;
        if (bf)
            memcpy(&dst[i], &u, 4);
        else
            dst[i] = half_to_float(h);
    }
}

/* Our name for a tensor of a Hugging Face checkpoint (raw[0..n)) into
 * out: BertModel's names gain "bert.", TF-era LayerNorm gamma / beta
 * become weight / bias. */
static void hf_name(const char *raw, size_t n, char *out, size_t cap) {
    int bare = !(n >= 5 && !memcmp(raw, "bert.", 5)) && !(n >= 4 && !memcmp(raw, "cls.", 4));
    int len = snprintf(out, cap, "%s%.*s", bare ? "bert." : "", (int)n, raw);
    if (len <= 0 || (size_t)len >= cap) return;
    size_t l = (size_t)len;
    if (l > 6 && !strcmp(out + l - 6, ".gamma") && strstr(out, "LayerNorm"))
        snprintf(out + l - 6, cap - (l - 6), ".weight");
    else if (l > 5 && !strcmp(out + l - 5, ".beta") && strstr(out, "LayerNorm"))
        snprintf(out + l - 5, cap - (l - 5), ".bias");
}

/* The heads a BertModel or BertForMaskedLM checkpoint lacks: these may be
 * missing (they keep the fresh initialization); anything else must be there. */
static int may_be_fresh(const char *name) {
    return !strncmp(name, "cls.", 4) || !strncmp(name, "bert.pooler.", 12);
}

/* Parse a shape array ("[a, b]") into sh; returns the rank or -1. */
static int parse_shape(const char *v, size_t vn, int64_t sh[2]) {
    JsonIter it;
    const char *k, *e;
    size_t kn, en;
    int r = 0;
    if (json_iter_init(&it, v, vn, '[')) return -1;
    while (json_iter_next(&it, &k, &kn, &e, &en) == 1) {
        int64_t x;
        if (r == 2 || json_to_i64(e, en, &x) || x < 0) return -1;
        sh[r++] = x;
    }
    return it.error ? -1 : r;
}

static void shape_str(char *s, size_t cap, int rank, const int64_t *sh) {
    if (rank == 1)
        snprintf(s, cap, "[%lld]", (long long)sh[0]);
    else
        snprintf(s, cap, "[%lld, %lld]", (long long)sh[0], (long long)sh[1]);
}

/* The word-embedding rows (and MLM bias entries) a checkpoint may lack:
 * vocab_size is rounded up to a multiple of 8 here, not in transformers
 * (multilingual BERT: 119547 rows, the model 119552). */
static int padded_vocab(const BertTensor *t, int rank, const int64_t *sh) {
    int word = !strcmp(t->name, "bert.embeddings.word_embeddings.weight");
    int bias = !strcmp(t->name, "cls.predictions.bias");
    if (!(word || bias) || rank != t->rank || (word && sh[1] != t->shape[1])) return 0;
    return sh[0] < t->shape[0] && (sh[0] + 7) / 8 * 8 == t->shape[0];
}

/* Load a safetensors file's tensors into m (see ckpt_init_load). */
static int load_safetensors(const char *what, const Buf *b, Bert *m, Buf *note, Err *err) {
    uint64_t hl;
    memcpy(&hl, b->data, 8);
    const char *hdr = b->data + 8;
    const unsigned char *data = (const unsigned char *)b->data + 8 + hl;
    size_t ndata = b->len - 8 - (size_t)hl;
    char *done = xcalloc((size_t)m->ntensors, 1);
    char name[256], want[64], got[64], padded[256] = "";
    const char *k, *v, *ck, *cv;
    size_t kn, vn, ckn, cvn, unused = 0;
    char first_unused[256] = "";
    const BertTensor *decoder_bias_for = NULL;
    int rc = -1;
    JsonIter it;
    if (json_iter_init(&it, hdr, (size_t)hl, '{')) {
        err_set(err, "%s: bad safetensors header: %s", what, it.error);
        goto out;
    }
    for (int r; (r = json_iter_next(&it, &k, &kn, &v, &vn)) != 0;) {
        if (r < 0) {
            err_set(err, "%s: bad safetensors header: %s at byte %zu", what, it.error, it.pos + 8);
            goto out;
        }
        if (json_key_is(k, kn, "__metadata__")) continue;
        hf_name(k, kn, name, sizeof name);
        const BertTensor *t = bert_tensor_named(m, name);
        if (!t && !strcmp(name, "cls.predictions.decoder.bias"))
            t = decoder_bias_for = bert_tensor_named(m, "cls.predictions.bias");
        if (!t) {
            /* tied to the word embeddings here; position_ids is a buffer */
            if (strcmp(name, "cls.predictions.decoder.weight") &&
                strcmp(name, "bert.embeddings.position_ids") && !unused++)
                snprintf(first_unused, sizeof first_unused, "%.*s", (int)kn, k);
            continue;
        }
        int w = 0, rank = -1;
        int64_t sh[2] = {0, 0}, off[2] = {-1, -1};
        JsonIter ti;
        if (json_iter_init(&ti, v, vn, '{')) {
            err_set(err, "%s: %.*s: bad entry in the safetensors header", what, (int)kn, k);
            goto out;
        }
        while (json_iter_next(&ti, &ck, &ckn, &cv, &cvn) == 1) {
            if (json_key_is(ck, ckn, "dtype")) {
                if (!(w = dtype_size(cv, cvn))) {
                    err_set(err, "%s: %.*s is %.*s: F32, F16 or BF16 needed", what, (int)kn, k,
                            (int)cvn, cv);
                    goto out;
                }
                if (cvn == 6) w = -2; /* BF16 */
            } else if (json_key_is(ck, ckn, "shape")) {
                rank = parse_shape(cv, cvn, sh);
            } else if (json_key_is(ck, ckn, "data_offsets")) {
                if (parse_shape(cv, cvn, off) != 2) off[0] = -1;
            }
        }
        if (!w || rank < 0 || off[0] < 0 || ti.error) {
            err_set(err, "%s: %.*s: bad entry in the safetensors header", what, (int)kn, k);
            goto out;
        }
        int pad = padded_vocab(t, rank, sh);
        shape_str(want, sizeof want, t->rank, t->shape);
        shape_str(got, sizeof got, rank, sh);
        if (!pad &&
            (rank != t->rank || sh[0] != t->shape[0] || (rank == 2 && sh[1] != t->shape[1]))) {
            err_set(err, "%s: %.*s has shape %s, the model of --config_file %s", what, (int)kn, k,
                    got, want);
            goto out;
        }
        size_t nel = (size_t)sh[0] * (size_t)(rank == 2 ? sh[1] : 1), width = w < 0 ? 2 : (size_t)w;
        if (off[1] < off[0] || (uint64_t)off[1] > ndata ||
            (size_t)(off[1] - off[0]) != nel * width) {
            err_set(err,
                    "%s: %.*s: data_offsets [%lld, %lld] do not hold %s %s values (%zu data bytes)",
                    what, (int)kn, k, (long long)off[0], (long long)off[1], got,
                    w == 4  ? "F32"
                    : w < 0 ? "BF16"
                            : "F16",
                    ndata);
            goto out;
        }
        convert(m->params + t->off, data + off[0], nel, (int)width, w < 0);
        if (pad && t->rank == 2)
            snprintf(padded, sizeof padded,
                     "; %s has %lld rows, the model %lld (vocab_size rounded up to a multiple of "
                     "8): the other rows fresh",
                     t->name, (long long)sh[0], (long long)t->shape[0]);
        done[t - m->tensors] = 1;
    }
    if (decoder_bias_for) done[decoder_bias_for - m->tensors] = 1;
    /* the required tensors first: the fresh list is only for heads */
    for (int i = 0; i < m->ntensors; i++)
        if (!done[i] && !may_be_fresh(m->tensors[i].name)) {
            err_set(err,
                    "%s: no tensor %s (nor its BertModel name): not a BERT checkpoint of this "
                    "config?",
                    what, m->tensors[i].name);
            goto out;
        }
    int nfresh = 0;
    for (int i = 0; i < m->ntensors; i++)
        if (!done[i]) {
            buf_puts(note, nfresh++ ? ", " : "initialized fresh: ");
            buf_puts(note, m->tensors[i].name);
        }
    if (*padded) buf_puts(note, padded + (nfresh ? 0 : 2));
    if (unused) {
        char t[400];
        snprintf(t, sizeof t, "%s%zu tensor%s not used (%s%s)", note->len ? "; " : "", unused,
                 unused > 1 ? "s" : "", first_unused, unused > 1 ? ", ..." : "");
        buf_puts(note, t);
    }
    rc = 0;
out:
    free(done);
    return rc;
}

/* Check a model directory's config.json against m's config: the head
 * count does not show in the shapes. */
static int check_hf_config(const char *dir, const Bert *m, Err *err) {
    char p[4096];
    snprintf(p, sizeof p, "%s/config.json", dir);
    if (access(p, F_OK)) return 0;
    BertConfig c;
    if (bert_config_load(&c, p, err)) return -1;
    if (c.num_attention_heads != m->c.num_attention_heads || c.hidden_size != m->c.hidden_size ||
        c.num_hidden_layers != m->c.num_hidden_layers)
        return err_set(err,
                       "%s: %d layers of %d with %d heads; --config_file says %d layers of %d with "
                       "%d heads",
                       p, c.num_hidden_layers, c.hidden_size, c.num_attention_heads,
                       m->c.num_hidden_layers, m->c.hidden_size, m->c.num_attention_heads);
    return 0;
}

int ckpt_is_wikibert(const char *path) {
    char head[8];
    FILE *f = fopen(path, "rb");
    int yes = f && fread(head, 1, 8, f) == 8 && !memcmp(head, MAGIC, 8);
    if (f) fclose(f);
    return yes;
}

int ckpt_init_load(const char *path, Bert *m, Buf *note, Err *err) {
    struct stat st;
    char p[4096];
    const char *file = path;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(p, sizeof p, "%s/model.safetensors", path);
        if (access(p, F_OK))
            return err_set(err,
                           "%s: no model.safetensors in it (a Hugging Face model directory holds "
                           "config.json and model.safetensors)",
                           path);
        if (check_hf_config(path, m, err)) return -1;
        file = p;
    } else if (ckpt_is_wikibert(path)) {
        return ckpt_load(path, m, NULL, NULL, err);
    }
    Buf b = {0};
    if (read_file(file, &b, err)) return -1;
    uint64_t hl = 0;
    if (b.len >= 8) memcpy(&hl, b.data, 8);
    if (b.len < 10 || hl < 2 || hl > b.len - 8 || b.data[8] != '{') {
        buf_free(&b);
        return err_set(err,
                       "%s: neither a wikibert checkpoint nor a safetensors file (nor a Hugging "
                       "Face model directory)",
                       file);
    }
    int rc = load_safetensors(file, &b, m, note, err);
    buf_free(&b);
    return rc;
}
