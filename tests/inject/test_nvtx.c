/*
 * The NVTX injection end to end, on the CPU: the real nvtx3 API (header implementation, static
 * injection through InitializeInjectionNvtx2_fnptr, as NVTX documents for tools) calls our
 * handlers; events recorded before "CUDA starts" are kept and delivered when the collector
 * attaches; the trace holds the nsys rows (push/pop 59, start/end 60 across threads, marks 34,
 * domains 75 with their registered strings, categories 33, colours, payloads, wide strings), and
 * a ThreadNames row for every thread, one gone before the writer saw it included (the handlers send
 * the thread's name with its first event).
 */
#include <stdint.h>

/* Declared before the NVTX headers use it (their type for it comes later in nvToolsExt.h). */
#define NVTX_STATIC_INJECTION_IMPL
extern int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t));
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/collector.h"
#include "inject/clock.h"
#include "inject/inject.h"
#include "tests/collector/check.h"

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t)) = InitializeInjectionNvtx2;

static nvtxRangeId_t async_range;

static void *end_elsewhere(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "nvtx-ender");
	nvtxRangeEnd(async_range);
	return NULL;
}

static CUptiResult no_records(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	(void)buffer;
	(void)valid;
	(void)record;
	return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

int main(void)
{
	const char *dir = check_tmpdir();
	char path[600], err[256], text[256];
	struct collector_options options = { 0 };
	struct collector *collector;
	nvtxDomainHandle_t domain;
	nvtxStringHandle_t registered;
	nvtxEventAttributes_t attr = { 0 };
	pthread_t thread;
	sqlite3 *db;
	uint64_t origin;

	/* Our static injection, not a library named in the environment. */
	unsetenv("NVTX_INJECTION64_PATH");
	origin = gpt_clock_now();

	/* Before CUDA: kept in memory. */
	nvtxMarkA("early");
	CHECK_EQ_INT(nvtxRangePushA("outer"), 0);

	snprintf(path, sizeof(path), "%s/nvtx.sqlite", dir);
	options.path = path;
	options.time_origin = origin;
	options.pid = (uint32_t)getpid();
	options.next_record = no_records;
	CHECK_EQ_INT(collector_start(&options, &collector), 0);
	nvtx_attach(collector);

	CHECK_EQ_INT(nvtxRangePushA("inner"), 1);
	CHECK_EQ_INT(nvtxRangePop(), 1);
	nvtxRangePushW(L"wide \u00fc");
	nvtxRangePop();
	async_range = nvtxRangeStartA("async");
	pthread_create(&thread, NULL, end_elsewhere, NULL);
	pthread_join(thread, NULL);

	domain = nvtxDomainCreateA("gpt-test");
	CHECK(domain == nvtxDomainCreateA("gpt-test"));	/* one handle per name */
	registered = nvtxDomainRegisterStringA(domain, "registered");
	attr.version = NVTX_VERSION;
	attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	attr.colorType = NVTX_COLOR_ARGB;
	attr.color = 0xff00ff00;
	attr.category = 3;
	attr.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
	attr.payload.dValue = 2.5;
	attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	attr.message.registered = registered;
	nvtxDomainRangePushEx(domain, &attr);
	nvtxDomainRangePop(domain);
	nvtxDomainNameCategoryA(domain, 3, "compute");
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "nvtx-main");
	CHECK_EQ_INT(nvtxRangePop(), 0);	/* "outer", pushed before CUDA */
	CHECK_EQ_INT(nvtxRangePop(), -1);	/* nothing left */

	nvtx_detach();
	nvtxMarkA("after the end");		/* not recorded */
	CHECK_EQ_INT(collector_stop(collector, 0, err, sizeof(err)), 1);
	collector_free(collector);

	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'early' AND "
				   "end IS NULL"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND "
				   "domainId = 0"), 3);
	/* outer encloses inner */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS o, NVTX_EVENTS i WHERE "
				   "o.text = 'outer' AND i.text = 'inner' AND o.start < i.start AND "
				   "i.end < o.end"), 1);
	CHECK_EQ_STR(query_text(db, "SELECT text FROM NVTX_EVENTS WHERE text LIKE 'wide%'", text,
				sizeof(text)),
		     "wide \xc3\xbc");
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60 AND "
				   "text = 'async' AND endGlobalTid != globalTid AND end >= start"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 75 AND "
				   "text = 'gpt-test'"), 1);
	CHECK_EQ_STR(query_text(db, "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON "
				    "s.id = n.textId WHERE n.eventType = 59 AND n.domainId > 0",
				text, sizeof(text)),
		     "registered");
	CHECK_EQ_INT(query_int(db, "SELECT color FROM NVTX_EVENTS WHERE textId IS NOT NULL"),
		     0xff00ff00);
	CHECK_EQ_INT(query_int(db, "SELECT category FROM NVTX_EVENTS WHERE textId IS NOT NULL"), 3);
	CHECK_EQ_INT(query_int(db, "SELECT doubleValue * 10 FROM NVTX_EVENTS WHERE textId IS NOT "
				   "NULL"), 25);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 33 AND "
				   "text = 'compute' AND category = 3"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM ThreadNames t JOIN StringIds s ON "
				   "s.id = t.nameId WHERE s.value = 'nvtx-main'"), 1);
	/* The ending thread was gone before its events reached the writer: the name it sent. */
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS n JOIN ThreadNames t ON "
				   "t.globalTid = n.endGlobalTid JOIN StringIds s ON s.id = t.nameId "
				   "WHERE n.text = 'async' AND s.value = 'nvtx-ender' AND "
				   "t.priority IS NOT NULL"), 1);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE globalTid NOT IN (SELECT "
				   "globalTid FROM ThreadNames) OR endGlobalTid NOT IN (SELECT "
				   "globalTid FROM ThreadNames)"), 0);
	CHECK_EQ_INT(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'after the end'"),
		     0);
	/* Timestamps are relative to the origin, on the library's clock. */
	CHECK(query_int(db, "SELECT min(start) FROM NVTX_EVENTS") >= 0);
	CHECK(query_int(db, "SELECT max(start) FROM NVTX_EVENTS") < 60000000000ll);
	sqlite3_close(db);
	check_rmtree(dir);
	return check_exit("test_nvtx");
}
