"""The program's own profiler beside gpt-trace (issue 12, item 5): a few steps of a small MLP under
torch.profiler with CPU and CUDA activities; prints how many CUDA kernel events the profiler got
and how many steps ran, as `profiler_cuda_kernels N steps S`. tests/gpu/crash.sh runs it untraced
and under `gpt-trace run` and compares the counts (they must be equal).

With --exit N it runs 23 steps without the profiler, prints `steps 23` and leaves with
os._exit(N), which skips atexit: the trace must still be finished (exit_reason `_exit(N)`), with
as many kernels as the same run ending normally (--exit normal)."""
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")


def step():
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


# Warm-up outside the profiler (cuBLAS handles, allocator), as users do.
for _ in range(3):
    step()
torch.cuda.synchronize()

if len(sys.argv) > 2 and sys.argv[1] == "--exit":
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    print("steps 23", flush=True)
    if sys.argv[2] == "normal":
        sys.exit(0)
    os._exit(int(sys.argv[2]))

with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        step()
    torch.cuda.synchronize()
kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("profiler_cuda_kernels %d steps 10" % len(kernels), flush=True)
