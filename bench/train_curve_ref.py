#!/usr/bin/env python3
"""bench/train_curve_ref.py - the PyTorch side of the learning-curve
comparison (bench/gpu_first.sh, call 2): Hugging Face transformers'
BertForPreTraining trained from the same initial weights, on the same
rows in the same order, with the same optimizer, schedule and batch as a
train_bert run, so that the two loss curves can be laid side by side.

- Weights: a train_bert Hugging Face export (DIR/config.json and
  model.safetensors), in practice its step-0 model (train_bert
  --max_steps 1 --warmup_proportion 0.5: the one step has learning rate 0,
  so the export holds the initial weights of --seed).
- Rows: train_bert's reader (train/data.c) on one HDF5 file: each epoch
  visits the rows in the order of a Fisher-Yates shuffle driven by
  xoshiro256** (common/rng.h) seeded with seed ^ (0x9E3779B97F4A7C15 x
  (epoch + 1)); micro-batches are consecutive rows of that order, the last
  one of an epoch shorter. The masks are the file's (masked_lm_positions up
  to the first 0, as NVIDIA's reader takes them).
- Loss: NVIDIA's (mean cross-entropy over the masked tokens + mean NSP
  cross-entropy), each micro-batch's scaled by 1 / ACCUM.
- LAMB as train/optim.c (apex FusedLAMB's rule): global gradient norm
  clipped at 1, bias correction, weight decay 0.01 on the matrices (not on
  biases, LayerNorm and the MLM bias), trust ratio ||w|| / ||update|| on
  the decayed tensors only; PolyWarmUp (linear warm-up over the first
  WARMUP share of the steps, then (1 - progress)^0.5), step counted from 1.
- Precision: bf16 autocast on a GPU (float32 weights, gradients and
  optimizer state, as train_bert --precision bf16), float32 on the CPU.
  Dropout: the config's, drawn by PyTorch (train_bert hashes its own
  masks), so with dropout the curves agree in averaged windows, not step by
  step; a config without dropout gives the same losses step by step.

Prints first the losses of the initial model on the first EVAL_ROWS rows in
file order, as one batch without dropout (train_bert --eval_file computes
the same), then one JSON line per step in train_bert's log format.

    python3 bench/train_curve_ref.py --hf DIR --input FILE.hdf5 --batch 32 --steps 300 \\
        --lr 1e-3 --warmup 0.1 --seed 42 --max-pred 20 [--accum 1] [--device cuda|cpu] [--eval-rows N]
"""
import argparse
import json
import math
import sys
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F
from transformers import BertForPreTraining

M64 = (1 << 64) - 1


class Xoshiro:
    """common/rng.h: xoshiro256** seeded through splitmix64."""

    def __init__(self, seed):
        x = seed & M64
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            self.s.append(z ^ (z >> 31))

    def u64(self):
        s = self.s
        r = (((s[1] * 5) & M64) << 7 | ((s[1] * 5) & M64) >> 57) & M64
        r = (r * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = ((s[3] << 45) | (s[3] >> 19)) & M64
        return r

    def below(self, n):
        limit = M64 - M64 % n
        while True:
            x = self.u64()
            if x < limit:
                return x % n


def row_order(rows, seed, epoch, file_step=0):
    """train/data.c read_file(): the row visiting order of one file."""
    r = Xoshiro(seed ^ ((0x9E3779B97F4A7C15 * (epoch + 1)) & M64) ^ ((file_step << 32) & M64))
    order = list(range(rows))
    for i in range(rows - 1, 0, -1):
        j = r.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


class Rows:
    """The micro-batches train_bert reads from one file (no length bins)."""

    def __init__(self, path, micro, seed, max_pred):
        with h5py.File(path, "r") as f:
            self.ids = np.asarray(f["input_ids"], dtype=np.int64)
            self.mask = np.asarray(f["input_mask"], dtype=np.int64)
            self.seg = np.asarray(f["segment_ids"], dtype=np.int64)
            self.mpos = np.asarray(f["masked_lm_positions"], dtype=np.int64)[:, :max_pred]
            self.mids = np.asarray(f["masked_lm_ids"], dtype=np.int64)[:, :max_pred]
            self.nsp = np.asarray(f["next_sentence_labels"], dtype=np.int64).reshape(-1)
        self.rows = self.ids.shape[0]
        self.micro, self.seed = micro, seed
        self.epoch, self.at = 0, 0
        self.order = row_order(self.rows, seed, 0)

    def take(self, idx):
        """(input_ids, token_type_ids, attention_mask, mlm labels, nsp labels) of rows idx"""
        idx = np.asarray(idx)
        labels = np.full(self.ids[idx].shape, -100, dtype=np.int64)
        for k, r in enumerate(idx):
            for p, lab in zip(self.mpos[r], self.mids[r]):
                if p == 0:  # the list ends at its first 0
                    break
                labels[k, p] = lab
        return self.ids[idx], self.seg[idx], self.mask[idx], labels, self.nsp[idx]

    def next(self):
        if self.at >= self.rows:
            self.epoch, self.at = self.epoch + 1, 0
            self.order = row_order(self.rows, self.seed, self.epoch)
        n = min(self.micro, self.rows - self.at)
        idx = self.order[self.at:self.at + n]
        self.at += n
        return self.take(idx)


def poly_warmup_lr(step, base, warmup, total):
    """train/optim.c poly_warmup_lr(): base and warmup are float32 there
    (0.2 becomes 0.200000003, so step 6 of 30 is still warming up), the
    result too"""
    base, warmup = float(np.float32(base)), float(np.float32(warmup))
    progress = step / total
    if progress < warmup:
        return float(np.float32(base * progress / warmup))
    rest = 1.0 - progress
    return float(np.float32(base * rest ** 0.5)) if rest > 0 else 0.0


class Lamb:
    """train/optim.c optim_step() for OPT_LAMB (float32 state; the norms in
    float64 as there; no host round trip per tensor)."""

    def __init__(self, params, wd=0.01, b1=0.9, b2=0.999, eps=1e-6, max_norm=1.0):
        f32 = np.float32
        self.params = params  # [(name, tensor)]
        self.wd, self.eps, self.max_norm = float(f32(wd)), float(f32(eps)), max_norm
        self.b1, self.b2 = float(f32(b1)), float(f32(b2))
        self.a1, self.a2 = float(f32(1) - f32(b1)), float(f32(1) - f32(b2))  # 1 - b in float, as in C
        self.m = [torch.zeros_like(p) for _, p in params]
        self.v = [torch.zeros_like(p) for _, p in params]
        self.t = 0

    @torch.no_grad()
    def step(self, lr):
        self.t += 1
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for _, p in self.params]
        norm = torch.sqrt(torch.stack([(g.double() ** 2).sum() for g in grads]).sum())
        gscale = (1.0 / torch.clamp(norm / self.max_norm, min=1.0)).float()
        ibc1 = float(np.float32(1.0 / (1 - self.b1 ** self.t)))
        ibc2 = float(np.float32(1.0 / (1 - self.b2 ** self.t)))
        for (_, p), g, m, v in zip(self.params, grads, self.m, self.v):
            decay = p.dim() == 2  # train/bert.c: weight decay on the matrices only
            g = g * gscale
            m.mul_(self.b1).add_(g, alpha=self.a1)
            v.mul_(self.b2).addcmul_(g, g, value=self.a2)
            u = (m * ibc1) / (torch.sqrt(v * ibc2) + self.eps)
            if decay:
                u.add_(p, alpha=self.wd)
                pn, un = p.double().norm(), u.double().norm()
                ratio = torch.where((pn != 0) & (un != 0), lr * (pn / un), torch.full_like(pn, lr)).float()
                p.sub_(ratio * u)
            else:
                p.sub_(u, alpha=lr)
        return norm.item()


