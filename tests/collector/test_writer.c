/*
 * The trace writer: rows written through writer.h are read back with SQLite and checked (tables,
 * counts, StringIds, relative timestamps, globalPid/globalTid packing, GPT_META facts, the export
 * version rows, end-of-run tables: threads, CUDA contexts and streams), and the file rules: no file
 * without events, never overwrite (".1"), force, one error line for a directory that does not exist
 * and for a full disk (RLIMIT_FSIZE).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schema/schema-version.h"
#include "collector/writer.h"
#include "tests/collector/check.h"

#define ORIGIN 1000000000000ull
#define PID 4242

static int reports;
static char last_report[1024];

static void count_report(const char *line)
{
	reports++;
	snprintf(last_report, sizeof(last_report), "%s", line);
}

static const char *api_name(int event_class, uint32_t cbid)
{
	if (event_class == 0 && cbid == 211)
		return "cudaLaunchKernel_v7000";
	if (event_class == 1 && cbid == 307)
		return "cuLaunchKernel";
	return NULL;
}

static struct writer *new_writer(const char *path, int force)
{
	struct writer_options o = {
		.path = path,
		.force = force,
		.time_origin = ORIGIN,
		.time_origin_utc_ns = 1733877925987393218ull,
		.pid = PID,
		.api_name = api_name,
		.report = count_report,
	};

	return writer_new(&o);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static struct kernel_row kernel(const char *name, uint64_t start, uint32_t correlation)
{
	struct kernel_row k = {
		.start = ORIGIN + start,
		.end = ORIGIN + start + 1500,
		.device_id = 0,
		.context_id = 1,
		.stream_id = 7,
		.correlation_id = correlation,
		.name = name,
		.launch_type = 1,
		.registers_per_thread = 16,
		.grid_x = 1, .grid_y = 1, .grid_z = 1,
		.block_x = 32, .block_y = 1, .block_z = 1,
		.grid_id = 5,
	};

	return k;
}

static void test_no_events_no_file(const char *dir)
{
	char path[600];
	struct writer *w;
	struct device_row dev = { .id = 0, .name = "GPU" };
	struct context_row ctx = { .context_id = 1, .device_id = 0 };

	snprintf(path, sizeof(path), "%s/empty.sqlite", dir);
	w = new_writer(path, 0);
	/* Facts that are not events do not create the file. */
	writer_device(w, &dev);
	writer_context(w, &ctx);
	writer_meta(w, "pid", "1");
	writer_thread_name(w, 1, "main", 4);
	CHECK_EQ_INT(writer_finish(w, 0), 0);
	CHECK(!exists(path));
	CHECK(writer_path(w) == NULL);
	writer_free(w);
}

