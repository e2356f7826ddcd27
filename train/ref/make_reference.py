#!/usr/bin/env python3
"""train/ref/make_reference.py - the reference file tests/unit/test_bert.c
checks train/bert.c and train/optim.c against.

An independent implementation of BERT for pretraining in PyTorch (the
model of NVIDIA's run_pretraining.py / Hugging Face's BertForPreTraining:
post-LN encoder, padding mask (1 - mask) * -10000, erf GELU, MLM head at
the masked positions with the decoder tied to the word embeddings, tanh
pooler + NSP classifier; NVIDIA's criterion), run in float64 on a tiny
config and a fixed batch, with autograd for the gradients; then two steps
of LAMB with apex FusedLAMB's semantics (global gradient-norm clipping,
bias correction, decoupled weight decay except biases and LayerNorm, trust
ratio ||w|| / ||update|| on decayed tensors only) and two of AdamW
(torch.optim.AdamW with clip_grad_norm_), under NVIDIA's PolyWarmUp
schedule. Needs only python3 and torch (Debian: python3-torch).

    python3 train/ref/make_reference.py tests/data/bert_tiny_ref.bin

File layout (little-endian): b"WBBERT1\\0"; int32 V H L A I P T B S M
nparams nmask; float32 layer_norm_eps; float32 params[nparams] (Hugging
Face state-dict order, decoder tied and not repeated); int32 input_ids,
segment_ids, input_mask [B*S], masked_lm_positions, masked_lm_ids [B*M],
next_sentence_labels [B]; float32 mlm_logits [nmask*V], nsp_logits [B*2],
losses [total, mlm, nsp]; float32 grads[nparams]; float32 base_lr,
weight_decay, beta1, beta2, eps, max_grad_norm, warmup; int32 total_steps;
float32 lr[2]; float32 params after LAMB step 1, after step 2; float32
params after AdamW step 1, after step 2; then the dropout case (training
mode: masks from train/dropout.h's hash): float32 hidden_dropout_prob,
attention_probs_dropout_prob; uint64 pass key; float32 losses [total, mlm,
nsp]; float32 grads[nparams].
"""
import math
import struct
import sys

import torch

V, H, L, A, I, P, T = 100, 32, 2, 4, 48, 24, 2
B, S, M = 3, 16, 4
EPS = 1e-12


def tensor_list():
    """(name, shape, decay) in Hugging Face's state-dict order."""
    t = [("bert.embeddings.word_embeddings.weight", (V, H), 1),
         ("bert.embeddings.position_embeddings.weight", (P, H), 1),
         ("bert.embeddings.token_type_embeddings.weight", (T, H), 1),
         ("bert.embeddings.LayerNorm.weight", (H,), 0), ("bert.embeddings.LayerNorm.bias", (H,), 0)]
    for l in range(L):
        p = "bert.encoder.layer.%d." % l
        for n in ("query", "key", "value"):
            t += [(p + "attention.self.%s.weight" % n, (H, H), 1), (p + "attention.self.%s.bias" % n, (H,), 0)]
        t += [(p + "attention.output.dense.weight", (H, H), 1), (p + "attention.output.dense.bias", (H,), 0),
              (p + "attention.output.LayerNorm.weight", (H,), 0), (p + "attention.output.LayerNorm.bias", (H,), 0),
              (p + "intermediate.dense.weight", (I, H), 1), (p + "intermediate.dense.bias", (I,), 0),
              (p + "output.dense.weight", (H, I), 1), (p + "output.dense.bias", (H,), 0),
              (p + "output.LayerNorm.weight", (H,), 0), (p + "output.LayerNorm.bias", (H,), 0)]
    t += [("bert.pooler.dense.weight", (H, H), 1), ("bert.pooler.dense.bias", (H,), 0),
          ("cls.predictions.bias", (V,), 0),
          ("cls.predictions.transform.dense.weight", (H, H), 1), ("cls.predictions.transform.dense.bias", (H,), 0),
          ("cls.predictions.transform.LayerNorm.weight", (H,), 0),
          ("cls.predictions.transform.LayerNorm.bias", (H,), 0),
          ("cls.seq_relationship.weight", (2, H), 1), ("cls.seq_relationship.bias", (2,), 0)]
    return t


