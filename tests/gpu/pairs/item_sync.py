"""A small MLP training loop, each step in NVTX 'step'. Bad: loss.item() every step (the host waits
for the GPU, then issues the next step late). --fixed: the loss accumulates on the GPU and is read
once at the end. Prints the median and mean step time measured on the host."""
import argparse, statistics, time
import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=200)
p.add_argument("--fixed", action="store_true")
a = p.parse_args()
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU()) for _ in range(8)]).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 1024, device=dev)
y = torch.randn(256, 1024, device=dev)
total = torch.zeros((), device=dev)
times = []
t0 = time.perf_counter()
for i in range(a.steps):
    s = time.perf_counter()
    with torch.cuda.nvtx.range("step"):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if a.fixed:
            total += loss.detach()
        else:
            total += loss.item()
        time.sleep(0.0005)  # host work per step (logging, bookkeeping)
    times.append(time.perf_counter() - s)
torch.cuda.synchronize()
mean = (time.perf_counter() - t0) / a.steps
print(f"item_sync: ok variant={'fixed' if a.fixed else 'bad'} steps={a.steps} total={float(total):.3f} "
      f"median_step_us={statistics.median(times[10:]) * 1e6:.1f} mean_step_us={mean * 1e6:.1f}")
