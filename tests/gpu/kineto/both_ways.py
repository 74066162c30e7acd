#!/usr/bin/env python3
"""The same PyTorch program traced both ways on the GPU machine: under `gpt-trace run` (NVTX "step"
ranges) and under torch.profiler (ProfilerStep#N, Kineto JSON read by `gpt-trace report` directly),
then the two reports side by side: steady step time, idle share of the steady state, and the top
kernels by GPU time (mean duration per launch and share of all kernel time). They should agree within run-to-run noise (the profiler's own overhead aside).

usage: both_ways.py GPT_TRACE OUTDIR [--steps N] [--model resnet18|mlp]
       both_ways.py --child MODE OUT STEPS MODEL      (internal: one traced run)
Prints the table and writes OUTDIR/both-ways.md; exit 0 when both runs and reports worked.
"""
import json
import os
import subprocess
import sys


def child(mode, out, steps, model_name):
    import torch
    if model_name == 'resnet18':
        import torchvision
        model = torchvision.models.resnet18(num_classes=100).cuda()
        x = torch.randn(32, 3, 224, 224, device='cuda')
        y = torch.randint(0, 100, (32,), device='cuda')
        loss_fn = torch.nn.functional.cross_entropy
    else:
        model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
        x = torch.randn(256, 1024, device='cuda')
        y = torch.randn(256, 1024, device='cuda')
        loss_fn = torch.nn.functional.mse_loss
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    if mode == 'run':
        for _ in range(steps):
            torch.cuda.nvtx.range_push('step')
            step()
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        return
    from torch.profiler import ProfilerActivity, profile, schedule
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=steps),
                 on_trace_ready=lambda p: p.export_chrome_trace(out)) as p:
        for _ in range(steps + 3):
            step()
            p.step()
    torch.cuda.synchronize()


def summary(gpt, trace):
    rep = json.loads(subprocess.run([gpt, 'report', '-q', '-f', 'json', trace], check=True, capture_output=True,
                                    text=True).stdout)
    tp = rep['phases'][0]
    steady = next(p for p in tp['phases'] if p['name'] == 'steady')
    it = tp['iterations']
    stats = json.loads(subprocess.run([gpt, 'stats', '-q', '-f', 'json', trace], check=True, capture_output=True,
                                      text=True).stdout)
    top = [(k['name'][:60], k['avg_ns'], 100 * k['share']) for k in stats['kernels'][:5]]
    return {
        'iterations': f"{it['count']} ({it['name']}, {it['steady_count']} steady)",
        'median_ms': it['median_ns'] / 1e6,
        'idle_share': 100 * steady['split']['idle_ns'] / max(1, steady['duration_ns']),
        'top': top,
    }


def main():
    if sys.argv[1] == '--child':
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    gpt, outdir = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[sys.argv.index('--steps') + 1]) if '--steps' in sys.argv else 10
    model = sys.argv[sys.argv.index('--model') + 1] if '--model' in sys.argv else 'resnet18'
    os.makedirs(outdir, exist_ok=True)
    ours = os.path.join(outdir, 'run.sqlite')
    kineto = os.path.join(outdir, 'kineto.pt.trace.json')
    me = os.path.abspath(__file__)
    subprocess.run([gpt, 'run', '-q', '-f', '-o', ours, '--', sys.executable, me, '--child', 'run', '-', str(steps),
                    model], check=True)
    subprocess.run([sys.executable, me, '--child', 'kineto', kineto, str(steps), model], check=True)
    a, b = summary(gpt, ours), summary(gpt, kineto)
    lines = [f'# {model}, {steps} steps: gpt-trace run against torch.profiler (read by gpt-trace)', '',
             '| | gpt-trace run | torch.profiler JSON |', '|---|---|---|',
             f"| iterations | {a['iterations']} | {b['iterations']} |",
             f"| median step (ms) | {a['median_ms']:.3f} | {b['median_ms']:.3f} |",
             f"| steady idle share | {a['idle_share']:.1f}% | {b['idle_share']:.1f}% |"]
    for i in range(5):
        ka = a['top'][i] if i < len(a['top']) else ('-', 0, 0)
        kb = b['top'][i] if i < len(b['top']) else ('-', 0, 0)
        lines.append(f'| top kernel {i + 1}: µs per launch, share of kernel time | `{ka[0]}` {ka[1] / 1e3:.1f}, '
                     f'{ka[2]:.1f}% | `{kb[0]}` {kb[1] / 1e3:.1f}, {kb[2]:.1f}% |')
    text = '\n'.join(lines)
    print(text)
    with open(os.path.join(outdir, 'both-ways.md'), 'w') as f:
        f.write(text + '\n')


if __name__ == '__main__':
    main()
