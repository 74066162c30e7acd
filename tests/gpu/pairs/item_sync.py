#!/usr/bin/env python3
"""item_sync: a small MLP training loop that reads its loss with .item() every step, and its fix.

An MLP of L Linear layers with ReLU between them (width D, batch B, fp32, Adam) learns a fixed
random teacher map on one batch of random inputs. After a few warm-up steps (in one NVTX range
"warmup"), S steps, each in an NVTX push/pop range "step" (torch.cuda.nvtx.range), run forward,
backward and the optimizer, then H us of host work (logging, bookkeeping: a busy loop). The bad
variant reads the loss every step with loss.item(), which copies it to the host and waits for the
whole step's GPU work, so the GPU then waits through the host work and through Python issuing the
next step's first kernels: a step takes about the GPU time plus H plus that launch latency. With
--fixed the loss is summed on the GPU (total += loss.detach()) and read once after the loop, so the
host runs ahead of the GPU and a step takes about the GPU time (the defaults aim at about 4 ms of
fp32 GEMMs per step on an H200 against about 2 ms of Python and host work): the saving is about H
(1000 us by default) plus the latency of issuing a step's first kernel, per step.

Prints one result line:
    item_sync: ok variant=<bad|fixed> steps=<S> median_step_us=<f> mean_step_us=<f> warmup=<W>
        total=<f> first_loss=<f> last_loss=<f> pid=<pid> torch=<version> device=<name>
median_step_us is the median of each step's host time (with --fixed that is the time to issue the
step, until CUDA's launch queue fills); mean_step_us is the whole loop, from before the first step
to after a torch.cuda.synchronize() after the last, over S: the honest one. Exits 0; exits 1 when
CUDA is unavailable or the loss did not go down (a wrong answer); 2 on a bad option.
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def host_work(us):
    """Keep the CPU busy for us microseconds: host work the GPU has to wait for when it cannot overlap."""
    until = time.perf_counter() + us / 1e6
    while time.perf_counter() < until:
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200, help="timed steps, each an NVTX range 'step' (default 200)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps before them (default 5)")
    p.add_argument("--batch", type=int, default=2048, help="batch size (default 2048)")
    p.add_argument("--width", type=int, default=2048, help="features of every layer (default 2048)")
    p.add_argument("--layers", type=int, default=4, help="Linear layers, ReLU between them (default 4)")
    p.add_argument("--host-us", type=int, default=1000, help="host work per step, in microseconds (default 1000)")
    p.add_argument("--fixed", action="store_true", help="sum the loss on the GPU and read it once at the end")
    args = p.parse_args()
    if min(args.steps, args.warmup, args.batch, args.width, args.layers) < 1:
        p.error("--steps, --warmup, --batch, --width and --layers must be at least 1")

    if not torch.cuda.is_available():
        print("item_sync: no usable CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 1

    torch.manual_seed(0)
    dev = torch.device("cuda")
    # The targets come from a fixed random map of the inputs, so there is something to learn.
    teacher = torch.randn(args.width, args.width, device=dev) / math.sqrt(args.width)
    x = torch.randn(args.batch, args.width, device=dev)
    y = torch.tanh(x @ teacher)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    # Warm-up: cuBLAS handles, the allocator's blocks and Adam's state; its first loss is the baseline.
    with torch.cuda.nvtx.range("warmup"):
        first_loss = None
        for _ in range(args.warmup):
            loss = train_step()
            if first_loss is None:
                first_loss = loss.item()
        torch.cuda.synchronize()

    times = []
    total = torch.zeros((), device=dev) if args.fixed else 0.0
    t0 = time.perf_counter()
    for _ in range(args.steps):
        s0 = time.perf_counter()
        with torch.cuda.nvtx.range("step"):
            loss = train_step()
            if args.fixed:
                total += loss.detach()
            else:
                total += loss.item()
            host_work(args.host_us)
        times.append(time.perf_counter() - s0)
    total = float(total)
    torch.cuda.synchronize()
    mean = (time.perf_counter() - t0) / args.steps
    last_loss = loss.item()

    if not math.isfinite(total) or not last_loss < first_loss:
        print(f"item_sync: wrong result: the loss went from {first_loss:.6f} to {last_loss:.6f} "
              f"(total {total:.6f}); it should go down", file=sys.stderr)
        return 1
    print(f"item_sync: ok variant={'fixed' if args.fixed else 'bad'} steps={args.steps} "
          f"median_step_us={statistics.median(times) * 1e6:.1f} mean_step_us={mean * 1e6:.1f} "
          f"warmup={args.warmup} batch={args.batch} width={args.width} layers={args.layers} "
          f"host_us={args.host_us} total={total:.6f} first_loss={first_loss:.6f} last_loss={last_loss:.6f} "
          f"pid={os.getpid()} torch={torch.__version__} "
          f"device={torch.cuda.get_device_name(0).replace(' ', '_')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