def init_params(g):
    """Non-trivial values everywhere (LayerNorm weights near 1, biases
    nonzero) so that every gradient path is exercised."""
    ps = {}
    for name, shape, _ in tensor_list():
        x = torch.randn(shape, generator=g, dtype=torch.float64)
        if name.endswith("LayerNorm.weight"):
            x = 1 + 0.1 * x
        elif name.endswith(".bias"):
            x = 0.02 * x
        else:
            x = 0.05 * x
        ps[name] = x.float().double().requires_grad_(True)  # float32-representable
    return ps


def make_batch(g):
    lens = [16, 11, 7]  # rows with padding
    ids = torch.zeros(B, S, dtype=torch.int64)
    seg = torch.zeros(B, S, dtype=torch.int64)
    mask = torch.zeros(B, S, dtype=torch.int64)
    mpos = torch.zeros(B, M, dtype=torch.int64)
    mids = torch.zeros(B, M, dtype=torch.int64)
    nsp = torch.tensor([0, 1, 0])
    for b, n in enumerate(lens):
        ids[b, :n] = torch.randint(5, V, (n,), generator=g)
        ids[b, 0] = 2  # [CLS]
        a_end = n // 2
        ids[b, a_end] = 3  # [SEP]
        ids[b, n - 1] = 3
        seg[b, a_end + 1:n] = 1
        mask[b, :n] = 1
        k = [3, 2, 4][b]  # masked tokens in this row; row 2 fills all M
        cand = [p for p in range(1, n - 1) if p != a_end]
        perm = torch.randperm(len(cand), generator=g)[:k]
        pos = sorted(cand[i] for i in perm.tolist())
        for j, p in enumerate(pos):
            mpos[b, j] = p
            mids[b, j] = ids[b, p].item()
            ids[b, p] = 4  # [MASK]
    return ids, seg, mask, mpos, mids, nsp


M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


