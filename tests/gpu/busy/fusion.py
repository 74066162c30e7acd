#!/usr/bin/env python3
"""fusion: a chain of element-wise ops on large tensors run eagerly (each op streams the tensors through
DRAM once: memory-bound kernels back to back), and its fix, the same chain under torch.compile (one
fused Triton kernel). S steps, each in an NVTX range "step", after W warm-up steps (which include
the compile). The saving of the fix is the difference of the untraced mean_step_us.

Prints one result line:
    fusion: ok variant=<eager|compiled> steps=<S> median_step_us=<f> mean_step_us=<f> device=<name>
"""
import argparse
import statistics
import sys
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("variant", choices=["eager", "compiled"])
ap.add_argument("--numel", type=int, default=64 * 1024 * 1024)
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--warmup", type=int, default=3)
a = ap.parse_args()
if not torch.cuda.is_available():
    print("fusion: CUDA is not available", file=sys.stderr)
    sys.exit(1)


def chain(x, y):
    z = x * 1.5 + y
    z = torch.nn.functional.gelu(z)
    z = z * y - x
    z = torch.sigmoid(z) * 2.0
    z = z + x * 0.5
    return torch.tanh(z) + y


fn = torch.compile(chain) if a.variant == "compiled" else chain
x = torch.randn(a.numel, device="cuda")
y = torch.randn(a.numel, device="cuda")
with torch.cuda.nvtx.range("warmup"):
    for _ in range(a.warmup):
        out = fn(x, y)
torch.cuda.synchronize()
times = []
t0 = time.perf_counter()
for _ in range(a.steps):
    s = time.perf_counter()
    torch.cuda.nvtx.range_push("step")
    out = fn(x, y)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    times.append((time.perf_counter() - s) * 1e6)
total = time.perf_counter() - t0
print(f"fusion: ok variant={a.variant} steps={a.steps} median_step_us={statistics.median(times):.1f} "
      f"mean_step_us={total / a.steps * 1e6:.1f} checksum={float(out[:1024].sum()):.3f} "
      f"device={torch.cuda.get_device_name()}")
