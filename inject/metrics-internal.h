/*
 * Private to inject/metrics*.c: the session's state, shared between metrics.c (spec, filter, what
 * is kept, the tables written) and the CUPTI side: metrics-cupti.c (what the two below share,
 * metrics-cupti.h), metrics-counters.c (the Range Profiler) and metrics-sass.c (SASS Metrics).
 */
#ifndef GPT_INJECT_METRICS_INTERNAL_H
#define GPT_INJECT_METRICS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <cuda.h>
#include <cupti.h>
#include <cupti_range_profiler.h>
#include "inject/metrics.h"
#include "inject/metrics-host.h"

/* The per-launch counters, in the order of metrics_counter_names[]. */
enum metrics_counter {
	COUNTER_LD_SECTORS,
	COUNTER_LD_REQUESTS,
	COUNTER_ST_SECTORS,
	COUNTER_ST_REQUESTS,
	COUNTER_DURATION,
	NR_COUNTERS,
};
extern const char *const metrics_counter_names[NR_COUNTERS];

/* The per-instruction SASS metrics, in the order of metrics_sass_names[]. */
enum metrics_sass {
	SASS_SECTORS,
	SASS_SECTORS_IDEAL,
	SASS_INST_LD,
	SASS_INST_ST,
	NR_SASS,
};
extern const char *const metrics_sass_names[NR_SASS];

/* Global-memory totals of loads and stores from SASS: sectors, ideal sectors, warp instructions. */
struct metrics_access {
	uint64_t ld_sectors, ld_ideal, ld_inst;
	uint64_t st_sectors, st_ideal, st_inst;
};

/* One source line of one kernel, summed over the launches its SASS metrics were collected on. */
struct metrics_line {
	char *file; /* NULL: no line information for these instructions */
	uint32_t line;
	struct metrics_access access;
};

/* One distinct kernel (by mangled name) seen at launch. */
struct metrics_kernel {
	struct metrics_kernel *next; /* hash chain */
	char *name;		     /* as launched: the mangled name */
	char *short_name;  /* the function's own name, what kernel= globs are matched to */
	int selected;	   /* filter result: 1 profile, 0 not */
	uint64_t launches; /* launches seen */
	uint64_t profiled; /* launches profiled with counters */
	bool sass_done;	   /* SASS metrics collected (once per kernel) */
	bool sass_failed;
	struct metrics_access sass; /* the SASS totals */
	struct metrics_line *lines;
	size_t nr_lines, alloc_lines;
};

/* One profiled launch. */
struct metrics_row {
	uint32_t correlation_id;
	uint32_t device_id;
	uint32_t context_id;
	struct metrics_kernel *kernel;
	bool has_counters;
	double counters[NR_COUNTERS];
	bool has_sass; /* this launch carried the SASS instrumentation */
	struct metrics_access sass;
	uint64_t replay_ns; /* host time the launch call took, replay included */
	uint32_t passes;
	/* The profiler's time on the launching thread, on the trace's clock (gpt_clock_now): from
	 * the setup before the launch to the end of its replay or patching. PROFILER_OVERHEAD. */
	uint64_t overhead_start, overhead_end;
	uint32_t tid;
};

/* Per chip: the host object that builds the config image and evaluates counter data. */
struct metrics_chip {
	struct metrics_chip *next;
	char *name;
	uint8_t *availability; /* counter availability image of the first context */
	CUpti_Profiler_Host_Object *host;
	uint8_t *config;
	size_t config_size;
	size_t passes;
};

enum metrics_ctx_state {
	CTX_NEW,
	CTX_READY,
	CTX_FAILED,
};

/* Per CUDA context. */
struct metrics_context {
	struct metrics_context *next;
	CUcontext ctx;
	uint32_t device_id;
	uint32_t context_id;
	enum metrics_ctx_state counters_state;
	enum metrics_ctx_state sass_state;
	struct metrics_chip *chip;
	CUpti_RangeProfiler_Object *range; /* NULL while the range profiler is off */
	uint8_t *counter_data;
	size_t counter_data_size;
	bool configured; /* SetConfig done for this counter data image */
};

