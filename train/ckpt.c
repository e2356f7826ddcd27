/* ckpt.c - checkpoints and the Hugging Face export (see ckpt.h). */
#include "train/ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/io.h"
#include "common/json.h"

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
            NULL};
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

int export_hf(const char *dir, const Bert *m, const char *vocab, size_t vocab_len,
              const HfTokenizer *tk, Err *err) {
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
                         "  \"tokenize_chinese_chars\": true,\n  \"model_max_length\": %d,\n"
                         "  \"unk_token\": \"[UNK]\",\n  \"sep_token\": \"[SEP]\",\n"
                         "  \"pad_token\": \"[PAD]\",\n  \"cls_token\": \"[CLS]\",\n"
                         "  \"mask_token\": \"[MASK]\"\n}\n",
                         tk->lower ? "true" : "false",
                         tk->strip < 0 ? "null"
                         : tk->strip   ? "true"
                                       : "false",
                         m->c.max_position_embeddings);
        snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
        if (write_text(path, cfg, (size_t)n, err)) return -1;
    }
    return 0;
}
