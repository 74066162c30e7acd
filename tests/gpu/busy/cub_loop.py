#!/usr/bin/env python3
"""cub_loop: a small PyTorch training loop with no NVTX ranges of its own that uses CUB through
PyTorch every step (an embedding over 32768 token ids, whose backward sorts the indices; torch.unique
and torch.sort on the batch): issue 31's case, where CCCL's own NVTX ranges (cub::DeviceRadixSort,
in the "CCCL" domain) must not be taken for the training step.

Prints one result line:
    cub_loop: ok steps=<S> mean_step_us=<f> nvtx_ranges=0 device=<name>
"""
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
if not torch.cuda.is_available():
    print("cub_loop: CUDA is not available", file=sys.stderr)
    sys.exit(1)
torch.manual_seed(0)
emb = torch.nn.Embedding(50257, 256).cuda()
head = torch.nn.Linear(256, 256).cuda()
opt = torch.optim.AdamW(list(emb.parameters()) + list(head.parameters()), lr=1e-3)
ids = torch.randint(0, 50257, (64, 512), device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    uniq = torch.unique(ids)
    order = torch.sort(ids.flatten()).values
    loss = head(emb(ids)).square().mean() + 1e-6 * (uniq.float().mean() + order.float().mean())
    loss.backward()
    opt.step()


for _ in range(3):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(steps):
    step()
torch.cuda.synchronize()
print(f"cub_loop: ok steps={steps} mean_step_us={(time.perf_counter() - t0) / steps * 1e6:.1f} "
      f"nvtx_ranges=0 device={torch.cuda.get_device_name()}")
