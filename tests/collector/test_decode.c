/*
 * Decoding of CUPTI records into nsys rows: each test fills a real CUPTI struct (CUDA 13 headers)
 * with known values and checks every field of the row, the memory-kind and launch-type mappings,
 * and the kernel names (demangled and short names checked against real nsys exports).
 *
 * Usage: test_decode FIXTURE_DIR (tests/fixtures/nsys).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/decode.h"
#include "collector/names.h"
#include "tests/collector/check.h"

static void test_kernel(void)
{
	CUpti_ActivityKernel10 k;
	struct trace_row row;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 2500;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = 7;
	k.correlationId = 42;
	k.name = "_Z6kernelPf";
	k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
	k.cacheConfig.config.requested = 0;
	k.cacheConfig.config.executed = 2;
	k.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_OPTIN;
	k.registersPerThread = 40;
	k.gridX = 1056;
	k.gridY = 2;
	k.gridZ = 3;
	k.blockX = 256;
	k.blockY = 4;
	k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 2048;
	k.localMemoryPerThread = 16;
	k.localMemoryTotal = 99;
	k.localMemoryTotal_v2 = 155713536;
	k.gridId = 123456789012ll;
	k.sharedMemoryExecuted = 32768;
	k.graphNodeId = 77;
	k.graphId = 5;

	CHECK_EQ_INT(decode_record((CUpti_Activity *)&k, &row), ROW_KERNEL);
	CHECK_EQ_INT(row.kernel.start, 1000);
	CHECK_EQ_INT(row.kernel.end, 2500);
	CHECK_EQ_INT(row.kernel.device_id, 1);
	CHECK_EQ_INT(row.kernel.context_id, 2);
	CHECK_EQ_INT(row.kernel.stream_id, 7);
	CHECK_EQ_INT(row.kernel.correlation_id, 42);
	CHECK_EQ_STR(row.kernel.name, "_Z6kernelPf");
	CHECK_EQ_INT(row.kernel.launch_type, 2);	/* nsys: cooperative single device */
	CHECK_EQ_INT(row.kernel.cache_config, 2);	/* the executed configuration */
	CHECK_EQ_INT(row.kernel.shared_mem_limit_config, 1);
	CHECK_EQ_INT(row.kernel.registers_per_thread, 40);
	CHECK_EQ_INT(row.kernel.grid_x, 1056);
	CHECK_EQ_INT(row.kernel.grid_y, 2);
	CHECK_EQ_INT(row.kernel.grid_z, 3);
	CHECK_EQ_INT(row.kernel.block_x, 256);
	CHECK_EQ_INT(row.kernel.block_y, 4);
	CHECK_EQ_INT(row.kernel.block_z, 1);
	CHECK_EQ_INT(row.kernel.static_shared, 1024);
	CHECK_EQ_INT(row.kernel.dynamic_shared, 2048);
	CHECK_EQ_INT(row.kernel.local_per_thread, 16);
	CHECK_EQ_INT(row.kernel.local_total, 155713536);	/* the 64-bit field wins */
	CHECK_EQ_INT(row.kernel.grid_id, 123456789012ll);
	CHECK_EQ_INT(row.kernel.shared_executed, 32768);
	CHECK_EQ_INT(row.kernel.graph_node_id, 77);
	CHECK_EQ_INT(row.kernel.graph_id, 5);

	/* The serialized kernel kind has the same record. */
	k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	k.localMemoryTotal_v2 = 0;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&k, &row), ROW_KERNEL);
	CHECK_EQ_INT(row.kernel.local_total, 99);
}

static void test_launch_types(void)
{
	CHECK_EQ_INT(decode_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR), 1);
	CHECK_EQ_INT(decode_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE), 2);
	CHECK_EQ_INT(decode_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE), 3);
	CHECK_EQ_INT(decode_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST), 0);
}

