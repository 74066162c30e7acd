/*
 * CPU test of inject/metrics: the GPT_TRACE_METRICS spec, the kernel filter and short names, the
 * host half of the Range Profiler setup for the H200's chip (GH100: needs libcupti, no GPU), the
 * one-line error for a metric the chip lacks, and the tables written from synthetic launches. It
 * includes the module's sources to reach their static functions. Exit status 0 when every check
 * holds; each failure prints one line.
 */
#include "inject/metrics.c"
#include "inject/metrics-cupti.c"
#include "inject/metrics-counters.c"
#include "inject/metrics-sass.c"
#include "inject/metrics-session.c"
#include "inject/metrics-host.c"
#include "inject/driver.c"
#include "inject/clock.c"

static int failures;
static char last_report[1024];

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "metrics_unit: %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static void keep_report(const char *line)
{
	snprintf(last_report, sizeof(last_report), "%s", line);
}

static struct metrics_session *open_ok(const char *spec)
{
	struct metrics_session *s = NULL;
	char err[256] = "";

	CHECK(metrics_session_open(spec, keep_report, &s, err, sizeof(err)) == 0);
	CHECK(err[0] == '\0');
	return s;
}

static void open_fails(const char *spec, const char *expect)
{
	struct metrics_session *s = NULL;
	char err[256] = "";

	CHECK(metrics_session_open(spec, keep_report, &s, err, sizeof(err)) < 0);
	CHECK(s == NULL);
	CHECK(strstr(err, expect) != NULL);
	if (!strstr(err, expect))
		fprintf(stderr, "metrics_unit: spec '%s' gave '%s'\n", spec, err);
}

static void test_spec(void)
{
	struct metrics_session *s;

	CHECK(open_ok("") == NULL);
	CHECK(open_ok("0") == NULL);
	CHECK(open_ok("off") == NULL);

	s = open_ok("1");
	CHECK(s && s->want_source && !s->first && !s->nr_globs && !s->debug);
	/*
	 * The library turns source lines off until its CUPTI layer can pause kernel tracing around
	 * the SASS launch, then on again (metrics_session_sass_hooks); a spec's source= always wins.
	 */
	metrics_session_default_source(s, false);
	CHECK(s && !s->want_source);
	metrics_session_default_source(s, true);
	CHECK(s && s->want_source);
	metrics_session_free(s);
	s = open_ok("all,source=1");
	metrics_session_default_source(s, false);
	CHECK(s && s->want_source);
	metrics_session_free(s);
	s = open_ok("all,source=0");
	metrics_session_default_source(s, true);
	CHECK(s && !s->want_source);
	metrics_session_free(s);
	metrics_session_default_source(NULL, false);

	s = open_ok(" kernel=transpose_* , first=2,kernel=*gather*, source=0 ");
	CHECK(s && s->nr_globs == 2 && s->first == 2 && !s->want_source);
	CHECK(s && !strcmp(s->globs[0], "transpose_*") && !strcmp(s->globs[1], "*gather*"));
	metrics_session_free(s);

	s = open_ok("all,debug,source=1");
	CHECK(s && s->debug && s->want_source);
	metrics_session_free(s);

	open_fails("first=0", "first=0: expected a positive count");
	open_fails("first=x", "first=x: expected a positive count");
	open_fails("kernel=", "kernel= needs a name");
	open_fails("all,bogus", "unknown item 'bogus'");
	open_fails("source=maybe", "source=maybe: expected 0 or 1");
	open_fails("counters=0", "unknown item 'counters=0'");
}

