#!/usr/bin/env python3
"""train_small: a small real PyTorch training loop for gpt-trace's GPU tests.

A three-layer MLP learns a fixed random linear labelling of random inputs, for a few steps. Each
step is an NVTX push/pop range "train_step" (torch.cuda.nvtx) holding three nested ranges
"forward", "backward" and "optimizer"; each step copies its batch host->device from pageable CPU
tensors (HtoD copies) and reads the loss back with .item() (a DtoH copy and a sync).

Prints one result line, like the CUDA samples:
    train_small: ok pid=<pid> steps=<S> first_loss=<f> last_loss=<f> torch=<version> device=<name>
and exits 0; exits 1 when CUDA is unavailable.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    p.add_argument("--batch", type=int, default=256, help="batch size (default 256)")
    p.add_argument("--features", type=int, default=128, help="input features (default 128)")
    p.add_argument("--hidden", type=int, default=512, help="hidden width (default 512)")
    p.add_argument("--classes", type=int, default=10, help="classes (default 10)")
    args = p.parse_args()

    if not torch.cuda.is_available():
        print("train_small: no usable CUDA device (torch.cuda.is_available() is False)", file=sys.stderr)
        return 1

    torch.manual_seed(0)
    dev = torch.device("cuda")
    # The labels come from a fixed random linear map, so there is something to learn.
    teacher = torch.randn(args.features, args.classes)
    inputs = torch.randn(args.steps, args.batch, args.features)
    labels = (inputs @ teacher).argmax(dim=-1)

    model = torch.nn.Sequential(
        torch.nn.Linear(args.features, args.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.classes),
    ).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    losses = []
    for step in range(args.steps):
        torch.cuda.nvtx.range_push("train_step")
        x = inputs[step].to(dev)
        y = labels[step].to(dev)
        torch.cuda.nvtx.range_push("forward")
        loss = F.cross_entropy(model(x), y)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("optimizer")
        opt.step()
        torch.cuda.nvtx.range_pop()
        losses.append(loss.item())
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()

    print(f"train_small: ok pid={os.getpid()} steps={args.steps} first_loss={losses[0]:.4f} "
          f"last_loss={losses[-1]:.4f} torch={torch.__version__} "
          f"device={torch.cuda.get_device_name(0).replace(' ', '_')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