static void test_mem_kinds(void)
{
	/* CUPTI numbers unknown first; nsys numbers pageable first and unknown last. */
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN), NSYS_MEM_UNKNOWN);
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE), 0);
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_PINNED), 1);
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE), 2);
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_ARRAY), 3);
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED), 4);
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC), 5);
	CHECK_EQ_INT(decode_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC), 6);
	CHECK_EQ_INT(decode_mem_kind(200), NSYS_MEM_UNKNOWN);
}

static void test_memcpy(void)
{
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemcpyPtoP4 p;
	struct trace_row row;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 4194304;
	m.start = 10;
	m.end = 20;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 13;
	m.correlationId = 99;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&m, &row), ROW_MEMCPY);
	CHECK_EQ_INT(row.memcpy.copy_kind, 1);	/* ENUM_CUDA_MEMCPY_OPER HtoD */
	CHECK_EQ_INT(row.memcpy.src_kind, 0);	/* pageable */
	CHECK_EQ_INT(row.memcpy.dst_kind, 2);	/* device */
	CHECK_EQ_INT(row.memcpy.bytes, 4194304);
	CHECK_EQ_INT(row.memcpy.start, 10);
	CHECK_EQ_INT(row.memcpy.end, 20);
	CHECK_EQ_INT(row.memcpy.stream_id, 13);
	CHECK_EQ_INT(row.memcpy.correlation_id, 99);
	CHECK_EQ_INT(row.memcpy.src_device, ROW_NO_ID);
	CHECK_EQ_INT(row.memcpy.graph_node_id, 0);

	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	decode_record((CUpti_Activity *)&m, &row);
	CHECK_EQ_INT(row.memcpy.copy_kind, 2);
	CHECK_EQ_INT(row.memcpy.src_kind, 2);
	CHECK_EQ_INT(row.memcpy.dst_kind, 1);	/* pinned */

	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p.bytes = 64;
	p.start = 5;
	p.end = 6;
	p.srcDeviceId = 0;
	p.srcContextId = 1;
	p.dstDeviceId = 1;
	p.dstContextId = 2;
	p.graphNodeId = 8;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&p, &row), ROW_MEMCPY);
	CHECK_EQ_INT(row.memcpy.copy_kind, 10);
	CHECK_EQ_INT(row.memcpy.src_device, 0);
	CHECK_EQ_INT(row.memcpy.src_context, 1);
	CHECK_EQ_INT(row.memcpy.dst_device, 1);
	CHECK_EQ_INT(row.memcpy.dst_context, 2);
	CHECK_EQ_INT(row.memcpy.graph_node_id, 8);
}

static void test_memset(void)
{
	CUpti_ActivityMemset4 m;
	struct trace_row row;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = 0xab;
	m.bytes = 4;
	m.start = 100;
	m.end = 150;
	m.streamId = 7;
	m.correlationId = 1679;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&m, &row), ROW_MEMSET);
	CHECK_EQ_INT(row.memset.value, 0xab);
	CHECK_EQ_INT(row.memset.bytes, 4);
	CHECK_EQ_INT(row.memset.mem_kind, 2);
	CHECK_EQ_INT(row.memset.correlation_id, 1679);
}

static void test_sync(void)
{
	CUpti_ActivitySynchronization2 s;
	struct trace_row row;

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 1;
	s.end = 9;
	s.contextId = 1;
	s.streamId = 7;
	s.correlationId = 12;
	s.cudaEventId = 0xffffffffu;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&s, &row), ROW_SYNC);
	CHECK_EQ_INT(row.sync.sync_type, 3);
	CHECK_EQ_INT(row.sync.stream_id, 7);
	CHECK_EQ_INT(row.sync.event_id, 0xffffffffu);
	CHECK_EQ_INT(row.sync.context_id, 1);
}

