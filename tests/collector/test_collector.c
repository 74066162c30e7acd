/*
 * The collector end to end, without a GPU: activity buffers filled with real CUPTI records (laid
 * out back to back, 8-byte aligned, read by this test's own iterator in place of CUPTI's) and NVTX
 * batches go through the queue and the writer thread into a trace, which is read back. Also: the
 * commit interval (rows become visible to another reader while the program runs, not before the
 * interval), the lazy file, untimed records, the NVTX pairing rules, and one kernel row per
 * replayed launch.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/collector.h"
#include "tests/collector/check.h"

#define ORIGIN 5000000000ull

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	default:
		return 0;
	}
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static CUptiResult test_next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	uint8_t *next = *record ? (uint8_t *)*record + align8(record_size((*record)->kind)) : buffer;

	if (next + sizeof(CUpti_Activity) > buffer + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)next;
	return CUPTI_SUCCESS;
}

static const char *test_api_name(int event_class, uint32_t cbid)
{
	(void)event_class;
	return cbid == 211 ? "cudaLaunchKernel_v7000" : NULL;
}

struct buffer {
	uint8_t *data;
	size_t size, used;
};

static void *append(struct buffer *b, CUpti_ActivityKind kind)
{
	size_t n = record_size(kind);
	void *p = b->data + b->used;

	if (b->used + align8(n) > b->size)
		return NULL;
	memset(p, 0, n);
	((CUpti_Activity *)p)->kind = kind;
	b->used += align8(n);
	return p;
}

/* A buffer of n kernel launches: a runtime API record and a kernel record each. */
static void fill_launches(struct collector *c, int first, int n, int untimed)
{
	struct buffer b;

	b.data = collector_buffer_get(c, &b.size);
	b.used = 0;
	CHECK(b.data != NULL);
	CHECK_EQ_INT(b.size, 1 << 20);
	for (int i = first; i < first + n; i++) {
		CUpti_ActivityAPI *a = append(&b, CUPTI_ACTIVITY_KIND_RUNTIME);
		CUpti_ActivityKernel10 *k = append(&b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

		a->cbid = 211;
		a->start = ORIGIN + (uint64_t)i * 1000;
		a->end = a->start + 300;
		a->processId = 77;
		a->threadId = 78;
		a->correlationId = (uint32_t)i + 1;
		k->start = untimed ? 0 : ORIGIN + (uint64_t)i * 1000 + 500;
		k->end = untimed ? 0 : k->start + 1200;
		k->streamId = 7;
		k->contextId = 1;
		k->correlationId = (uint32_t)i + 1;
		k->name = "_Z12empty_kernelv";
		k->launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
		k->gridX = k->gridY = k->gridZ = 1;
		k->blockX = k->blockY = k->blockZ = 1;
	}
	collector_submit_buffer(c, b.data, b.size, b.used);
}

static struct collector *start(const char *path, unsigned commit_ms)
{
	struct collector_options o = {
		.path = path,
		.commit_interval_ms = commit_ms,
		.time_origin = ORIGIN,
		.pid = 77,
		.buffer_size = 1 << 20,
		.next_record = test_next_record,
		.api_name = test_api_name,
	};
	struct collector *c = NULL;

	CHECK_EQ_INT(collector_start(&o, &c), 0);
	return c;
}

static long long count_rows(const char *path, const char *table)
{
	sqlite3 *db;
	char sql[200];
	long long n;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	sqlite3_busy_timeout(db, 2000);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	n = query_int(db, sql);
	sqlite3_close(db);
	return n;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void test_launches(const char *dir)
{
	char path[600], err[256], text[128];
	struct collector *c;
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/launches.sqlite", dir);
	c = start(path, 1000);
	collector_set_meta(c, "host", "testhost");
	fill_launches(c, 0, 1000, 0);
	fill_launches(c, 1000, 1000, 0);
	fill_launches(c, 2000, 10, 1);	/* records CUPTI could not time */
	CHECK_EQ_INT(collector_stop(c, 0, err, sizeof(err)), 1);
	CHECK_EQ_STR(collector_path(c), path);
	collector_free(c);

	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 2000);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 2010);
	/* Every kernel finds its launch through the correlation id. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
				   "CUPTI_ACTIVITY_KIND_RUNTIME r USING (correlationId) WHERE "
				   "k.start > r.start"), 2000);
	CHECK_EQ_INT(query_int(db, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 500);
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'untimed_records'",
				text, sizeof(text)),
		     "10");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'host'", text,
				sizeof(text)),
		     "testhost");
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
				    "StringIds s ON s.id = k.shortName LIMIT 1", text, sizeof(text)),
		     "empty_kernel");
	sqlite3_close(db);
}

static void test_commit_interval(const char *dir)
{
	char path[600], err[256];
	struct collector *c;
	long long n = -1;

	/* A long interval: the writer has the rows but has not committed them yet. */
	snprintf(path, sizeof(path), "%s/slow.sqlite", dir);
	c = start(path, 600000);
	fill_launches(c, 0, 100, 0);
	/* Waits for the file as long as a loaded machine may take (60 s), then gives the writer
	 * 300 ms in which it would commit if the interval were not kept: a pass proves nothing
	 * only if the writer was starved all that time, a fail is always real. */
	for (int i = 0; i < 6000 && !exists(path); i++)
		sleep_ms(10);
	sleep_ms(300);
	CHECK_EQ_INT(count_rows(path, "CUPTI_ACTIVITY_KIND_KERNEL"), 0);
	CHECK_EQ_INT(collector_stop(c, 0, err, sizeof(err)), 1);
	collector_free(c);
	CHECK_EQ_INT(count_rows(path, "CUPTI_ACTIVITY_KIND_KERNEL"), 100);

	/* A short interval: rows show up while the collector still runs. */
	snprintf(path, sizeof(path), "%s/fast.sqlite", dir);
	c = start(path, 50);
	fill_launches(c, 0, 100, 0);
	for (int i = 0; i < 500 && n != 100; i++) {
		sleep_ms(20);
		n = count_rows(path, "CUPTI_ACTIVITY_KIND_KERNEL");
	}
	CHECK_EQ_INT(n, 100);
	CHECK_EQ_INT(collector_stop(c, 0, err, sizeof(err)), 1);
	collector_free(c);
}

