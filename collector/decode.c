/*
 * CUPTI record -> nsys row (see decode.h).
 */
#include "collector/decode.h"

#include <string.h>

int decode_mem_kind(unsigned cupti_kind)
{
	switch (cupti_kind) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
		return NSYS_MEM_PAGEABLE;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
		return NSYS_MEM_PINNED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
		return NSYS_MEM_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
		return NSYS_MEM_ARRAY;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
		return NSYS_MEM_MANAGED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
		return NSYS_MEM_DEVICE_STATIC;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
		return NSYS_MEM_MANAGED_STATIC;
	default:
		return NSYS_MEM_UNKNOWN;
	}
}

int decode_launch_type(unsigned cupti_type)
{
	/* nsys: 0 unknown, 1 regular, 2 cooperative single device, 3 cooperative multi device. */
	switch (cupti_type) {
	case CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR:
		return 1;
	case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE:
		return 2;
	case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE:
		return 3;
	default:
		return 0;
	}
}

static void decode_kernel(const CUpti_ActivityKernel10 *k, struct kernel_row *row)
{
	row->start = k->start;
	row->end = k->end;
	row->device_id = k->deviceId;
	row->context_id = k->contextId;
	row->stream_id = k->streamId;
	row->correlation_id = k->correlationId;
	row->name = k->name;
	row->launch_type = decode_launch_type(k->launchType);
	row->cache_config = k->cacheConfig.config.executed;
	row->shared_mem_limit_config = (int)k->shmemLimitConfig;
	row->registers_per_thread = k->registersPerThread;
	row->grid_x = k->gridX;
	row->grid_y = k->gridY;
	row->grid_z = k->gridZ;
	row->block_x = k->blockX;
	row->block_y = k->blockY;
	row->block_z = k->blockZ;
	row->static_shared = k->staticSharedMemory;
	row->dynamic_shared = k->dynamicSharedMemory;
	row->local_per_thread = k->localMemoryPerThread;
	/* localMemoryTotal (32 bits) overflows on big GPUs; CUPTI 12+ fills the 64-bit field. */
	row->local_total = k->localMemoryTotal_v2 ? k->localMemoryTotal_v2 : k->localMemoryTotal;
	row->grid_id = k->gridId;
	row->shared_executed = k->sharedMemoryExecuted;
	row->graph_node_id = k->graphNodeId;
	row->graph_id = k->graphId;
}

static void decode_memcpy(const CUpti_ActivityMemcpy6 *m, struct memcpy_row *row)
{
	row->start = m->start;
	row->end = m->end;
	row->device_id = m->deviceId;
	row->context_id = m->contextId;
	row->stream_id = m->streamId;
	row->correlation_id = m->correlationId;
	row->bytes = m->bytes;
	row->copy_kind = m->copyKind;	/* CUPTI and nsys number copy kinds 0..10 alike */
	row->src_kind = decode_mem_kind(m->srcKind);
	row->dst_kind = decode_mem_kind(m->dstKind);
	row->src_device = row->src_context = ROW_NO_ID;
	row->dst_device = row->dst_context = ROW_NO_ID;
	row->graph_node_id = m->graphNodeId;
	row->graph_id = m->graphId;
}

static void decode_peer_memcpy(const CUpti_ActivityMemcpyPtoP4 *m, struct memcpy_row *row)
{
	row->start = m->start;
	row->end = m->end;
	row->device_id = m->deviceId;
	row->context_id = m->contextId;
	row->stream_id = m->streamId;
	row->correlation_id = m->correlationId;
	row->bytes = m->bytes;
	row->copy_kind = m->copyKind;
	row->src_kind = decode_mem_kind(m->srcKind);
	row->dst_kind = decode_mem_kind(m->dstKind);
	row->src_device = m->srcDeviceId;
	row->src_context = m->srcContextId;
	row->dst_device = m->dstDeviceId;
	row->dst_context = m->dstContextId;
	row->graph_node_id = m->graphNodeId;
	row->graph_id = m->graphId;
}

static void decode_memset(const CUpti_ActivityMemset4 *m, struct memset_row *row)
{
	row->start = m->start;
	row->end = m->end;
	row->device_id = m->deviceId;
	row->context_id = m->contextId;
	row->stream_id = m->streamId;
	row->correlation_id = m->correlationId;
	row->value = m->value;
	row->bytes = m->bytes;
	row->mem_kind = decode_mem_kind(m->memoryKind);
	row->graph_node_id = m->graphNodeId;
	row->graph_id = m->graphId;
}

