#!/usr/bin/env python3
"""bench/train_gpu_ref.py - the peer of train_bert's benchmark: Hugging Face
transformers' BertForPreTraining in PyTorch on the GPU, as its users train
it: bf16 autocast, SDPA attention, fused AdamW, ACCUM micro-batches (default
1) of the shape given per optimizer step (MAX_PRED masked tokens per
sequence, labels -100 elsewhere, so the loss is NVIDIA's). Prints the median
seq/s of the timed steps after WARMUP untimed ones, and the peak GPU memory.
Without CUDA it runs on the CPU (float32; bench/gpu_first.sh's emulated
test), where the rate says nothing of a GPU.

    python3 bench/train_gpu_ref.py CONFIG.json BATCH SEQ MAX_PRED STEPS [WARMUP [ACCUM]]
"""
import json
import statistics
import sys
import time

import torch
from transformers import BertConfig, BertForPreTraining


def main():
    cfg_path, B, S, P, steps = sys.argv[1], *map(int, sys.argv[2:6])
    warmup = int(sys.argv[6]) if len(sys.argv) > 6 else 5
    accum = int(sys.argv[7]) if len(sys.argv) > 7 else 1
    c = json.load(open(cfg_path))
    c["vocab_size"] += -c["vocab_size"] % 8  # run_pretraining.py's rounding, as train_bert does
    config = BertConfig(**c)
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    with dev:  # the weights made on the device: BERT-large's initialization takes seconds on a CPU
        try:
            model = BertForPreTraining._from_config(config, attn_implementation="sdpa")
        except TypeError:  # older transformers
            config._attn_implementation = "sdpa"
            model = BertForPreTraining(config)
    model = model.to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda)
    g = torch.Generator(device=dev).manual_seed(0)
    ids = torch.randint(5, c["vocab_size"] - 8, (B, S), device=dev, generator=g)
    seg = torch.zeros(B, S, dtype=torch.long, device=dev)
    seg[:, S // 2:] = 1
    mask = torch.ones(B, S, dtype=torch.long, device=dev)
    labels = torch.full((B, S), -100, dtype=torch.long, device=dev)
    pos = torch.stack([torch.randperm(S - 2, device=dev, generator=g)[:P] + 1 for _ in range(B)])
    labels.scatter_(1, pos, ids.gather(1, pos))
    nsp = torch.randint(0, 2, (B,), device=dev, generator=g)
    rates = []
    for s in range(warmup + steps):
        sync()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        for _ in range(accum):
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
                out = model(input_ids=ids, token_type_ids=seg, attention_mask=mask, labels=labels,
                            next_sentence_label=nsp)
            (out.loss / accum).backward()
        opt.step()
        sync()
        if s >= warmup:
            rates.append(B * accum / (time.perf_counter() - t0))
    print("torch %s transformers %s (attention: %s, %s): %.2f seq/s, peak %.0f MB" % (
        torch.__version__, __import__("transformers").__version__,
        getattr(model.config, "_attn_implementation", "eager"), dev.type, statistics.median(rates),
        torch.cuda.max_memory_allocated() / 2**20 if cuda else 0))


if __name__ == "__main__":
    main()
