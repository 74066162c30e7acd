#!/usr/bin/env python3
"""PyTorch workloads for the overhead benchmark: prints one 'NAME ms_per_step=X' line per workload.

tinyops: 1000 tiny elementwise ops per step (launch-bound, where tracers hurt most);
resnet18: forward+backward+SGD step, batch 32, 224x224 random images (torchvision);
transformer: nn.TransformerEncoder, 4 layers, d=512, batch 16, sequence 256, forward+backward+step.
With --kineto every workload runs under torch.profiler (CPU + CUDA activities), as users do.
With --median each step is timed alone (synchronized before and after) and the median is printed:
steadier than the mean when a process's first steps or the host's jitter vary.
"""
import argparse, contextlib, statistics, time
import torch


def timed(step, steps, warmup, median=False):
    for _ in range(warmup):
        step()
    if median:
        times = []
        for _ in range(steps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1000 / steps


def tinyops():
    x = torch.randn(256, device="cuda")

    def step():
        y = x
        for _ in range(250):
            y = torch.relu(y * 1.0001 + 0.001) - 0.0001
    return step


def model_step(model, inputs, loss_fn):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(inputs)).backward()
        opt.step()
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kineto", action="store_true")
    ap.add_argument("--only", help="run only this workload (tinyops, resnet18, transformer)")
    ap.add_argument("--steps", type=int, default=150, help="timed tinyops steps")
    ap.add_argument("--model-steps", type=int, default=20, help="timed resnet18 and transformer steps")
    ap.add_argument("--median", action="store_true", help="median of steps timed one by one")
    ap.add_argument("--fixed-algorithms", action="store_true",
                    help="cudnn.benchmark off: the same convolution algorithms in every process "
                         "(with it on, resnet18's bare step varied 8.4-11.2 ms between processes)")
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = not a.fixed_algorithms
    work = {"tinyops": (tinyops(), a.steps, 10)}
    if a.only in (None, "resnet18"):
        try:
            import torchvision
            m = torchvision.models.resnet18().cuda()
            work["resnet18"] = (model_step(m, torch.randn(32, 3, 224, 224, device="cuda"),
                                           lambda o: o.sum()), a.model_steps, 5)
        except Exception as e:  # torchvision missing: say so rather than skip silently
            print(f"resnet18 skipped: {e}")
    if a.only in (None, "transformer"):
        layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
        enc = torch.nn.TransformerEncoder(layer, 4).cuda()
        work["transformer"] = (model_step(enc, torch.randn(16, 256, 512, device="cuda"),
                                          lambda o: o.sum()), a.model_steps, 5)
    if a.only:
        work = {k: v for k, v in work.items() if k == a.only}

    ctx = contextlib.nullcontext()
    if a.kineto:
        from torch.profiler import profile, ProfilerActivity
        ctx = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with ctx:
        for name, (step, steps, warmup) in work.items():
            print(f"{name} ms_per_step={timed(step, steps, warmup, a.median):.3f}", flush=True)


if __name__ == "__main__":
    main()
