#!/usr/bin/env python3
"""ddp_straggler: a PyTorch DistributedDataParallel job (NCCL) with one rank made slow on a schedule,
for gpt-trace's cross-rank report (issue 11; tests/gpu/multirank.sh runs it).

Run it under torchrun, one process per GPU:
    gpt-trace run -o 'ddp-%r.sqlite' -- torchrun --standalone --nproc-per-node 2 \\
        samples/ddp_straggler.py --slow-rank 1 --sleep-ms 50 --every 5

Each step is an NVTX push/pop range "train_step" (torch.cuda.nvtx), the iterations the report
finds. Every rank synchronizes its device after the forward pass, so that the host's sleep that
follows on the slow rank becomes exactly that much GPU idle time before its backward pass: on steps
where step % EVERY == EVERY - 1, rank SLOW_RANK sleeps SLEEP_MS ms before backward(), its gradient
all-reduces start that much later, and the other ranks wait inside theirs. --slow-rank -1 makes no
rank slow (the clean variant).

Communication:
  overlapped (default)  DDP's own gradient buckets (bucket_cap_mb, default 25 MB): each bucket is
                        all-reduced during the backward pass, while the remaining layers compute.
  --exposed             backward under DDP's no_sync() (no reduction during backward), then one
                        dist.all_reduce per gradient after backward has finished: nothing overlaps.

Prints one result line per rank:
    ddp_straggler: ok rank=<r> world=<n> steps=<S> slow_rank=<k> sleep_ms=<ms> every=<k> mode=<m> loss=<f>
and exits 0; exits 1 without CUDA or without a torchrun environment.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40, help="training steps (default 40)")
    p.add_argument("--slow-rank", type=int, default=1, help="the rank that sleeps; -1: none (default 1)")
    p.add_argument("--sleep-ms", type=float, default=50.0, help="how long it sleeps (default 50)")
    p.add_argument("--every", type=int, default=5, help="it sleeps on every EVERY-th step (default 5)")
    p.add_argument("--exposed", action="store_true", help="all-reduce after backward, nothing overlapped")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=4096, help="hidden width of the 8-layer MLP (default 4096)")
    p.add_argument("--layers", type=int, default=8)
    args = p.parse_args()

    if "LOCAL_RANK" not in os.environ:
        print("ddp_straggler: run it under torchrun (no LOCAL_RANK in the environment)", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("ddp_straggler: CUDA is not available", file=sys.stderr)
        return 1
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", device_id=torch.device("cuda", local_rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)

    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.width, args.width), nn.GELU()]
    model = DDP(nn.Sequential(*layers).to(device), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=device).manual_seed(rank)
    x = torch.randn(args.batch, args.width, device=device, generator=gen)
    target = torch.randn(args.batch, args.width, device=device, generator=gen)

    loss = None
    for step in range(args.steps):
        torch.cuda.nvtx.range_push("train_step")
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = nn.functional.mse_loss(out, target)
        # every rank waits for its forward pass, so the sleep below is GPU idle time one for one
        torch.cuda.synchronize()
        if rank == args.slow_rank and step % args.every == args.every - 1:
            time.sleep(args.sleep_ms / 1000.0)
        if args.exposed:
            with model.no_sync():
                loss.backward()
            for param in model.parameters():
                dist.all_reduce(param.grad)
                param.grad.div_(world)
        else:
            loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print("ddp_straggler: ok rank=%d world=%d steps=%d slow_rank=%d sleep_ms=%g every=%d mode=%s loss=%.6f"
          % (rank, world, args.steps, args.slow_rank, args.sleep_ms, args.every,
             "exposed" if args.exposed else "overlapped", loss.item()))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
