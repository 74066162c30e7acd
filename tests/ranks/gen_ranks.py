#!/usr/bin/env python3
"""
Synthetic rank traces of one data-parallel job, in gpt-trace's schema (the DDL is copied from a real
trace, tests/fixtures/gpu/train_small.sqlite), for testing the cross-rank report without GPUs.

Every rank runs STEPS iterations (NVTX "ProfilerStep#N"): a forward pass of compute kernels on
stream 7, a backward pass in BUCKETS buckets, each followed by an NCCL all-reduce on the NCCL stream
(13) with NCCL's NVTX range "ncclAllReduce", an all-gather and a reduce-scatter at the end of the
step, then the optimizer. Communication is overlapped with the next bucket's backward (default) or
exposed (--exposed: every collective after the whole backward).

The ranks are simulated together, as NCCL behaves: a collective starts on a rank when its inputs are
ready there (and the previous collective on the stream is done), and every rank leaves it together,
a transfer time after the last rank arrived; so the last rank's collective kernel is the shortest,
and the others wait inside theirs.

Knobs:
  --slow RANK:MS:EVERY[:host|kernel|copy]  rank RANK is late by MS ms on every EVERY-th step before
        the backward: a host gap (the GPU idles), a longer compute kernel, or a device-to-host copy
  --shift RANK:MS   rank RANK runs on another host ("nodeB") whose wall clock is MS ms off, and whose
        monotonic clock has another origin: only the anchor and the collectives can align it
  --world N  --ranks LIST   the job's world size, and which ranks to write (default all): a missing rank
  --job ID   the job id (GPT_META job_id)
  --truncate RANK:STEPS  rank RANK's trace stops after STEPS steps, without trace_complete
  --no-steps RANK:N  rank RANK has no "ProfilerStep" range around its first N steps (its phases find
        fewer iterations: the merge must match them by time, not by index)
  --generic  NCCL kernels named "ncclDevKernel_Generic_1(...)" (NCCL 2.19+ runs LL128 and SIMPLE
        protocols in it): only NCCL's NVTX range around the launch tells the collective
  --no-nccl-nvtx  no "ncclAllReduce"... ranges
  --no-rank  write no rank rows (as an nsys export or an old trace: one rank per process)
Output: DIR/rank-R.sqlite for each rank.
usage: gen_ranks.py [options] DIR
"""
import argparse
import os
import random
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "gpu", "train_small.sqlite")

COMPUTE = ["void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, T1, T2)",
           "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_kernel",
           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps>>(T3)",
           "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(T1::Params)",
           "void at::native::(anonymous namespace)::layer_norm_kernel<float>(int, float, const T1 *, T1 *)"]
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
ALLGATHER = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
REDUCESCATTER = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
OPTIM = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::AdamFunctor>(T1)"