static void test_nothing_recorded(const char *dir)
{
	char path[600], err[256];
	struct collector *c;
	struct buffer b;
	CUpti_ActivityDevice5 *d;

	snprintf(path, sizeof(path), "%s/nothing.sqlite", dir);
	c = start(path, 1000);
	collector_set_meta(c, "host", "x");
	/* A device record alone (a process that initialised CUDA and did nothing). */
	b.data = collector_buffer_get(c, &b.size);
	b.used = 0;
	d = append(&b, CUPTI_ACTIVITY_KIND_DEVICE);
	d->name = "GPU";
	collector_submit_buffer(c, b.data, b.size, b.used);
	CHECK_EQ_INT(collector_stop(c, 0, err, sizeof(err)), 0);
	CHECK(collector_path(c) == NULL);
	CHECK(!exists(path));
	collector_free(c);
}

static void nvtx_add(struct collector_nvtx_batch *b, enum collector_nvtx_kind kind, uint64_t t,
		     uint32_t tid, uint32_t domain, const char *text, uint64_t range_id,
		     uint32_t registered)
{
	struct collector_nvtx_event *ev;

	if (b->count == b->capacity) {
		b->capacity = b->capacity ? b->capacity * 2 : 16;
		b->events = realloc(b->events, b->capacity * sizeof(*ev));
	}
	ev = &b->events[b->count++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint8_t)kind;
	ev->timestamp = ORIGIN + t;
	ev->tid = tid;
	ev->domain = domain;
	ev->range_id = range_id;
	ev->registered = registered;
	ev->text_offset = NVTX_NO_TEXT;
	if (text) {
		size_t len = strlen(text);

		b->text = realloc(b->text, b->text_len + len);
		memcpy(b->text + b->text_len, text, len);
		ev->text_offset = (uint32_t)b->text_len;
		ev->text_len = (uint32_t)len;
		b->text_len += len;
	}
}