static void test_rows(const char *dir)
{
	char path[600], text[256], sql[512], comm[17] = "";
	struct writer *w;
	sqlite3 *db;
	struct kernel_row k;
	struct memcpy_row m = {
		.start = ORIGIN + 10, .end = ORIGIN + 20, .device_id = 0, .context_id = 1,
		.stream_id = 13, .correlation_id = 3, .bytes = 4096, .copy_kind = 1, .src_kind = 0,
		.dst_kind = 2, .src_device = ROW_NO_ID, .src_context = ROW_NO_ID,
		.dst_device = ROW_NO_ID, .dst_context = ROW_NO_ID,
	};
	struct memset_row s = {
		.start = ORIGIN + 30, .end = ORIGIN + 40, .context_id = 1, .stream_id = 13,
		.correlation_id = 4, .value = 0, .bytes = 64, .mem_kind = 2,
	};
	struct sync_row y = {
		.start = ORIGIN + 50, .end = ORIGIN + 90, .context_id = 2, .stream_id = 13,
		.correlation_id = 5, .sync_type = 3, .event_id = 0xffffffffu,
	};
	struct api_row a = {
		.start = ORIGIN + 1, .end = ORIGIN + 9, .event_class = 0, .cbid = 211, .pid = PID,
		.tid = (uint32_t)gettid(), .correlation_id = 1,
	};
	struct nvtx_row n = {
		.start = ORIGIN + 5, .end = ORIGIN + 95, .has_end = 1, .event_type = 59,
		.text = "step", .text_len = 4, .text_id = -1, .tid = (uint32_t)gettid(), .domain = 0,
		.payload_type = 2, .payload = (uint64_t)-7,
	};
	struct device_row dev = {
		.id = 1, .name = "NVIDIA H200", .total_memory = 150137864192ull,
		.memory_bandwidth = 4916736000000ull, .clock_rate = 1980000000ull, .sm_count = 132,
		.compute_major = 9, .compute_minor = 0,
	};
	struct context_row ctx = { .context_id = 2, .device_id = 1, .null_stream_id = 13 };
	struct stream_row stream = {
		.context_id = 1, .stream_id = 7, .priority = 4294967291u, .flag = 1,
	};

	prctl(PR_GET_NAME, comm);
	snprintf(path, sizeof(path), "%s/rows.sqlite", dir);
	w = new_writer(path, 0);
	writer_meta(w, "command_line", "./app --size 4096");
	writer_device(w, &dev);
	writer_context(w, &ctx);
	writer_stream(w, &stream);
	k = kernel("_Z6kernelPf", 100, 1);
	CHECK_EQ_INT(writer_kernel(w, &k), 0);
	CHECK(exists(path));	/* created on the first event */
	k = kernel("_Z6kernelPf", 2000, 2);
	k.graph_id = 9;
	k.graph_node_id = 77;
	CHECK_EQ_INT(writer_kernel(w, &k), 0);
	k = kernel("plain_kernel", 4000, 6);
	CHECK_EQ_INT(writer_kernel(w, &k), 0);
	CHECK_EQ_INT(writer_memcpy(w, &m), 0);
	CHECK_EQ_INT(writer_memset(w, &s), 0);
	CHECK_EQ_INT(writer_sync(w, &y), 0);
	CHECK_EQ_INT(writer_api(w, &a), 0);
	a.correlation_id = 2;
	CHECK_EQ_INT(writer_api(w, &a), 0);
	a.event_class = 1;
	a.cbid = 307;
	a.correlation_id = 6;
	CHECK_EQ_INT(writer_api(w, &a), 0);
	a.cbid = 9999;	/* a name CUPTI does not give */
	a.correlation_id = 7;
	CHECK_EQ_INT(writer_api(w, &a), 0);
	/* correlationId is the API table's primary key: a repeat is counted, not stored, not fatal. */
	CHECK_EQ_INT(writer_api(w, &a), 0);
	CHECK_EQ_INT(writer_nvtx(w, &n), 0);
	writer_count_untimed(w);
	writer_thread_name(w, 12345, "loader", 6);
	CHECK_EQ_INT(writer_finish(w, 5), 1);
	CHECK_EQ_STR(writer_path(w), path);
	CHECK_EQ_INT(reports, 0);
	writer_free(w);

	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 3);
	CHECK_EQ_INT(query_int(db, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 100);
	CHECK_EQ_INT(query_int(db, "SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 5500);
	CHECK_EQ_INT(query_int(db, "SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1"),
		     (long long)PID << 24);
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
				    "StringIds s ON s.id = k.demangledName WHERE correlationId = 1",
				text, sizeof(text)),
		     "kernel(float*)");
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
				    "StringIds s ON s.id = k.shortName WHERE correlationId = 1",
				text, sizeof(text)),
		     "kernel");
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
				    "StringIds s ON s.id = k.mangledName WHERE correlationId = 1",
				text, sizeof(text)),
		     "_Z6kernelPf");
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
				    "StringIds s ON s.id = k.demangledName WHERE correlationId = 6",
				text, sizeof(text)),
		     "plain_kernel");
	/* Each distinct string once. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) - count(DISTINCT value) FROM StringIds"), 0);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE "
				   "graphId IS NULL AND graphNodeId IS NULL"), 2);
	CHECK_EQ_INT(query_int(db, "SELECT graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE "
				   "graphId = 9"), 77);
	CHECK_EQ_INT(query_int(db, "SELECT srcKind * 10 + dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 2);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE "
				   "srcDeviceId IS NULL"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT memKind FROM CUPTI_ACTIVITY_KIND_MEMSET"), 2);
	/* Sync rows take their device from the context's record. */
	CHECK_EQ_INT(query_int(db, "SELECT deviceId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT syncType FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"), 3);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 4);
	CHECK_EQ_INT(query_int(db, "SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1"),
		     ((long long)PID << 24) | gettid());
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
				    "StringIds s ON s.id = r.nameId WHERE correlationId = 1",
				text, sizeof(text)),
		     "cudaLaunchKernel_v7000");
	CHECK_EQ_INT(query_int(db, "SELECT eventClass FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN "
				   "StringIds s ON s.id = r.nameId WHERE s.value = 'cuLaunchKernel'"),
		     1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM StringIds WHERE value = 'cu_cbid_9999'"), 1);
	CHECK_EQ_STR(query_text(db, "SELECT text FROM NVTX_EVENTS", text, sizeof(text)), "step");
	CHECK_EQ_INT(query_int(db, "SELECT int64Value FROM NVTX_EVENTS"), -7);
	CHECK_EQ_INT(query_int(db, "SELECT end - start FROM NVTX_EVENTS"), 90);

	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'gpt_schema_version'",
				text, sizeof(text)),
		     GPT_SCHEMA_VERSION);
	/* The export version rows tools branch on, as nsys writes them: the schema we copy. */
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(value, '.') FROM (SELECT value FROM "
				    "META_DATA_EXPORT WHERE name LIKE 'EXPORT_SCHEMA_VERSION_M%' "
				    "ORDER BY name = 'EXPORT_SCHEMA_VERSION_MICRO', "
				    "name = 'EXPORT_SCHEMA_VERSION_MINOR')", text, sizeof(text)),
		     "3.16.1");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = "
				    "'EXPORT_SCHEMA_VERSION'", text, sizeof(text)),
		     "3.16.1");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = "
				    "'EXPORT_PRODUCT_NAME'", text, sizeof(text)),
		     "gpt-trace");
	/* Contexts: the described one, and one only the rows name (its NULL stream unknown: 0). */
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(r, ' ') FROM (SELECT nullStreamId || ',' || "
				    "hwId || ',' || vmId || ',' || processId || ',' || deviceId || ',' || "
				    "contextId || ',' || parentContextId || ',' || isGreenContext AS r "
				    "FROM TARGET_INFO_CUDA_CONTEXT_INFO ORDER BY contextId)",
				text, sizeof(text)),
		     "0,0,0,4242,0,1,0,0 13,0,0,4242,1,2,0,0");
	/*
	 * Streams: the one CUPTI described keeps its priority (-5 as CUPTI's unsigned value, as nsys
	 * stores it) and flag; the others are the NULL stream of their context (flag 3) or unknown.
	 */
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(r, ' ') FROM (SELECT contextId || ':' || "
				    "streamId || ',' || processId || ',' || priority || ',' || flag AS r "
				    "FROM TARGET_INFO_CUDA_STREAM ORDER BY contextId, streamId)",
				text, sizeof(text)),
		     "1:7,4242,4294967291,1 1:13,4242,0,0 2:13,4242,0,3");
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM ENUM_CUPTI_STREAM_TYPE"), 4);
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'time_origin_ns'",
				text, sizeof(text)),
		     "1000000000000");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'cupti_dropped_records'",
				text, sizeof(text)),
		     "5");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'kernel_records'",
				text, sizeof(text)),
		     "3");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'api_records'", text,
				sizeof(text)),
		     "4");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'untimed_records'",
				text, sizeof(text)),
		     "1");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'trace_complete'",
				text, sizeof(text)),
		     "1");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'command_line'", text,
				sizeof(text)),
		     "./app --size 4096");
	CHECK_EQ_STR(query_text(db, "SELECT name FROM TARGET_INFO_GPU WHERE id = 1", text,
				sizeof(text)),
		     "NVIDIA H200");
	CHECK_EQ_INT(query_int(db, "SELECT memoryBandwidth FROM TARGET_INFO_GPU"), 4916736000000ll);
	CHECK_EQ_INT(query_int(db, "SELECT smCount FROM TARGET_INFO_GPU"), 132);
	CHECK_EQ_INT(query_int(db, "SELECT pid FROM PROCESSES"), PID);
	CHECK_EQ_INT(query_int(db, "SELECT globalPid FROM PROCESSES"), (long long)PID << 24);
	CHECK_EQ_INT(query_int(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"),
		     1733877925987393218ll);
	CHECK_EQ_STR(query_text(db, "SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME", text,
				sizeof(text)),
		     "2024-12-11T00:45:25");
	/*
	 * The API rows' thread is alive (this one): its name and priority are read from /proc; plus
	 * the one named with nvtxNameOsThread, which has no priority (it was never alive).
	 */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM ThreadNames"), 2);
	CHECK_EQ_INT(query_int(db, "SELECT t.globalTid FROM ThreadNames t JOIN StringIds s ON "
				   "s.id = t.nameId WHERE s.value = 'loader' AND priority IS NULL"),
		     ((long long)PID << 24) | 12345);
	snprintf(sql, sizeof(sql), "SELECT s.value FROM ThreadNames t JOIN StringIds s ON "
		 "s.id = t.nameId WHERE t.globalTid = %lld AND t.priority = %d",
		 ((long long)PID << 24) | gettid(), 20 + getpriority(PRIO_PROCESS, 0));
	CHECK_EQ_STR(query_text(db, sql, text, sizeof(text)), comm);
	CHECK_EQ_INT(query_int(db, "SELECT pk FROM pragma_table_info('CUPTI_ACTIVITY_KIND_RUNTIME') "
				   "WHERE name = 'correlationId'"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 4);
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'api_records_duplicate'",
				text, sizeof(text)),
		     "1");
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM ENUM_CUDA_MEM_KIND"), 8);
	CHECK_EQ_STR(query_text(db, "PRAGMA integrity_check", text, sizeof(text)), "ok");
	sqlite3_close(db);
	CHECK(!exists("rows.sqlite-journal"));
}