def mix64(z):
    """splitmix64's finaliser (train/dropout.h)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def pass_key(seed, step, micro):
    return mix64(mix64((seed + 0x9E3779B97F4A7C15) & M64) ^ (((step << 20) & M64) ^ micro))


def site_key(key, site):
    return mix64((key + 0x9E3779B97F4A7C15 * (site + 1)) & M64)


def mix32(x):
    """lowbias32 on an int64 tensor of 32-bit values."""
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & M32
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & M32
    return x ^ (x >> 16)


def dropout(x, key, p):
    """x * keep / (1 - p), keep = hash(key, flat index) >= p * 2^32."""
    if key is None or p == 0:
        return x
    p32 = torch.tensor(p, dtype=torch.float32).item()  # the C code's float
    idx = torch.arange(x.numel(), dtype=torch.int64)
    h = mix32(mix32(idx ^ (key & M32)) ^ (key >> 32))
    keep = (h >= int(p32 * 4294967296.0)).reshape(x.shape)
    return torch.where(keep, x / (1.0 - p32), torch.zeros_like(x))


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + EPS) * w + b


def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def forward(ps, batch, key=None, hp=0.0, ap=0.0):
    """The losses and logits; with a pass key, training-mode dropout (hidden
    probability hp, attention ap) as train/bert.c applies it."""
    ids, seg, mask, mpos, mids, nsp = batch
    drop = lambda x, site, p: dropout(x, None if key is None else site_key(key, site), p)
    lin = lambda x, n: x @ ps[n + ".weight"].T + ps[n + ".bias"]
    e = ps["bert.embeddings.word_embeddings.weight"][ids] + ps["bert.embeddings.position_embeddings.weight"][:S] + \
        ps["bert.embeddings.token_type_embeddings.weight"][seg]
    x = drop(layer_norm(e, ps["bert.embeddings.LayerNorm.weight"], ps["bert.embeddings.LayerNorm.bias"]), 0, hp)
    bias = ((1 - mask.double()) * -10000.0)[:, None, None, :]
    D = H // A
    for l in range(L):
        p = "bert.encoder.layer.%d." % l
        q, k, v = (lin(x, p + "attention.self." + n).view(B, S, A, D).transpose(1, 2) for n in ("query", "key", "value"))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D) + bias, -1)
        ctx = (drop(att, 1 + 3 * l, ap) @ v).transpose(1, 2).reshape(B, S, H)
        x1 = layer_norm(drop(lin(ctx, p + "attention.output.dense"), 2 + 3 * l, hp) + x,
                        ps[p + "attention.output.LayerNorm.weight"], ps[p + "attention.output.LayerNorm.bias"])
        h = gelu(lin(x1, p + "intermediate.dense"))
        x = layer_norm(drop(lin(h, p + "output.dense"), 3 + 3 * l, hp) + x1, ps[p + "output.LayerNorm.weight"],
                       ps[p + "output.LayerNorm.bias"])
    pooled = torch.tanh(lin(x[:, 0], "bert.pooler.dense"))
    nsp_logits = lin(pooled, "cls.seq_relationship")
    # masked tokens: per row the positions before the first 0 (pretraining_dataset)
    rows, labels = [], []
    for b in range(B):
        for j in range(M):
            if mpos[b, j].item() == 0:
                break
            rows.append(x[b, mpos[b, j]])
            labels.append(mids[b, j].item())
    t = torch.stack(rows)
    t = layer_norm(gelu(lin(t, "cls.predictions.transform.dense")), ps["cls.predictions.transform.LayerNorm.weight"],
                   ps["cls.predictions.transform.LayerNorm.bias"])
    mlm_logits = t @ ps["bert.embeddings.word_embeddings.weight"].T + ps["cls.predictions.bias"]
    mlm = torch.nn.functional.cross_entropy(mlm_logits, torch.tensor(labels))
    nspl = torch.nn.functional.cross_entropy(nsp_logits, nsp)
    return mlm + nspl, mlm, nspl, mlm_logits, nsp_logits


def grads_at(ps, batch, **dropout_args):
    for p in ps.values():
        p.grad = None
    loss = forward(ps, batch, **dropout_args)[0]
    loss.backward()
    return {n: p.grad.detach().clone() for n, p in ps.items()}


def poly_warmup(step, base, warmup, total):
    """NVIDIA's PolyWarmUpScheduler at optimizer step `step` (1-based)."""
    progress = step / total
    return base * progress / warmup if progress < warmup else base * (1.0 - progress) ** 0.5


HYP = dict(base_lr=0.02, wd=0.01, b1=0.9, b2=0.999, eps=1e-6, max_norm=1.0, warmup=0.3, total=10)


def optimizer_steps(ps0, batch, steps):
    """A copy of the weights, the decay flags, zero moments, and per step s
    (1-based) the gradients at the current weights and their global norm."""
    ps = {n: p.detach().clone().requires_grad_(True) for n, p in ps0.items()}
    decay = {n: d for n, _, d in tensor_list()}
    m = {n: torch.zeros_like(p) for n, p in ps.items()}
    v = {n: torch.zeros_like(p) for n, p in ps.items()}
    for s in range(1, steps + 1):
        g = grads_at(ps, batch)
        yield s, ps, decay, m, v, g, math.sqrt(sum(float((x * x).sum()) for x in g.values()))


def lamb_steps(ps0, batch, steps=2):
    out = []
    for s, ps, decay, m, v, g, norm in optimizer_steps(ps0, batch, steps):
        clip = max(norm / HYP["max_norm"], 1.0)  # apex: grads divided by max(norm / max_norm, 1)
        lr = poly_warmup(s, HYP["base_lr"], HYP["warmup"], HYP["total"])
        with torch.no_grad():
            for n, p in ps.items():
                gg = g[n] / clip
                m[n] = HYP["b1"] * m[n] + (1 - HYP["b1"]) * gg
                v[n] = HYP["b2"] * v[n] + (1 - HYP["b2"]) * gg * gg
                mh = m[n] / (1 - HYP["b1"] ** s)
                vh = v[n] / (1 - HYP["b2"] ** s)
                wd = HYP["wd"] if decay[n] else 0.0
                upd = mh / (vh.sqrt() + HYP["eps"]) + wd * p
                ratio = lr
                if wd != 0:
                    pn, un = float(p.norm()), float(upd.norm())
                    if pn != 0 and un != 0:
                        ratio = lr * pn / un
                p -= ratio * upd
        out.append(({n: p.detach().clone() for n, p in ps.items()}, lr))
    return out


