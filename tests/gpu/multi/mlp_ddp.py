#!/usr/bin/env python3
"""The multi-GPU overhead job of issue 30: DDP over every rank of torchrun, three 2048->8192->2048
MLP blocks, AdamW, an NVTX range per step. Prints rank 0's median ms per step over the steps after
the warm-up: `mlp_ddp: ok ranks=4 steps=60 median_ms=7.160`.

usage: torchrun --nproc-per-node N tests/gpu/multi/mlp_ddp.py [--steps 60] [--warmup 20] [--batch 256]
           [--batches B1,B2,...] [--named-steps] [--slow-rank R] [--torch-profiler]
--batches runs the loop once per batch size in the same process (warm-up each time) and prints one
line per batch, `... batch=B median_ms=X`: a smaller batch makes the step lean more on the host;
--torch-profiler runs the loops under torch.profiler (CPU and CUDA activities, nothing exported),
the profiler users already have, as a yardstick for the tracer's cost;
--named-steps names the step ranges ProfilerStep#1, #2, ... (torch.profiler's names: --steps and the
cross-rank report read the numbers); --slow-rank R makes rank R sleep 20 ms inside every third
step before its forward pass, so that it holds up the others' all-reduce (a known straggler);
--ready-file PATH: each rank creates PATH.RANK once its warm-up is done (an on-demand start can wait
for it: torchrun's OMP_NUM_THREADS=1 makes the model's initialisation take seconds).
"""
import argparse
import contextlib
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

ap = argparse.ArgumentParser()
ap.add_argument('--steps', type=int, default=60)
ap.add_argument('--warmup', type=int, default=20)
ap.add_argument('--batch', type=int, default=256)
ap.add_argument('--batches', default='', help='comma-separated batch sizes, one loop each')
ap.add_argument('--torch-profiler', action='store_true')
ap.add_argument('--named-steps', action='store_true')
ap.add_argument('--slow-rank', type=int, default=-1)
ap.add_argument('--ready-file', default='', help='each rank creates PATH.RANK when its warm-up is done')
a = ap.parse_args()

dist.init_process_group('nccl')
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', rank)))
blocks = [torch.nn.Sequential(torch.nn.Linear(2048, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 2048))
          for _ in range(3)]
model = DDP(torch.nn.Sequential(*blocks).cuda())
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)


def loop(batch):
    x = torch.randn(batch, 2048, device='cuda')
    times = []
    for i in range(a.warmup + a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.cuda.nvtx.range_push('ProfilerStep#%d' % (i + 1) if a.named_steps else 'step')
        if rank == a.slow_rank and i % 3 == 0:
            time.sleep(0.02)
        opt.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        if i >= a.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
        if a.ready_file and i == a.warmup - 1:
            open('%s.%d' % (a.ready_file, rank), 'w').close()
    return statistics.median(times)


batches = [int(b) for b in a.batches.split(',')] if a.batches else [a.batch]
profiler = contextlib.nullcontext()
if a.torch_profiler:
    from torch.profiler import profile, ProfilerActivity
    profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
with profiler:
    for b in batches:
        median = loop(b)
        if rank == 0:
            print('mlp_ddp: ok ranks=%d steps=%d %smedian_ms=%.3f' % (
                dist.get_world_size(), a.steps, 'batch=%d ' % b if a.batches else '', median), flush=True)
dist.destroy_process_group()