/*
 * GPU metrics (collector/sample-rows.h): a batch of two samples of device 3 becomes two
 * GPT_GPU_METRICS rows (relative times, counts, NULL for what was not sampled) and GPU_METRICS rows
 * as nsys stores them: integer percentages, typeId & 0xFF the device, metrics described once in
 * TARGET_INFO_GPU_METRICS; DRAM shares from CUPTI's percentage, or bytes over the device's peak;
 * idle samples stored too (as nsys stores them: SQL averaging rows over a window averages time) and
 * counted apart in GPT_META.
 */
static void test_gpu_metrics(const char *dir)
{
	struct gpu_metrics_batch *b = calloc(1, sizeof(*b) + 5 * sizeof(b->samples[0]));
	struct device_row dev = { .id = 3, .name = "NVIDIA H100", .memory_bandwidth = 3352000000000ull };
	char path[600], text[1024];
	struct writer *w;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/gpu-metrics.sqlite", dir);
	w = new_writer(path, 0);
	writer_device(w, &dev);
	b->device_id = 3;
	b->sampled = 1u << GPM_SM_CYCLES_ELAPSED | 1u << GPM_SM_CYCLES_ACTIVE | 1u << GPM_TENSOR_CYCLES |
		     1u << GPM_TENSOR_PCT | 1u << GPM_HMMA_PCT | 1u << GPM_DRAM_READ_BYTES |
		     1u << GPM_DRAM_WRITE_BYTES | 1u << GPM_DRAM_READ_PCT | 1u << GPM_GPC_CYCLES_AVG |
		     1u << GPM_PCIE_READ_BYTES | 1u << GPM_NVLINK_RX_BYTES;
	b->count = 2;
	for (int i = 0; i < 2; i++) {
		struct gpu_metrics_sample *s = &b->samples[i];

		for (int m = 0; m < GPM_NR; m++)
			s->value[m] = NAN;
		s->start = ORIGIN + 1000 + 100000 * (uint64_t)i;
		s->end = s->start + 100000;
		s->value[GPM_SM_CYCLES_ELAPSED] = 26136200;
		s->value[GPM_SM_CYCLES_ACTIVE] = i ? 13068100 : 26136200;	/* 100%, then 50% */
		s->value[GPM_TENSOR_CYCLES] = 4 * 26136200 * 0.25;		/* 25% without a pct */
		s->value[GPM_DRAM_READ_BYTES] = 167600000;			/* 50% of 3.352 TB/s */
		s->value[GPM_DRAM_WRITE_BYTES] = 33520000;			/* 10% */
		s->value[GPM_GPC_CYCLES_AVG] = 198000;				/* 1.98 GHz */
	}
	b->samples[1].value[GPM_TENSOR_PCT] = 80.4;
	b->samples[1].value[GPM_HMMA_PCT] = 79.6;
	b->samples[1].value[GPM_DRAM_READ_PCT] = 61.6;
	/* An idle sample (no SM active, 3 KB of traffic in 100 us) is stored, and counted as idle. */
	b->count = 3;
	for (int m = 0; m < GPM_NR; m++)
		b->samples[2].value[m] = NAN;
	b->samples[2].start = ORIGIN + 201000;
	b->samples[2].end = ORIGIN + 301000;
	b->samples[2].value[GPM_SM_CYCLES_ELAPSED] = 26136200;
	b->samples[2].value[GPM_SM_CYCLES_ACTIVE] = 0;
	b->samples[2].value[GPM_DRAM_READ_BYTES] = 2048;
	b->samples[2].value[GPM_PCIE_READ_BYTES] = 1024;
	/* No SM active either, but 50 MB over NVLink (a peer reading this GPU): not idle. */
	b->count = 4;
	b->samples[3] = b->samples[2];
	b->samples[3].start = ORIGIN + 301000;
	b->samples[3].end = ORIGIN + 401000;
	b->samples[3].value[GPM_NVLINK_RX_BYTES] = 50e6;
	/* No SM cycles at all (a GPU that never ran a kernel) and 3 KB moved: idle, and its SM rows
	 * are 0, so that it has the rows of a GPU that ran kernels (NVIDIA's recipes pivot them). */
	b->count = 5;
	b->samples[4] = b->samples[2];
	b->samples[4].start = ORIGIN + 401000;
	b->samples[4].end = ORIGIN + 501000;
	b->samples[4].value[GPM_SM_CYCLES_ELAPSED] = NAN;
	b->samples[4].value[GPM_SM_CYCLES_ACTIVE] = NAN;
	CHECK_EQ_INT(writer_gpu_metrics(w, b), 0);
	CHECK_EQ_INT(writer_finish(w, 0), 1);
	writer_free(w);
	free(b);
	CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(start || ',' || end || ',' || deviceId || ',' || "
				    "CAST(smCyclesActive AS INT) || ',' || CAST(dramReadBytes AS INT) || ',' || "
				    "ifnull(pcieReadBytes, 'NULL'), ' ') FROM GPT_GPU_METRICS", text, sizeof(text)),
		     "1000,101000,3,26136200,167600000,NULL 101000,201000,3,13068100,167600000,NULL "
		     "201000,301000,3,0,2048,1024.0 301000,401000,3,0,2048,1024.0");
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM GPT_GPU_METRICS"), 5);
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(r, '; ') FROM (SELECT timestamp || ':' || m.metricName || "
				    "'=' || value AS r FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, "
				    "metricId) WHERE g.typeId & 255 = 3 AND metricName NOT LIKE 'GPC%' ORDER BY timestamp, "
				    "metricId)", text, sizeof(text)),
		     "1000:SMs Active [Throughput %]=100; 1000:Tensor Active [Throughput %]=25; "
		     "1000:DRAM Read Bandwidth [Throughput %]=50; 1000:DRAM Write Bandwidth [Throughput %]=10; "
		     "101000:SMs Active [Throughput %]=50; 101000:Tensor Active [Throughput %]=80; "
		     "101000:DRAM Read Bandwidth [Throughput %]=62; 101000:DRAM Write Bandwidth [Throughput %]=10; "
		     "101000:HMMA Tensor Active [Throughput %]=80; "
		     "201000:SMs Active [Throughput %]=0; 201000:DRAM Read Bandwidth [Throughput %]=0; "
		     "301000:SMs Active [Throughput %]=0; 301000:DRAM Read Bandwidth [Throughput %]=0; "
		     "401000:SMs Active [Throughput %]=0; 401000:Tensor Active [Throughput %]=0; "
		     "401000:DRAM Read Bandwidth [Throughput %]=0; 401000:HMMA Tensor Active [Throughput %]=0");
	CHECK_EQ_INT(query_int(db, "SELECT value FROM GPU_METRICS WHERE metricId = 0 LIMIT 1"), 1980000000);
	/* nsys's tensor row alone under its prefix: ours per precision are named apart */
	CHECK_EQ_INT(query_int(db, "SELECT count(DISTINCT metricName) FROM TARGET_INFO_GPU_METRICS "
				   "WHERE metricName LIKE 'Tensor Active%'"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT value FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, "
				   "metricId) WHERE metricName = 'HMMA Tensor Active [Throughput %]'"), 80);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM TARGET_INFO_GPU_METRICS"), 6);
	/* the device as nsys's recipes join it: gpuId (TARGET_INFO_GPU.id) and the process */
	CHECK_EQ_STR(query_text(db, "SELECT gpuId || ',' || cudaId || ',' || (pid = (SELECT pid FROM PROCESSES "
				    "LIMIT 1)) FROM TARGET_INFO_CUDA_DEVICE", text, sizeof(text)), "3,3,1");
	CHECK_EQ_INT(query_int(db, "SELECT count(DISTINCT typeId) FROM GPU_METRICS"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT typeId FROM TARGET_INFO_GPU_METRICS LIMIT 1"), 0x1000100000003ll);
	CHECK_EQ_INT(query_int(db, "SELECT min(rawTimestamp) FROM GPU_METRICS"), (long long)(ORIGIN + 1000));
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples'", text,
				sizeof(text)), "3");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'gpu_metric_samples_idle'",
				text, sizeof(text)), "2");
	sqlite3_close(db);
}

