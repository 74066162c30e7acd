#!/usr/bin/env python3
"""precision: a GEMM-heavy MLP training step at PyTorch's default FP32 matmul precision, and its fixes.

An MLP of L Linear(D, D) layers with GELU between them (batch B, SGD) trains on one random batch.
After W warm-up steps, S steps each in an NVTX range "step" run forward, backward and the
optimizer. The variant picks the matmul precision:
  fp32  PyTorch's default: torch.backends.cuda.matmul.allow_tf32 = False; cuBLAS runs FP32 (SIMT)
        GEMMs that leave the tensor cores idle
  tf32  torch.set_float32_matmul_precision("high"): the same FP32 tensors, TF32 tensor-core GEMMs
  bf16  torch.autocast("cuda", dtype=torch.bfloat16) around the forward pass
The saving of a fix is the difference of the untraced mean_step_us.

Prints one result line:
    precision: ok variant=<v> steps=<S> median_step_us=<f> mean_step_us=<f> device=<name>
"""
import argparse
import statistics
import sys
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("variant", choices=["fp32", "tf32", "bf16"])
ap.add_argument("--layers", type=int, default=4)
ap.add_argument("--dim", type=int, default=4096)
ap.add_argument("--batch", type=int, default=4096)
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--warmup", type=int, default=3)
a = ap.parse_args()
if not torch.cuda.is_available():
    print("precision: CUDA is not available", file=sys.stderr)
    sys.exit(1)

torch.backends.cuda.matmul.allow_tf32 = a.variant == "tf32"
torch.backends.cudnn.allow_tf32 = a.variant == "tf32"
torch.manual_seed(0)
layers = []
for _ in range(a.layers):
    layers += [torch.nn.Linear(a.dim, a.dim), torch.nn.GELU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(a.batch, a.dim, device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    if a.variant == "bf16":
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().square().mean()
    else:
        loss = model(x).square().mean()
    loss.backward()
    opt.step()


with torch.cuda.nvtx.range("warmup"):
    for _ in range(a.warmup):
        step()
torch.cuda.synchronize()
times = []
t0 = time.perf_counter()
for _ in range(a.steps):
    s = time.perf_counter()
    torch.cuda.nvtx.range_push("step")
    step()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    times.append((time.perf_counter() - s) * 1e6)
total = time.perf_counter() - t0
print(f"precision: ok variant={a.variant} steps={a.steps} median_step_us={statistics.median(times):.1f} "
      f"mean_step_us={total / a.steps * 1e6:.1f} device={torch.cuda.get_device_name()}")
