"""Takes CUPTI's subscriber slot (as another profiler would) before CUDA starts, then uses CUDA
through PyTorch: gpt-trace must say, in one line, who holds CUPTI, and the program must run on."""
import ctypes

import torch  # loads PyTorch's libcupti, if it links one; CUDA is not initialised yet

path = None
with open("/proc/self/maps") as maps:
    for line in maps:
        if "libcupti.so" in line:
            path = line.split()[-1]
            break
cupti = ctypes.CDLL(path or "/usr/local/cuda/lib64/libcupti.so.13")


class Params(ctypes.Structure):
    _fields_ = [("structSize", ctypes.c_size_t), ("subscriberName", ctypes.c_char_p),
                ("oldSubscriberName", ctypes.c_char_p), ("oldSubscriberSize", ctypes.c_size_t)]


Callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p)
callback = Callback(lambda *args: None)
params = Params(ctypes.sizeof(Params), b"test-holder", None, 0)
handle = ctypes.c_void_p()
print("subscribe", cupti.cuptiSubscribe_v2(ctypes.byref(handle), callback, None,
                                           ctypes.byref(params)), path is not None)
print("sum", torch.ones(1000, device="cuda").sum().item())
