#!/usr/bin/env python3
"""leak: a training loop that keeps each step's monitoring loss with its autograd graph, and its fix.

An MLP of L Linear layers with GELU between them (width D, batch B, fp32, SGD) learns a fixed random
teacher map. Each of S steps (NVTX range "step") trains on one batch and then computes a monitoring
loss on a held-out batch without torch.no_grad(). The bad variant keeps that loss tensor in a list
for logging: each kept tensor holds its graph, and the graph holds the forward pass's saved
activations (about L x B x D x 4 bytes x 2), so memory in use grows every step and the caching
allocator has to call cudaMalloc for fresh blocks every step. With --fixed the list keeps
loss.detach().clone(): the graph and its activations are freed when the step ends.

Why clone: with PyTorch 2.11 a kept loss.detach() (or a loss computed under torch.no_grad()) still
holds one batch x width x 4-byte block, allocated inside F.mse_loss, per step: 8 MiB a step here
(H200, 2026-11-27, tests/gpu/pairs/leak_diag.py: memory_allocated() +8.00 MiB a step, and the
allocator's snapshot lists 40 live 8 MiB blocks from mse_loss after 40 steps), which gpt-trace's
memory-growth rule reported on the earlier fixed variant. A clone (or .item()) holds 4 bytes.

Prints one result line:
    leak: ok variant=<bad|fixed> steps=<S> median_step_us=<f> mean_step_us=<f> warmup=<W>
        batch=<B> width=<D> layers=<L> first_loss=<f> last_loss=<f> peak_mb=<f> end_mb=<f>
        pid=<pid> torch=<version> device=<name>
Exits 0; 1 when CUDA is unavailable or the loss did not go down; 2 on a bad option.
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
    p.add_argument("--steps", type=int, default=200, help="timed steps, each an NVTX range 'step' (default 200)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps before them (default 5)")
    p.add_argument("--batch", type=int, default=1024, help="batch size (default 1024)")
    p.add_argument("--width", type=int, default=2048, help="features of every layer (default 2048)")
    p.add_argument("--layers", type=int, default=4, help="Linear layers (default 4)")
    p.add_argument("--fixed", action="store_true", help="keep loss.detach().clone(), not the loss with its graph")
    args = p.parse_args()
    if min(args.steps, args.warmup, args.batch, args.width, args.layers) < 1:
        p.error("--steps, --warmup, --batch, --width and --layers must be at least 1")
    if not torch.cuda.is_available():
        print("leak: no usable CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 1

    torch.manual_seed(0)
    dev = torch.device("cuda")
    teacher = torch.randn(args.width, args.width, device=dev) / math.sqrt(args.width)
    x = torch.randn(args.batch, args.width, device=dev)
    y = torch.tanh(x @ teacher)
    xv = torch.randn(args.batch, args.width, device=dev)
    yv = torch.tanh(xv @ teacher)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.GELU()]
    model = torch.nn.Sequential(*layers[:-1]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    history = []

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        watch = F.mse_loss(model(xv), yv)	# monitoring loss, graph built (no torch.no_grad())
        history.append(watch.detach().clone() if args.fixed else watch)
        return loss

    with torch.cuda.nvtx.range("warmup"):
        first_loss = train_step().item()
        for _ in range(args.warmup - 1):
            train_step()
        torch.cuda.synchronize()

    torch.cuda.reset_peak_memory_stats()
    times = []
    t0 = time.perf_counter()
    for _ in range(args.steps):
        s0 = time.perf_counter()
        with torch.cuda.nvtx.range("step"):
            loss = train_step()
        times.append(time.perf_counter() - s0)
    torch.cuda.synchronize()
    mean = (time.perf_counter() - t0) / args.steps
    last_loss = loss.item()
    peak_mb = torch.cuda.max_memory_allocated() / 2**20
    end_mb = torch.cuda.memory_allocated() / 2**20

    if not last_loss < first_loss:
        print(f"leak: wrong result: the loss went from {first_loss:.6f} to {last_loss:.6f}", file=sys.stderr)
        return 1
    print(f"leak: ok variant={'fixed' if args.fixed else 'bad'} steps={args.steps} "
          f"median_step_us={statistics.median(times) * 1e6:.1f} mean_step_us={mean * 1e6:.1f} "
          f"warmup={args.warmup} batch={args.batch} width={args.width} layers={args.layers} "
          f"first_loss={first_loss:.6f} last_loss={last_loss:.6f} peak_mb={peak_mb:.1f} end_mb={end_mb:.1f} "
          f"pid={os.getpid()} torch={torch.__version__} "
          f"device={torch.cuda.get_device_name(0).replace(' ', '_')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
