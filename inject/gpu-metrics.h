/*
 * GPU metrics sampling (issue 23): on every device the process uses, CUPTI's PM sampler
 * (cupti_pmsampling.h) counts SM activity, tensor-pipe activity by precision, DRAM, PCIe and
 * NVLink traffic over fixed intervals, in one pass, without replaying anything. Our own thread
 * decodes the hardware buffer every GPU_METRICS_DECODE_MS, evaluates each sample and hands the
 * samples to the collector (collector/sample-rows.h), which writes them as Nsight Systems does.
 *
 * Where the counters cannot be had (profiling restricted to administrators, another profiler
 * holding them, a MIG instance, a GPU or CUPTI without PM sampling), one line says so through
 * the report function and the trace goes on without them. docs/gpu-metrics.md has the metrics,
 * the measured costs and the checks made on the H100.
 */
#ifndef GPT_INJECT_GPU_METRICS_H
#define GPT_INJECT_GPU_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include "common/interval.h"

struct collector;
struct gpu_metrics;

/* Receives one problem line, without the "gpt-trace: " prefix. */
typedef void (*gpu_metrics_report_fn)(const char *line);

/*
 * A sampling session delivering to collector: CUPTI's PM-sampling functions are looked up in
 * cupti_lib (the handle the library dlopen'ed; NULL: the process's global symbols). Returns 0, or
 * -1 with one line in err (a CUPTI without PM sampling): the trace then goes on without metrics.
 * The decoding thread starts with the first device.
 */
int gpu_metrics_open(uint64_t interval_ns, struct collector *collector, void *cupti_lib,
		     gpu_metrics_report_fn report, struct gpu_metrics **out, char *err,
		     size_t errlen);

/*
 * A CUDA context was created on device (CUPTI_CBID_RESOURCE_CONTEXT_CREATED, on the creating
 * thread, the context current): the first time for a device, configure and start its sampler.
 * One-time work of a few ms (the host-side configuration); never called on the launch path.
 */
void gpu_metrics_device(struct gpu_metrics *g, uint32_t device_id, CUcontext ctx);

/*
 * CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: decode (and hand over) what the sampler a context
 * started holds, while the context still exists (a program that resets its device before exiting).
 */
void gpu_metrics_context_destroy(struct gpu_metrics *g, CUcontext ctx);

/*
 * End the decoding thread (waiting at most timeout_ms for it), then on the calling thread decode
 * what each sampler's hardware buffer holds, with the device's context current, and hand the last
 * samples to the collector; call it before collector_stop(). The samplers are left running: with
 * CUPTI 13.0, stopping them at exit crashed (see gpu-metrics.c). Returns 0, or -1 when the thread
 * did not finish in time (its last samples are lost).
 */
int gpu_metrics_stop(struct gpu_metrics *g, unsigned timeout_ms);

/*
 * The last call, after CUPTI's last activity flush. By default it does nothing; with
 * GPT_TRACE_GPU_METRICS_STOP=release it disables the samplers, which finalizes CUPTI, so nothing
 * of CUPTI's may run after it (see gpu-metrics.c).
 */
void gpu_metrics_release(struct gpu_metrics *g);

/* "gpu metrics: 1234 samples of 1 device every 100 us, ..." (no prefix, no newline); empty when no
 * device was sampled (its problem was said already). */
void gpu_metrics_summary(const struct gpu_metrics *g, char *buf, size_t size);

/* What was collected, for GPT_META (name/value pairs through set). */
void gpu_metrics_describe(const struct gpu_metrics *g,
			  void (*set)(void *arg, const char *name, const char *value), void *arg);

#endif
