#!/usr/bin/env python3
"""advice: the busy-time pairs of issue 38, each a bottleneck, its fix, and an "already optimized"
variant, on programs shaped like real ones and unlike the earlier pairs. No NVTX step ranges: the
report must find the step itself. A step ends with loss.item() (or out.sum().item()), as training
loops do, so the host's rhythm has a sync per step.

Programs (PROGRAM VARIANT):
  rmsnorm  eager|compiled   L LLaMA MLP blocks (RMSNorm, SwiGLU, residual), bf16, forward
  lngelu   eager|compiled   L GPT MLP blocks (LayerNorm, tanh-GELU, bias, residual), fp16, forward
  scores   eager|compiled   L attention blocks with explicit scale, mask, softmax, bf16, forward
  conv     nchw|cl|cl_bf16  torchvision resnet50 training (batch 32, SGD): NCHW, channels_last,
                            channels_last + bf16 autocast (already optimized)
  mixed    fp32|bf16        an 8-layer TransformerEncoder training (AdamW): FP32 (PyTorch's default
                            matmul precision) and bf16 autocast (already optimized)
  graphs   eager|graph      a launch-bound step of 200 tiny ops, and the same captured in a CUDA graph
The saving of a fix is the difference of the untraced median_step_us.

Prints one result line:
    advice: ok program=<p> variant=<v> steps=<S> median_step_us=<f> mean_step_us=<f> device=<name>
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("program", choices=["rmsnorm", "lngelu", "scores", "conv", "mixed", "graphs"])
ap.add_argument("variant")
ap.add_argument("--layers", type=int, default=4)
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--warmup", type=int, default=5)
a = ap.parse_args()
if not torch.cuda.is_available():
    print("advice: CUDA is not available", file=sys.stderr)
    sys.exit(1)
torch.manual_seed(0)
dev = "cuda"


class RMSNormSwiGLU(torch.nn.Module):
    def __init__(self, d=2048, f=5632):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(d))
        self.up = torch.nn.Linear(d, 2 * f, bias=False)
        self.down = torch.nn.Linear(f, d, bias=False)

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        h = self.w * h.to(x.dtype)
        g, u = self.up(h).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class LNGelu(torch.nn.Module):
    def __init__(self, d=1536, f=6144):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, f)
        self.proj = torch.nn.Linear(f, d)

    def forward(self, x):
        h = self.fc(self.ln(x))
        h = 0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
        return x + self.proj(h)


class Scores(torch.nn.Module):
    def __init__(self, heads=16, seq=1024, dh=64):
        super().__init__()
        self.heads, self.dh = heads, dh
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, s, d = x.shape
        q = x.view(b, s, self.heads, self.dh).transpose(1, 2)
        att = (q @ q.transpose(-1, -2)) * (self.dh ** -0.5)
        att = (att.float() + self.mask).softmax(-1).to(x.dtype)
        return x + (att @ q).transpose(1, 2).reshape(b, s, d)


def forward_program(block, shape, dtype):
    model = torch.nn.Sequential(*[block() for _ in range(a.layers)]).to(dev, dtype)
    x = torch.randn(*shape, device=dev, dtype=dtype)
    fn = torch.compile(model) if a.variant == "compiled" else model

    @torch.no_grad()
    def step():
        return float(fn(x).float().sum().item())
    return step


def conv_program():
    import torchvision
    fmt = torch.contiguous_format if a.variant == "nchw" else torch.channels_last
    model = torchvision.models.resnet50(num_classes=100).to(dev).to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 224, 224, device=dev).to(memory_format=fmt)
    y = torch.randint(0, 100, (32,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=a.variant == "cl_bf16"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def mixed_program():
    layer = torch.nn.TransformerEncoderLayer(1024, 16, 4096, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 8, enable_nested_tensor=False).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 512, 1024, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=a.variant == "bf16"):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        return loss.item()
    return step


def graphs_program():
    x = torch.randn(1024, device=dev)

    def ops():
        y = x
        for _ in range(200):
            y = y * 1.0001 + 0.0001
        return y
    if a.variant == "eager":
        return lambda: float(ops().sum().item())
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        ops()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = ops()

    def step():
        g.replay()
        return float(out.sum().item())
    return step


variants = {"rmsnorm": ["eager", "compiled"], "lngelu": ["eager", "compiled"],
            "scores": ["eager", "compiled"], "conv": ["nchw", "cl", "cl_bf16"],
            "mixed": ["fp32", "bf16"], "graphs": ["eager", "graph"]}
if a.variant not in variants[a.program]:
    ap.error("variant of %s: one of %s" % (a.program, ", ".join(variants[a.program])))
if a.program == "rmsnorm":
    step = forward_program(RMSNormSwiGLU, (4, 2048, 2048), torch.bfloat16)
elif a.program == "lngelu":
    step = forward_program(LNGelu, (8, 1024, 1536), torch.float16)
elif a.program == "scores":
    step = forward_program(Scores, (8, 1024, 1024), torch.bfloat16)
elif a.program == "conv":
    step = conv_program()
elif a.program == "mixed":
    step = mixed_program()
else:
    step = graphs_program()

for _ in range(a.warmup):
    step()
torch.cuda.synchronize()
times = []
t0 = time.perf_counter()
for _ in range(a.steps):
    s = time.perf_counter()
    step()
    times.append((time.perf_counter() - s) * 1e6)
total = time.perf_counter() - t0
print(f"advice: ok program={a.program} variant={a.variant} steps={a.steps} "
      f"median_step_us={statistics.median(times):.1f} mean_step_us={total / a.steps * 1e6:.1f} "
      f"device={torch.cuda.get_device_name()}")
