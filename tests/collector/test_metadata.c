/*
 * The tables third-party SQL joins to, written end to end through the collector (queue and writer
 * thread) from real CUPTI record structs, NVTX events and real threads of this process:
 *
 * - ThreadNames has a row for every thread any row names (API calls, NVTX ranges and their ending
 *   thread, another process's calls), named as the OS names it: a thread alive at the end under its
 *   final name (it renamed itself after its calls were written), a thread gone at the end under the
 *   name it had when the writer first saw it, a thread gone before that under the name it reported
 *   itself with its first NVTX event, and a thread never seen alive under its tid; priorities as
 *   /proc/TID/stat shows them, NULL where unknown.
 * - PROCESSES has a row for each process with work; TARGET_INFO_CUDA_CONTEXT_INFO and
 *   TARGET_INFO_CUDA_STREAM describe every context and stream the rows ran on, with CUPTI's
 *   priority and flag where it described the stream; META_DATA_EXPORT names the nsys schema.
 *
 * Usage: test_metadata [DIR]: with DIR, the trace is left there as DIR/metadata.sqlite (for
 * sql_invariants.py, which checks it the way third-party SQL would use it).
 */
#include <pthread.h>
#include <semaphore.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "collector/collector.h"
#include "tests/collector/check.h"

#define ORIGIN 7000000000ull

/* CUPTI callback ids the test's records use, named as CUPTI names them. */
enum { CB_MALLOC = 20, CB_MEMCPY = 31, CB_MEMSET = 51, CB_STREAM_SYNC = 131, CB_LAUNCH = 211 };

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return sizeof(CUpti_ActivityContext3);
	case CUPTI_ACTIVITY_KIND_STREAM:
		return sizeof(CUpti_ActivityStream);
	default:
		return 0;
	}
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static CUptiResult next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	uint8_t *next = *record ? (uint8_t *)*record + align8(record_size((*record)->kind)) : buffer;

	if (next + sizeof(CUpti_Activity) > buffer + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)next;
	return CUPTI_SUCCESS;
}

static const char *api_name(int event_class, uint32_t cbid)
{
	if (event_class)
		return NULL;
	switch (cbid) {
	case CB_MALLOC:
		return "cudaMalloc_v3020";
	case CB_MEMCPY:
		return "cudaMemcpy_v3020";
	case CB_MEMSET:
		return "cudaMemset_v3020";
	case CB_STREAM_SYNC:
		return "cudaStreamSynchronize_v3020";
	case CB_LAUNCH:
		return "cudaLaunchKernel_v7000";
	default:
		return NULL;
	}
}

struct buffer {
	uint8_t *data;
	size_t size, used;
};

static void *append(struct buffer *b, CUpti_ActivityKind kind)
{
	size_t n = record_size(kind);
	void *p = b->data + b->used;

	if (!b->data || b->used + align8(n) > b->size) {
		fprintf(stderr, "test buffer full\n");
		exit(2);
	}
	memset(p, 0, n);
	((CUpti_Activity *)p)->kind = kind;
	b->used += align8(n);
	return p;
}

static void api(struct buffer *b, uint32_t pid, uint32_t tid, uint32_t cbid, uint32_t correlation)
{
	CUpti_ActivityAPI *a = append(b, CUPTI_ACTIVITY_KIND_RUNTIME);

	a->cbid = cbid;
	a->start = ORIGIN + correlation * 1000ull;
	a->end = a->start + 300;
	a->processId = pid;
	a->threadId = tid;
	a->correlationId = correlation;
}