def losses(model, batch, device, amp):
    """NVIDIA's criterion: (total, mlm, nsp, masked, mlm_correct) of one micro-batch"""
    ids, seg, mask, labels, nsp = (torch.from_numpy(x).to(device) for x in batch)
    with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=amp):
        out = model(input_ids=ids, token_type_ids=seg, attention_mask=mask)
    sel = labels != -100
    logits = out.prediction_logits[sel].float()
    mlm = F.cross_entropy(logits, labels[sel])
    nspl = F.cross_entropy(out.seq_relationship_logits.float(), nsp)
    correct = (logits.argmax(-1) == labels[sel]).sum().item()
    return mlm + nspl, mlm, nspl, int(sel.sum().item()), correct


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hf", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--accum", type=int, default=1)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--warmup", type=float, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--max-pred", type=int, required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--eval-rows", type=int, default=0)
    a = ap.parse_args()
    device = torch.device(a.device)
    amp = device.type == "cuda"
    torch.manual_seed(a.seed)
    if device.type == "cpu":
        torch.backends.mkldnn.enabled = False  # float32 sums in plain order: closest to the C model
    try:
        model = BertForPreTraining.from_pretrained(a.hf, attn_implementation="sdpa", dtype=torch.float32)
    except TypeError:  # transformers before 4.56 names it torch_dtype
        model = BertForPreTraining.from_pretrained(a.hf, attn_implementation="sdpa", torch_dtype=torch.float32)
    model.to(device)
    data = Rows(a.input, a.batch // a.accum, a.seed, a.max_pred)
    print("torch %s transformers %s, %s%s, %d rows" % (
        torch.__version__, __import__("transformers").__version__, device, " (bf16 autocast)" if amp else "",
        data.rows), file=sys.stderr)
    if a.eval_rows:
        model.eval()
        with torch.no_grad():
            t, m, n, k, c = losses(model, data.take(range(min(a.eval_rows, data.rows))), device, False)
        print(json.dumps({"eval_loss": round(t.item(), 6), "eval_mlm_loss": round(m.item(), 6),
                          "eval_nsp_loss": round(n.item(), 6), "eval_mlm_acc": round(c / max(k, 1), 4),
                          "masked": k}), flush=True)
    model.train()
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    opt = Lamb(params)
    t0 = time.perf_counter()
    for step in range(1, a.steps + 1):
        for _, p in params:
            p.grad = None
        tot = mlm = nsp = 0.0
        masked = correct = rows = 0
        for _ in range(a.accum):
            b = data.next()
            t, m, n, k, c = losses(model, b, device, amp)
            (t / a.accum).backward()
            tot += t.item() / a.accum
            mlm += m.item() / a.accum
            nsp += n.item() / a.accum
            masked, correct, rows = masked + k, correct + c, rows + len(b[0])
        lr = poly_warmup_lr(step, a.lr, a.warmup, a.steps)
        gn = opt.step(lr)
        if not math.isfinite(tot):
            sys.exit("train_curve_ref: step %d: loss %g" % (step, tot))
        now = time.perf_counter()
        print(json.dumps({"step": step, "loss": round(tot, 6), "mlm_loss": round(mlm, 6), "nsp_loss": round(nsp, 6),
                          "mlm_acc": round(correct / max(masked, 1), 4), "lr": lr, "grad_norm": round(gn, 5),
                          "seq_per_s": round(rows / max(now - t0, 1e-9), 2)}), flush=True)
        t0 = now


if __name__ == "__main__":
    main()