/*
 * nsys's GH100 set, as the sampler takes it on the H200 (inject/gpu-metrics-chip.c): its names, the
 * clocks in Hz, and two GPUs with the same rows though one ran no kernel (its SMs read NaN).
 */
static void test_gpu_metrics_nsys_set(const char *dir)
{
	static const enum gpu_metric_raw sm_pcts[] = { GPM_SM_ACTIVE_PCT, GPM_SM_ISSUE_PCT, GPM_TENSOR_PCT,
						       GPM_WARPS_PCT, GPM_VTG_WARPS_PCT, GPM_PS_WARPS_PCT,
						       GPM_UNALLOC_WARPS_PCT, GPM_HMMA_PCT };
	struct gpu_metrics_batch *b = calloc(1, sizeof(*b) + sizeof(b->samples[0]));
	char path[600], text[2048];
	struct writer *w;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/gpu-metrics-nsys.sqlite", dir);
	w = new_writer(path, 0);
	writer_meta(w, "gpu_metrics_interval_ns", "100000");
	b->sampled = 1u << GPM_SM_CYCLES_ELAPSED | 1u << GPM_SM_CYCLES_ACTIVE | 1u << GPM_DRAM_READ_PCT |
		     1u << GPM_DRAM_WRITE_PCT | 1u << GPM_GR_ACTIVE_PCT | 1u << GPM_GPC_CLOCK_HZ |
		     1u << GPM_SYS_CLOCK_HZ;
	for (size_t i = 0; i < sizeof(sm_pcts) / sizeof(sm_pcts[0]); i++)
		b->sampled |= 1u << sm_pcts[i];
	b->count = 1;
	for (uint32_t dev = 0; dev < 2; dev++) {
		struct gpu_metrics_sample *s = &b->samples[0];

		b->device_id = dev;
		for (int m = 0; m < GPM_NR; m++)
			s->value[m] = NAN;
		s->start = ORIGIN + 1000;
		s->end = s->start + 100000;
		s->value[GPM_DRAM_READ_PCT] = dev ? 0.2 : 40.4;
		s->value[GPM_DRAM_WRITE_PCT] = 0;
		s->value[GPM_GR_ACTIVE_PCT] = dev ? 0 : 100;
		s->value[GPM_GPC_CLOCK_HZ] = 1.98e9;
		s->value[GPM_SYS_CLOCK_HZ] = 1.665e9;
		if (!dev) {	/* device 1 ran no kernel: every SM value NaN */
			s->value[GPM_SM_CYCLES_ELAPSED] = 26136200;
			s->value[GPM_SM_CYCLES_ACTIVE] = 26000000;
			for (size_t i = 0; i < sizeof(sm_pcts) / sizeof(sm_pcts[0]); i++)
				s->value[sm_pcts[i]] = 10.0 * (double)(i + 1);
		}
		CHECK_EQ_INT(writer_gpu_metrics(w, b), 0);
	}
	CHECK_EQ_INT(writer_finish(w, 0), 1);
	writer_free(w);
	free(b);
	CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(r, '; ') FROM (SELECT m.metricName || '=' || value AS r "
				    "FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING (typeId, metricId) "
				    "WHERE g.typeId & 255 = 0 ORDER BY metricId)", text, sizeof(text)),
		     "GPC Clock Frequency [MHz]=1980000000; GR Active [Throughput %]=100; SMs Active [Throughput %]=10; "
		     "Tensor Active [Throughput %]=30; Compute Warps in Flight [Throughput %]=40; "
		     "DRAM Read Bandwidth [Throughput %]=40; DRAM Write Bandwidth [Throughput %]=0; "
		     "HMMA Tensor Active [Throughput %]=80; SYS Clock Frequency [MHz]=1665000000; "
		     "SM Issue [Throughput %]=20; Vertex/Tess/Geometry Warps in Flight [Throughput %]=50; "
		     "Pixel Warps in Flight [Throughput %]=60; Unallocated Warps in Active SMs [Throughput %]=70");
	/* the same metrics on both GPUs; the idle one's SM rows 0 */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM (SELECT metricName FROM TARGET_INFO_GPU_METRICS WHERE "
				   "typeId & 255 = 0 EXCEPT SELECT metricName FROM TARGET_INFO_GPU_METRICS WHERE "
				   "typeId & 255 = 1)"), 0);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM GPU_METRICS WHERE typeId & 255 = 1"), 13);
	/* the rate as nsys records it: Hz (text: the column is TEXT, as in nsys's DDL) */
	CHECK_EQ_STR(query_text(db, "SELECT value || ' ' || typeof(value) FROM META_DATA_CAPTURE WHERE name = "
				    "'GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY'", text, sizeof(text)), "10000 text");
	CHECK_EQ_INT(query_int(db, "SELECT sum(value) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS m USING "
				   "(typeId, metricId) WHERE g.typeId & 255 = 1 AND (metricName LIKE 'SM%' OR "
				   "metricName LIKE '%Warps%' OR metricName LIKE '%Tensor%')"), 0);
	sqlite3_close(db);
}

