/*
 * Decoding of CUPTI activity records into rows with Nsight Systems' column meanings and enum values.
 *
 * One function per record: it reads the CUPTI struct (the newest versions of CUDA 13's
 * cupti_activity.h; older CUPTIs lay out the same leading fields) and fills a row whose fields are the
 * nsys columns. Enum values are translated where CUPTI and nsys differ: memory kinds (CUPTI 0 unknown,
 * 1 pageable, 2 pinned... ; nsys 0 pageable, 1 pinned, ..., 7 unknown) and kernel launch types (nsys
 * has 0 unknown before CUPTI's values). Timestamps stay absolute; the writer makes them relative.
 * Pure functions, no state: the CPU tests build CUPTI structs in memory and check every field.
 */
#ifndef GPT_COLLECTOR_DECODE_H
#define GPT_COLLECTOR_DECODE_H

#include <stdint.h>

#include <cupti_activity.h>

/* nsys ENUM_CUDA_MEM_KIND */
enum nsys_mem_kind {
	NSYS_MEM_PAGEABLE = 0,
	NSYS_MEM_PINNED = 1,
	NSYS_MEM_DEVICE = 2,
	NSYS_MEM_ARRAY = 3,
	NSYS_MEM_MANAGED = 4,
	NSYS_MEM_DEVICE_STATIC = 5,
	NSYS_MEM_MANAGED_STATIC = 6,
	NSYS_MEM_UNKNOWN = 7,
};

enum row_kind {
	ROW_NONE = 0,	/* a record we do not store */
	ROW_KERNEL,
	ROW_MEMCPY,
	ROW_MEMSET,
	ROW_SYNC,
	ROW_API,
	ROW_DEVICE,
	ROW_CONTEXT,
	ROW_STREAM,
	ROW_MEMORY,
	ROW_MEMPOOL,
};

struct kernel_row {
	uint64_t start, end;
	uint32_t device_id, context_id, stream_id, correlation_id;
	const char *name;		/* CUPTI's name (mangled for C++), owned by CUPTI */
	int launch_type;		/* ENUM_CUDA_KERNEL_LAUNCH_TYPE */
	int cache_config;		/* ENUM_CUDA_FUNC_CACHE_CONFIG, the executed one */
	int shared_mem_limit_config;	/* ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG */
	uint32_t registers_per_thread;
	int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
	int32_t static_shared, dynamic_shared;
	uint32_t local_per_thread;
	uint64_t local_total;
	int64_t grid_id;
	uint32_t shared_executed;
	uint64_t graph_node_id;		/* 0: not launched from a graph */
	uint32_t graph_id;		/* 0: not launched from a graph */
};

#define ROW_NO_ID UINT32_MAX	/* an optional id column that stays NULL */

struct memcpy_row {
	uint64_t start, end;
	uint32_t device_id, context_id, stream_id, correlation_id;
	uint64_t bytes;
	int copy_kind;			/* ENUM_CUDA_MEMCPY_OPER */
	int src_kind, dst_kind;		/* ENUM_CUDA_MEM_KIND */
	uint32_t src_device, src_context, dst_device, dst_context;	/* ROW_NO_ID unless peer */
	uint64_t graph_node_id;
	uint32_t graph_id;
};

struct memset_row {
	uint64_t start, end;
	uint32_t device_id, context_id, stream_id, correlation_id;
	uint32_t value;
	uint64_t bytes;
	int mem_kind;			/* ENUM_CUDA_MEM_KIND */
	uint64_t graph_node_id;
	uint32_t graph_id;
};

struct sync_row {
	uint64_t start, end;
	uint32_t context_id, stream_id, correlation_id;
	int sync_type;			/* ENUM_CUPTI_SYNC_TYPE */
	uint32_t event_id;
};

struct api_row {
	uint64_t start, end;
	int event_class;		/* ENUM_NSYS_EVENT_CLASS: 0 runtime, 1 driver */
	uint32_t cbid;
	uint32_t pid, tid;
	uint32_t correlation_id;
	uint32_t return_value;
};

