#!/usr/bin/env python3
"""The tensor-idle pair (issue 23): Hugging Face GPT-2 training (6 layers, n_embd 512, random
weights, AdamW, bf16 autocast, batch 8 x 256), with GPT-2's vocabulary of 50257 tokens (bad: the LM
head's GEMMs have a dimension that is not a multiple of 8, and cuBLAS falls back to align1 kernels
with the tensor pipes mostly idle) or padded to 50304 (fixed, as nanoGPT does).

usage: vocab.py bad|fixed [--steps 20] [--warmup 5]
Prints `vocab: ok variant=bad vocab=50257 steps=20 median_step_us=...`; an NVTX range 'step' per step.
"""
import argparse
import statistics
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

ap = argparse.ArgumentParser()
ap.add_argument('variant', choices=['bad', 'fixed'])
ap.add_argument('--steps', type=int, default=20)
ap.add_argument('--warmup', type=int, default=5)
a = ap.parse_args()
vocab = 50257 if a.variant == 'bad' else 50304
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=6, n_embd=512, n_head=8, vocab_size=vocab)).cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 50257, (8, 256), device='cuda')
times = []
for i in range(a.warmup + a.steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    torch.cuda.nvtx.range_push('step')
    opt.zero_grad(set_to_none=True)
    with torch.autocast('cuda', dtype=torch.bfloat16):
        loss = model(ids, labels=ids).loss
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    if i >= a.warmup:
        times.append((time.perf_counter() - t0) * 1e6)
print('vocab: ok variant=%s vocab=%d steps=%d median_step_us=%.1f device=%s' % (
    a.variant, vocab, a.steps, statistics.median(times), torch.cuda.get_device_name()), flush=True)