static void test_no_overwrite(const char *dir)
{
	char path[600], second[620];
	struct writer *w;
	struct kernel_row k = kernel("k", 1, 1);
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/same.sqlite", dir);
	snprintf(second, sizeof(second), "%s/same.1.sqlite", dir);
	w = new_writer(path, 0);
	writer_kernel(w, &k);
	CHECK_EQ_INT(writer_finish(w, 0), 1);
	writer_free(w);

	w = new_writer(path, 0);
	writer_kernel(w, &k);
	writer_kernel(w, &k);
	CHECK_EQ_INT(writer_finish(w, 0), 1);
	CHECK_EQ_STR(writer_path(w), second);
	writer_free(w);
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	sqlite3_close(db);
	sqlite3_open_v2(second, &db, SQLITE_OPEN_READONLY, NULL);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2);
	sqlite3_close(db);

	/* force: the same name, replaced. */
	w = new_writer(path, 1);
	for (int i = 0; i < 3; i++)
		writer_kernel(w, &k);
	CHECK_EQ_INT(writer_finish(w, 0), 1);
	CHECK_EQ_STR(writer_path(w), path);
	writer_free(w);
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 3);
	sqlite3_close(db);
	CHECK_EQ_INT(reports, 0);
}

static void test_bad_directory(const char *dir)
{
	char path[600], expected[700];
	struct writer *w;
	struct kernel_row k = kernel("k", 1, 1);

	snprintf(path, sizeof(path), "%s/missing/dir/t.sqlite", dir);
	reports = 0;
	w = new_writer(path, 0);
	CHECK_EQ_INT(writer_kernel(w, &k), -1);
	CHECK_EQ_INT(writer_kernel(w, &k), -1);
	CHECK_EQ_INT(writer_finish(w, 0), -1);
	snprintf(expected, sizeof(expected), "cannot create trace '%s': No such file or directory",
		 path);
	CHECK_EQ_STR(writer_error(w), expected);
	CHECK_EQ_INT(reports, 1);	/* one line, however many rows follow */
	CHECK_EQ_STR(last_report, expected);
	CHECK(!exists(path));
	writer_free(w);
}

