"""Real PyTorch programs for reading gpt-trace reports as their authors would (no NVTX unless said):
  resnet   torchvision resnet18 training on random images (SGD, batch 64, 40 steps), no NVTX
  compile  torch.compile(mode="default") of a 4-layer MLP, 60 steps: Inductor/Triton JIT first
  generate Hugging Face GPT-2 (random weights from a config) generating 48 tokens, greedy
  gpt2train Hugging Face GPT-2 (6 layers, random weights) training, AdamW, bf16 autocast, batch 8 x 256
           (40 steps, or $STEPS: bench/analyzer/real-trace.sh makes a big trace with it)
  jax      a JAX MLP training step under jax.jit, 200 steps (XLA's own CUDA libraries)
  small    200,000 small element-wise kernels, 4 per step (a launch-bound eager loop; a big trace)
Usage: python3 programs.py NAME. Prints one line with the steps and the mean step time."""
import os, sys, time
import torch

def resnet():
    import torchvision
    model = torchvision.models.resnet18(num_classes=100).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 3, 224, 224, device="cuda")
    y = torch.randint(0, 100, (64,), device="cuda")
    steps = 40
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    return steps, time.perf_counter() - t0

def compiled():
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.GELU())
                                  for _ in range(4)]).cuda()
    model = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(1024, 2048, device="cuda")
    steps = 60
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
        opt.step()
    torch.cuda.synchronize()
    return steps, time.perf_counter() - t0

def generate():
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config(n_layer=6, n_embd=512, n_head=8)).cuda().eval()
    ids = torch.randint(0, 50257, (4, 32), device="cuda")
    t0 = time.perf_counter()
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=48, do_sample=False, pad_token_id=0)
    torch.cuda.synchronize()
    return out.shape[1] - 32, time.perf_counter() - t0

def gpt2train():
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config(n_layer=6, n_embd=512, n_head=8)).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, 50257, (8, 256), device="cuda")
    steps = int(os.environ.get("STEPS", "40"))
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    return steps, time.perf_counter() - t0

def jax_mlp():
    import jax, jax.numpy as jnp
    def loss(w, x):
        h = x
        for wi in w:
            h = jax.nn.gelu(h @ wi)
        return jnp.mean(h * h)
    @jax.jit
    def step(w, x):
        g = jax.grad(loss)(w, x)
        return [wi - 1e-3 * gi for wi, gi in zip(w, g)]
    key = jax.random.PRNGKey(0)
    w = [jax.random.normal(key, (1024, 1024)) * 0.02 for _ in range(4)]
    x = jax.random.normal(key, (512, 1024))
    steps = 200
    t0 = time.perf_counter()
    for _ in range(steps):
        w = step(w, x)
    jax.block_until_ready(w)
    return steps, time.perf_counter() - t0

def small():
    x = torch.randn(256, device="cuda")
    steps = 50000
    t0 = time.perf_counter()
    for _ in range(steps):
        x = (x * 0.999 + 0.001).relu_().sin_()
    torch.cuda.synchronize()
    return steps, time.perf_counter() - t0

name = sys.argv[1]
steps, secs = {"resnet": resnet, "compile": compiled, "generate": generate, "gpt2train": gpt2train,
               "jax": jax_mlp, "small": small}[name]()
print(f"{name}: ok steps={steps} mean_step_us={secs / steps * 1e6:.1f}")