static void test_nvtx(const char *dir)
{
	char path[600], err[256], text[128];
	struct collector *c;
	struct collector_nvtx_batch *b1 = calloc(1, sizeof(*b1)), *b2 = calloc(1, sizeof(*b2));
	sqlite3 *db;

	snprintf(path, sizeof(path), "%s/nvtx.sqlite", dir);
	c = start(path, 1000);
	nvtx_add(b1, NVTX_EV_PUSH, 10, 1, 0, "outer", 0, 0);
	nvtx_add(b1, NVTX_EV_PUSH, 20, 1, 0, "inner", 0, 0);
	nvtx_add(b1, NVTX_EV_PUSH, 25, 2, 0, "other thread", 0, 0);
	nvtx_add(b1, NVTX_EV_POP, 30, 1, 0, NULL, 0, 0);
	nvtx_add(b1, NVTX_EV_START, 35, 1, 0, "async", 9, 0);
	nvtx_add(b1, NVTX_EV_MARK, 40, 1, 0, "tick", 0, 0);
	nvtx_add(b1, NVTX_EV_DOMAIN, 41, 1, 3, "gpt-test", 0, 0);
	nvtx_add(b1, NVTX_EV_REGISTER, 42, 1, 3, "registered", 1, 0);
	nvtx_add(b1, NVTX_EV_CATEGORY, 43, 1, 3, "io", 0, 0);
	b1->events[b1->count - 1].category = 4;
	collector_submit_nvtx(c, b1);
	/* The second batch closes ranges opened in the first, on the right stacks. */
	nvtx_add(b2, NVTX_EV_PUSH, 50, 1, 3, NULL, 0, 1);
	nvtx_add(b2, NVTX_EV_POP, 55, 1, 3, NULL, 0, 0);
	nvtx_add(b2, NVTX_EV_POP, 60, 1, 0, NULL, 0, 0);
	nvtx_add(b2, NVTX_EV_END, 70, 2, 0, NULL, 9, 0);
	nvtx_add(b2, NVTX_EV_POP, 80, 5, 0, NULL, 0, 0);	/* nothing pushed on thread 5 */
	collector_submit_nvtx(c, b2);
	CHECK_EQ_INT(collector_stop(c, 0, err, sizeof(err)), 1);
	collector_free(c);

	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59"), 4);
	CHECK_EQ_INT(query_int(db, "SELECT end - start FROM NVTX_EVENTS WHERE text = 'inner'"), 10);
	CHECK_EQ_INT(query_int(db, "SELECT end - start FROM NVTX_EVENTS WHERE text = 'outer'"), 50);
	/* Still open at the end: end NULL. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'other thread' "
				   "AND end IS NULL"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT end - start FROM NVTX_EVENTS WHERE eventType = 60"), 35);
	CHECK_EQ_INT(query_int(db, "SELECT rangeId FROM NVTX_EVENTS WHERE eventType = 60"), 9);
	CHECK_EQ_INT(query_int(db, "SELECT endGlobalTid - globalTid FROM NVTX_EVENTS WHERE "
				   "eventType = 60"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND "
				   "text = 'tick' AND end IS NULL"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND "
				   "text = 'gpt-test'"), 3);
	CHECK_EQ_INT(query_int(db, "SELECT category FROM NVTX_EVENTS WHERE eventType = 33 AND "
				   "text = 'io'"), 4);
	/* The registered string: in StringIds, referenced by textId, no inline text. */
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = "
				    "n.textId WHERE n.eventType = 59 AND n.domainId = 3",
				text, sizeof(text)),
		     "registered");
	CHECK_EQ_INT(query_int(db, "SELECT end - start FROM NVTX_EVENTS WHERE domainId = 3 AND "
				   "eventType = 59"), 5);
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'nvtx_unmatched_ends'",
				text, sizeof(text)),
		     "1");
	CHECK_EQ_INT(query_int(db, "SELECT globalTid FROM NVTX_EVENTS WHERE text = 'outer'"),
		     (77ll << 24) | 1);
	sqlite3_close(db);
}

