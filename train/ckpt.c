/* ckpt.c - checkpoints, the Hugging Face export and import (see ckpt.h).
 * The safetensors format: a little-endian u64 header length, a JSON
 * header (name -> dtype, shape, data_offsets into the data that follows;
 * "__metadata__" aside), the data (huggingface/safetensors' README). */
#define _GNU_SOURCE /* renameat2 */
#include "train/ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
    if (c.untied != mc->untied) {
        err_set(err,
                "%s: a checkpoint of another model: tie_word_embeddings %s, the config says %s",
                path, c.untied ? "false" : "true", mc->untied ? "false" : "true");
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

/* The checkpoint files of dir (ckpt_<step>.wbckpt, checked or not), newest
 * first, into *out (n of them; free each path and the array). A missing
 * dir has none. Returns 0, or -1 with err (dir unreadable). */
static int ckpt_scan(const char *dir, Found **out, size_t *nout, Err *err) {
    *out = NULL, *nout = 0;
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
    *out = f, *nout = n;
    return 0;
}

static void found_free(Found *f, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(f[i].path);
    free(f);
}

/* how many of f[0..n) (newest first) are of a step above `above` */
static size_t count_above(const Found *f, size_t n, int64_t above) {
    size_t k = 0;
    while (k < n && f[k].step > above)
        k++;
    return k;
}

int ckpt_count(const char *dir, int64_t above, char *newest, size_t cap, Err *err) {
    Found *f;
    size_t n;
    if (ckpt_scan(dir, &f, &n, err)) return -1;
    size_t k = count_above(f, n, above);
    if (k && newest) snprintf(newest, cap, "%s", f[0].path);
    found_free(f, n);
    return (int)k;
}

int ckpt_remove_all(const char *dir, int64_t above, const char *keep, Err *err) {
    Found *f;
    size_t all;
    if (ckpt_scan(dir, &f, &all, err)) return -1;
    size_t n = count_above(f, all, above);
    struct stat ks, st;
    int have_keep = keep && stat(keep, &ks) == 0, rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (have_keep && stat(f[i].path, &st) == 0 && st.st_dev == ks.st_dev &&
            st.st_ino == ks.st_ino)
            rc = err_set(err,
                         "%s: the same file as %s, one of the checkpoints to remove: copy it "
                         "elsewhere first",
                         keep, f[i].path);
    for (size_t i = 0; i < n && !rc; i++)
        if (unlink(f[i].path) != 0 && errno != ENOENT)
            rc = err_set(err, "%s: cannot remove: %s", f[i].path, strerror(errno));
    found_free(f, all);
    return rc ? -1 : (int)n;
}

int ckpt_latest(const char *dir, char *path, size_t cap, CkptSkipFn skip, void *arg, int *ndamaged,
                Err *err) {
    *ndamaged = 0;
    Found *f;
    size_t n;
    if (ckpt_scan(dir, &f, &n, err)) return -1;
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
    found_free(f, n);
    return found;
}

/* ---- Hugging Face ---- */

static int write_text(const char *path, const char *s, size_t n, Err *err) {
    Writer w;
    if (writer_open(&w, path, 1, err)) return -1;
    if (fwrite(s, 1, n, w.fp) != n) {
        err_set(err, "%s: write error: %s", path, strerror(errno));
        writer_abort(&w);
        return -1;
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

/* ---- the model card's fill-mask example ---- */

/* One word of decoded text: its bytes in the decoded buffer. */
typedef struct DWord {
    size_t a, n;
    int special; /* [UNK] and the like: the sentence is not used */
} DWord;

/* Token id's text in vocab (line id, without the line end), or NULL. */
static const char *vocab_token(const size_t *off, size_t nlines, const char *v, int32_t id,
                               size_t *n) {
    if (id < 0 || (size_t)id >= nlines) return NULL;
    size_t a = off[id], b = off[id + 1] - 1; /* off[i + 1] - 1: the '\n' */
    if (b > a && v[b - 1] == '\r') b--;
    *n = b - a;
    return v + a;
}

static int is_word(const char *s, size_t n, const char *w) {
    return n == strlen(w) && !memcmp(s, w, n);
}

/* letters only (ASCII letters, or any non-ASCII byte), at least 3
 * characters: a word worth masking */
static int maskable(const char *s, size_t n) {
    size_t chars = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80 && !((c | 32) >= 'a' && (c | 32) <= 'z')) return 0;
        chars += (c & 0xC0) != 0x80;
    }
    return chars >= 3;
}

/* A word before "." that ends a sentence: at least 3 characters, not a
 * number and not a Roman numeral (Hungarian "a XVII. század" and "20."
 * are ordinals). */
static int sentence_word(const char *s, size_t n) {
    size_t roman = 0, digits = 0;
    for (size_t i = 0; i < n; i++) {
        roman += strchr("ivxlcdmIVXLCDM", s[i]) != NULL;
        digits += s[i] >= '0' && s[i] <= '9';
    }
    return n >= 3 && roman < n && digits < n;
}

/* Words w[a..b) as text with [MASK] for word k: spaces between words but
 * none before closing punctuation or after opening, none around ' and -. */
static void render(Buf *out, const char *text, const DWord *w, size_t a, size_t b, size_t k) {
    for (size_t i = a; i < b; i++) {
        const char *s = text + w[i].a;
        size_t n = w[i].n;
        int glue_left = n == 1 && strchr(".,;:!?)]}%'-", s[0]);
        int prev_open = i > a && w[i - 1].n == 1 && strchr("([{'-", text[w[i - 1].a]);
        if (i > a && !glue_left && !prev_open) buf_putc(out, ' ');
        if (i == k)
            buf_puts(out, "[MASK]");
        else
            buf_append(out, s, n);
    }
}

int hf_fill_mask_example(const BertBatch *b, const char *vocab, size_t vocab_len, Buf *example,
                         Buf *word) {
    size_t cap = 1024, nl = 0;
    size_t *off = xmalloc(cap * sizeof *off);
    for (size_t i = 0; i < vocab_len;) { /* line starts; off[nl] one past the last '\n' */
        if (nl + 2 > cap) off = xrealloc(off, (cap *= 2) * sizeof *off);
        off[nl++] = i;
        const char *e = memchr(vocab + i, '\n', vocab_len - i);
        i = e ? (size_t)(e - vocab) + 1 : vocab_len + 1;
    }
    off[nl] = off[nl ? nl - 1 : 0] + 1;
    if (nl) { /* the last line's end */
        const char *e = memchr(vocab + off[nl - 1], '\n', vocab_len - off[nl - 1]);
        off[nl] = (e ? (size_t)(e - vocab) : vocab_len) + 1;
    }
    int32_t *ids = xmalloc((size_t)(b->S ? b->S : 1) * sizeof *ids);
    DWord *w = xmalloc((size_t)(b->S ? b->S : 1) * sizeof *w);
    Buf text = {0};
    int found = 0;
    /* pass 0: a clean sentence (after a sentence end, as a segment may
     * start cut; 8 to 40 words; no punctuation inside but two commas);
     * pass 1: after a sentence end, 8 to 40 words; pass 2: any of 5 to 40 */
    for (int pass = 0; pass < 3 && !found; pass++)
        for (int r = 0; r < b->B && !found; r++) {
            memcpy(ids, b->input_ids + (size_t)r * b->S, (size_t)b->S * sizeof *ids);
            for (int k = 0; k < b->M; k++) {
                int32_t p = b->masked_lm_positions[(size_t)r * b->M + k];
                if (p <= 0 || p >= b->S) break;
                ids[p] = b->masked_lm_ids[(size_t)r * b->M + k];
            }
            int i = 1; /* after [CLS] */
            for (int seg = 0; seg < 2 && !found && i < b->S; seg++) {
                /* the words of this segment, to its [SEP] */
                buf_clear(&text);
                size_t nw = 0;
                for (; i < b->S; i++) {
                    size_t n;
                    const char *t = vocab_token(off, nl, vocab, ids[i], &n);
                    if (!t || is_word(t, n, "[SEP]") || is_word(t, n, "[PAD]")) break;
                    if (n >= 2 && t[0] == '#' && t[1] == '#' && nw) {
                        buf_append(&text, t + 2, n - 2);
                        w[nw - 1].n += n - 2;
                        continue;
                    }
                    int special = n >= 2 && t[0] == '[' && t[n - 1] == ']'; /* [UNK] */
                    w[nw++] = (DWord){text.len, n, special};
                    buf_append(&text, t, n);
                }
                i++; /* past [SEP] */
                /* its sentences: words up to . ! or ? */
                size_t start = 0;
                for (size_t e = 0; e < nw && !found; e++) {
                    const char *s = text.data + w[e].a;
                    if (!(w[e].n == 1 && strchr(".!?", s[0]))) continue;
                    if (s[0] == '.' && e > start &&
                        !sentence_word(text.data + w[e - 1].a, w[e - 1].n))
                        continue; /* "XVII." "20." "u.": an ordinal or abbreviation, not an end */
                    size_t a = start, words = e + 1 - a;
                    start = e + 1;
                    if ((pass < 2 && (a == 0 || words < 8)) || words < 5 || words > 40) continue;
                    size_t best = 0, bestn = 0;
                    int usable = 1, commas = 0;
                    for (size_t j = a; j <= e; j++) {
                        const char *x = text.data + w[j].a;
                        if (w[j].special) usable = 0;
                        if (pass == 0 && j < e && w[j].n == 1 && (unsigned char)x[0] < 0x80 &&
                            !((x[0] | 32) >= 'a' && (x[0] | 32) <= 'z'))
                            usable &= x[0] == ',' && ++commas <= 2;
                        if (j > a && w[j].n > bestn && maskable(text.data + w[j].a, w[j].n))
                            best = j, bestn = w[j].n;
                    }
                    if (!usable || !bestn) continue;
                    render(example, text.data, w, a, e + 1, best);
                    buf_append(word, text.data + w[best].a, w[best].n);
                    found = 1;
                }
            }
        }
    buf_free(&text);
    free(ids), free(w), free(off);
    return found ? 0 : -1;
}

/* README.md: the model card (Hugging Face's YAML header, then what the
 * model is, how it was made and how to load it). has_vocab: the tokenizer
 * files are in the directory. */
static void model_card(Buf *b, const Bert *m, const HfTokenizer *tk, const HfCard *c,
                       int has_vocab) {
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
    if (isnan(c->loss)) /* exported from a checkpoint, after the run: the losses are in its log */
        snprintf(
            t, sizeof t,
            "`.\n- Training: %lld optimizer steps%s; the losses are in the run's `log.jsonl`.\n",
            (long long)c->steps, c->phase2 ? " (phase 2)" : "");
    else
        snprintf(t, sizeof t,
                 "`.\n- Training: %lld optimizer steps%s; the last step's loss %.4f (masked LM "
                 "%.4f, next sentence %.4f).\n",
                 (long long)c->steps, c->phase2 ? " (phase 2)" : "", c->loss, c->mlm, c->nsp);
    buf_puts(b, t);
    if (has_vocab)
        snprintf(t, sizeof t,
                 "- Tokenizer: WordPiece (`vocab.txt`, `tokenizer.json`); lower-cased: %s; accents "
                 "stripped: %s, as the training data's text (`AutoTokenizer` does the same).\n",
                 yes_no(tk->lower), yes_no(tk->strip));
    else
        snprintf(t, sizeof t, "- Tokenizer: %s\n", HF_NO_TOKENIZER);
    buf_puts(b, t);
    buf_puts(b, "\nThe command line:\n\n```\n");
    buf_puts(b, c->cmdline ? c->cmdline : "");
    buf_puts(b, "\n```\n\n");
    if (!has_vocab) {
        buf_puts(b, "Use, once the tokenizer files are in this directory:\n\n```python\n"
                    "from transformers import BertForPreTraining\n"
                    "model = BertForPreTraining.from_pretrained(\"THIS_DIRECTORY\")\n```\n");
        return;
    }
    buf_puts(b, "Use");
    if (c->example) {
        buf_puts(b, " (a sentence of the training text, the word `");
        buf_puts(b, c->masked ? c->masked : "");
        buf_puts(b, "` masked)");
    }
    buf_puts(b, ":\n\n```python\nfrom transformers import pipeline\n"
                "fill = pipeline(\"fill-mask\", model=\"THIS_DIRECTORY\")\nprint(fill(");
    if (c->example) {
        Buf q = {0};
        json_append_string_utf8(&q, c->example, strlen(c->example)); /* a Python string too */
        buf_append(b, q.data, q.len);
        buf_free(&q);
    } else {
        buf_puts(b, "\"Budapest is the capital of [MASK].\"");
    }
    buf_puts(b, "))\n```\n");
}

/* The files of an export: nothing else is ever in one. */
static const char *const EXPORT_FILES[] = {
    "config.json",    "model.safetensors",       "vocab.txt", "tokenizer_config.json",
    "tokenizer.json", "special_tokens_map.json", "README.md"};

static int is_export_file(const char *name) {
    for (size_t i = 0; i < sizeof EXPORT_FILES / sizeof *EXPORT_FILES; i++)
        if (!strcmp(name, EXPORT_FILES[i])) return 1;
    return 0;
}

int export_hf_check(const char *dir, Err *err) {
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? 0 : err_set(err, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return err_set(err, "%s: exists and is not a directory: the Hugging Face export goes there",
                       dir);
    DIR *d = opendir(dir);
    if (!d) return err_set(err, "%s: %s", dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !is_export_file(e->d_name))
            rc = err_set(err,
                         "%s: holds %s, which is not part of a Hugging Face export: the export "
                         "replaces the whole directory, so it is refused (move %s away, or give "
                         "another --export_hf)",
                         dir, e->d_name, e->d_name);
    closedir(d);
    return rc;
}

/* The files of an export into the new directory dir (config.json last:
 * what transformers looks for, so a directory cut short by a crash does
 * not look like a model). 0, or -1 with err. */
static int write_export(const char *dir, const Bert *m, const char *vocab, size_t vocab_len,
                        const HfTokenizer *tk, const HfCard *card, Err *err) {
    char path[4096 + 128];
    Buf b = {0};
    char t[1024];
    int rc = 0;

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
    const BertTensor *mlmb = bert_tensor_named(m, "cls.predictions.bias");
    if (m->c.untied) { /* transformers 5 unties the decoder's bias with its weight: both names */
        snprintf(t, sizeof t,
                 ",\"cls.predictions.decoder.bias\":{\"dtype\":\"F32\",\"shape\":[%lld],"
                 "\"data_offsets\":[%zu,%zu]}",
                 (long long)mlmb->shape[0], off, off + mlmb->n * 4);
        buf_append(&b, t, strlen(t));
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
    if (m->c.untied && !bad) bad = fwrite(m->params + mlmb->off, 4, mlmb->n, w.fp) != mlmb->n;
    buf_clear(&b);
    if (bad) {
        err_set(err, "%s: write error: %s", path, strerror(errno));
        writer_abort(&w);
        buf_free(&b);
        return -1;
    }
    if (writer_close(&w, err)) {
        buf_free(&b);
        return -1;
    }
    if (vocab) {
        snprintf(path, sizeof path, "%s/vocab.txt", dir);
        if (write_text(path, vocab, vocab_len, err)) goto fail;
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
        if (write_text(path, cfg, (size_t)n, err)) goto fail;
        static const char map[] = "{\n" SPECIAL_TOKENS_JSON;
        snprintf(path, sizeof path, "%s/special_tokens_map.json", dir);
        if (write_text(path, map, sizeof map - 1, err)) goto fail;
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        Err e2;
        if (tokjson_wordpiece(&b, vocab, vocab_len, tk->lower, tk->strip, &e2)) {
            err_set(err, "%s: %s", path, e2.msg);
            goto fail;
        }
        if (write_text(path, b.data, b.len, err)) goto fail;
        buf_clear(&b);
    }
    if (card) {
        model_card(&b, m, tk, card, vocab != NULL);
        snprintf(path, sizeof path, "%s/README.md", dir);
        if (write_text(path, b.data, b.len, err)) goto fail;
        buf_clear(&b);
    }
    bert_config_json(&m->c, &b);
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (write_text(path, b.data, b.len, err)) goto fail;
    buf_free(&b);
    return rc;
fail:
    buf_free(&b);
    return -1;
}

/* Remove directory dir and the files in it (an export holds no
 * subdirectories); a symbolic link is unlinked, never followed. */
static void remove_export_dir(const char *dir) {
    struct stat st;
    if (lstat(dir, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(dir);
        return;
    }
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[4096 + 256];
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* The new export tmp (complete) in place of dir, in one step where the
 * file system can (renameat2 RENAME_EXCHANGE swaps the two directories,
 * then the old export, now at tmp, is removed), else in two (the old one
 * renamed to DIR.old.<pid>, the new one in, the old one removed). A
 * reader of dir sees the old export or the new one, never a mix. */
static int swap_in(const char *tmp, const char *dir, Err *err) {
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_NOREPLACE) == 0) return 0; /* none there */
    int e = errno;
    if (e == EINVAL || e == ENOSYS) { /* no RENAME_NOREPLACE: replaces only an empty dir */
        if (rename(tmp, dir) == 0) return 0;
        e = errno;
    }
    if (e != EEXIST && e != ENOTEMPTY)
        return err_set(err, "%s: cannot rename %s into place: %s", dir, tmp, strerror(e));
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
        remove_export_dir(tmp); /* the old export */
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS)
        return err_set(err, "%s: cannot exchange it with %s: %s", dir, tmp, strerror(errno));
    char old[4096 + 32];
    snprintf(old, sizeof old, "%s.old.%ld", dir, (long)getpid());
    if (rename(dir, old) != 0)
        return err_set(err, "%s: cannot rename it to %s: %s", dir, old, strerror(errno));
    if (rename(tmp, dir) != 0) {
        int e2 = errno;
        rename(old, dir); /* the old export back */
        return err_set(err, "%s: cannot rename %s into place: %s", dir, tmp, strerror(e2));
    }
    remove_export_dir(old);
    return 0;
}

/* Remove DIR.tmp.<pid> directories of processes that no longer run: an
 * export cut short by kill -9 or a power cut. */
static void remove_dead_exports(const char *dir) {
    const char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : dir;
    char parent[4096];
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - dir) + (slash == dir) : 1,
             slash ? dir : ".");
    DIR *d = opendir(parent);
    struct dirent *e;
    size_t bl = strlen(base);
    while (d && (e = readdir(d)) != NULL) {
        const char *t = e->d_name;
        if (strncmp(t, base, bl) || strncmp(t + bl, ".tmp.", 5)) continue;
        char *end;
        long pid = strtol(t + bl + 5, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char p[4096 + 256];
        snprintf(p, sizeof p, "%s/%s", parent, t);
        remove_export_dir(p);
    }
    if (d) closedir(d);
}

int export_hf(const char *dir_arg, const Bert *m, const char *vocab, size_t vocab_len,
              const HfTokenizer *tk, const HfCard *card, Err *err) {
    if (export_hf_check(dir_arg, err)) return -1;
    /* the directory itself (a symbolic link to it is followed: the swap
     * happens where the files are), without a trailing '/' */
    char dir[4096];
    char *real = realpath(dir_arg, NULL);
    snprintf(dir, sizeof dir, "%s", real ? real : dir_arg);
    free(real);
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
        dir[n - 1] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash && slash > dir) { /* the parent, created when missing */
        *slash = '\0';
        int rc = make_dirs(dir, err);
        *slash = '/';
        if (rc) return -1;
    }
    remove_dead_exports(dir);
    char tmp[4096 + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dir, (long)getpid());
    remove_export_dir(tmp);
    if (mkdir(tmp, 0777) != 0) return err_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    int rc = write_export(tmp, m, vocab, vocab_len, tk, card, err);
    if (!rc) rc = swap_in(tmp, dir, err);
    if (rc) remove_export_dir(tmp);
    return rc;
}

