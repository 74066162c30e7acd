"""layers: a step of identical layers, the case where the kernel sequence repeats at a layer's period
(issue 38 item 6). Forward only, no per-step kernel: the step is told from a layer only by what the
host does between steps.

    python3 layers.py sync    # torch.cuda.synchronize() and 1 ms of host work between steps
    python3 layers.py none    # nothing between steps: the kernel sequence alone cannot tell

Prints one line: steps, layers, untraced-or-not ms per step.
"""
import sys
import time

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "sync"
steps, nlayers, d = 60, 4, 4096
dev = "cuda"


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.lin = torch.nn.Linear(d, d)

    def forward(self, x):
        return torch.nn.functional.gelu(self.lin(self.norm(x)))


model = torch.nn.Sequential(*[Block() for _ in range(nlayers)]).to(dev, torch.bfloat16)
x = torch.randn(2048, d, device=dev, dtype=torch.bfloat16)
with torch.no_grad():
    for _ in range(5):
        model(x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        y = model(x)
        if mode == "sync":
            torch.cuda.synchronize()
            t = time.perf_counter()
            while time.perf_counter() - t < 0.001:
                pass
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / steps
print(f"layers: ok mode={mode} steps={steps} layers={nlayers} ms_per_step={ms:.3f}")