static void decode_sync(const CUpti_ActivitySynchronization2 *s, struct sync_row *row)
{
	row->start = s->start;
	row->end = s->end;
	row->context_id = s->contextId;
	row->stream_id = s->streamId;
	row->correlation_id = s->correlationId;
	row->sync_type = (int)s->type;	/* same numbering as nsys ENUM_CUPTI_SYNC_TYPE */
	row->event_id = s->cudaEventId;
}

static void decode_api(const CUpti_ActivityAPI *a, int event_class, struct api_row *row)
{
	row->start = a->start;
	row->end = a->end;
	row->event_class = event_class;
	row->cbid = a->cbid;
	row->pid = a->processId;
	row->tid = a->threadId;
	row->correlation_id = a->correlationId;
	row->return_value = a->returnValue;
}

static void decode_device(const CUpti_ActivityDevice5 *d, struct device_row *row)
{
	row->id = d->id;
	row->name = d->name;
	memcpy(row->uuid, d->uuid.bytes, sizeof(row->uuid));
	row->total_memory = d->globalMemorySize;
	/* CUPTI gives kB/s and kHz; nsys stores B/s and Hz. */
	row->memory_bandwidth = d->globalMemoryBandwidth * 1000;
	row->clock_rate = (uint64_t)d->coreClockRate * 1000;
	row->sm_count = d->numMultiprocessors;
	row->l2_cache_size = d->l2CacheSize;
	row->constant_memory = d->constantMemorySize;
	row->threads_per_warp = d->numThreadsPerWarp;
	row->max_ipc = d->maxIPC;
	row->max_warps_per_sm = d->maxWarpsPerMultiprocessor;
	row->max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
	row->max_shmem_per_sm = d->maxSharedMemoryPerMultiprocessor;
	row->max_registers_per_sm = d->maxRegistersPerMultiprocessor;
	row->max_registers_per_block = d->maxRegistersPerBlock;
	row->max_shmem_per_block = d->maxSharedMemoryPerBlock;
	row->max_threads_per_block = d->maxThreadsPerBlock;
	row->max_block_dim[0] = d->maxBlockDimX;
	row->max_block_dim[1] = d->maxBlockDimY;
	row->max_block_dim[2] = d->maxBlockDimZ;
	row->max_grid_dim[0] = d->maxGridDimX;
	row->max_grid_dim[1] = d->maxGridDimY;
	row->max_grid_dim[2] = d->maxGridDimZ;
	row->compute_major = d->computeCapabilityMajor;
	row->compute_minor = d->computeCapabilityMinor;
}

/* ---- GPU memory ---- */

int decode_mem_oper(unsigned cupti_oper)
{
	switch (cupti_oper) {
	case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION:
		return NSYS_MEM_OPER_ALLOCATION;
	case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE:
		return NSYS_MEM_OPER_DEALLOCATION;
	default:
		return -1;
	}
}

int decode_mempool_oper(unsigned cupti_oper)
{
	/* nsys ENUM_CUDA_MEMPOOL_OPER: 0 invalid, 1 created, 2 destroyed, 3 trimmed */
	switch (cupti_oper) {
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
		return 1;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
		return 2;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
		return 3;
	default:
		return 0;
	}
}

int decode_mempool_type(unsigned cupti_type)
{
	/* nsys ENUM_CUDA_MEMPOOL_TYPE: 0 invalid, 1 local, 2 imported */
	switch (cupti_type) {
	case CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL:
		return 1;
	case CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED:
		return 2;
	default:
		return 0;
	}
}