static void kernel(struct buffer *b, uint32_t stream, uint32_t correlation)
{
	CUpti_ActivityKernel10 *k = append(b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

	k->start = ORIGIN + correlation * 1000ull + 500;
	k->end = k->start + 1200;
	k->contextId = 1;
	k->streamId = stream;
	k->correlationId = correlation;
	k->name = "_Z6kernelPf";
	k->launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	k->gridX = k->gridY = k->gridZ = 1;
	k->blockX = k->blockY = k->blockZ = 32;
}

/* A launch by thread tid of this process: its API record and its kernel on stream 13. */
static void submit_launch(struct collector *c, uint32_t tid, uint32_t correlation)
{
	struct buffer b = { 0 };

	b.data = collector_buffer_get(c, &b.size);
	api(&b, (uint32_t)getpid(), tid, CB_LAUNCH, correlation);
	kernel(&b, 13, correlation);
	collector_submit_buffer(c, b.data, b.size, b.used);
}

/* The program's main thread: device, context, streams, kernels, a copy, a set, a sync. */
static void submit_main_work(struct collector *c)
{
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)gettid();
	struct buffer b = { 0 };
	CUpti_ActivityDevice5 *d;
	CUpti_ActivityContext3 *ctx;
	CUpti_ActivityStream *s;
	CUpti_ActivityMemcpy6 *m;
	CUpti_ActivityMemset4 *ms;
	struct collector_sync sync = {
		.start = ORIGIN + 7000, .end = ORIGIN + 7400, .context_id = 1, .stream_id = 13,
		.correlation_id = 7, .event_id = UINT32_MAX,
		.sync_type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
	};

	b.data = collector_buffer_get(c, &b.size);
	d = append(&b, CUPTI_ACTIVITY_KIND_DEVICE);
	d->id = 0;
	d->name = "Test GPU";
	d->numMultiprocessors = 132;
	ctx = append(&b, CUPTI_ACTIVITY_KIND_CONTEXT);
	ctx->contextId = 1;
	ctx->deviceId = 0;
	ctx->nullStreamId = 7;
	s = append(&b, CUPTI_ACTIVITY_KIND_STREAM);
	s->contextId = 1;
	s->streamId = 13;
	s->flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING;
	s = append(&b, CUPTI_ACTIVITY_KIND_STREAM);
	s->contextId = 1;
	s->streamId = 14;
	s->priority = (uint32_t)-5;
	s->flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT;
	/* Kernels on the NULL stream, on the two described streams, and on one CUPTI never named. */
	for (uint32_t i = 0; i < 4; i++) {
		api(&b, pid, tid, CB_LAUNCH, 1 + i);
		kernel(&b, (uint32_t[]){ 7, 13, 14, 15 }[i], 1 + i);
	}
	api(&b, pid, tid, CB_MEMCPY, 5);
	m = append(&b, CUPTI_ACTIVITY_KIND_MEMCPY);
	m->start = ORIGIN + 5500;
	m->end = ORIGIN + 5900;
	m->contextId = 1;
	m->streamId = 13;
	m->correlationId = 5;
	m->bytes = 4096;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	api(&b, pid, tid, CB_MEMSET, 6);
	ms = append(&b, CUPTI_ACTIVITY_KIND_MEMSET);
	ms->start = ORIGIN + 6500;
	ms->end = ORIGIN + 6600;
	ms->contextId = 1;
	ms->streamId = 7;
	ms->correlationId = 6;
	ms->bytes = 64;
	ms->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	api(&b, pid, tid, CB_STREAM_SYNC, 7);
	collector_submit_buffer(c, b.data, b.size, b.used);
	collector_submit_sync(c, &sync);
}

/* A thread of the test that names itself, and renames or leaves when told. */
struct worker {
	const char *name, *rename;	/* rename: NULL to keep the name */
	pthread_t thread;
	uint32_t tid;
	sem_t ready, go, renamed, leave;
	int wait_to_leave;		/* stay alive until told, after the rename */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	prctl(PR_SET_NAME, w->name);
	w->tid = (uint32_t)gettid();
	sem_post(&w->ready);
	sem_wait(&w->go);
	if (w->rename)
		prctl(PR_SET_NAME, w->rename);
	sem_post(&w->renamed);
	if (w->wait_to_leave)
		sem_wait(&w->leave);
	return NULL;
}

static void worker_start(struct worker *w, const char *name, const char *rename, int wait_to_leave)
{
	memset(w, 0, sizeof(*w));
	w->name = name;
	w->rename = rename;
	w->wait_to_leave = wait_to_leave;
	sem_init(&w->ready, 0, 0);
	sem_init(&w->go, 0, 0);
	sem_init(&w->renamed, 0, 0);
	sem_init(&w->leave, 0, 0);
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		perror("pthread_create");
		exit(2);
	}
	sem_wait(&w->ready);
}

/* Let the worker rename itself (if it does) and wait until it has. */
static void worker_go(struct worker *w)
{
	sem_post(&w->go);
	sem_wait(&w->renamed);
}

static void worker_end(struct worker *w)
{
	if (w->wait_to_leave)
		sem_post(&w->leave);
	pthread_join(w->thread, NULL);
	sem_destroy(&w->ready);
	sem_destroy(&w->go);
	sem_destroy(&w->renamed);
	sem_destroy(&w->leave);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait until the API row `correlation` is committed: the writer has decoded it by then. */
static void wait_for_row(const char *path, uint32_t correlation)
{
	char sql[128];

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = %u",
		 correlation);
	for (int i = 0; i < 500; i++) {
		sqlite3 *db = NULL;
		long long n = -1;

		sqlite3_stmt *st;

		/* Quietly: the file may exist before its schema is committed. */
		if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
		    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
			sqlite3_busy_timeout(db, 2000);
			if (sqlite3_step(st) == SQLITE_ROW)
				n = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
		sqlite3_close(db);
		if (n == 1)
			return;
		sleep_ms(10);
	}
	CHECK(!"the writer did not write the row in 5 s");
}