/* A loaded module's cubin, kept for SASS-to-source correlation. */
struct metrics_cubin {
	struct metrics_cubin *next;
	uint64_t crc;
	void *data;
	size_t size;
};

#define METRICS_KERNEL_BUCKETS 1024
#define METRICS_MAX_DEVICES 64

struct metrics_session {
	metrics_report_fn report;
	/* spec */
	char **globs;
	size_t nr_globs;
	uint64_t first;	  /* 0: every launch */
	bool want_source; /* SASS metrics and source lines, once per kernel */
	bool source_given; /* the spec said source=0 or source=1 */
	bool debug;

	pthread_mutex_t lock; /* held from the outermost launch enter to its exit */
	bool attached;	      /* CUPTI's functions found (metrics_session_attach) */
	bool stopped;
	bool stop_failed; /* metrics_session_stop_within() timed out: the lock may never come */
	bool profiler_initialized;
	bool profiler_failed;

	struct metrics_kernel *kernels[METRICS_KERNEL_BUCKETS];
	size_t nr_kernels;
	struct metrics_context *contexts;
	struct metrics_chip *chips;
	uint64_t sass_ids[NR_SASS];
	bool sass_ids_known;
	int8_t sass_device[METRICS_MAX_DEVICES]; /* 0 unknown, 1 configured, -1 failed */

	struct metrics_row *rows;
	size_t nr_rows, alloc_rows;

	pthread_mutex_t cubin_lock;
	struct metrics_cubin *cubins;
	size_t cubin_bytes;
	bool cubin_limit_reported;

	/* summary */
	uint64_t replay_ns;
	uint64_t ranges_missing; /* profiled launches that gave no range (launch failed) */
	uint64_t ranges_extra;	 /* ranges beyond the one expected */
	uint64_t sass_kernels;
	uint64_t source_kernels;  /* kernels with at least one line resolved */
	uint64_t sass_unresolved; /* SASS instructions with no cubin or no line */
	char *first_problem;	  /* kept for GPT_META */

	/* Around each SASS launch: the library pauses kernel activity tracing (metrics.h). */
	metrics_sass_hook_fn sass_pause, sass_synced, sass_resume;
};

/* Report one problem line through the session's reporter (printf-style). */
void metrics_report(struct metrics_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A debugging line on stderr when GPT_TRACE_METRICS_DEBUG=1. */
void metrics_debug(struct metrics_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* metrics-cupti.c */
int metrics_cupti_load(void *lib, char *err, size_t errlen);
struct metrics_context *metrics_context_get(struct metrics_session *s, CUcontext ctx);
const char *metrics_cupti_reason(CUptiResult r);

/* metrics-counters.c */
int metrics_counters_setup(struct metrics_session *s, struct metrics_context *c);
int metrics_counters_start(struct metrics_session *s, struct metrics_context *c);
int metrics_counters_stop(struct metrics_session *s, struct metrics_context *c,
			  struct metrics_row *row);
void metrics_context_release(struct metrics_session *s, struct metrics_context *c);
void metrics_chips_free(struct metrics_session *s);

/* metrics-sass.c */
int metrics_sass_setup(struct metrics_session *s, struct metrics_context *c);
int metrics_sass_start(struct metrics_session *s, struct metrics_context *c);
int metrics_sass_stop(struct metrics_session *s, struct metrics_context *c,
		      struct metrics_kernel *k, struct metrics_row *row);
void metrics_sass_unset(struct metrics_session *s);
uint64_t metrics_cubin_crc(const void *cubin, size_t size);

/* metrics-session.c */
struct metrics_line *metrics_kernel_line(struct metrics_kernel *k, const char *file, uint32_t line);
struct metrics_cubin *metrics_cubin_find(struct metrics_session *s, uint32_t crc);

#endif