static void test_disk_full(const char *dir)
{
	char path[600];
	struct writer *w;
	struct rlimit old, small;
	struct kernel_row k;
	int failed = 0, i;

	snprintf(path, sizeof(path), "%s/full.sqlite", dir);
	reports = 0;
	/* A file size limit behaves like a full disk: write() fails (EFBIG). */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = 256 * 1024;
	setrlimit(RLIMIT_FSIZE, &small);
	w = new_writer(path, 0);
	for (i = 0; i < 100000 && !failed; i++) {
		char name[32];

		snprintf(name, sizeof(name), "kernel_%d", i % 5000);
		k = kernel(name, (uint64_t)i * 10, (uint32_t)i);
		if (writer_kernel(w, &k) < 0)
			failed = 1;
		else if (i % 1000 == 999 && writer_tick(w, (uint64_t)i * 1000000000ull, 1) < 0)
			failed = 1;
	}
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(failed);
	CHECK_EQ_INT(writer_finish(w, 0), -1);
	CHECK_EQ_INT(reports, 1);
	CHECK(strncmp(last_report, "cannot write trace '", 20) == 0);
	fprintf(stderr, "disk full reported as: %s\n", last_report);
	writer_free(w);
}

/* GPU memory rows: columns, NULLs, and the bound on their number (memory_records_dropped). */
static void test_memory_rows(const char *dir)
{
	char path[600];
	struct writer_options o = {
		.path = path, .time_origin = ORIGIN, .time_origin_utc_ns = 1733877925987393218ull,
		.pid = PID, .api_name = api_name, .report = count_report, .memory_max = 3,
	};
	struct memory_row m = {
		.start = ORIGIN + 100, .device_id = 0, .context_id = 1, .correlation_id = 9,
		.stream_id = ROW_NO_ID, .address = 0x7f0000200000ull, .pc = 0, .bytes = 1 << 20,
		.mem_kind = 2, .operation = 0, .name = NULL,
		.pool_address = ROW_NO_POOL, .pool_release_threshold = ROW_NO_POOL, .pool_size = ROW_NO_POOL,
		.pool_utilized = ROW_NO_POOL, .imported_pool_address = ROW_NO_POOL,
		.imported_pool_pid = ROW_NO_POOL,
	};
	struct mempool_row p = {
		.start = ORIGIN + 150, .device_id = 0, .correlation_id = 10, .address = 0x7f0000000000ull,
		.operation = 1, .pool_type = 1, .min_bytes_to_keep = ROW_NO_POOL, .release_threshold = 0,
		.size = 1 << 21, .utilized = 0,
	};
	struct writer *w;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/memory.sqlite", dir);
	w = writer_new(&o);
	CHECK(w != NULL);
	CHECK_EQ_INT(writer_memory(w, &m), 0);
	m.start += 100;
	m.operation = 1;
	m.stream_id = 13;
	m.pool_address = 0x7f0000000000ull;
	m.pool_size = 1 << 21;
	CHECK_EQ_INT(writer_memory(w, &m), 0);
	CHECK_EQ_INT(writer_mempool(w, &p), 0);
	CHECK_EQ_INT(writer_memory(w, &m), 0);	/* the fourth row: over the bound, counted */
	CHECK_EQ_INT(writer_mempool(w, &p), 0);
	CHECK_EQ_INT(writer_finish(w, 0), 1);
	writer_free(w);
	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS"), 2);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_POOL_EVENTS"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT start FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType = 0"), 100);
	CHECK_EQ_INT(query_int(db, "SELECT globalPid FROM CUDA_GPU_MEMORY_USAGE_EVENTS LIMIT 1"),
		     (long long)PID << 24);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE streamId IS NULL "
				   "AND name IS NULL AND localMemoryPoolAddress IS NULL AND memKind = 2"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT streamId * 1000 + memoryOperationType FROM CUDA_GPU_MEMORY_USAGE_EVENTS "
				   "WHERE localMemoryPoolSize = 2097152"), 13001);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS e JOIN "
				   "ENUM_CUDA_DEV_MEM_EVENT_OPER o ON o.id = e.memoryOperationType JOIN ENUM_CUDA_MEM_KIND k "
				   "ON k.id = e.memKind WHERE k.label = 'Device'"), 2);
	CHECK_EQ_INT(query_int(db, "SELECT operationType * 10 + poolType FROM CUDA_GPU_MEMORY_POOL_EVENTS "
				   "WHERE minBytesToKeep IS NULL AND localMemoryPoolSize = 2097152"), 11);
	CHECK_EQ_INT(query_int(db, "SELECT value FROM GPT_META WHERE name = 'memory_records_dropped'"), 2);
	CHECK_EQ_INT(query_int(db, "SELECT value FROM GPT_META WHERE name = 'memory_records'"), 2);
	sqlite3_close(db);
}

int main(void)
{
	const char *dir = check_tmpdir();

	if (chdir(dir) < 0)
		return 2;
	test_no_events_no_file(dir);
	test_rows(dir);
	test_gpu_metrics(dir);
	test_gpu_metrics_nsys_set(dir);
	test_memory_rows(dir);
	test_no_overwrite(dir);
	test_bad_directory(dir);
	test_disk_full(dir);
	check_rmtree(dir);
	return check_exit("test_writer");
}
