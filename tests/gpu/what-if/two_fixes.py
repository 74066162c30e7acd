"""Two independent bottlenecks in one training-like step, for the what-if replay (issue 41).

Each step launches FP32 matrix products, reads a value back (.item(): the host waits for the GPU),
then does host work (a busy loop standing for data preparation). With both bottlenecks the step is
GPU time + host time; without the read-back the host prepares the next step while the GPU runs
(max of the two); with TF32 the GPU time shrinks. The savings of the two fixes do not add up:
    bad     gpu + host          (FP32, read-back every step)
    nosync  max(gpu, host)      (FP32, no read-back)
    tf32    gpu/k + host        (TF32, read-back every step)
    both    max(gpu/k, host)
usage: python3 two_fixes.py VARIANT [STEPS]  ->  one line "two_fixes: ok variant=... step_us=..."
"""
import sys
import time

import torch

variant = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
warmup = 5
host_us = 6000
assert variant in ("bad", "nosync", "tf32", "both"), variant
torch.backends.cuda.matmul.allow_tf32 = variant in ("tf32", "both")
torch.backends.cudnn.allow_tf32 = variant in ("tf32", "both")
readback = variant in ("bad", "tf32")

x = torch.randn(4096, 4096, device="cuda")
w = torch.randn(4096, 4096, device="cuda") * (1.0 / 64)


def host_work(us):
    t = time.perf_counter()
    while (time.perf_counter() - t) * 1e6 < us:
        pass


def step():
    torch.cuda.nvtx.range_push("step")
    y = x
    for _ in range(4):
        y = torch.mm(y, w)
    if readback:
        loss = float(y[0, 0].item())
    else:
        loss = 0.0
    host_work(host_us)
    torch.cuda.nvtx.range_pop()
    return loss


for _ in range(warmup):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(steps):
    step()
torch.cuda.synchronize()
total = time.perf_counter() - t0
print("two_fixes: ok variant=%s steps=%d host_us=%d step_us=%.1f device=%s" % (
    variant, steps, host_us, total / steps * 1e6, torch.cuda.get_device_name().replace(" ", "_")))
