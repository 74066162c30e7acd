"""A small PyTorch training loop with NVTX ranges, for the GPU smoke test (gpu-smoke.sh):
20 steps of a two-layer MLP; prints the final loss. Run directly or under torchrun."""
import os

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")
for step in range(20):
    torch.cuda.nvtx.range_push("step %d" % step)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("loss %.4f rank %s" % (loss.item(), os.environ.get("RANK", "-")))
