#!/usr/bin/env python3
"""A 2-rank DDP job traced by torch.profiler, one gzipped Kineto file per rank, with a slow rank:
the input for gpt-trace's cross-rank report on PyTorch profiler files (issue 28).

usage: torchrun --nproc-per-node 2 tests/gpu/kineto/record_ddp.py OUTDIR [--slow-rank 1] [--every 3] [--sleep-ms 30]
The slow rank sleeps SLEEP_MS on the host before its forward pass every EVERY steps, so the other
rank waits in the gradient all-reduce. Writes OUTDIR/rank{0,1}.*.pt.trace.json.gz
(tensorboard_trace_handler, use_gzip) with schedule(wait=1, warmup=2, active=9); prints one line per
rank. Then: gpt-trace report OUTDIR/rank*.pt.trace.json.gz should name the slow rank as straggler
on the slow steps.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

ap = argparse.ArgumentParser()
ap.add_argument('out')
ap.add_argument('--slow-rank', type=int, default=1)
ap.add_argument('--every', type=int, default=3)
ap.add_argument('--sleep-ms', type=float, default=30)
a = ap.parse_args()

dist.init_process_group('nccl')
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', rank)))
model = DDP(torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda())
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(512, 2048, device='cuda')


def step(i):
    if rank == a.slow_rank and i % a.every == 0:
        time.sleep(a.sleep_ms / 1000)
    opt.zero_grad(set_to_none=True)
    model(x).square().mean().backward()
    opt.step()


for i in range(3):
    step(i)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=2, active=9),
             on_trace_ready=tensorboard_trace_handler(a.out, worker_name=f'rank{rank}', use_gzip=True)) as p:
    for i in range(12):
        step(i)
        p.step()
torch.cuda.synchronize()
print(f'rank {rank}: ok, traces in {a.out}')
dist.destroy_process_group()