static void test_api(void)
{
	CUpti_ActivityAPI a;
	struct trace_row row;

	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = 211;
	a.start = 3;
	a.end = 4;
	a.processId = 30156;
	a.threadId = 30157;
	a.correlationId = 158;
	a.returnValue = 0;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&a, &row), ROW_API);
	CHECK_EQ_INT(row.api.event_class, 0);
	CHECK_EQ_INT(row.api.cbid, 211);
	CHECK_EQ_INT(row.api.pid, 30156);
	CHECK_EQ_INT(row.api.tid, 30157);
	CHECK_EQ_INT(row.api.correlation_id, 158);
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.returnValue = 700;
	decode_record((CUpti_Activity *)&a, &row);
	CHECK_EQ_INT(row.api.event_class, 1);
	CHECK_EQ_INT(row.api.return_value, 700);
}

static void test_device_context_stream(void)
{
	CUpti_ActivityDevice5 d;
	CUpti_ActivityContext3 c;
	CUpti_ActivityStream s;
	struct trace_row row;

	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 0;
	d.name = "NVIDIA H200";
	d.globalMemoryBandwidth = 4916736000ull;	/* kB/s */
	d.globalMemorySize = 150137864192ull;
	d.coreClockRate = 1980000;			/* kHz */
	d.numMultiprocessors = 132;
	d.l2CacheSize = 62914560;
	d.computeCapabilityMajor = 9;
	d.computeCapabilityMinor = 0;
	d.maxSharedMemoryPerBlock = 49152;
	d.uuid.bytes[0] = (char)0x9f;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&d, &row), ROW_DEVICE);
	CHECK_EQ_STR(row.device.name, "NVIDIA H200");
	CHECK_EQ_INT(row.device.memory_bandwidth, 4916736000000ull);	/* B/s as nsys */
	CHECK_EQ_INT(row.device.clock_rate, 1980000000ull);		/* Hz as nsys */
	CHECK_EQ_INT(row.device.total_memory, 150137864192ull);
	CHECK_EQ_INT(row.device.sm_count, 132);
	CHECK_EQ_INT(row.device.compute_major, 9);
	CHECK_EQ_INT(row.device.uuid[0], 0x9f);

	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = 3;
	c.deviceId = 1;
	c.nullStreamId = 7;
	c.parentContextId = 2;
	c.isGreenContext = 1;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&c, &row), ROW_CONTEXT);
	CHECK_EQ_INT(row.context.context_id, 3);
	CHECK_EQ_INT(row.context.device_id, 1);
	CHECK_EQ_INT(row.context.null_stream_id, 7);
	CHECK_EQ_INT(row.context.parent_context_id, 2);
	CHECK_EQ_INT(row.context.is_green_context, 1);

	/* Streams: CUPTI's flag numbering is nsys's ENUM_CUPTI_STREAM_TYPE; priority stays unsigned. */
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_STREAM;
	s.contextId = 3;
	s.streamId = 14;
	s.priority = (uint32_t)-5;
	s.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&s, &row), ROW_STREAM);
	CHECK_EQ_INT(row.stream.context_id, 3);
	CHECK_EQ_INT(row.stream.stream_id, 14);
	CHECK_EQ_INT(row.stream.priority, 4294967291u);
	CHECK_EQ_INT(row.stream.flag, 2);

	c.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&c, &row), ROW_NONE);
}

static void check_short(const char *name, const char *expected)
{
	size_t len;
	const char *s = name_short(name, &len);
	char buf[512];

	snprintf(buf, sizeof(buf), "%.*s", (int)len, s);
	if (strcmp(buf, expected) != 0) {
		fprintf(stderr, "short name of '%s': '%s', expected '%s'\n", name, buf, expected);
		check_failures++;
	}
}

