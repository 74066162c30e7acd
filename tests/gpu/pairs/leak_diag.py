#!/usr/bin/env python3
"""leak_diag: why leak.py --fixed still grows (about 8 MiB a step on the H100, 2026-11-27).

Runs leak.py's step (same model and sizes) with each way of keeping the monitoring loss, untraced,
and prints torch.cuda.memory_allocated() after the warm-up and after every 10 steps, then, for the
variant named by --snapshot, the live blocks allocated during the timed steps (sizes, count and the
innermost Python frames that allocated them, from torch.cuda.memory._snapshot()).

Variants:
    graph    history.append(watch)             (leak.py's bad variant)
    detach   history.append(watch.detach())    (leak.py --fixed until 2026-11-27)
    clone    history.append(watch.detach().clone())   (leak.py --fixed since)
    nograd   the monitoring loss under torch.no_grad(), kept as is
    item     history.append(watch.item())      (a host float; syncs every step)
    none     the monitoring loss is not kept at all
"""
import argparse
import collections
import gc
import math
import sys

import torch
import torch.nn.functional as F


def run(variant, steps, warmup, batch, width, layers, snapshot):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    teacher = torch.randn(width, width, device=dev) / math.sqrt(width)
    x = torch.randn(batch, width, device=dev)
    y = torch.tanh(x @ teacher)
    xv = torch.randn(batch, width, device=dev)
    yv = torch.tanh(xv @ teacher)
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.GELU()]
    model = torch.nn.Sequential(*mods[:-1]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    history = []

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if variant == "nograd":
            with torch.no_grad():
                history.append(F.mse_loss(model(xv), yv))
            return
        watch = F.mse_loss(model(xv), yv)
        if variant == "graph":
            history.append(watch)
        elif variant == "detach":
            history.append(watch.detach())
        elif variant == "clone":
            history.append(watch.detach().clone())
        elif variant == "item":
            history.append(watch.item())

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    marks = [torch.cuda.memory_allocated()]
    if snapshot:
        torch.cuda.memory._record_memory_history(max_entries=200000)
    for i in range(steps):
        step()
        if (i + 1) % 10 == 0:
            torch.cuda.synchronize()
            marks.append(torch.cuda.memory_allocated())
    gc.collect()
    torch.cuda.synchronize()
    after_gc = torch.cuda.memory_allocated()
    per_step = (marks[-1] - marks[0]) / steps / 2**20
    print(f"leak_diag: variant={variant} MiB_after_warmup={marks[0] / 2**20:.1f} "
          f"per_10_steps_MiB={[round((b - a) / 2**20, 1) for a, b in zip(marks, marks[1:])]} "
          f"growth_MiB_per_step={per_step:.2f} after_gc_MiB={after_gc / 2**20:.1f} "
          f"torch={torch.__version__}", flush=True)
    if snapshot:
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        live = collections.Counter()
        for seg in snap["segments"]:
            for blk in seg["blocks"]:
                if blk["state"] != "active_allocated" or not blk.get("frames"):
                    continue
                frames = [f for f in blk["frames"] if f["filename"].endswith(".py")][:4]
                where = " <- ".join(f"{f['filename'].split('/')[-1]}:{f['line']} {f['name']}" for f in frames)
                live[(blk["size"], where)] += 1
        for (size, where), n in live.most_common(12):
            print(f"leak_diag: live {n} x {size} B allocated at {where}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variants", default="graph,detach,clone,nograd,item,none")
    p.add_argument("--snapshot", default="detach", help="variant whose live blocks are listed")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--layers", type=int, default=4)
    a = p.parse_args()
    for v in a.variants.split(","):
        run(v, a.steps, a.warmup, a.batch, a.width, a.layers, v == a.snapshot)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