static void test_names(void)
{
	static const char *const cases[][2] = {
	    {"_Z14coalesced_copyPKfPfm", "coalesced_copy"},
	    {"_Z15transpose_naivePKfPfii", "transpose_naive"},
	    {"_ZN2ns6kernelIfEEvPT_", "kernel"},
	    {"_Z10kernel_tplIfEvPT_", "kernel_tpl"},
	    {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
	     "11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
	     "vectorized_elementwise_kernel"},
	    {"_ZL6staticv", "static"},
	    {"plain_c_kernel", "plain_c_kernel"},
	    {"_Z", "_Z"},
	};
	struct metrics_session *s;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = short_name(cases[i][0]);

		CHECK(got && !strcmp(got, cases[i][1]));
		if (got && strcmp(got, cases[i][1]))
			fprintf(stderr, "metrics_unit: short_name(%s) = %s\n", cases[i][0], got);
		free(got);
	}

	s = open_ok("kernel=transpose_*,kernel=*gather");
	CHECK(kernel_get(s, "_Z15transpose_naivePKfPfii")->selected);
	CHECK(kernel_get(s, "_Z14strided_gatherPKfPfm")->selected);
	CHECK(!kernel_get(s, "_Z14coalesced_copyPKfPfm")->selected);
	CHECK(kernel_get(s, "_Z15transpose_naivePKfPfii") ==
	      kernel_get(s, "_Z15transpose_naivePKfPfii"));
	CHECK(s->nr_kernels == 3);
	metrics_session_free(s);
}

