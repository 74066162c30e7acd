"""Copies between two GPUs (NVLink where they have it), or within one GPU where only one is visible:
issue 23's NVLink bytes (tests/gpu/busy/nvlink.sh, traffic-fixtures.sh).
usage: peer.py [--mib 256] [--copies 16]  (each copy goes device 0 -> 1, then 1 -> 0)"""
import argparse
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--mib", type=int, default=256)
ap.add_argument("--copies", type=int, default=16)
a = ap.parse_args()
n = a.mib << 20
peer = torch.cuda.device_count() > 1
src = torch.empty(n, dtype=torch.uint8, device="cuda:0")
dst = torch.empty(n, dtype=torch.uint8, device="cuda:1" if peer else "cuda:0")
for _ in range(a.copies):
    dst.copy_(src)
    src.copy_(dst)
torch.cuda.synchronize()
print("copied", a.copies * n, "bytes each way", "between GPUs" if peer else "within one GPU")
