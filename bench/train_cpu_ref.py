#!/usr/bin/env python3
"""bench/train_cpu_ref.py - the peer of train_bert_cpu's benchmark: BERT for
pretraining in PyTorch on the CPU (nn.Linear / nn.LayerNorm / SDPA-free
attention, the MLM head at the masked positions, the config's dropout at
BERT's four sites, as train_bert_cpu trains), one training step =
forward, backward and an AdamW step on a micro-batch of the shape given,
float32, with torch.set_num_threads(THREADS). Prints the best seq/s of
the timed steps (after one untimed step). With DATA (an .npz holding an
HDF5 file's datasets, bench/train_cpu.sh writes it) the steps train on its
rows in file order, padding and masked tokens as train_bert_cpu sees them;
without, on random ids, no padding, PRED masked tokens a row.

    python3 bench/train_cpu_ref.py CONFIG.json BATCH SEQ PRED STEPS THREADS [DATA]
"""
import json
import math
import sys
import time

import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, I = c["hidden_size"], c["intermediate_size"]
        self.A = c["num_attention_heads"]
        self.qkv = nn.Linear(H, 3 * H)
        self.o = nn.Linear(H, H)
        self.ln1 = nn.LayerNorm(H, eps=1e-12)
        self.i = nn.Linear(H, I)
        self.o2 = nn.Linear(I, H)
        self.ln2 = nn.LayerNorm(H, eps=1e-12)
        self.drop = nn.Dropout(c.get("hidden_dropout_prob", 0.1))
        self.adrop = nn.Dropout(c.get("attention_probs_dropout_prob", 0.1))

    def forward(self, x, bias):
        B, S, H = x.shape
        D = H // self.A
        q, k, v = self.qkv(x).view(B, S, 3, self.A, D).permute(2, 0, 3, 1, 4)
        att = self.adrop(torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D) + bias, -1))
        x1 = self.ln1(self.drop(self.o((att @ v).transpose(1, 2).reshape(B, S, H))) + x)
        return self.ln2(self.drop(self.o2(nn.functional.gelu(self.i(x1)))) + x1)


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        V, H = c["vocab_size"] + (-c["vocab_size"]) % 8, c["hidden_size"]
        self.wte = nn.Embedding(V, H)
        self.wpe = nn.Embedding(c["max_position_embeddings"], H)
        self.wtt = nn.Embedding(2, H)
        self.ln = nn.LayerNorm(H, eps=1e-12)
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.pool = nn.Linear(H, H)
        self.nsp = nn.Linear(H, 2)
        self.tr = nn.Linear(H, H)
        self.tln = nn.LayerNorm(H, eps=1e-12)
        self.bias = nn.Parameter(torch.zeros(V))
        self.drop = nn.Dropout(c.get("hidden_dropout_prob", 0.1))

    def forward(self, ids, seg, mask, mrow, mlab, nsp):
        B, S = ids.shape
        x = self.drop(self.ln(self.wte(ids) + self.wpe.weight[:S] + self.wtt(seg)))
        bias = ((1 - mask.float()) * -10000.0)[:, None, None, :]
        for l in self.layers:
            x = l(x, bias)
        t = x.reshape(B * S, -1)[mrow]
        t = self.tln(nn.functional.gelu(self.tr(t)))
        mlm = nn.functional.cross_entropy(t @ self.wte.weight.T + self.bias, mlab)
        return mlm + nn.functional.cross_entropy(self.nsp(torch.tanh(self.pool(x[:, 0]))), nsp)


def batches(c, B, S, P, n, data):
    """n micro-batches: rows of DATA (an .npz of an HDF5 file's datasets, in
    file order, the masked tokens per row until the first position 0, as
    train_bert_cpu reads them), or random ids without padding and P masked
    tokens per row"""
    out = []
    if data:
        import numpy as np

        d = np.load(data)
        rows = len(d["input_ids"])
        for i in range(n):
            r = [(i * B + j) % rows for j in range(B)]
            pos, lab = d["masked_lm_positions"][r], d["masked_lm_ids"][r]
            mrow, mlab = [], []
            for b in range(B):
                for k in range(pos.shape[1]):
                    if pos[b, k] == 0:
                        break
                    mrow.append(b * S + int(pos[b, k]))
                    mlab.append(int(lab[b, k]))
            t = lambda name: torch.from_numpy(d[name][r].astype(np.int64))
            out.append((t("input_ids"), t("segment_ids"), t("input_mask"), torch.tensor(mrow),
                        torch.tensor(mlab), t("next_sentence_labels")))
        return out
    for _ in range(n):
        ids = torch.randint(5, c["vocab_size"], (B, S))
        seg = torch.zeros(B, S, dtype=torch.long)
        mask = torch.ones(B, S, dtype=torch.long)
        mrow = torch.tensor([b * S + 1 + k * (S // (P + 1)) for b in range(B) for k in range(P)])
        mlab = torch.randint(5, c["vocab_size"], (B * P,))
        out.append((ids, seg, mask, mrow, mlab, torch.randint(0, 2, (B,))))
    return out


def main():
    cfg, B, S, P, steps, threads = sys.argv[1], *map(int, sys.argv[2:7])
    data = sys.argv[7] if len(sys.argv) > 7 else None
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    c = json.load(open(cfg))
    m = Bert(c)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    best = 0.0
    for s, batch in enumerate(batches(c, B, S, P, steps + 1, data)):
        t0 = time.perf_counter()
        opt.zero_grad()
        m(*batch).backward()
        opt.step()
        dt = time.perf_counter() - t0
        if s:  # the first step warms up
            best = max(best, B / dt)
    print("torch %s: %.2f seq/s" % (torch.__version__, best))


if __name__ == "__main__":
    main()
