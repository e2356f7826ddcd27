/* test_ckpt.c - training checkpoints (train/ckpt.c): a save and load round
 * trip restores weights, optimizer moments and step, the global step, the
 * seed and the data position; a checkpoint of several data-parallel ranks
 * keeps every rank's position (the header's rank_data) and one of a single
 * process reads back as one rank; ckpt_latest picks the newest complete
 * file and reports each newer one it skips, with the reason; a cut file, a flipped byte and another
 * model's checkpoint are refused with a reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/test.h"
#include "train/bert.h"
#include "train/ckpt.h"
#include "train/optim.h"

static const char CFG[] =
    "{\"hidden_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
    "\"intermediate_size\": 32, \"max_position_embeddings\": 16, \"type_vocab_size\": 2, "
    "\"vocab_size\": 40}";

/* what ckpt_latest reported as skipped */
typedef struct Skipped {
    int n;
    char last[sizeof(((Err *)0)->msg)];
} Skipped;

static void on_skip(void *arg, const Err *why) {
    Skipped *s = arg;
    s->n++;
    snprintf(s->last, sizeof s->last, "%s", why->msg);
}

static int make_model(Bert *m, Optim *o, const char *cfg, uint64_t seed) {
    BertConfig c;
    Err err;
    if (bert_config_parse(&c, cfg, strlen(cfg), "cfg", &err) || bert_create(m, &c, &err)) {
        printf("  %s\n", err.msg);
        return -1;
    }
    bert_init_weights(m, seed);
    OptimConfig oc;
    optim_config_default(&oc, OPT_LAMB);
    optim_init(o, &oc, m);
    for (size_t i = 0; i < m->nparams; i++)
        o->m[i] = (float)i * 1e-3f, o->v[i] = (float)i * 1e-6f;
    o->step = 7;
    return 0;
}

static int same_floats(const float *a, const float *b, size_t n) {
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void test_round_trip(const char *dir) {
    Bert m, m2;
    Optim o, o2;
    Err err;
    if (make_model(&m, &o, CFG, 1) || make_model(&m2, &o2, CFG, 2)) {
        test_cond("models", 0);
        return;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/ckpt_12.wbckpt", dir);
    DataState ranks[3] = {{1, 4, 16}, {1, 5, 24}, {2, 0, 8}};
    CkptInfo ci = {12, ranks[0], 99, 3, ranks, "train_batch_size=8 seed=99"};
    test_cond("save (3 ranks)", ckpt_save(path, &m, &o, &ci, &err) == 0);
    CkptInfo got;
    int rc = ckpt_load(path, &m2, &o2, &got, &err);
    test_cond("load (3 ranks)", rc == 0);
    if (rc) {
        printf("  %s\n", err.msg);
    } else {
        test_cond("weights restored", same_floats(m.params, m2.params, m.nparams));
        test_cond("moments and optimizer step restored", same_floats(o.m, o2.m, m.nparams) &&
                                                             same_floats(o.v, o2.v, m.nparams) &&
                                                             o2.step == 7);
        test_cond("step, seed, rank 0's position",
                  got.step == 12 && got.seed == 99 && got.data.epoch == 1 &&
                      got.data.file_step == 4 && got.data.row == 16);
        test_cond("every rank's position",
                  got.nranks == 3 && got.ranks && !memcmp(got.ranks, ranks, sizeof ranks));
        test_cond("the run's batch options", !strcmp(got.run, "train_batch_size=8 seed=99"));
        free(got.ranks);
    }

    /* one process: read back as one rank at the header's position */
    snprintf(path, sizeof path, "%s/ckpt_13.wbckpt", dir);
    CkptInfo one = {13, {0, 2, 40}, 5, 1, ranks, ""};
    test_cond("save (1 rank)", ckpt_save(path, &m, &o, &one, &err) == 0);
    rc = ckpt_load(path, &m2, NULL, &got, &err);
    test_cond("load weights only (1 rank)", rc == 0);
    if (!rc) {
        test_cond("one rank at the saved position", got.nranks == 1 && got.ranks &&
                                                        got.ranks[0].file_step == 2 &&
                                                        got.ranks[0].row == 40 && got.step == 13);
        test_cond("no batch options recorded: none read", got.run[0] == '\0');
        free(got.ranks);
    }
    char latest[512];
    int ndamaged = -1;
    test_cond("newest checkpoint",
              ckpt_latest(dir, latest, sizeof latest, NULL, NULL, &ndamaged, &err) == 1 &&
                  strstr(latest, "ckpt_13") && ndamaged == 0);

    /* damage: a cut copy and a flipped byte; the newest complete one wins */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n);
    size_t got_n = fread(b, 1, (size_t)n, f);
    fclose(f);
    char bad[512];
    snprintf(bad, sizeof bad, "%s/ckpt_14.wbckpt", dir);
    f = fopen(bad, "wb");
    fwrite(b, 1, got_n - 100, f);
    fclose(f);
    test_cond("a cut checkpoint is refused",
              ckpt_load(bad, &m2, &o2, &got, &err) == -1 && strstr(err.msg, "ckpt_14"));
    Skipped sk = {0};
    test_cond("... and ckpt_latest passes over it",
              ckpt_latest(dir, latest, sizeof latest, on_skip, &sk, &ndamaged, &err) == 1 &&
                  strstr(latest, "ckpt_13"));
    test_cond("... saying which file it skipped and why",
              ndamaged == 1 && sk.n == 1 && strstr(sk.last, "ckpt_14.wbckpt: ") &&
                  strstr(sk.last, "no completion marker"));
    char good[2][512], aside[2][600];
    for (int i = 0; i < 2; i++) { /* the good ones out of the way */
        snprintf(good[i], sizeof good[i], "%s/ckpt_%d.wbckpt", dir, 12 + i);
        snprintf(aside[i], sizeof aside[i], "%s/kept%d.bin", dir, i);
        rename(good[i], aside[i]);
    }
    sk.n = 0;
    test_cond("only a damaged checkpoint: none found, one damaged",
              ckpt_latest(dir, latest, sizeof latest, on_skip, &sk, &ndamaged, &err) == 0 &&
                  ndamaged == 1 && sk.n == 1);
    for (int i = 0; i < 2; i++)
        rename(aside[i], good[i]);
    b[got_n / 2] ^= 1;
    f = fopen(bad, "wb");
    fwrite(b, 1, got_n, f);
    fclose(f);
    test_cond("a flipped byte is refused", ckpt_load(bad, &m2, &o2, &got, &err) == -1);
    unlink(bad);
    free(b);

    /* another model */
    Bert m3;
    Optim o3;
    static const char other[] =
        "{\"hidden_size\": 16, \"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
        "\"intermediate_size\": 32, \"max_position_embeddings\": 16, \"type_vocab_size\": 2, "
        "\"vocab_size\": 40}";
    if (make_model(&m3, &o3, other, 3) == 0) {
        test_cond("another model's checkpoint is refused, naming the field",
                  ckpt_load(path, &m3, &o3, &got, &err) == -1 &&
                      strstr(err.msg, "num_hidden_layers"));
        optim_free(&o3), bert_free(&m3);
    }
    optim_free(&o), optim_free(&o2), bert_free(&m), bert_free(&m2);
}

int main(void) {
    char dir[] = "/tmp/test_ckpt.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    test_round_trip(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) test_cond("cleanup", 0);
    return test_report();
}
