/*
 * The floor for CUPTI tracing overhead: a library loaded through CUDA_INJECTION64_PATH that enables
 * only kernel activity records and throws every completed buffer away. gpt-trace's own overhead is
 * measured against this and against Nsight Systems' collector (bench/overhead/run.sh).
 */
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BUFFER_SIZE (8u << 20)

int InitializeInjection(void);

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	(void)valid;
	free(buffer);
}

static void flush_at_exit(void)
{
	size_t dropped = 0;

	cuptiActivityFlushAll(1);
	cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
	if (dropped)
		fprintf(stderr, "noop_cupti: %zu records dropped\n", dropped);
}

int InitializeInjection(void)
{
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		fprintf(stderr, "noop_cupti: cannot enable CUPTI activity tracing\n");
		return 1;
	}
	atexit(flush_at_exit);
	return 1;
}