static void test_names(void)
{
	char *d = name_demangle("_Z6kernelPf");

	CHECK_EQ_STR(d, "kernel(float*)");
	free(d);
	CHECK(name_demangle("empty_kernel") == NULL);	/* extern "C": nothing to demangle */
	CHECK(name_demangle("_Znot a name") == NULL);
	check_short("kernel(float*)", "kernel");
	check_short("empty_kernel", "empty_kernel");
	check_short("void ns::f<(int)4, std::array<char *, 2>>(int, T2) const", "f");
	check_short("(anonymous namespace)::g(int)", "g");
	check_short("void h<{lambda(int)#1}>(int)", "h");
	d = name_demangle("_ZN6clover19par_ranged2d_kernelIZ11build_fieldR16global_variablesEUliiE_EEvNS_7Range2dET_");
	CHECK(d != NULL);
	if (d)
		check_short(d, "par_ranged2d_kernel");
	free(d);
}

/* Short names computed from nsys's own demangled names, and from ours, equal nsys's short names. */
static void test_names_against_nsys(const char *fixture)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int rows = 0;

	if (sqlite3_open_v2(fixture, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "cannot open %s\n", fixture);
		check_failures++;
		return;
	}
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT d.value, s.value, m.value FROM "
				   "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = "
				   "k.demangledName JOIN StringIds s ON s.id = k.shortName JOIN "
				   "StringIds m ON m.id = k.mangledName", -1, &st, NULL) != SQLITE_OK) {
		check_failures++;
		sqlite3_close(db);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *demangled = (const char *)sqlite3_column_text(st, 0);
		const char *short_name = (const char *)sqlite3_column_text(st, 1);
		const char *mangled = (const char *)sqlite3_column_text(st, 2);
		char *ours = name_demangle(mangled);

		check_short(demangled, short_name);
		check_short(ours ? ours : mangled, short_name);
		free(ours);
		rows++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	CHECK(rows > 10);
}