US = 1000
MS = 1000000


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--ranks", default=None)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--buckets", type=int, default=4)
    p.add_argument("--fwd", type=int, default=12, help="forward kernels per step")
    p.add_argument("--bwd", type=int, default=6, help="backward kernels per bucket")
    p.add_argument("--kernel-us", type=int, default=200, help="a compute kernel's nominal duration")
    p.add_argument("--transfer-us", type=int, default=400, help="an all-reduce's transfer time")
    p.add_argument("--jitter-us", type=int, default=20)
    p.add_argument("--exposed", action="store_true")
    p.add_argument("--slow", action="append", default=[])
    p.add_argument("--shift", action="append", default=[])
    p.add_argument("--truncate", action="append", default=[])
    p.add_argument("--no-steps", action="append", default=[])
    p.add_argument("--job", default="job-1234")
    p.add_argument("--no-rank", action="store_true")
    p.add_argument("--generic", action="store_true")
    p.add_argument("--no-nccl-nvtx", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start-ms", type=int, default=0, help="job start on the wall clock (ms after the base)")
    return p.parse_args()


class Job:
    """The shared timeline: every rank's kernel times, on the job's true clock (ns)."""

    def __init__(self, a):
        self.a = a
        self.slow = {}
        for s in a.slow:
            f = s.split(":")
            self.slow[int(f[0])] = (float(f[1]) * MS, int(f[2]), f[3] if len(f) > 3 else "host")

    def late(self, rank, step):
        s = self.slow.get(rank)
        if s and step % s[1] == s[1] - 1:
            return int(s[0]), s[2]
        return 0, None

    def jitter(self, rank, step, bucket):
        return random.Random(self.a.seed * 1000003 + rank * 7919 + step * 131 + bucket).randrange(
            self.a.jitter_us * US + 1)

    def compute_ready(self, rank, step, t0):
        """When each backward bucket's compute ends on rank (the all-reduce's input is ready)."""
        a = self.a
        late, _ = self.late(rank, step)
        t = t0 + a.fwd * a.kernel_us * US + late
        ready = []
        for b in range(a.buckets):
            t += a.bwd * a.kernel_us * US + self.jitter(rank, step, b)
            ready.append(t)
        return ready

    def schedule(self):
        """Per step: its start, and the common end of each collective (max over ranks of arrival)."""
        a = self.a
        steps = []
        t0 = a.world * 100 * US + 2 * MS   # after every process started (below)
        ncoll = a.buckets + 2
        for step in range(a.steps):
            arrive = [0] * ncoll
            for r in range(a.world):
                ready = self.compute_ready(r, step, t0)
                if a.exposed:
                    ready = [ready[-1]] * a.buckets
                for b in range(a.buckets):
                    arrive[b] = max(arrive[b], ready[b])
                arrive[a.buckets] = max(arrive[a.buckets], ready[-1])
                arrive[a.buckets + 1] = max(arrive[a.buckets + 1], ready[-1])
            ends = []
            prev = 0
            for c in range(ncoll):
                start = max(arrive[c], prev)
                prev = start + a.transfer_us * US
                ends.append(prev)
            opt_end = ends[-1] + 4 * 50 * US
            steps.append((t0, ends, opt_end))
            t0 = opt_end + 100 * US
        return steps


def write_rank(job, steps, rank, path, template_sql, enums):
    a = job.a
    shift = {int(s.split(":")[0]): float(s.split(":")[1]) for s in a.shift}
    trunc = {int(s.split(":")[0]): int(s.split(":")[1]) for s in a.truncate}
    nosteps = {int(s.split(":")[0]): int(s.split(":")[1]) for s in a.no_steps}
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    for sql in template_sql:
        db.execute(sql)
    for table, rows in enums.items():
        if rows:
            db.executemany("INSERT INTO %s VALUES (%s)" % (table, ",".join("?" * len(rows[0]))), rows)
    strings = {}

    def sid(s):
        if s not in strings:
            strings[s] = len(strings) + 1
        return strings[s]

    pid = 4000 + rank
    gpid = pid << 24
    gtid = gpid + pid
    host = "nodeB" if rank in shift else "nodeA"
    # each process starts a little later; a host's monotonic clock has its own origin
    true_start = rank * 100 * US
    mono_base = (7 if host == "nodeB" else 1) * 10**12
    origin = mono_base + true_start
    wall = 1795554755000000000 + a.start_ms * MS + true_start + int(shift.get(rank, 0) * MS)

    kernels, runtime, nvtx = [], [], []
    corr = [0]

    def launch(start, end, name, stream):
        corr[0] += 1
        c = corr[0]
        hs = start - 12 * US
        runtime.append((hs - true_start, hs + 3 * US - true_start, 0, gtid, c, sid("cudaLaunchKernel_v7000"), 0))
        n = sid(name)
        kernels.append((start - true_start, end - true_start, 0, 1, stream, c, gpid, n, n, n))

    GENERIC = "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"
    allreduce, allgather, reducescatter = (GENERIC,) * 3 if a.generic else (ALLREDUCE, ALLGATHER, REDUCESCATTER)

    def nccl_range(start, name):
        if not a.no_nccl_nvtx:
            nvtx.append((start - 15 * US - true_start, start - 5 * US - true_start, 59, name, gtid, 1))

    nsteps = min(a.steps, trunc.get(rank, a.steps))
    for step in range(nsteps):
        t0, ends, opt_end = steps[step]
        late, kind = job.late(rank, step)
        if step >= nosteps.get(rank, 0):
            nvtx.append((t0 - 20 * US - true_start, opt_end - true_start, 59, "ProfilerStep#%d" % step, gtid, None))
        t = t0
        for i in range(a.fwd):
            launch(t, t + a.kernel_us * US, COMPUTE[i % len(COMPUTE)], 7)
            t += a.kernel_us * US
        if kind == "kernel":
            launch(t, t + late, COMPUTE[1], 7)
            t += late
        elif kind == "copy":
            corr[0] += 1
            copies.append((t - true_start, t + late - true_start, corr[0], gpid))
            t += late
        elif kind == "host":
            t += late
        prev_end = 0
        for b in range(a.buckets):
            d = (a.bwd * a.kernel_us * US + job.jitter(rank, step, b)) // a.bwd
            for i in range(a.bwd):
                launch(t, t + d, COMPUTE[(i + b) % len(COMPUTE)], 7)
                t += d
            if not a.exposed:
                start = max(t, prev_end)
                nccl_range(start, "ncclAllReduce")
                launch(start, ends[b], allreduce, 13)
                prev_end = ends[b]
        if a.exposed:
            for b in range(a.buckets):
                start = max(t, prev_end)
                nccl_range(start, "ncclAllReduce")
                launch(start, ends[b], allreduce, 13)
                prev_end = ends[b]
        for c, name, rng in ((a.buckets, allgather, "ncclAllGather"), (a.buckets + 1, reducescatter, "ncclReduceScatter")):
            start = max(t, prev_end)
            nccl_range(start, rng)
            launch(start, ends[c], name, 13)
            prev_end = ends[c]
        t = ends[-1]
        for i in range(4):
            launch(t, t + 50 * US, OPTIM, 7)
            t += 50 * US

    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
                   " globalPid, demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ,"
                   " blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,"
                   " localMemoryTotal, gridId) VALUES (?,?,?,?,?,?,?,?,?,?,32,132,1,1,256,1,1,0,0,0,0,0)", kernels)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId,"
                   " returnValue) VALUES (?,?,?,?,?,?,?)", runtime)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,"
                   " globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,67108864,2,2,1)",
                   [(s, e, c, g) for s, e, c, g in copies])
    db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,?,?,?,?)",
                   nvtx)
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, s) for s, i in strings.items()])
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (gpid, pid, "python3"))
    meta = [("gpt_schema_version", "2"), ("time_origin_ns", str(origin)), ("tool_version", "0.1.0"),
            ("command_line", "python3 train.py --ddp"), ("pid", str(pid)), ("host", host),
            ("time_origin_utc_ns", str(wall)), ("time_clock", "CLOCK_MONOTONIC (registered with CUPTI)"),
            ("kernel_records", str(len(kernels)))]
    if not a.no_rank:
        meta += [("rank", str(rank)), ("local_rank", str(rank if host == "nodeA" else 0)),
                 ("world_size", str(a.world)), ("rank_launcher", "torchrun"), ("job_id", a.job)]
    if rank not in trunc:
        meta += [("exit_reason", "exit"), ("trace_complete", "1")]
    db.executemany("INSERT INTO GPT_META VALUES (?, ?)", meta)
    db.commit()
    db.close()


copies = []


def main():
    a = parse_args()
    os.makedirs(a.dir, exist_ok=True)
    src = sqlite3.connect("file:%s?mode=ro" % FIXTURE, uri=True)
    template = [r[0] for r in src.execute("SELECT sql FROM sqlite_master WHERE type IN ('table', 'index') AND sql IS NOT NULL"
                                          " ORDER BY type DESC")]
    enums = {}
    for (t,) in src.execute("SELECT name FROM sqlite_master WHERE type='table' AND (name LIKE 'ENUM_%' OR name IN"
                            " ('TARGET_INFO_GPU', 'META_DATA_EXPORT'))"):
        enums[t] = src.execute("SELECT * FROM %s" % t).fetchall()
    src.close()
    job = Job(a)
    steps = job.schedule()
    ranks = range(a.world) if a.ranks is None else [int(r) for r in a.ranks.split(",")]
    for r in ranks:
        copies.clear()
        write_rank(job, steps, r, os.path.join(a.dir, "rank-%d.sqlite" % r), template, enums)


if __name__ == "__main__":
    sys.exit(main())
