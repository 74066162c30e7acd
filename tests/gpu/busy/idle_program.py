"""A PyTorch program that idles most of its run: a 4096^3 FP32 matmul, a synchronize and 20 ms of
sleep, 40 times (tests/gpu/busy/idle-samples.sh, tests/gpu/recipes/run.sh)."""
import time

import torch

x = torch.randn(4096, 4096, device="cuda")
for i in range(40):
    y = x @ x
    torch.cuda.synchronize()
    time.sleep(0.02)
print("idle-samples: ok")