struct device_row {
	uint32_t id;
	const char *name;		/* owned by CUPTI */
	uint8_t uuid[16];
	uint64_t total_memory;		/* B */
	uint64_t memory_bandwidth;	/* B/s */
	uint64_t clock_rate;		/* Hz */
	uint32_t sm_count, l2_cache_size, constant_memory, threads_per_warp;
	uint32_t max_ipc, max_warps_per_sm, max_blocks_per_sm, max_shmem_per_sm;
	uint32_t max_registers_per_sm, max_registers_per_block, max_shmem_per_block;
	uint32_t max_threads_per_block;
	uint32_t max_block_dim[3], max_grid_dim[3];
	uint32_t compute_major, compute_minor;
};

struct context_row {
	uint32_t context_id, device_id;
	uint32_t null_stream_id;	/* CUPTI's id of the context's NULL stream */
	uint32_t parent_context_id;	/* a green context's parent, else 0 */
	int is_green_context;
};

/* A stream CUPTI described (CUPTI_ACTIVITY_KIND_STREAM, on creation): TARGET_INFO_CUDA_STREAM. */
struct stream_row {
	uint32_t context_id, stream_id;
	uint32_t priority;		/* as CUPTI gives it: 4294967291 is -5, as nsys stores it */
	int flag;			/* ENUM_CUPTI_STREAM_TYPE: CUPTI's value, nsys numbers alike */
};

/* ---- GPU memory: CUDA_GPU_MEMORY_USAGE_EVENTS and CUDA_GPU_MEMORY_POOL_EVENTS ---- */

/* nsys ENUM_CUDA_DEV_MEM_EVENT_OPER (CUPTI: 1 allocation, 2 release) */
enum nsys_mem_oper {
	NSYS_MEM_OPER_ALLOCATION = 0,
	NSYS_MEM_OPER_DEALLOCATION = 1,
};

/* One allocation or release (CUPTI_ACTIVITY_KIND_MEMORY2). Pool fields: ROW_NO_POOL unless set. */
#define ROW_NO_POOL UINT64_MAX
struct memory_row {
	uint64_t start;
	uint32_t device_id, context_id, correlation_id;
	uint32_t stream_id;		/* ROW_NO_ID when not stream-ordered */
	uint64_t address, pc, bytes;
	int mem_kind;			/* ENUM_CUDA_MEM_KIND */
	int operation;			/* ENUM_CUDA_DEV_MEM_EVENT_OPER */
	const char *name;		/* variable name or NULL, owned by CUPTI */
	uint64_t pool_address, pool_release_threshold, pool_size, pool_utilized;	/* local pool */
	uint64_t imported_pool_address, imported_pool_pid;			/* imported pool */
};

/* One memory-pool event (CUPTI_ACTIVITY_KIND_MEMORY_POOL). */
struct mempool_row {
	uint64_t start;
	uint32_t device_id, correlation_id;
	uint64_t address;
	int operation;			/* ENUM_CUDA_MEMPOOL_OPER */
	int pool_type;			/* ENUM_CUDA_MEMPOOL_TYPE */
	uint64_t min_bytes_to_keep;	/* ROW_NO_POOL unless trimmed */
	uint64_t release_threshold, size, utilized;	/* ROW_NO_POOL unless a local pool */
};

/* CUPTI CUpti_ActivityMemoryOperationType -> nsys ENUM_CUDA_DEV_MEM_EVENT_OPER; -1 for invalid. */
int decode_mem_oper(unsigned cupti_oper);
/* CUPTI's pool operation and type -> nsys ENUM_CUDA_MEMPOOL_OPER, ENUM_CUDA_MEMPOOL_TYPE. */
int decode_mempool_oper(unsigned cupti_oper);
int decode_mempool_type(unsigned cupti_type);

struct trace_row {
	enum row_kind kind;
	union {
		struct kernel_row kernel;
		struct memcpy_row memcpy;
		struct memset_row memset;
		struct sync_row sync;
		struct api_row api;
		struct device_row device;
		struct context_row context;
		struct stream_row stream;
		struct memory_row memory;
		struct mempool_row mempool;
	};
};

/* Fill row from record; returns row->kind (ROW_NONE for records we do not store). */
enum row_kind decode_record(const CUpti_Activity *record, struct trace_row *row);

/* CUPTI CUpti_ActivityMemoryKind -> nsys ENUM_CUDA_MEM_KIND. */
int decode_mem_kind(unsigned cupti_kind);

/* CUPTI CUpti_ActivityLaunchType -> nsys ENUM_CUDA_KERNEL_LAUNCH_TYPE. */
int decode_launch_type(unsigned cupti_type);

#endif
