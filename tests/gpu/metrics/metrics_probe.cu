/*
 * Proof of inject/metrics on a GPU, without the rest of libgpt_inject.so: this program plays the
 * library's part (one CUPTI subscriber whose callback calls the metrics hooks exactly as
 * docs/metrics.md tells the library to), launches the access-pattern kernels of kernels/access.cu
 * three times each, writes the collected rows into a small SQLite file with
 * metrics_session_write_file() and prints, from that file, sectors per request for loads and
 * stores per launch and the source lines. run.sh runs it and, on the same binary in --plain mode
 * (no CUPTI at all), Nsight Compute, and prints both side by side (compare.py).
 *
 * usage: metrics_probe [--plain | --list] [SPEC [OUT.sqlite]]
 *   SPEC is a GPT_TRACE_METRICS value (default "all"); OUT defaults to metrics_probe.sqlite.
 *   --plain runs the kernels only (for ncu); --list prints what CUPTI says about device 0.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <sqlite3.h>

extern "C" {
#include "inject/metrics.h"
}
#include "kernels/access.cuh"

#define CHECK_CUDA(call)                                                                           \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "probe: %s: %s\n", #call, cudaGetErrorString(e_));         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static struct metrics_session *session;

static bool is_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
		case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
			return true;
		default:
			return false;
		}
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		switch (cbid) {
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
		case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
			return true;
		default:
			return false;
		}
	return false;
}

/* What the library's callback does for metrics, and nothing else. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *cbdata)
{
	struct metrics_session *s = (struct metrics_session *)userdata;

	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		const CUpti_CallbackData *d = (const CUpti_CallbackData *)cbdata;

		if (!is_launch(domain, cbid))
			return;
		if (d->callbackSite == CUPTI_API_ENTER)
			metrics_launch_enter(s, d->context, d->symbolName, d->correlationId);
		else
			metrics_launch_exit(s);
	} else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *r = (const CUpti_ResourceData *)cbdata;

		if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
			const CUpti_ModuleResourceData *m =
			    (const CUpti_ModuleResourceData *)r->resourceDescriptor;

			metrics_module_loaded(s, m->pCubin, m->cubinSize);
		} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			metrics_context_destroy(s, r->context);
		}
	}
}

static int subscribe(struct metrics_session *s)
{
	static const CUpti_CallbackId runtime[] = {
	    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
	};
	static const CUpti_CallbackId driver[] = {
	    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	};
	CUpti_SubscriberHandle sub;
	CUptiResult r;
	const char *why;

	r = cuptiSubscribe(&sub, on_callback, s);
	if (r != CUPTI_SUCCESS) {
		cuptiGetResultString(r, &why);
		fprintf(stderr, "probe: cuptiSubscribe: %s\n", why);
		return -1;
	}
	for (CUpti_CallbackId id : runtime)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
	for (CUpti_CallbackId id : driver)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
			    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	return 0;
}

/* The kernels, three launches each, then a check that replay left the answers right. */
static int run_kernels(void)
{
	const size_t n = (size_t)1 << 24; /* 64 MiB of floats */
	const int rows = 4096, cols = 4096;
	std::vector<float> host(n), out(n);
	float *in_d, *out_d;
	int bad = 0;

	for (size_t i = 0; i < n; i++)
		host[i] = (float)(i % 1000003);
	CHECK_CUDA(cudaMalloc(&in_d, n * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&out_d, n * sizeof(float)));
	CHECK_CUDA(cudaMemcpy(in_d, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

	dim3 block(256), grid((unsigned)((n + 255) / 256));
	dim3 tblock(TILE_DIM, TILE_ROWS), tgrid(cols / TILE_DIM, rows / TILE_DIM);
	for (int iter = 0; iter < 3; iter++) {
		coalesced_copy<<<grid, block>>>(in_d, out_d, n);
		strided_gather<<<grid, block>>>(in_d, out_d, n);
		transpose_naive<<<tgrid, tblock>>>(in_d, out_d, rows, cols);
		transpose_tiled<<<tgrid, tblock>>>(in_d, out_d, rows, cols);
	}
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());

	/* The last kernel was a transpose of the input. */
	CHECK_CUDA(cudaMemcpy(out.data(), out_d, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int r = 0; r < rows && bad < 5; r += 97)
		for (int c = 0; c < cols && bad < 5; c += 89)
			if (out[(size_t)c * rows + r] != host[(size_t)r * cols + c]) {
				fprintf(stderr, "probe: wrong transpose at %d,%d\n", r, c);
				bad++;
			}
	/* And a gather on its own, checked. */
	strided_gather<<<grid, block>>>(in_d, out_d, n);
	CHECK_CUDA(cudaMemcpy(out.data(), out_d, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n && bad < 10; i += 4099)
		if (out[i] != host[(i * GATHER_STRIDE) % n]) {
			fprintf(stderr, "probe: wrong gather at %zu\n", i);
			bad++;
		}
	cudaFree(in_d);
	cudaFree(out_d);
	printf("probe: kernel results %s\n", bad ? "WRONG" : "correct");
	return bad ? -1 : 0;
}

static double ratio(sqlite3_stmt *st, int num, int den)
{
	if (sqlite3_column_type(st, num) == SQLITE_NULL ||
	    sqlite3_column_type(st, den) == SQLITE_NULL)
		return -1;
	double d = sqlite3_column_double(st, den);
	return d > 0 ? sqlite3_column_double(st, num) / d : -1;
}

/* Print what the trace file holds, as a reader of GPT_KERNEL_METRICS would see it. */
static void print_trace(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "probe: cannot open %s\n", path);
		return;
	}
	printf("\n%-16s %-8s %7s %7s %8s %8s %-11s %9s %6s %10s\n", "kernel", "source", "ld s/r",
	       "st s/r", "ldIdl/r", "stIdl/r", "ideal", "dur us", "passes", "replay ms");
	if (sqlite3_prepare_v2(
		db,
		"SELECT shortName, source, gldSectors, gldRequests, gstSectors, "
		"gstRequests, gldSectorsIdeal, gstSectorsIdeal, idealSource, durationNs, "
		"passes, replayDurationNs, correlationId FROM GPT_KERNEL_METRICS "
		"ORDER BY rowid",
		-1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW)
			printf(
			    "%-16s %-8s %7.2f %7.2f %8.2f %8.2f %-11s %9.1f %6d %10.2f  corr=%d\n",
			    sqlite3_column_text(st, 0), sqlite3_column_text(st, 1), ratio(st, 2, 3),
			    ratio(st, 4, 5), ratio(st, 6, 3), ratio(st, 7, 5),
			    sqlite3_column_type(st, 8) == SQLITE_NULL
				? "-"
				: (const char *)sqlite3_column_text(st, 8),
			    sqlite3_column_double(st, 9) / 1e3, sqlite3_column_int(st, 10),
			    sqlite3_column_double(st, 11) / 1e6, sqlite3_column_int(st, 12));
		sqlite3_finalize(st);
	}
	printf("\n%-16s %-40s %5s %10s %10s %8s %10s %10s %8s\n", "kernel", "file", "line",
	       "ldSect", "ldIdeal", "ldReq", "stSect", "stIdeal", "stReq");
	if (sqlite3_prepare_v2(db,
			       "SELECT shortName, file, line, gldSectors, gldSectorsIdeal, "
			       "gldRequests, gstSectors, gstSectorsIdeal, gstRequests "
			       "FROM GPT_SOURCE_METRICS ORDER BY shortName, file, line",
			       -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *file = (const char *)sqlite3_column_text(st, 1);
			const char *slash = file ? strrchr(file, '/') : NULL;

			printf("%-16s %-40s %5d %10lld %10lld %8lld %10lld %10lld %8lld\n",
			       sqlite3_column_text(st, 0), file ? (slash ? slash + 1 : file) : "?",
			       sqlite3_column_int(st, 2), sqlite3_column_int64(st, 3),
			       sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
			       sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7),
			       sqlite3_column_int64(st, 8));
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
}

/* What CUPTI says about device 0: chip, support of both APIs. */
static void list_device(void)
{
	CUpti_Device_GetChipName_Params chip = {};
	CUpti_Profiler_Initialize_Params init = {};
	cudaDeviceProp prop;

	CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
	printf("device 0: %s, compute capability %d.%d\n", prop.name, prop.major, prop.minor);
	init.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
	printf("cuptiProfilerInitialize: %d\n", cuptiProfilerInitialize(&init));
	chip.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
	chip.deviceIndex = 0;
	CUptiResult rc = cuptiDeviceGetChipName(&chip);
	printf("chip: %d %s\n", rc, chip.pChipName ? chip.pChipName : "?");
	for (int api = CUPTI_PROFILER_RANGE_PROFILING; api <= CUPTI_PROFILER_SASS_METRICS;
	     api += 2) {
		CUpti_Profiler_DeviceSupported_Params p = {};

		p.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
		p.cuDevice = 0;
		p.api = (CUpti_Profiler_API)api;
		CUptiResult r = cuptiProfilerDeviceSupported(&p);
		printf("api %d supported: r=%d isSupported=%d arch=%d vgpu=%d\n", api, r,
		       p.isSupported, p.architecture, p.vGpu);
	}
	uint32_t v = 0;
	cuptiGetVersion(&v);
	printf("CUPTI API version %u (built with %d)\n", v, CUPTI_API_VERSION);
}

static void report(const char *line)
{
	fprintf(stderr, "gpt-trace: %s\n", line);
}

int main(int argc, char **argv)
{
	const char *spec = "all", *out = "metrics_probe.sqlite";
	bool plain = false, list = false;
	char err[512], summary[512];
	int argi = 1, rows;

	if (argi < argc && !strcmp(argv[argi], "--plain")) {
		plain = true;
		argi++;
	} else if (argi < argc && !strcmp(argv[argi], "--list")) {
		list = true;
		argi++;
	}
	if (argi < argc)
		spec = argv[argi++];
	if (argi < argc)
		out = argv[argi++];

	if (list) {
		CHECK_CUDA(cudaFree(0));
		list_device();
		return 0;
	}
	if (plain)
		return run_kernels() ? 1 : 0;

	if (metrics_session_open(spec, report, &session, err, sizeof(err)) < 0) {
		fprintf(stderr, "gpt-trace: %s\n", err);
		return 2;
	}
	if (!session) {
		printf("probe: metrics are off for spec '%s'\n", spec);
		return 0;
	}
	/* The library hands over the CUPTI it dlopened; the probe is linked with one. */
	if (metrics_session_attach(session, dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD), err,
				   sizeof(err)) < 0)
		fprintf(stderr, "gpt-trace: %s\n", err);
	if (subscribe(session) < 0)
		printf("probe: no CUPTI subscription: the program runs without metrics\n");
	int bad = run_kernels();
	metrics_session_stop(session);

	/* A trace file to write into, as the collector would leave it: here an empty database. */
	remove(out);
	sqlite3 *db;
	if (sqlite3_open(out, &db) == SQLITE_OK) {
		sqlite3_exec(db,
			     "CREATE TABLE GPT_META (name TEXT NOT NULL PRIMARY KEY, value TEXT)",
			     NULL, NULL, NULL);
		sqlite3_close(db);
	}
	rows = metrics_session_write_file(session, out, err, sizeof(err));
	if (rows < 0)
		fprintf(stderr, "gpt-trace: %s\n", err);
	metrics_session_summary(session, summary, sizeof(summary));
	printf("gpt-trace: %s\n", summary);
	printf("probe: %d kernel rows written to %s\n", rows, out);
	metrics_session_free(session);
	print_trace(out);
	return bad ? 1 : 0;
}
