/*
 * The PyTorch profiler's trace (Kineto's Chrome-trace JSON, plain or gzipped) read as a stream of
 * events: kineto_read() hands each element of traceEvents to a callback as soon as its closing
 * brace is read, with the fields the importer uses already decoded, so memory stays bounded by one
 * event however large the file is. The top-level facts (schemaVersion, baseTimeNanoseconds,
 * distributedInfo, deviceProperties) are collected into a struct kineto_header as they pass; Kineto
 * writes all but distributedInfo before traceEvents, so the callback sees them, and the caller reads
 * the rest when kineto_read() returns.
 *
 * Times: "ts" and "dur" are microseconds with up to three decimals (ns). They are converted from
 * their text to integer ns exactly, never through a double (a double holds ~16 digits; an epoch ts
 * in µs with its ns fraction has 19). Digits below 1 ns are rounded half up.
 *
 * Parsed with yajl (libyajl, Debian's libyajl-dev): a streaming parser, chosen over json-c and cJSON
 * for speed and memory (bench/import/RESULTS.md, docs/import.md).
 */
#ifndef GPT_IMPORT_KINETO_JSON_H
#define GPT_IMPORT_KINETO_JSON_H

#include <stddef.h>
#include <stdint.h>

/* The numeric args the importer reads (Kineto's names in the comments). */
enum kineto_arg {
	KA_CORRELATION,		/* "correlation" */
	KA_EXTERNAL_ID,		/* "External id" ("external id" in legacy traces) */
	KA_DEVICE,		/* "device" */
	KA_CONTEXT,		/* "context" */
	KA_STREAM,		/* "stream" */
	KA_REGISTERS,		/* "registers per thread" */
	KA_SHARED_MEMORY,	/* "shared memory": static + dynamic */
	KA_BYTES,		/* "bytes" */
	KA_CBID,		/* "cbid" */
	KA_WAIT_EVENT,		/* "wait_on_cuda_event_id" (cuda_sync) */
	KA_WAIT_STREAM,		/* "wait_on_stream" (cuda_sync) */
	KA_FROM_DEVICE,		/* "fromDevice" (peer copies) */
	KA_TO_DEVICE,		/* "toDevice" */
	KA_FROM_CONTEXT,	/* "fromContext" */
	KA_TO_CONTEXT,		/* "toContext" */
	KA_MEM_BYTES,		/* "Bytes" ([memory] instant events) */
	KA_MEM_ADDR,		/* "Addr" */
	KA_MEM_ALLOCATED,	/* "Total Allocated" */
	KA_MEM_RESERVED,	/* "Total Reserved" */
	KA_MEM_DEVICE_ID,	/* "Device Id" */
	KA_MEM_DEVICE_TYPE,	/* "Device Type" */
	KA_COUNT,
};

struct kineto_event {
	char ph;			/* 'X', 'i', 'M', 's', 'f'...; 0 when absent */
	const char *cat, *name;		/* "" when absent; valid during the callback only */
	int64_t pid, tid;		/* when numbers */
	const char *pid_text, *tid_text;	/* when strings ("Spans", legacy "stream 7"); else NULL */
	int has_pid, has_tid, has_ts, has_dur;
	int bad_time;			/* a ts or dur that is there but no number of ns an int64 holds */
	int64_t ts, dur;		/* ns, on the file's clock (ts + baseTimeNanoseconds is absolute) */
	unsigned args;			/* bit (1u << enum kineto_arg) set for each arg present */
	int64_t arg[KA_COUNT];
	int ngrid, nblock;		/* elements of "grid" and "block" read (3 when complete) */
	int64_t grid[3], block[3];
	const char *arg_name;		/* args "name" (metadata events: process_name, thread_name); or NULL */
	const char *sync_kind;		/* args "cuda_sync_kind"; or NULL */
};

/* deviceProperties[i]: which fields were present is in `have` (bit per enum kineto_device_field). */
enum kineto_device_field {
	KD_ID,
	KD_TOTAL_MEM,		/* totalGlobalMem */
	KD_MAJOR,		/* computeMajor */
	KD_MINOR,		/* computeMinor */
	KD_THREADS_PER_BLOCK,	/* maxThreadsPerBlock */
	KD_THREADS_PER_SM,	/* maxThreadsPerMultiprocessor */
	KD_REGS_PER_BLOCK,	/* regsPerBlock */
	KD_REGS_PER_SM,		/* regsPerMultiprocessor */
	KD_WARP_SIZE,		/* warpSize */
	KD_SHMEM_PER_BLOCK,	/* sharedMemPerBlock */
	KD_SHMEM_OPTIN,		/* sharedMemPerBlockOptin */
	KD_SHMEM_PER_SM,	/* sharedMemPerMultiprocessor (maxSharedMemoryPerMultiProcessor: ROCm) */
	KD_NUM_SMS,		/* numSms */
	KD_COUNT,
};

struct kineto_device {
	unsigned have;
	int64_t v[KD_COUNT];
	char *name;		/* NULL when absent */
};

struct kineto_header {
	int object;			/* the top level is an object (Kineto's form) */
	int has_trace_events;		/* it has a traceEvents array */
	int has_schema_version, has_base, has_distributed, has_rank, has_world_size;
	int bad_base;			/* baseTimeNanoseconds is there but no int64 ns count */
	int64_t schema_version;
	int64_t base_ns;		/* baseTimeNanoseconds */
	int64_t rank, world_size;	/* distributedInfo */
	char *backend, *nccl_version;	/* distributedInfo; NULL when absent */
	char *trace_name;		/* "traceName" */
	char *host;			/* "host_name" or "hostname" (written by some launchers' metadata) */
	struct kineto_device *devices;
	size_t ndevices;
	int64_t events;			/* elements of traceEvents read */
	int64_t bytes;			/* JSON text read (after gunzip) */
};

/* Called for each event; a negative return stops the read, and kineto_read() returns it. */
typedef int (*kineto_event_fn)(void *arg, const struct kineto_event *ev, const struct kineto_header *hdr);

/*
 * Read the JSON trace at path (gzip or plain, told apart by the bytes), calling fn for each event.
 * Returns 0, fn's negative value, or another negative error with one line in err: unreadable file,
 * truncated or malformed JSON (with how far it got), top level not an object. The header is filled
 * as far as the file was read; release it with kineto_header_release() in every case.
 */
int kineto_read(const char *path, kineto_event_fn fn, void *arg, struct kineto_header *hdr, char *err,
		size_t errlen);
void kineto_header_release(struct kineto_header *hdr);

/* "12.345" µs -> 12345 ns, exactly from the text (see above). Returns 0, or -1 when not a number or
   out of range. */
int kineto_us_to_ns(const char *text, size_t len, int64_t *ns);

#endif
