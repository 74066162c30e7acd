#!/usr/bin/env python3
"""dataloader_pinned: a conv net fed by a DataLoader with pageable batches, and its fix with pinned ones.

A small conv net (six 3x3 convolutions, base width C, ReLU, global pooling, a linear classifier;
Adam) learns to tell 10 classes of random 3x128x128 float images apart (each class shifts the colour
by a fixed random amount). The images live in memory in a TensorDataset and come through a
torch.utils.data.DataLoader (batch B, shuffled, four worker processes that collate, so that loading
is not what the step waits for). After a few warm-up steps (in one NVTX range "warmup"), S steps,
each in an NVTX push/pop range "step" (torch.cuda.nvtx.range), fetch a batch, copy it to the GPU
and run forward, backward and the optimizer. The bad variant copies the pageable batch with .cuda():
a blocking copy that first waits for the previous step's GPU work and then stages the 25 MB (B=128)
through the driver at pageable speed (about 10 GB/s, 2.5 ms), while the GPU computes nothing. With
--fixed the DataLoader pins each batch (pin_memory=True, in its pinning thread) and the copy is
.cuda(non_blocking=True): it is queued behind the previous step at pinned speed (about 50 GB/s,
0.5 ms) and the host runs ahead. The defaults aim at a GPU-bound step of about 10 ms of
convolutions on an H200, so the saving, about 2 ms per step, is the copy's.

The loss of every step stays on the GPU (no .item() in the loop, in either variant) and is checked
once at the end. Prints one result line:
    dataloader_pinned: ok variant=<bad|fixed> steps=<S> median_step_us=<f> mean_step_us=<f>
        warmup=<W> batch=<B> ... first_loss=<f> last_loss=<f> pid=<pid> torch=<version> device=<name>
median_step_us is the median of each step's host time; mean_step_us is the whole loop, from before
the first step to after a torch.cuda.synchronize() after the last, over S: the honest one. Exits 0;
exits 1 when CUDA is unavailable or the loss did not go down (a wrong answer); 2 on a bad option.
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CLASSES = 10


def conv_net(width):
    """Six 3x3 convolutions (three of stride 2: 128x128 to 16x16), ReLU, global average pool, linear."""
    w = width
    plan = [(3, w, 1), (w, 2 * w, 2), (2 * w, 2 * w, 1), (2 * w, 4 * w, 2), (4 * w, 4 * w, 1), (4 * w, 8 * w, 2)]
    layers = []
    for cin, cout, stride in plan:
        layers += [torch.nn.Conv2d(cin, cout, 3, stride=stride, padding=1), torch.nn.ReLU()]
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8 * w, CLASSES)]
    return torch.nn.Sequential(*layers)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200, help="timed steps, each an NVTX range 'step' (default 200)")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps before them (default 10)")
    p.add_argument("--batch", type=int, default=128, help="images per batch (default 128)")
    p.add_argument("--size", type=int, default=128, help="image height and width (default 128)")
    p.add_argument("--batches", type=int, default=16, help="batches in the data set, one epoch (default 16)")
    p.add_argument("--width", type=int, default=96, help="channels of the first convolution (default 96)")
    p.add_argument("--fixed", action="store_true", help="pin the batches and copy them with non_blocking=True")
    args = p.parse_args()
    if args.steps < 1 or args.warmup < 1 or args.batch < 1 or args.batches < 1:
        p.error("--steps, --warmup, --batch and --batches must be at least 1")

    if not torch.cuda.is_available():
        print("dataloader_pinned: no usable CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 1

    torch.manual_seed(0)
    dev = torch.device("cuda")
    # Random images, shifted per class by a fixed random colour: something a conv net learns quickly.
    count = args.batch * args.batches
    labels = torch.randint(0, CLASSES, (count,))
    colours = torch.randn(CLASSES, 3)
    images = torch.randn(count, 3, args.size, args.size) + colours[labels][:, :, None, None]
    loader = DataLoader(TensorDataset(images, labels), batch_size=args.batch, shuffle=True, drop_last=True,
                        num_workers=4, persistent_workers=True, pin_memory=args.fixed,
                        generator=torch.Generator().manual_seed(0))

    def batches():
        while True:
            yield from loader

    model = conv_net(args.width).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    feed = batches()

    def train_step():
        x, y = next(feed)
        if args.fixed:
            x = x.cuda(non_blocking=True)
            y = y.cuda(non_blocking=True)
        else:
            x = x.cuda()
            y = y.cuda()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    # Warm-up: cuDNN's choices, the allocators' blocks and Adam's state; its first loss is the baseline.
    with torch.cuda.nvtx.range("warmup"):
        first_loss = None
        for _ in range(args.warmup):
            loss = train_step()
            if first_loss is None:
                first_loss = loss.item()
        torch.cuda.synchronize()

    times = []
    losses = torch.zeros(args.steps, device=dev)
    t0 = time.perf_counter()
    for i in range(args.steps):
        s0 = time.perf_counter()
        with torch.cuda.nvtx.range("step"):
            losses[i] = train_step()
        times.append(time.perf_counter() - s0)
    torch.cuda.synchronize()
    mean = (time.perf_counter() - t0) / args.steps
    tail = losses[-min(10, args.steps):]
    last_loss = tail.mean().item()
    total = losses.sum().item()

    if not math.isfinite(total) or not last_loss < first_loss:
        print(f"dataloader_pinned: wrong result: the loss went from {first_loss:.6f} to {last_loss:.6f} "
              f"(mean of the last steps); it should go down", file=sys.stderr)
        return 1
    print(f"dataloader_pinned: ok variant={'fixed' if args.fixed else 'bad'} steps={args.steps} "
          f"median_step_us={statistics.median(times) * 1e6:.1f} mean_step_us={mean * 1e6:.1f} "
          f"warmup={args.warmup} batch={args.batch} size={args.size} width={args.width} "
          f"batch_bytes={args.batch * 3 * args.size * args.size * 4} pin_memory={int(args.fixed)} "
          f"first_loss={first_loss:.6f} last_loss={last_loss:.6f} pid={os.getpid()} torch={torch.__version__} "
          f"device={torch.cuda.get_device_name(0).replace(' ', '_')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
