#!/usr/bin/env python3
"""layout: torchvision resnet18 training (batch 64, SGD, 224x224) in PyTorch's default NCHW memory
format, and its fix, channels_last (model and input), with TF32 convolutions as PyTorch's default.
In NCHW, cuDNN's Hopper convolution kernels run NHWC and convert every activation on the way in and
out (cudnn::engines_precompiled::nchwToNhwcKernel / nhwcToNchwKernel); channels_last removes them.
After W warm-up steps, S steps each in an NVTX range "step". The saving of the fix is the
difference of the untraced mean_step_us.

Prints one result line:
    layout: ok variant=<nchw|channels_last> steps=<S> median_step_us=<f> mean_step_us=<f> device=<name>
"""
import argparse
import statistics
import sys
import time

import torch
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("variant", choices=["nchw", "channels_last"])
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--warmup", type=int, default=5)
a = ap.parse_args()
if not torch.cuda.is_available():
    print("layout: CUDA is not available", file=sys.stderr)
    sys.exit(1)
torch.manual_seed(0)
fmt = torch.channels_last if a.variant == "channels_last" else torch.contiguous_format
model = torchvision.models.resnet18(num_classes=100).cuda().to(memory_format=fmt)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(a.batch, 3, 224, 224, device="cuda").to(memory_format=fmt)
y = torch.randint(0, 100, (a.batch,), device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(model(x), y).backward()
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
print(f"layout: ok variant={a.variant} steps={a.steps} median_step_us={statistics.median(times):.1f} "
      f"mean_step_us={total / a.steps * 1e6:.1f} device={torch.cuda.get_device_name()}")
