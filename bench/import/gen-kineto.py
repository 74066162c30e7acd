#!/usr/bin/env python3
"""Write a large synthetic Kineto (torch.profiler) trace for the import benchmark.

The events have the shape and the field order of what PyTorch 2.x writes (libkineto's
output_json.cpp): ProfilerStep#N user annotations, nested cpu_ops, cudaLaunchKernel runtime calls
with ac2g flows, kernels with their args, copies and memsets, and timestamps relative to
baseTimeNanoseconds with ns fractions. Sizes: --steps steps of --ops ops each (one kernel per op).

usage: gen-kineto.py [--steps N] [--ops N] [--rank R] [--world W] [--gzip] OUT
"""
import argparse
import gzip
import random

KERNELS = [
    'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, '
    'at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)',
    'sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas',
    'void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, float*)',
    'void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, '
    'at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, '
    'unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, '
    'at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)',
]
OPS = ['aten::add', 'aten::addmm', 'aten::batch_norm', 'aten::sum', 'aten::relu_', 'aten::conv2d']


def fmt_ts(ns):
    return '%d.%03d' % (ns // 1000, ns % 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--steps', type=int, default=100)
    ap.add_argument('--ops', type=int, default=1000)
    ap.add_argument('--rank', type=int, default=0)
    ap.add_argument('--world', type=int, default=1)
    ap.add_argument('--gzip', action='store_true')
    ap.add_argument('out')
    a = ap.parse_args()
    rnd = random.Random(1)
    pid, tid = 4242, 4242
    out = gzip.open(a.out, 'wt', compresslevel=1) if a.gzip else open(a.out, 'w')
    w = out.write
    w('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA H100 80GB HBM3", '
      '"totalGlobalMem": 84934541312, "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, '
      '"maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, '
      '"numSms": 132, "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, '
      '"sharedMemPerMultiprocessor": 233472}\n  ],\n')
    w('  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": 1, '
      '"pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": %d, '
      '"ranks": [%s]}], "nccl_version": "2.21.5"},\n' % (a.rank, a.world, a.world,
                                                          ', '.join(str(r) for r in range(a.world))))
    w('  "cupti_version": 26,\n  "cuda_runtime_version": 12080,\n  "cuda_driver_version": 12080,\n'
      '  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1759276800000000000,\n  "traceEvents": [\n')
    t = 3600 * 10**9  # ns after the base
    gpu = t + 50000
    corr = 1
    ext = 1
    first = True

    def ev(s):
        nonlocal first
        w(('' if first else ',') + s)
        first = False

    for step in range(a.steps):
        step_start = t
        t += 1000
        for i in range(a.ops):
            op = OPS[i % len(OPS)]
            op_start = t
            t += rnd.randint(2000, 6000)
            launch = t
            ldur = rnd.randint(2500, 4500)
            k = KERNELS[i % len(KERNELS)]
            kdur = rnd.randint(1500, 40000)
            gpu = max(gpu + rnd.randint(500, 3000), launch + 4000)
            ev('\n  {\n    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d,\n'
               '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d, "cbid": 211, "correlation": %d\n    }\n  }'
               % (pid, tid, fmt_ts(launch), fmt_ts(ldur), ext, corr))
            ev('\n  {\n    "ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7,\n    "ts": %s, "dur": %s,\n'
               '    "args": {\n      "External id": %d,\n      "queued": 0, "device": 0, "context": 1,\n'
               '      "stream": 7, "correlation": %d,\n      "registers per thread": 32, "shared memory": 0,\n'
               '      "blocks per SM": 0.484848, "warps per SM": 1.939394,\n      "grid": [64, 1, 1],\n'
               '      "block": [128, 1, 1],\n      "est. achieved occupancy %%": 3\n    }\n  }'
               % (k, fmt_ts(gpu), fmt_ts(kdur), ext, corr))
            ev('\n  {\n    "ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n    "cat": "ac2g", "name": "ac2g"\n  }'
               % (corr, pid, tid, fmt_ts(launch)))
            ev('\n  {\n    "ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %s,\n    "cat": "ac2g", "name": "ac2g", "bp": "e"\n  }'
               % (corr, fmt_ts(gpu)))
            gpu += kdur
            corr += 1
            if i % 100 == 99:
                cb = rnd.randint(4, 1 << 20)
                ev('\n  {\n    "ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": %d, "tid": %d,\n'
                   '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d, "cbid": 41, "correlation": %d\n    }\n  }'
                   % (pid, tid, fmt_ts(t), fmt_ts(3000), ext, corr))
                gpu = max(gpu, t + 2000)
                ev('\n  {\n    "ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7,\n'
                   '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d, "device": 0, "context": 1,\n'
                   '      "stream": 7, "correlation": %d, "bytes": %d, "memory bandwidth (GB/s)": 20.5\n    }\n  }'
                   % (fmt_ts(gpu), fmt_ts(1000 + cb // 20), ext, corr, cb))
                gpu += 1000 + cb // 20
                corr += 1
                t += 3000
            t += rnd.randint(500, 2000)
            ev('\n  {\n    "ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d,\n    "ts": %s, "dur": %s,\n'
               '    "args": {\n      "External id": %d,"Record function id": 0, "Sequence number": %d, "Fwd thread id": 0, "Ev Idx": %d\n    }\n  }'
               % (op, pid, tid, fmt_ts(op_start), fmt_ts(t - op_start), ext, ext, ext))
            ext += 1
        t = max(t, gpu) + 10000
        ev('\n  {\n    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": %d, "tid": %d,\n'
           '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d, "Record function id": 0, "Ev Idx": %d\n    }\n  }'
           % (step, pid, tid, fmt_ts(step_start), fmt_ts(t - step_start), ext, ext))
        ext += 1
    ev('\n  {\n    "name": "process_name", "ph": "M", "ts": 0.000, "pid": %d, "tid": 0,\n    "args": {\n      "name": "python3"\n    }\n  }' % pid)
    ev('\n  {\n    "name": "thread_name", "ph": "M", "ts": 0.000, "pid": %d, "tid": %d,\n    "args": {\n      "name": "thread %d (python3)"\n    }\n  }' % (pid, tid, tid))
    ev('\n  {\n    "name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": %s\n  }' % fmt_ts(t))
    w('\n  ],\n  "traceName": "%s"\n}\n' % a.out)
    out.close()


if __name__ == '__main__':
    main()