/* Returns ROW_NONE for a record whose operation is neither an allocation nor a release. */
static enum row_kind decode_memory(const CUpti_ActivityMemory4 *m, struct memory_row *row)
{
	row->operation = decode_mem_oper(m->memoryOperationType);
	if (row->operation < 0)
		return ROW_NONE;
	row->start = m->timestamp;
	row->device_id = m->deviceId;
	row->context_id = m->contextId;
	row->correlation_id = m->correlationId;
	/* Stream-ordered (cudaMallocAsync, cudaFreeAsync) only: CUPTI gives the static allocations of
	 * a module load stream 0 (the H200, 2026-12-02: 340-822 rows of each torch fixture). */
	row->stream_id = m->isAsync && m->streamId != CUPTI_INVALID_STREAM_ID ? m->streamId : ROW_NO_ID;
	row->address = m->address;
	row->pc = m->PC;
	row->bytes = m->bytes;
	row->mem_kind = decode_mem_kind(m->memoryKind);
	row->name = m->name;
	row->pool_address = row->pool_release_threshold = row->pool_size = row->pool_utilized = ROW_NO_POOL;
	row->imported_pool_address = row->imported_pool_pid = ROW_NO_POOL;
	if (m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
		row->pool_address = m->memoryPoolConfig.address;
		row->pool_release_threshold = m->memoryPoolConfig.releaseThreshold;
		row->pool_size = m->memoryPoolConfig.pool.size;
		row->pool_utilized = m->memoryPoolConfig.utilizedSize;
	} else if (m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED) {
		row->imported_pool_address = m->memoryPoolConfig.address;
		row->imported_pool_pid = m->memoryPoolConfig.pool.processId;
	}
	return ROW_MEMORY;
}

static void decode_mempool(const CUpti_ActivityMemoryPool3 *p, struct mempool_row *row)
{
	row->start = p->timestamp;
	row->device_id = p->deviceId;
	row->correlation_id = p->correlationId;
	row->address = p->address;
	row->operation = decode_mempool_oper(p->memoryPoolOperationType);
	row->pool_type = decode_mempool_type(p->memoryPoolType);
	row->min_bytes_to_keep = p->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED
					 ? p->minBytesToKeep : ROW_NO_POOL;
	row->release_threshold = row->size = row->utilized = ROW_NO_POOL;
	if (p->memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
		row->release_threshold = p->releaseThreshold;
		row->size = p->size;
		row->utilized = p->utilizedSize;
	}
}

enum row_kind decode_record(const CUpti_Activity *record, struct trace_row *row)
{
	switch (record->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		decode_kernel((const CUpti_ActivityKernel10 *)record, &row->kernel);
		row->kind = ROW_KERNEL;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		decode_memcpy((const CUpti_ActivityMemcpy6 *)record, &row->memcpy);
		row->kind = ROW_MEMCPY;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		decode_peer_memcpy((const CUpti_ActivityMemcpyPtoP4 *)record, &row->memcpy);
		row->kind = ROW_MEMCPY;
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		decode_memset((const CUpti_ActivityMemset4 *)record, &row->memset);
		row->kind = ROW_MEMSET;
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		decode_sync((const CUpti_ActivitySynchronization2 *)record, &row->sync);
		row->kind = ROW_SYNC;
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		decode_api((const CUpti_ActivityAPI *)record, 0, &row->api);
		row->kind = ROW_API;
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
		decode_api((const CUpti_ActivityAPI *)record, 1, &row->api);
		row->kind = ROW_API;
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		decode_device((const CUpti_ActivityDevice5 *)record, &row->device);
		row->kind = ROW_DEVICE;
		break;
	case CUPTI_ACTIVITY_KIND_CONTEXT: {
		const CUpti_ActivityContext3 *c = (const CUpti_ActivityContext3 *)record;

		row->context.context_id = c->contextId;
		row->context.device_id = c->deviceId;
		row->context.null_stream_id = c->nullStreamId;
		row->context.parent_context_id = c->parentContextId;
		row->context.is_green_context = c->isGreenContext;
		row->kind = ROW_CONTEXT;
		break;
	}
	case CUPTI_ACTIVITY_KIND_STREAM: {
		const CUpti_ActivityStream *st = (const CUpti_ActivityStream *)record;

		row->stream.context_id = st->contextId;
		row->stream.stream_id = st->streamId;
		row->stream.priority = st->priority;
		row->stream.flag = (int)st->flag;
		row->kind = ROW_STREAM;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		row->kind = decode_memory((const CUpti_ActivityMemory4 *)record, &row->memory);
		break;
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		decode_mempool((const CUpti_ActivityMemoryPool3 *)record, &row->mempool);
		row->kind = ROW_MEMPOOL;
		break;
	default:
		row->kind = ROW_NONE;
		break;
	}
	return row->kind;
}