/* CUPTI's memory records and enums against nsys's: never copied through. */
static void test_memory(void)
{
	CUpti_ActivityMemory4 m;
	CUpti_ActivityMemoryPool3 p;
	struct trace_row row;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;	/* 1 */
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;				/* 3 */
	m.correlationId = 77;
	m.address = 0x7f0000200000ull;
	m.bytes = 1ull << 26;
	m.timestamp = 123456789;
	m.PC = 0x4011aa;
	m.deviceId = 1;
	m.contextId = 2;
	m.streamId = CUPTI_INVALID_STREAM_ID;
	m.name = "scratch";
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&m, &row), ROW_MEMORY);
	CHECK_EQ_INT(row.memory.operation, 0);		/* nsys: 0 allocation */
	CHECK_EQ_INT(row.memory.mem_kind, 2);		/* nsys: 2 device */
	CHECK_EQ_INT(row.memory.start, 123456789);
	CHECK_EQ_INT(row.memory.correlation_id, 77);
	CHECK_EQ_INT(row.memory.address, 0x7f0000200000ull);
	CHECK_EQ_INT(row.memory.bytes, 1ull << 26);
	CHECK_EQ_INT(row.memory.pc, 0x4011aa);
	CHECK_EQ_INT(row.memory.device_id, 1);
	CHECK_EQ_INT(row.memory.context_id, 2);
	CHECK_EQ_INT(row.memory.stream_id, ROW_NO_ID);
	CHECK_EQ_STR(row.memory.name, "scratch");
	CHECK(row.memory.pool_address == ROW_NO_POOL && row.memory.pool_size == ROW_NO_POOL &&
	      row.memory.imported_pool_address == ROW_NO_POOL);

	/* A module's static allocation: CUPTI says stream 0, but it is not stream-ordered. */
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
	m.streamId = 0;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&m, &row), ROW_MEMORY);
	CHECK_EQ_INT(row.memory.mem_kind, 5);		/* nsys: 5 device static */
	CHECK_EQ_INT(row.memory.stream_id, ROW_NO_ID);
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.streamId = CUPTI_INVALID_STREAM_ID;

	/* A stream-ordered release from a local pool: its pool's state comes along. */
	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;		/* 2 */
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;				/* 0 */
	m.isAsync = 1;
	m.streamId = 13;
	m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	m.memoryPoolConfig.address = 0x7f0000000000ull;
	m.memoryPoolConfig.releaseThreshold = 1ull << 30;
	m.memoryPoolConfig.pool.size = 1ull << 28;
	m.memoryPoolConfig.utilizedSize = 1ull << 27;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&m, &row), ROW_MEMORY);
	CHECK_EQ_INT(row.memory.operation, 1);		/* nsys: 1 deallocation */
	CHECK_EQ_INT(row.memory.mem_kind, 7);		/* nsys: 7 unknown */
	CHECK_EQ_INT(row.memory.stream_id, 13);
	CHECK_EQ_INT(row.memory.pool_address, 0x7f0000000000ull);
	CHECK_EQ_INT(row.memory.pool_release_threshold, 1ull << 30);
	CHECK_EQ_INT(row.memory.pool_size, 1ull << 28);
	CHECK_EQ_INT(row.memory.pool_utilized, 1ull << 27);
	CHECK(row.memory.imported_pool_address == ROW_NO_POOL);

	m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
	m.memoryPoolConfig.pool.processId = 4321;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&m, &row), ROW_MEMORY);
	CHECK_EQ_INT(row.memory.imported_pool_address, 0x7f0000000000ull);
	CHECK_EQ_INT(row.memory.imported_pool_pid, 4321);
	CHECK(row.memory.pool_address == ROW_NO_POOL);

	m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&m, &row), ROW_NONE);
	CHECK_EQ_INT(decode_mem_oper(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION), 0);
	CHECK_EQ_INT(decode_mem_oper(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE), 1);

	memset(&p, 0, sizeof(p));
	p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
	p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	p.correlationId = 91;
	p.deviceId = 3;
	p.minBytesToKeep = 4096;
	p.address = 0x7f0000000000ull;
	p.size = 1ull << 28;
	p.releaseThreshold = 0;
	p.timestamp = 999;
	p.utilizedSize = 12;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&p, &row), ROW_MEMPOOL);
	CHECK_EQ_INT(row.mempool.operation, 3);		/* nsys ENUM_CUDA_MEMPOOL_OPER trimmed */
	CHECK_EQ_INT(row.mempool.pool_type, 1);		/* nsys ENUM_CUDA_MEMPOOL_TYPE local */
	CHECK_EQ_INT(row.mempool.start, 999);
	CHECK_EQ_INT(row.mempool.device_id, 3);
	CHECK_EQ_INT(row.mempool.correlation_id, 91);
	CHECK_EQ_INT(row.mempool.min_bytes_to_keep, 4096);
	CHECK_EQ_INT(row.mempool.release_threshold, 0);
	CHECK_EQ_INT(row.mempool.size, 1ull << 28);
	CHECK_EQ_INT(row.mempool.utilized, 12);
	p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
	p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
	CHECK_EQ_INT(decode_record((CUpti_Activity *)&p, &row), ROW_MEMPOOL);
	CHECK_EQ_INT(row.mempool.operation, 1);
	CHECK_EQ_INT(row.mempool.pool_type, 2);
	CHECK(row.mempool.min_bytes_to_keep == ROW_NO_POOL && row.mempool.size == ROW_NO_POOL);
}

int main(int argc, char **argv)
{
	char path[1024];

	test_kernel();
	test_launch_types();
	test_mem_kinds();
	test_memcpy();
	test_memset();
	test_memory();
	test_sync();
	test_api();
	test_device_context_stream();
	test_names();
	if (argc > 1) {
		snprintf(path, sizeof(path), "%s/nvfuser_report1_h200.sqlite", argv[1]);
		test_names_against_nsys(path);
		snprintf(path, sizeof(path), "%s/pipit_cloverleaf_cuda_perlmutter.sqlite", argv[1]);
		test_names_against_nsys(path);
	}
	return check_exit("test_decode");
}
