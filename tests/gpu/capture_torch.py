#!/usr/bin/env python3
"""capture_torch: a PyTorch loop with known kernels per step, for the capture-window tests.

Step i (from 1) is an NVTX range "ProfilerStep#i" (the name torch.profiler gives its steps) holding
i in-place additions on a vector (i element-wise kernels), one 1024x1024 matrix product and a
torch.cuda.synchronize(), so every kernel of step i starts and ends inside its range. Steps are
--pace seconds apart (a sleep between ranges), so an on-demand start lands between steps.
--profiler-api A-B calls torch.cuda.profiler.start() before step A and stop() after step B.

Prints one line: capture_torch: ok steps=N checksum=<sum of the vector> pid=<pid>
"""
import argparse
import os
import sys
import time

import torch


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--pace", type=float, default=0.0, help="seconds between steps (default 0)")
    p.add_argument("--profiler-api", default="", help="A-B: torch.cuda.profiler.start/stop around steps A..B")
    a = p.parse_args()
    first = last = 0
    if a.profiler_api:
        first, last = (int(v) for v in a.profiler_api.split("-"))
    x = torch.zeros(1 << 20, device="cuda")
    m = torch.randn(1024, 1024, device="cuda")
    torch.mm(m, m)			# cuBLAS's handle and workspace before the first step
    torch.cuda.synchronize()
    for i in range(1, a.steps + 1):
        if i == first:
            torch.cuda.profiler.start()
        with torch.cuda.nvtx.range(f"ProfilerStep#{i}"):
            for _ in range(i):
                x.add_(1.0)
            torch.mm(m, m)
            torch.cuda.synchronize()
        if i == last:
            torch.cuda.profiler.stop()
        if a.pace:
            time.sleep(a.pace)
    print(f"capture_torch: ok steps={a.steps} checksum={x.sum().item():.0f} pid={os.getpid()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
