#!/usr/bin/env python3
"""near_oom: a training loop whose memory peaks near the device's capacity, and one well below it.

The MLP loop of empty_cache.py (without empty_cache) runs beside a ballast tensor that stands for a
larger model or batch: after the warm-up, the ballast is sized so that the memory PyTorch holds
reaches --fraction of the device's total memory (default 0.92; --fixed: 0.5). Near capacity the
next larger batch fails with an out-of-memory error; the trace's allocations show the peak against
TARGET_INFO_GPU.totalMemory. Step times are about equal in both variants: the finding is about
headroom, not time.

Prints one result line:
    near_oom: ok variant=<bad|fixed> steps=<S> median_step_us=<f> mean_step_us=<f> fraction=<f>
        ballast_mb=<f> reserved_mb=<f> total_mb=<f> pid=<pid> torch=<version> device=<name>
Exits 0; 1 when CUDA is unavailable or the ballast cannot be allocated; 2 on a bad option.
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100, help="timed steps, each an NVTX range 'step' (default 100)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps before them (default 5)")
    p.add_argument("--fraction", type=float, default=None, help="share of total memory to fill (default 0.92)")
    p.add_argument("--fixed", action="store_true", help="fill only half of the memory")
    args = p.parse_args()
    fraction = args.fraction if args.fraction is not None else (0.5 if args.fixed else 0.92)
    if args.steps < 1 or args.warmup < 1 or not 0 < fraction < 1:
        p.error("--steps and --warmup must be at least 1, --fraction between 0 and 1")
    if not torch.cuda.is_available():
        print("near_oom: no usable CUDA device", file=sys.stderr)
        return 1

    torch.manual_seed(0)
    dev = torch.device("cuda")
    width, batch = 2048, 1024
    teacher = torch.randn(width, width, device=dev) / math.sqrt(width)
    x = torch.randn(batch, width, device=dev)
    y = torch.tanh(x @ teacher)
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.Linear(width, width)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    with torch.cuda.nvtx.range("warmup"):
        for _ in range(args.warmup):
            train_step()
        torch.cuda.synchronize()
    total = torch.cuda.get_device_properties(0).total_memory
    ballast_bytes = int(fraction * total) - torch.cuda.memory_reserved()
    try:
        ballast = torch.ones(max(ballast_bytes, 1), dtype=torch.uint8, device=dev)
    except torch.OutOfMemoryError as e:
        print(f"near_oom: cannot allocate the ballast of {ballast_bytes / 2**20:.0f} MB: {e}", file=sys.stderr)
        return 1

    times = []
    t0 = time.perf_counter()
    for _ in range(args.steps):
        s0 = time.perf_counter()
        with torch.cuda.nvtx.range("step"):
            loss = train_step()
        times.append(time.perf_counter() - s0)
    torch.cuda.synchronize()
    mean = (time.perf_counter() - t0) / args.steps
    reserved_mb = torch.cuda.max_memory_reserved() / 2**20
    print(f"near_oom: ok variant={'fixed' if args.fixed else 'bad'} steps={args.steps} "
          f"median_step_us={statistics.median(times) * 1e6:.1f} mean_step_us={mean * 1e6:.1f} "
          f"fraction={fraction} ballast_mb={ballast.numel() / 2**20:.1f} reserved_mb={reserved_mb:.1f} "
          f"total_mb={total / 2**20:.1f} loss={loss.item():.6f} pid={os.getpid()} torch={torch.__version__} "
          f"device={torch.cuda.get_device_name(0).replace(' ', '_')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