static void nvtx_add(struct collector_nvtx_batch *b, enum collector_nvtx_kind kind, uint64_t t,
		     uint32_t tid, uint64_t range_id, const char *text)
{
	struct collector_nvtx_event *ev;
	size_t len = text ? strlen(text) : 0;

	b->events = realloc(b->events, (b->count + 1) * sizeof(*b->events));
	b->text = realloc(b->text, b->text_len + len + 1);
	if (!b->events || !b->text)
		exit(2);
	ev = &b->events[b->count++];
	memset(ev, 0, sizeof(*ev));
	ev->timestamp = ORIGIN + t;
	ev->kind = (uint8_t)kind;
	ev->tid = tid;
	ev->range_id = range_id;
	ev->text_offset = NVTX_NO_TEXT;
	if (text) {
		memcpy(b->text + b->text_len, text, len);
		ev->text_offset = (uint32_t)b->text_len;
		ev->text_len = (uint32_t)len;
		b->text_len += len;
	}
}

/* One row of ThreadNames as "name/priority" (priority "-" when NULL), or "" when none. */
static const char *thread_row(sqlite3 *db, uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT s.value || '/' || ifnull(t.priority, '-') FROM ThreadNames t "
		 "JOIN StringIds s ON s.id = t.nameId WHERE t.globalTid = %lld",
		 ((long long)pid << 24) | tid);
	return query_text(db, sql, buf, len);
}

