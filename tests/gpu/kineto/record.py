#!/usr/bin/env python3
"""Records PyTorch-profiler (Kineto) traces on the GPU machine, as users make them, for `gpt-trace import`.

usage: record.py OUTDIR [CASE ...]   (cases: resnet_schedule, resnet_gz, mlp_memory; default: all)
  resnet_schedule  torchvision resnet18 (batch 32) training, schedule(wait=1, warmup=1, active=3),
                   export_chrome_trace -> OUTDIR/resnet_schedule.pt.trace.json
  resnet_gz        the same through tensorboard_trace_handler(use_gzip=True) -> OUTDIR/resnet_gz/*.pt.trace.json.gz
  mlp_memory       an MLP with record_function annotations and profile_memory=True, record_shapes,
                   with_stack -> OUTDIR/mlp_memory.pt.trace.json
Each case prints one line: the case, its mean step time untraced-by-gpt-trace, and the files written.
"""
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

out = sys.argv[1]
cases = sys.argv[2:] or ["resnet_schedule", "resnet_gz", "mlp_memory"]
os.makedirs(out, exist_ok=True)
acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


def resnet():
    import torchvision
    model = torchvision.models.resnet18(num_classes=100).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 224, 224, device="cuda")
    y = torch.randint(0, 100, (32,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    return step


def run(step, prof, steps):
    t0 = time.perf_counter()
    with prof as p:
        for _ in range(steps):
            step()
            p.step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e6


for case in cases:
    if case == "resnet_schedule":
        path = os.path.join(out, "resnet_schedule.pt.trace.json")
        prof = profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=3),
                       on_trace_ready=lambda p: p.export_chrome_trace(path))
        us = run(resnet(), prof, 6)
        files = [path]
    elif case == "resnet_gz":
        d = os.path.join(out, "resnet_gz")
        prof = profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=2),
                       on_trace_ready=tensorboard_trace_handler(d, worker_name="rank0", use_gzip=True))
        us = run(resnet(), prof, 5)
        files = [os.path.join(d, f) for f in os.listdir(d)]
    elif case == "mlp_memory":
        path = os.path.join(out, "mlp_memory.pt.trace.json")
        model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        x = torch.randn(256, 1024, device="cuda")

        def step():
            with record_function("forward"):
                loss = model(x).square().mean()
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer"):
                opt.step()
                opt.zero_grad(set_to_none=True)
        step()
        torch.cuda.synchronize()
        prof = profile(activities=acts, schedule=schedule(wait=0, warmup=1, active=4), profile_memory=True,
                       record_shapes=True, with_stack=True, on_trace_ready=lambda p: p.export_chrome_trace(path))
        us = run(step, prof, 5)
        files = [path]
    else:
        sys.exit(f"record.py: unknown case '{case}'")
    print(f"{case}: ok mean_step_us={us:.1f} files={','.join(files)}")