def adamw_steps(ps0, batch, steps=2):
    out = []
    for s, ps, decay, m, v, g, norm in optimizer_steps(ps0, batch, steps):
        coef = HYP["max_norm"] / (norm + 1e-6)  # torch.nn.utils.clip_grad_norm_
        lr = poly_warmup(s, HYP["base_lr"], HYP["warmup"], HYP["total"])
        with torch.no_grad():
            for n, p in ps.items():
                gg = g[n] * coef if coef < 1 else g[n]
                if decay[n]:
                    p *= 1 - lr * HYP["wd"]
                m[n] = HYP["b1"] * m[n] + (1 - HYP["b1"]) * gg
                v[n] = HYP["b2"] * v[n] + (1 - HYP["b2"]) * gg * gg
                denom = v[n].sqrt() / math.sqrt(1 - HYP["b2"] ** s) + HYP["eps"]
                p -= lr / (1 - HYP["b1"] ** s) * m[n] / denom
        out.append({n: p.detach().clone() for n, p in ps.items()})
    return out


def f32(vals):
    return struct.pack("<%df" % len(vals), *vals)


def i32(vals):
    return struct.pack("<%di" % len(vals), *vals)


def flat(ps):
    return [x for n, _, _ in tensor_list() for x in ps[n].detach().reshape(-1).tolist()]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "bert_tiny_ref.bin"
    g = torch.Generator().manual_seed(20261122)
    ps = init_params(g)
    batch = make_batch(g)
    ids, seg, mask, mpos, mids, nsp = batch
    total, mlm, nspl, mlm_logits, nsp_logits = forward(ps, batch)
    grads = grads_at(ps, batch)
    nparams = sum(math.prod(s) for _, s, _ in tensor_list())
    lamb = lamb_steps(ps, batch)
    adamw = adamw_steps(ps, batch)
    dkey, hp, ap = pass_key(42, 3, 1), 0.1, 0.1
    d_total, d_mlm, d_nsp = forward(ps, batch, dkey, hp, ap)[:3]
    d_grads = grads_at(ps, batch, key=dkey, hp=hp, ap=ap)
    with open(out_path, "wb") as f:
        f.write(b"WBBERT1\0")
        f.write(i32([V, H, L, A, I, P, T, B, S, M, nparams, mlm_logits.shape[0]]))
        f.write(f32([EPS]))
        f.write(f32(flat(ps)))
        for x in (ids, seg, mask, mpos, mids, nsp):
            f.write(i32(x.reshape(-1).tolist()))
        f.write(f32(mlm_logits.detach().reshape(-1).tolist()))
        f.write(f32(nsp_logits.detach().reshape(-1).tolist()))
        f.write(f32([float(total), float(mlm), float(nspl)]))
        f.write(f32(flat(grads)))
        f.write(f32([HYP["base_lr"], HYP["wd"], HYP["b1"], HYP["b2"], HYP["eps"], HYP["max_norm"], HYP["warmup"]]))
        f.write(i32([HYP["total"]]))
        f.write(f32([lamb[0][1], lamb[1][1]]))
        f.write(f32(flat(lamb[0][0])))
        f.write(f32(flat(lamb[1][0])))
        f.write(f32(flat(adamw[0])))
        f.write(f32(flat(adamw[1])))
        f.write(f32([hp, ap]))
        f.write(struct.pack("<Q", dkey))
        f.write(f32([float(d_total), float(d_mlm), float(d_nsp)]))
        f.write(f32(flat(d_grads)))
    print("%s: %d parameters, %d masked tokens, loss %.6f (mlm %.6f, nsp %.6f); with dropout %.6f"
          % (out_path, nparams, mlm_logits.shape[0], float(total), float(mlm), float(nspl), float(d_total)))


if __name__ == "__main__":
    main()