/*
 * Launches run under kernel replay (hardware metrics) are noted before their records arrive and
 * timed when their call returns: one row per launch, with CUPTI's times when it gave some, else
 * with the library's, whether those come before or after the record; further records of the same
 * launch are dropped. Launches not noted keep every record.
 */
static void test_replayed(const char *dir)
{
	static const struct {
		uint32_t id, records;
		int timed;	/* CUPTI timed the records */
	} launches[] = { { 5, 3, 1 }, { 6, 1, 0 }, { 7, 2, 1 }, { 8, 1, 0 }, { 9, 1, 0 } };
	char path[600], err[256], text[64];
	struct collector *c;
	struct buffer b;
	sqlite3 *db;
	int n = 0;

	snprintf(path, sizeof(path), "%s/replayed.sqlite", dir);
	c = start(path, 1000);
	collector_note_replayed_launch(c, 5);
	collector_note_replayed_launch(c, 6);
	collector_note_replayed_launch(c, 6);	/* the nested driver call may note it again */
	collector_note_replayed_launch(c, 8);
	collector_note_replayed_launch(c, 9);
	collector_time_replayed_launch(c, 8, ORIGIN + 80000, ORIGIN + 80700);	/* before its record */
	b.data = collector_buffer_get(c, &b.size);
	b.used = 0;
	CHECK(b.data != NULL);
	for (size_t i = 0; i < sizeof(launches) / sizeof(launches[0]); i++) {
		for (uint32_t pass = 0; pass < launches[i].records; pass++) {
			CUpti_ActivityKernel10 *k = append(&b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

			n++;
			k->start = launches[i].timed ? ORIGIN + (uint64_t)n * 1000 : 0;
			k->end = launches[i].timed ? k->start + 500 : 0;
			k->correlationId = launches[i].id;
			k->name = "_Z14strided_gatherPKfPfm";
		}
	}
	collector_submit_buffer(c, b.data, b.size, b.used);
	collector_time_replayed_launch(c, 6, ORIGIN + 60000, ORIGIN + 60300);	/* after it */
	collector_time_replayed_launch(c, 9, 0, 0);				/* no times */
	CHECK_EQ_INT(collector_stop(c, 0, err, sizeof(err)), 1);
	collector_free(c);

	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 5);
	/* CUPTI's times, first record. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
				   "WHERE correlationId = 5"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL "
				   "WHERE correlationId = 5"), 1000);
	CHECK_EQ_INT(query_int(db, "SELECT start * 10000 + end - start FROM "
				   "CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 6"), 600000300);
	CHECK_EQ_INT(query_int(db, "SELECT start * 10000 + end - start FROM "
				   "CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 8"), 800000700);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
				   "WHERE correlationId = 7"), 2);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
				   "WHERE correlationId = 9"), 0);
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META "
				    "WHERE name = 'replayed_kernel_records_dropped'", text, sizeof(text)),
		     "2");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META "
				    "WHERE name = 'replayed_kernel_rows_timed'", text, sizeof(text)),
		     "2");
	CHECK_EQ_STR(query_text(db, "SELECT value FROM GPT_META WHERE name = 'untimed_records'",
				text, sizeof(text)),
		     "1");
	sqlite3_close(db);
}

static void test_bad_path(const char *dir)
{
	char path[600], err[256] = "";
	struct collector *c;

	snprintf(path, sizeof(path), "%s/no/such/dir/t.sqlite", dir);
	c = start(path, 1000);
	fill_launches(c, 0, 10, 0);
	CHECK(collector_stop(c, 0, err, sizeof(err)) < 0);
	CHECK(strstr(err, "cannot create trace") == err);
	CHECK(strstr(err, "No such file or directory") != NULL);
	collector_free(c);
}

int main(void)
{
	const char *dir = check_tmpdir();

	test_launches(dir);
	test_commit_interval(dir);
	test_nothing_recorded(dir);
	test_nvtx(dir);
	test_replayed(dir);
	test_bad_path(dir);
	check_rmtree(dir);
	return check_exit("test_collector");
}