/* What /proc says of a thread: "comm/priority", as the writer should have read it. */
static const char *proc_thread(uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	char path[96], comm[64] = "", stat[1024] = "";
	const char *p;
	int priority = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if ((f = fopen(path, "re"))) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if ((f = fopen(path, "re"))) {
		if (!fgets(stat, sizeof(stat), f))
			stat[0] = '\0';
		fclose(f);
	}
	p = strrchr(stat, ')');
	if (!comm[0] || !p || sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
				     "%*s %*s %d", &priority) != 1)
		snprintf(buf, len, "%u/-", tid);	/* the writer's fallback */
	else
		snprintf(buf, len, "%s/%d", comm, priority);
	return buf;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : check_tmpdir();
	uint32_t pid = (uint32_t)getpid(), main_tid = (uint32_t)gettid(), parent = (uint32_t)getppid();
	char path[600], err[256], text[512], expect[512], main_comm[17] = "";
	struct collector_options o = {
		.commit_interval_ms = 10,
		.time_origin = ORIGIN,
		.pid = pid,
		.buffer_size = 1 << 20,
		.next_record = next_record,
		.api_name = api_name,
	};
	struct worker renames_alive, renames_gone, gone_early, nvtx_thread;
	struct collector_nvtx_batch *batch;
	struct collector *c = NULL;
	struct buffer b = { 0 };
	int priority = 20 + getpriority(PRIO_PROCESS, 0);
	sqlite3 *db;

	prctl(PR_GET_NAME, main_comm);
	snprintf(path, sizeof(path), "%s/metadata.sqlite", dir);
	unlink(path);
	o.path = path;
	o.force = 1;
	CHECK_EQ_INT(collector_start(&o, &c), 0);
	if (!c)
		return check_exit("test_metadata");

	/* Every thread first, so that no tid is reused by a later one. */
	worker_start(&renames_alive, "worker-a", "worker-a2", 1);
	worker_start(&renames_gone, "worker-b", "worker-b2", 0);
	worker_start(&gone_early, "worker-c", NULL, 0);
	worker_start(&nvtx_thread, "nvtx-d", NULL, 0);

	submit_main_work(c);
	/* Alive at the end, renamed after the writer first read its name: the new name. */
	submit_launch(c, renames_alive.tid, 10);
	wait_for_row(path, 10);
	worker_go(&renames_alive);
	/* Renamed after the first read, then gone: the name the writer read. */
	submit_launch(c, renames_gone.tid, 11);
	wait_for_row(path, 11);
	worker_go(&renames_gone);
	worker_end(&renames_gone);
	/* Gone before the writer saw it, never reported a name: its tid. */
	worker_go(&gone_early);
	worker_end(&gone_early);
	submit_launch(c, gone_early.tid, 12);
	/* Another process's call (CUPTI names the process of each API record). */
	b.data = collector_buffer_get(c, &b.size);
	api(&b, parent, parent, CB_MALLOC, 13);
	collector_submit_buffer(c, b.data, b.size, b.used);

	/*
	 * An NVTX thread gone before its events reach the writer: the name it sent with its first
	 * event (as inject/nvtx.c does) stands in. A start/end range it began, ended on this thread.
	 */
	worker_go(&nvtx_thread);
	worker_end(&nvtx_thread);
	batch = calloc(1, sizeof(*batch));
	CHECK(batch != NULL);
	nvtx_add(batch, NVTX_EV_OS_THREAD_NAME, 100, nvtx_thread.tid, 0, "nvtx-d");
	batch->events[0].payload_type = 1;
	batch->events[0].payload = (uint64_t)(int64_t)priority;
	nvtx_add(batch, NVTX_EV_PUSH, 200, nvtx_thread.tid, 0, "load");
	nvtx_add(batch, NVTX_EV_POP, 300, nvtx_thread.tid, 0, NULL);
	nvtx_add(batch, NVTX_EV_START, 400, nvtx_thread.tid, 1, "epoch");
	nvtx_add(batch, NVTX_EV_END, 900, main_tid, 1, NULL);
	collector_submit_nvtx(c, batch);

	CHECK_EQ_INT(collector_stop(c, 0, err, sizeof(err)), 1);
	collector_free(c);
	worker_end(&renames_alive);

	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	/* Third-party SQL's join: no API call or NVTX range without its thread. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid "
				   "NOT IN (SELECT globalTid FROM ThreadNames)"), 0);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE globalTid NOT IN (SELECT "
				   "globalTid FROM ThreadNames) OR endGlobalTid NOT IN (SELECT "
				   "globalTid FROM ThreadNames)"), 0);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) - count(DISTINCT globalTid) FROM ThreadNames"), 0);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM ThreadNames"), 6);
	snprintf(expect, sizeof(expect), "%s/%d", main_comm, priority);
	CHECK_EQ_STR(thread_row(db, pid, main_tid, text, sizeof(text)), expect);
	snprintf(expect, sizeof(expect), "worker-a2/%d", priority);
	CHECK_EQ_STR(thread_row(db, pid, renames_alive.tid, text, sizeof(text)), expect);
	snprintf(expect, sizeof(expect), "worker-b/%d", priority);
	CHECK_EQ_STR(thread_row(db, pid, renames_gone.tid, text, sizeof(text)), expect);
	snprintf(expect, sizeof(expect), "%u/-", gone_early.tid);
	CHECK_EQ_STR(thread_row(db, pid, gone_early.tid, text, sizeof(text)), expect);
	snprintf(expect, sizeof(expect), "nvtx-d/%d", priority);
	CHECK_EQ_STR(thread_row(db, pid, nvtx_thread.tid, text, sizeof(text)), expect);
	CHECK_EQ_STR(thread_row(db, parent, parent, text, sizeof(text)),
		     proc_thread(parent, parent, expect, sizeof(expect)));
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'thread_names_fallback'",
				text, sizeof(text)),
		     "1");

	/* A process row for this process and for the other one with a call. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM PROCESSES"), 2);
	snprintf(text, sizeof(text), "SELECT count(*) FROM PROCESSES WHERE pid = %u AND globalPid = "
		 "%lld AND name <> '?'", parent, (long long)parent << 24);
	CHECK_EQ_INT(query_int(db, text), 1);

	/* Every context and stream a row ran on. */
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(r, ' ') FROM (SELECT nullStreamId || ',' || "
				    "deviceId || ',' || contextId || ',' || isGreenContext AS r FROM "
				    "TARGET_INFO_CUDA_CONTEXT_INFO)", text, sizeof(text)),
		     "7,0,1,0");
	snprintf(expect, sizeof(expect), "7,0,3 13,0,2 14,4294967291,1 15,0,0");
	CHECK_EQ_STR(query_text(db, "SELECT group_concat(r, ' ') FROM (SELECT streamId || ',' || "
				    "priority || ',' || flag AS r FROM TARGET_INFO_CUDA_STREAM "
				    "WHERE contextId = 1 ORDER BY streamId)", text, sizeof(text)),
		     expect);
	snprintf(text, sizeof(text), "SELECT count(*) FROM TARGET_INFO_CUDA_STREAM WHERE processId = %u",
		 pid);
	CHECK_EQ_INT(query_int(db, text), 4);
	CHECK_EQ_STR(query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = "
				    "'EXPORT_SCHEMA_VERSION'", text, sizeof(text)),
		     "3.16.1");
	CHECK_EQ_STR(query_text(db, "PRAGMA integrity_check", text, sizeof(text)), "ok");
	sqlite3_close(db);
	if (argc <= 1)
		check_rmtree(dir);
	return check_exit("test_metadata");
}
