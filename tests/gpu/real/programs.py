"""Real PyTorch programs for reading gpt-trace reports as their authors would (no NVTX unless said):
  resnet   torchvision resnet18 training on random images (SGD, batch 64, 40 steps), no NVTX
  compile  torch.compile(mode="default") of a 4-layer MLP, 60 steps: Inductor/Triton JIT first
  generate Hugging Face GPT-2 (random weights from a config) generating 48 tokens, greedy
Usage: python3 programs.py NAME. Prints one line with the steps and the mean step time."""
import sys, time
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

name = sys.argv[1]
steps, secs = {"resnet": resnet, "compile": compiled, "generate": generate}[name]()
print(f"{name}: ok steps={steps} mean_step_us={secs / steps * 1e6:.1f}")