/* ---- Hugging Face import ---- */

int hf_dir_tokenizer(const char *dir, HfTokenizer *tk, char *file, size_t cap, Err *err) {
    Buf b = {0};
    snprintf(file, cap, "%s/tokenizer.json", dir);
    if (access(file, F_OK) == 0) {
        TokJson t;
        int rc = read_file(file, &b, err)
                     ? -1
                     : tokjson_read(&t, b.data ? b.data : "", b.len, file, err);
        buf_free(&b);
        if (rc) return -1;
        tk->lower = t.lowercase, tk->strip = t.strip_accents;
        tokjson_free(&t);
        return 1;
    }
    snprintf(file, cap, "%s/tokenizer_config.json", dir);
    if (access(file, F_OK)) return 0;
    if (read_file(file, &b, err)) return -1;
    JsonIter it;
    const char *k, *v;
    size_t kn, vn;
    int r;
    *tk = (HfTokenizer){1, -1};
    json_iter_init(&it, b.data ? b.data : "", b.len, '{');
    while ((r = json_iter_next(&it, &k, &kn, &v, &vn)) == 1) {
        int x = vn == 4 && !memcmp(v, "true", 4) ? 1 : vn == 5 && !memcmp(v, "false", 5) ? 0 : -1;
        if (json_key_is(k, kn, "do_lower_case") && x >= 0) tk->lower = x;
        if (json_key_is(k, kn, "strip_accents")) tk->strip = x;
    }
    buf_free(&b);
    if (r < 0) return err_set(err, "%s: byte %zu: %s", file, it.pos, it.error);
    return 1;
}

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
    int word = !strcmp(t->name, "bert.embeddings.word_embeddings.weight") ||
               !strcmp(t->name, "cls.predictions.decoder.weight");
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
    /* a tied model: a stored decoder weight must be the word embeddings */
    float *dec = NULL;
    size_t ndec = 0;
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
        int dec_cmp = 0; /* read to compare with the word embeddings, not to load */
        if (!t && !strcmp(name, "cls.predictions.decoder.bias"))
            t = decoder_bias_for = bert_tensor_named(m, "cls.predictions.bias");
        else if (decoder_bias_for && !strcmp(name, "cls.predictions.bias"))
            continue; /* the decoder's bias is the one the logits take (transformers 5, untied) */
        if (!t && !strcmp(name, "cls.predictions.decoder.weight"))
            t = bert_tensor_named(m, "bert.embeddings.word_embeddings.weight"), dec_cmp = 1;
        if (!t) {
            /* position_ids is a buffer */
            if (strcmp(name, "bert.embeddings.position_ids") && !unused++)
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
        if (dec_cmp) {
            free(dec);
            dec = xmalloc((nel ? nel : 1) * sizeof *dec), ndec = nel;
            convert(dec, data + off[0], nel, (int)width, w < 0);
            continue;
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
    const BertTensor *wte = bert_tensor_named(m, "bert.embeddings.word_embeddings.weight"),
                     *dect = bert_tensor_named(m, "cls.predictions.decoder.weight");
    if (dec && memcmp(dec, m->params + wte->off, ndec * sizeof *dec)) {
        err_set(err,
                "%s: cls.predictions.decoder.weight is not the word embeddings (the checkpoint's "
                "MLM decoder is untied, tie_word_embeddings false), but the model of the config "
                "ties them: set \"tie_word_embeddings\": false in --config_file (or leave it out "
                "to take the model directory's config.json)",
                what);
        goto out;
    }
    if (dect && !done[dect - m->tensors] && done[wte - m->tensors]) {
        /* a tied checkpoint into an untied model: the decoder it had */
        memcpy(m->params + dect->off, m->params + wte->off, dect->n * sizeof(float));
        done[dect - m->tensors] = 1;
        buf_puts(note,
                 "cls.predictions.decoder.weight: the word embeddings (tied in the checkpoint)");
    }
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
            buf_puts(note, nfresh++    ? ", "
                           : note->len ? "; initialized fresh: "
                                       : "initialized fresh: ");
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
    free(dec);
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
    if (c.untied && !m->c.untied)
        return err_set(
            err,
            "%s: tie_word_embeddings false (an MLM decoder of its own), but --config_file "
            "ties it to the word embeddings: set \"tie_word_embeddings\": false there, "
            "or leave --config_file out to take this config.json",
            p);
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