/* The host half of the counter setup, for the H200's chip, on this CPU-only machine. */
static void test_host_config(void)
{
	static const char *const missing[] = {
	    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	    "no_such__metric.sum",
	};
	struct metrics_session *s = open_ok("all");
	struct metrics_chip *chip = calloc(1, sizeof(*chip));
	char err[256];

	/* As the library does: dlopen CUPTI, hand the module the handle. */
	CHECK(!s->attached);
	CHECK(metrics_session_attach(s, dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL), err,
				     sizeof(err)) == 0 &&
	      s->attached);
	if (!s->attached) {
		fprintf(stderr, "metrics_unit: %s\n", err);
		metrics_session_free(s);
		return;
	}
	chip->name = strdup("GH100");
	CHECK(chip_configure(s, chip, metrics_counter_names, NR_COUNTERS, 0) == 0);
	CHECK(chip->config_size > 0);
	CHECK(chip->passes == 3);
	chip_free(chip);

	chip = calloc(1, sizeof(*chip));
	chip->name = strdup("GH100");
	last_report[0] = '\0';
	CHECK(chip_configure(s, chip, missing, 2, 3) < 0);
	CHECK(strstr(last_report, "no hardware counters on device 3: metric 'no_such__metric.sum' "
				  "is not available on chip GH100") != NULL);
	chip_free(chip);
	metrics_session_free(s);

	CHECK(strstr(metrics_cupti_reason(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
		     "NVreg_RestrictProfilingToAdminUsers=0"));
	CHECK(strstr(metrics_cupti_reason(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
		     "another profiler"));
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "metrics_unit: %s: %s\n", sql, sqlite3_errmsg(db));
		return -2;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -3 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Rows as two launches of a strided kernel leave them: one instrumented, one with counters. */
static void test_write(void)
{
	struct metrics_session *s = open_ok("all");
	struct metrics_kernel *k = kernel_get(s, "_Z14strided_gatherPKfPfm");
	struct metrics_row *row;
	struct metrics_line *line;
	char err[256] = "", summary[512];
	sqlite3 *db;

	/* Launch 1: SASS only; 1000 load instructions of 32 sectors, ideal 4. */
	row = row_new(s);
	row->correlation_id = 7;
	row->kernel = k;
	row->has_sass = true;
	row->sass = (struct metrics_access){.ld_sectors = 32000,
					    .ld_ideal = 4000,
					    .ld_inst = 1000,
					    .st_sectors = 4000,
					    .st_ideal = 4000,
					    .st_inst = 1000};
	row->replay_ns = 1000000;
	k->sass = row->sass;
	k->sass_done = true;
	s->sass_kernels = 1;
	s->source_kernels = 1;
	line = metrics_kernel_line(k, "/src/kernels/access.cu", 20);
	line->access = row->sass;
	CHECK(metrics_kernel_line(k, "/src/kernels/access.cu", 20) == line);
	CHECK(metrics_kernel_line(k, NULL, 0) != line);

	/* Launch 2: counters. */
	row = row_new(s);
	row->correlation_id = 9;
	row->device_id = 0;
	row->context_id = 1;
	row->kernel = k;
	row->has_counters = true;
	row->counters[COUNTER_LD_SECTORS] = 64000;
	row->counters[COUNTER_LD_REQUESTS] = 2000;
	row->counters[COUNTER_ST_SECTORS] = 8000;
	row->counters[COUNTER_ST_REQUESTS] = 2000;
	row->counters[COUNTER_DURATION] = 12345.4;
	row->passes = 3;
	row->replay_ns = 5000000;
	k->profiled = 1;
	s->replay_ns = 6000000;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	sqlite3_exec(db, "CREATE TABLE GPT_META (name TEXT NOT NULL PRIMARY KEY, value TEXT)", NULL,
		     NULL, NULL);
	CHECK(metrics_session_write(s, db, err, sizeof(err)) == 2);
	CHECK(query_int(db, "SELECT count(*) FROM GPT_KERNEL_METRICS") == 2);
	CHECK(query_int(db, "SELECT gldSectors FROM GPT_KERNEL_METRICS WHERE correlationId = 9") ==
	      64000);
	CHECK(query_int(db, "SELECT gldSectorsIdeal FROM GPT_KERNEL_METRICS "
			    "WHERE correlationId = 9 AND idealSource = 'sass-scaled'") == 8000);
	CHECK(query_int(db,
			"SELECT gstSectorsIdeal FROM GPT_KERNEL_METRICS WHERE correlationId = 9") ==
	      8000);
	CHECK(query_int(db, "SELECT durationNs FROM GPT_KERNEL_METRICS WHERE correlationId = 9") ==
	      12345);
	CHECK(query_int(db, "SELECT gldRequests FROM GPT_KERNEL_METRICS "
			    "WHERE correlationId = 7 AND source = 'sass'") == 1000);
	CHECK(query_int(db, "SELECT durationNs FROM GPT_KERNEL_METRICS WHERE correlationId = 7") ==
	      -3);
	CHECK(query_int(db, "SELECT line FROM GPT_SOURCE_METRICS WHERE file LIKE '%access.cu'") ==
	      20);
	CHECK(query_int(db, "SELECT gldSectors - gldSectorsIdeal FROM GPT_SOURCE_METRICS "
			    "WHERE shortName = 'strided_gather' AND line = 20") == 28000);
	CHECK(query_int(
		  db,
		  "SELECT count(*) FROM GPT_META WHERE name = 'metrics_summary' "
		  "AND value LIKE 'metrics: 1 launches of 1 kernels profiled (0 passes each)%'") ==
	      1);
	sqlite3_close(db);

	metrics_session_summary(s, summary, sizeof(summary));
	CHECK(strstr(summary, "1 launches of 1 kernels profiled") != NULL);
	CHECK(strstr(summary, "0.01 s in kernel replay") != NULL);
	CHECK(strstr(summary, "source lines for 1 of 1 kernels") != NULL);
	metrics_session_free(s);
}

/*
 * Records as CUPTI flushes them on the H200: one per instruction and metric, in no useful order
 * (coalesced_copy: sectors and ideal sectors of its LDG and STG, one load count, one store count).
 * Each instruction's metrics are put together before it is classed as a load or a store.
 */
static void test_sass_records(void)
{
	struct metrics_session *s = open_ok("all");
	struct metrics_kernel *k = kernel_get(s, "_Z14strided_gatherPKfPfm");
	CUpti_SassMetrics_InstanceValue v[6];
	CUpti_SassMetrics_Data d[6];
	struct metrics_row row = {0};
	/* pc 0x80: the load (32 sectors per request), pc 0x100: the store (4). */
	static const struct {
		uint32_t pc;
		int metric;
		uint64_t value;
	} rec[6] = {
	    {0x100, SASS_SECTORS, 4096},      {0x80, SASS_INST_LD, 1024},
	    {0x80, SASS_SECTORS, 32768},      {0x100, SASS_INST_ST, 1024},
	    {0x80, SASS_SECTORS_IDEAL, 4096}, {0x100, SASS_SECTORS_IDEAL, 4096},
	};
	int i;

	for (i = 0; i < NR_SASS; i++)
		s->sass_ids[i] = 1000 + (uint64_t)i;
	for (i = 0; i < 6; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		d[i].cubinCrc = 77;
		d[i].functionIndex = 3;
		d[i].functionName = k->name;
		d[i].pcOffset = rec[i].pc;
		d[i].pInstanceValues = &v[i];
		v[i].metricId = s->sass_ids[rec[i].metric];
		v[i].value = rec[i].value;
	}
	row.kernel = k;
	sass_collect(s, k, &row, d, 6, 1);
	CHECK(row.sass.ld_sectors == 32768 && row.sass.ld_ideal == 4096 &&
	      row.sass.ld_inst == 1024);
	CHECK(row.sass.st_sectors == 4096 && row.sass.st_ideal == 4096 && row.sass.st_inst == 1024);
	/* No cubin was loaded: one line, file unknown, holding both instructions. */
	CHECK(k->nr_lines == 1 && !k->lines[0].file && k->lines[0].access.ld_sectors == 32768);
	CHECK(s->sass_unresolved == 2 && s->source_kernels == 0);

	metrics_session_free(s);
}

/* A launch on another thread that holds the session: the bounded stop gives up, nothing is written. */
static int held_pipe[2], release_pipe[2];

static void *hold_launch(void *arg)
{
	struct metrics_session *s = arg;
	char byte;

	metrics_launch_enter(s, NULL, "_Z1kv", 5);	/* no context: locked, not profiled */
	if (write(held_pipe[1], "x", 1) == 1 && read(release_pipe[0], &byte, 1) == 1)
		metrics_launch_exit(s);
	return NULL;
}

static void test_stop_within(void)
{
	struct metrics_session *s = open_ok("all");
	char err[256] = "", byte;
	pthread_t holder;
	sqlite3 *db;

	s->attached = true;
	CHECK(pipe(held_pipe) == 0 && pipe(release_pipe) == 0);
	CHECK(pthread_create(&holder, NULL, hold_launch, s) == 0);
	CHECK(read(held_pipe[0], &byte, 1) == 1);
	CHECK(metrics_session_stop_within(s, 100) == -ETIMEDOUT);
	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	CHECK(metrics_session_write(s, db, err, sizeof(err)) < 0);
	CHECK(strstr(err, "a launch was still being profiled") != NULL);
	sqlite3_close(db);
	CHECK(write(release_pipe[1], "x", 1) == 1);
	pthread_join(holder, NULL);
	/* The launch has ended: the lock comes at once. */
	CHECK(metrics_session_stop_within(s, 100) == 0 && s->stopped);
	for (int i = 0; i < 2; i++) {
		close(held_pipe[i]);
		close(release_pipe[i]);
	}
	metrics_session_free(s);
}

/* Hooks called with no session, or out of order, do nothing. */
static void test_no_session(void)
{
	char err[64];

	struct metrics_session *s = open_ok("all");

	/* Not attached to CUPTI: launches pass untouched, nothing is locked or counted. */
	metrics_launch_enter(s, (CUcontext)0x1, "_Z1kv", 1);
	CHECK(launch.depth == 0 && !launch.locked && s->nr_kernels == 0);
	metrics_launch_exit(s);
	metrics_module_loaded(s, "x", 1);
	CHECK(s->cubins == NULL);
	metrics_session_free(s);

	metrics_launch_enter(NULL, NULL, "k", 1);
	CHECK(metrics_launch_exit(NULL) == 0);
	CHECK(!metrics_launch_replayed(NULL));
	metrics_module_loaded(NULL, "x", 1);
	metrics_context_destroy(NULL, NULL);
	metrics_session_stop(NULL);
	metrics_session_free(NULL);
	CHECK(metrics_session_write(NULL, NULL, err, sizeof(err)) == 0);
	CHECK(launch.depth == 0);
}

int main(void)
{
	test_spec();
	test_names();
	/* libnvperf_host is loaded with RTLD_DEEPBIND, which AddressSanitizer cannot run beside. */
	if (!getenv("METRICS_UNIT_NO_HOST"))
		test_host_config();
	test_write();
	test_sass_records();
	test_stop_within();
	test_no_session();
	if (failures) {
		fprintf(stderr, "metrics_unit: %d check(s) failed\n", failures);
		return 1;
	}
	printf("metrics_unit: all checks passed\n");
	return 0;
}
