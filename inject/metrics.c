/*
 * Hardware metrics per kernel launch: the GPT_TRACE_METRICS spec, which launches are profiled,
 * what is kept from each, and the GPT_KERNEL_METRICS / GPT_SOURCE_METRICS tables written at the
 * end. The CUPTI calls live in metrics-cupti.c, what both use of the session in metrics-session.c;
 * the interface and its contract in metrics.h, the user-facing description in docs/metrics.md.
 *
 * Which launch gets what: a launch passes the filter when its kernel matches one of the kernel=
 * globs (or there are none) and, with first=N, the kernel has had fewer than N launches profiled.
 * Such a launch is profiled with the range profiler (counters). The SASS instrumentation that gives
 * ideal sectors and source lines runs once per distinct kernel, on its first selected launch, and
 * on that launch alone: measured on the H200, a launch that carried both came back with every SASS
 * count zero (kernel replay and patching do not mix), while a launch of its own gave exactly
 * Nsight Compute's figures. That launch then has SASS counts but no counters and no duration.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "collector/threads.h"
#include "inject/clock.h"
#include "inject/metrics-internal.h"

/* Cubins kept for source lines, at most: a program with more modules loses lines, not counters. */
#define CUBIN_BYTES_MAX (1024UL * 1024 * 1024)

/* Where the launching thread stands: launch calls nest (runtime, driver), the outer one counts. */
static __thread struct {
	int depth;
	bool locked;
	bool counters;
	bool sass;
	bool paused;	/* the library's kernel tracing is paused for this SASS launch */
	struct metrics_context *context;
	struct metrics_kernel *kernel;
	uint32_t correlation_id;
	uint64_t start_ns;
	uint64_t overhead_start;	/* gpt_clock_now() at start_ns */
} launch;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The function's own name from an Itanium-mangled one: "_Z14coalesced_copyPKfPfm" gives
 * "coalesced_copy", "_ZN2ns6kernelIfEEvPT_" gives "kernel". Anything else is returned whole. This
 * is what kernel= globs match, besides the full name; it is no demangler.
 */
static char *short_name(const char *name)
{
	const char *p = name + 2, *last = NULL;
	size_t last_len = 0;
	bool nested;
	int depth = 0;

	if (strncmp(name, "_Z", 2))
		return strdup(name);
	if (*p == 'L')
		p++;
	nested = *p == 'N';
	if (nested)
		p++;
	while (*p == 'r' || *p == 'V' || *p == 'K' || *p == 'R' || *p == 'O')
		p++;
	while (*p) {
		if (*p >= '0' && *p <= '9') {
			char *end;
			unsigned long len = strtoul(p, &end, 10);

			if (strlen(end) < len)
				break;
			if (depth == 0) {
				last = end;
				last_len = len;
			}
			p = end + len;
			/* A plain name is one component; a nested one ends at its 'E'. */
			if (!nested && depth == 0)
				break;
		} else if (*p == 'I' || *p == 'N') {
			/* Template arguments and nested names inside them both end with 'E'. */
			depth++;
			p++;
		} else if (*p == 'L') {
			/* A literal template argument, "Li4E": its digits are no name length. */
			while (*p && *p != 'E')
				p++;
			if (*p)
				p++;
		} else if (*p == 'S' || *p == 'T') {
			/* A substitution "S0_", "St", or a template parameter "T_", "T0_". */
			p++;
			if (p[-1] == 'S' && *p >= 'a' && *p <= 'z') {
				p++;
				continue;
			}
			while ((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z'))
				p++;
			if (*p == '_')
				p++;
		} else if (*p == 'E') {
			if (depth == 0)
				break;
			depth--;
			p++;
		} else {
			p++;
		}
	}
	if (!last)
		return strdup(name);
	return strndup(last, last_len);
}

static unsigned long hash_name(const char *name)
{
	unsigned long h = 1469598103934665603UL;

	while (*name)
		h = (h ^ (unsigned char)*name++) * 1099511628211UL;
	return h;
}

static bool kernel_selected(struct metrics_session *s, struct metrics_kernel *k)
{
	size_t i;

	if (!s->nr_globs)
		return true;
	for (i = 0; i < s->nr_globs; i++)
		if (!fnmatch(s->globs[i], k->short_name, 0) || !fnmatch(s->globs[i], k->name, 0))
			return true;
	return false;
}

static struct metrics_kernel *kernel_get(struct metrics_session *s, const char *name)
{
	unsigned long bucket = hash_name(name) % METRICS_KERNEL_BUCKETS;
	struct metrics_kernel *k;

	for (k = s->kernels[bucket]; k; k = k->next)
		if (!strcmp(k->name, name))
			return k;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->name = strdup(name);
	k->short_name = short_name(name);
	if (!k->name || !k->short_name) {
		free(k->name);
		free(k->short_name);
		free(k);
		return NULL;
	}
	k->selected = kernel_selected(s, k);
	k->next = s->kernels[bucket];
	s->kernels[bucket] = k;
	s->nr_kernels++;
	return k;
}

static struct metrics_row *row_new(struct metrics_session *s)
{
	struct metrics_row *row;

	if (s->nr_rows == s->alloc_rows) {
		size_t alloc = s->alloc_rows ? 2 * s->alloc_rows : 256;
		struct metrics_row *rows = realloc(s->rows, alloc * sizeof(*rows));

		if (!rows)
			return NULL;
		s->rows = rows;
		s->alloc_rows = alloc;
	}
	row = &s->rows[s->nr_rows++];
	memset(row, 0, sizeof(*row));
	return row;
}

static int parse_bool(const char *value, bool *out)
{
	if (!strcmp(value, "1") || !strcasecmp(value, "on") || !strcasecmp(value, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(value, "0") || !strcasecmp(value, "off") || !strcasecmp(value, "no")) {
		*out = false;
		return 0;
	}
	return -1;
}

static bool spec_is_off(const char *spec)
{
	while (*spec == ' ')
		spec++;
	return !*spec || !strcmp(spec, "0") || !strcasecmp(spec, "off") ||
	       !strcasecmp(spec, "no") || !strcasecmp(spec, "none") || !strcasecmp(spec, "false");
}

/* One item of the spec; returns 0 or -1 with err filled. */
static int parse_item(struct metrics_session *s, char *item, char *err, size_t errlen)
{
	char *value = strchr(item, '=');

	if (!value) {
		if (!strcmp(item, "1") || !strcasecmp(item, "all") || !strcasecmp(item, "on") ||
		    !strcasecmp(item, "yes") || !strcasecmp(item, "true"))
			return 0;
		if (!strcasecmp(item, "debug")) {
			s->debug = true;
			return 0;
		}
		goto out_unknown;
	}
	*value++ = '\0';
	if (!strcmp(item, "kernel")) {
		char **globs;

		if (!*value) {
			snprintf(err, errlen, "GPT_TRACE_METRICS: kernel= needs a name or glob");
			return -1;
		}
		globs = realloc(s->globs, (s->nr_globs + 1) * sizeof(*globs));
		if (!globs || !(globs[s->nr_globs] = strdup(value))) {
			if (globs)
				s->globs = globs;
			snprintf(err, errlen, "GPT_TRACE_METRICS: %s", strerror(ENOMEM));
			return -1;
		}
		s->globs = globs;
		s->nr_globs++;
		return 0;
	}
	if (!strcmp(item, "first")) {
		char *end;
		unsigned long long n;

		errno = 0;
		n = strtoull(value, &end, 10);
		if (errno || *end || end == value || n == 0 || value[0] == '-') {
			snprintf(err, errlen,
				 "GPT_TRACE_METRICS: first=%s: expected a positive count "
				 "of launches",
				 value);
			return -1;
		}
		s->first = n;
		return 0;
	}
	if (!strcmp(item, "source")) {
		s->source_given = true;
		if (parse_bool(value, &s->want_source) < 0) {
			snprintf(err, errlen, "GPT_TRACE_METRICS: source=%s: expected 0 or 1",
				 value);
			return -1;
		}
		return 0;
	}
	value[-1] = '=';
out_unknown:
	snprintf(err, errlen,
		 "GPT_TRACE_METRICS: unknown item '%s' (expected all, kernel=GLOB, "
		 "first=N, source=0|1)",
		 item);
	return -1;
}

int metrics_session_open(const char *spec, metrics_report_fn report, struct metrics_session **out,
			 char *err, size_t errlen)
{
	struct metrics_session *s;
	char *copy, *item, *save = NULL;

	*out = NULL;
	if (!spec || spec_is_off(spec))
		return 0;
	s = calloc(1, sizeof(*s));
	copy = strdup(spec);
	if (!s || !copy) {
		snprintf(err, errlen, "GPT_TRACE_METRICS: %s", strerror(ENOMEM));
		goto out_free;
	}
	s->report = report;
	s->want_source = true;
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *end;

		while (*item == ' ')
			item++;
		end = item + strlen(item);
		while (end > item && end[-1] == ' ')
			*--end = '\0';
		if (!*item)
			continue;
		if (parse_item(s, item, err, errlen) < 0)
			goto out_free;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->cubin_lock, NULL);
	free(copy);
	*out = s;
	return 0;

out_free:
	free(copy);
	if (s) {
		while (s->nr_globs)
			free(s->globs[--s->nr_globs]);
		free(s->globs);
		free(s);
	}
	return -EINVAL;
}

void metrics_session_default_source(struct metrics_session *s, bool on)
{
	if (s && !s->source_given)
		s->want_source = on;
}

void metrics_session_sass_hooks(struct metrics_session *s, metrics_sass_hook_fn pause,
				metrics_sass_hook_fn synced, metrics_sass_hook_fn resume)
{
	if (!s)
		return;
	s->sass_pause = pause;
	s->sass_synced = synced;
	s->sass_resume = resume;
}

int metrics_session_attach(struct metrics_session *s, void *cupti_lib, char *err, size_t errlen)
{
	if (!s)
		return 0;
	if (metrics_cupti_load(cupti_lib, err, errlen) < 0) {
		if (!s->first_problem)
			s->first_problem = strdup(err);
		return -1;
	}
	s->attached = true;
	return 0;
}

void metrics_module_loaded(struct metrics_session *s, const void *cubin, size_t size)
{
	struct metrics_cubin *c;
	uint64_t crc;

	if (!s || !s->attached || !s->want_source || !cubin || !size)
		return;
	crc = metrics_cubin_crc(cubin, size);
	pthread_mutex_lock(&s->cubin_lock);
	for (c = s->cubins; c; c = c->next)
		if (c->crc == crc && c->size == size)
			goto out_unlock;
	if (s->cubin_bytes + size > CUBIN_BYTES_MAX) {
		if (!s->cubin_limit_reported) {
			s->cubin_limit_reported = true;
			pthread_mutex_unlock(&s->cubin_lock);
			metrics_report(s,
				       "source lines only for the first %lu MiB of loaded modules",
				       CUBIN_BYTES_MAX >> 20);
			return;
		}
		goto out_unlock;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->data = malloc(size))) {
		free(c);
		goto out_unlock;
	}
	memcpy(c->data, cubin, size);
	c->size = size;
	c->crc = crc;
	c->next = s->cubins;
	s->cubins = c;
	s->cubin_bytes += size;
out_unlock:
	pthread_mutex_unlock(&s->cubin_lock);
}

static void sass_resume(struct metrics_session *s)
{
	if (!launch.paused)
		return;
	launch.paused = false;
	s->sass_resume(launch.context->ctx);
}

void metrics_launch_enter(struct metrics_session *s, CUcontext ctx, const char *kernel,
			  uint32_t correlation_id)
{
	struct metrics_context *c;
	struct metrics_kernel *k;
	bool counters, sass;

	if (!s || !s->attached || launch.depth++ > 0)
		return;
	/*
	 * Every launch waits here while another thread's launch is being profiled: a kernel that
	 * started inside that range would be counted with it.
	 */
	pthread_mutex_lock(&s->lock);
	launch.locked = true;
	launch.counters = launch.sass = launch.paused = false;
	if (s->stopped || !ctx || !kernel)
		return;
	k = kernel_get(s, kernel);
	if (!k)
		return;
	k->launches++;
	if (!k->selected)
		return;
	sass = s->want_source && !k->sass_done && !k->sass_failed;
	counters = !sass && (!s->first || k->profiled < s->first);
	if (!counters && !sass)
		return;
	c = metrics_context_get(s, ctx);
	if (!c)
		return;

	launch.context = c;
	launch.kernel = k;
	launch.correlation_id = correlation_id;
	launch.start_ns = now_ns();
	launch.overhead_start = gpt_clock_now();
	/*
	 * The range profiler is enabled (not started) on a context before its first SASS launch.
	 * Measured on the H200: enabled only after SASS launches had come and gone, it saw no range
	 * at all; without it enabled, only the first kernel instrumented gave SASS data.
	 */
	metrics_counters_setup(s, c);
	if (sass) {
		if (metrics_sass_setup(s, c) == 0) {
			/*
			 * Kernel activity tracing instruments kernels too (before Blackwell, CUPTI
			 * times them with SW instrumentation, cupti_activity.h): paused while this
			 * launch is patched. The hook idles the context first.
			 */
			if (s->sass_pause) {
				s->sass_pause(c->ctx);
				launch.paused = true;
			}
			if (metrics_sass_start(s, c) == 0)
				launch.sass = true;
		}
		if (!launch.sass) {
			k->sass_failed = true;
			sass_resume(s);
		}
	}
	/* A kernel whose SASS metrics failed gets its counters on this launch instead. */
	if (!launch.sass && !counters && (!s->first || k->profiled < s->first))
		counters = true;
	if (counters && metrics_counters_setup(s, c) == 0 && metrics_counters_start(s, c) == 0)
		launch.counters = true;
	if (launch.counters)
		k->profiled++;
}

uint64_t metrics_launch_exit(struct metrics_session *s)
{
	struct metrics_row *row;
	uint64_t duration = 0;

	if (!s || launch.depth == 0 || --launch.depth > 0)
		return 0;
	if (!launch.locked)
		return 0;
	launch.locked = false;
	if (launch.counters || launch.sass) {
		struct metrics_context *c = launch.context;
		struct metrics_kernel *k = launch.kernel;
		bool keep = false;

		row = row_new(s);
		if (row) {
			row->correlation_id = launch.correlation_id;
			row->device_id = c->device_id;
			row->context_id = c->context_id;
			row->kernel = k;
		}
		if (launch.counters) {
			struct metrics_row scratch;

			if (metrics_counters_stop(s, c, row ? row : &scratch) == 0)
				keep = true;
		}
		if (launch.sass) {
			struct metrics_row scratch = {0};

			if (metrics_sass_stop(s, c, k, row ? row : &scratch) == 0)
				keep = true;
			else
				k->sass_failed = true;
			/* metrics_sass_stop() synchronized: the patched kernel is done. */
			sass_resume(s);
		}
		if (row) {
			row->overhead_start = launch.overhead_start;
			row->overhead_end = gpt_clock_now();
			row->tid = (uint32_t)syscall(SYS_gettid);
			row->replay_ns = now_ns() - launch.start_ns;
			s->replay_ns += row->replay_ns;
			if (row->has_counters && row->counters[COUNTER_DURATION] > 0)
				duration = (uint64_t)llround(row->counters[COUNTER_DURATION]);
			if (!keep)
				s->nr_rows--;
		}
		launch.counters = launch.sass = false;
	}
	pthread_mutex_unlock(&s->lock);
	return duration;
}

bool metrics_launch_replayed(const struct metrics_session *s)
{
	return s && launch.depth > 0 && launch.locked && launch.counters;
}

bool metrics_launch_instrumented(const struct metrics_session *s)
{
	return s && launch.depth > 0 && launch.locked && launch.sass;
}

void metrics_context_destroy(struct metrics_session *s, CUcontext ctx)
{
	struct metrics_context *c;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (c = s->contexts; c; c = c->next)
		if (c->ctx == ctx)
			metrics_context_release(s, c);
	pthread_mutex_unlock(&s->lock);
}

static void session_stop_locked(struct metrics_session *s)
{
	struct metrics_context *c;

	if (!s->stopped) {
		s->stopped = true;
		for (c = s->contexts; c; c = c->next)
			metrics_context_release(s, c);
		metrics_sass_unset(s);
	}
}

void metrics_session_stop(struct metrics_session *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	session_stop_locked(s);
	pthread_mutex_unlock(&s->lock);
}

int metrics_session_stop_within(struct metrics_session *s, unsigned timeout_ms)
{
	struct timespec deadline;
	int rc;

	if (!s)
		return 0;
	deadline = gpt_clock_deadline(timeout_ms);
	/*
	 * A launch being profiled holds the lock for its whole replay; on a signal, the thread that
	 * holds it may be the one parked in the library's handler, waiting for us.
	 */
	rc = pthread_mutex_timedlock(&s->lock, &deadline);
	if (rc) {
		s->stop_failed = true;
		return -rc;
	}
	session_stop_locked(s);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static size_t session_passes(struct metrics_session *s)
{
	return s->chips ? s->chips->passes : 0;
}

void metrics_session_summary(struct metrics_session *s, char *buf, size_t size)
{
	size_t i, launches = 0, kernels = 0, n;
	struct metrics_kernel *k;

	if (!s) {
		snprintf(buf, size, "metrics: off");
		return;
	}
	for (i = 0; i < s->nr_rows; i++)
		launches += s->rows[i].has_counters;
	for (i = 0; i < METRICS_KERNEL_BUCKETS; i++)
		for (k = s->kernels[i]; k; k = k->next)
			kernels += k->profiled > 0;
	n = (size_t)snprintf(buf, size, "metrics: %zu launches of %zu kernels profiled", launches,
			     kernels);
	if (n < size && launches)
		n += (size_t)snprintf(buf + n, size - n, " (%zu passes each)", session_passes(s));
	if (n < size)
		n += (size_t)snprintf(buf + n, size - n, ", %.2f s in kernel replay",
				      (double)s->replay_ns / 1e9);
	if (n < size && s->want_source)
		n += (size_t)snprintf(buf + n, size - n,
				      "; source lines for %llu of %llu kernels "
				      "instrumented",
				      (unsigned long long)s->source_kernels,
				      (unsigned long long)s->sass_kernels);
	if (n < size && s->ranges_missing)
		n += (size_t)snprintf(buf + n, size - n, "; %llu launches gave no counters",
				      (unsigned long long)s->ranges_missing);
	if (n < size && !launches && !s->sass_kernels && s->first_problem)
		snprintf(buf + n, size - n, " (%s)", s->first_problem);
}

static const char kernel_table_sql[] = "CREATE TABLE IF NOT EXISTS GPT_KERNEL_METRICS ("
				       " correlationId INTEGER NOT NULL,"
				       " deviceId INTEGER,"
				       " contextId INTEGER,"
				       " kernelName TEXT,"
				       " shortName TEXT,"
				       " source TEXT,"
				       " gldSectors INTEGER,"
				       " gldRequests INTEGER,"
				       " gstSectors INTEGER,"
				       " gstRequests INTEGER,"
				       " gldSectorsIdeal INTEGER,"
				       " gstSectorsIdeal INTEGER,"
				       " idealSource TEXT,"
				       " durationNs INTEGER,"
				       " replayDurationNs INTEGER,"
				       " passes INTEGER);"
				       "CREATE INDEX IF NOT EXISTS GPT_KERNEL_METRICS_correlationId"
				       " ON GPT_KERNEL_METRICS (correlationId);"
				       "CREATE TABLE IF NOT EXISTS GPT_SOURCE_METRICS ("
				       " kernelName TEXT,"
				       " shortName TEXT,"
				       " file TEXT,"
				       " line INTEGER,"
				       " gldSectors INTEGER,"
				       " gldSectorsIdeal INTEGER,"
				       " gldRequests INTEGER,"
				       " gstSectors INTEGER,"
				       " gstSectorsIdeal INTEGER,"
				       " gstRequests INTEGER,"
				       " launches INTEGER);";

static void bind_count(sqlite3_stmt *st, int col, double v)
{
	if (isnan(v) || v < 0)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, llround(v));
}

/* Ideal sectors of a launch without SASS data: its sectors times the kernel's ideal share. */
static double scaled_ideal(double sectors, uint64_t sass_ideal, uint64_t sass_sectors)
{
	if (!sass_sectors)
		return sectors == 0 ? 0 : NAN;
	return sectors * (double)sass_ideal / (double)sass_sectors;
}

static int write_kernel_row(sqlite3_stmt *st, const struct metrics_row *row)
{
	const struct metrics_kernel *k = row->kernel;
	double ld_ideal = NAN, st_ideal = NAN;
	const char *ideal_source = NULL;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, row->correlation_id);
	sqlite3_bind_int64(st, 2, row->device_id);
	sqlite3_bind_int64(st, 3, row->context_id);
	sqlite3_bind_text(st, 4, k->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, k->short_name, -1, SQLITE_STATIC);
	if (row->has_counters) {
		sqlite3_bind_text(st, 6, "counters", -1, SQLITE_STATIC);
		bind_count(st, 7, row->counters[COUNTER_LD_SECTORS]);
		bind_count(st, 8, row->counters[COUNTER_LD_REQUESTS]);
		bind_count(st, 9, row->counters[COUNTER_ST_SECTORS]);
		bind_count(st, 10, row->counters[COUNTER_ST_REQUESTS]);
		bind_count(st, 14, row->counters[COUNTER_DURATION]);
		sqlite3_bind_int64(st, 16, row->passes);
		if (row->has_sass) {
			ld_ideal = (double)row->sass.ld_ideal;
			st_ideal = (double)row->sass.st_ideal;
			ideal_source = "sass";
		} else if (k->sass_done) {
			ld_ideal = scaled_ideal(row->counters[COUNTER_LD_SECTORS], k->sass.ld_ideal,
						k->sass.ld_sectors);
			st_ideal = scaled_ideal(row->counters[COUNTER_ST_SECTORS], k->sass.st_ideal,
						k->sass.st_sectors);
			ideal_source = "sass-scaled";
		}
	} else {
		/* An instrumented launch alone: counts from SASS, requests are warp instructions.
		 */
		sqlite3_bind_text(st, 6, "sass", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)row->sass.ld_sectors);
		sqlite3_bind_int64(st, 8, (sqlite3_int64)row->sass.ld_inst);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)row->sass.st_sectors);
		sqlite3_bind_int64(st, 10, (sqlite3_int64)row->sass.st_inst);
		ld_ideal = (double)row->sass.ld_ideal;
		st_ideal = (double)row->sass.st_ideal;
		ideal_source = "sass";
	}
	bind_count(st, 11, ld_ideal);
	bind_count(st, 12, st_ideal);
	if (ideal_source)
		sqlite3_bind_text(st, 13, ideal_source, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 15, (sqlite3_int64)row->replay_ns);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

static int write_line_row(sqlite3_stmt *st, const struct metrics_kernel *k,
			  const struct metrics_line *l)
{
	const struct metrics_access *a = &l->access;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_text(st, 1, k->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, k->short_name, -1, SQLITE_STATIC);
	if (l->file)
		sqlite3_bind_text(st, 3, l->file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, l->line);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)a->ld_sectors);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)a->ld_ideal);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)a->ld_inst);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)a->st_sectors);
	sqlite3_bind_int64(st, 9, (sqlite3_int64)a->st_ideal);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)a->st_inst);
	sqlite3_bind_int64(st, 11, 1);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

/*
 * The profiler's own time on the program's threads, as nsys writes it (PROFILER_OVERHEAD, in
 * schema/schema.sql): one row per launch measured, from the setup before it to the end of its
 * replay (counters) or patching (SASS), on the trace's clock (times count from time_origin_ns).
 * The analyzer counts that time as the profiler's, never the program's (analyzer/analysis/gaps.h).
 * A trace without the table or the origin (a file of another writer) gets no rows.
 */
static int write_overhead(struct metrics_session *s, sqlite3 *db)
{
	static const char *const names[2] = { "gpt-trace: kernel replay for hardware counters (--metrics)",
					       "gpt-trace: SASS patching for source-line metrics (--metrics)" };
	sqlite3_stmt *st = NULL;
	pid_t pid = getpid();
	bool used[2] = { false, false };
	int ret = -1;

	if (sqlite3_exec(db, "SELECT 1 FROM PROFILER_OVERHEAD LIMIT 0; "
			 "SELECT 1 FROM GPT_META WHERE name = 'time_origin_ns'", NULL, NULL, NULL) != SQLITE_OK)
		return 0;
	for (size_t i = 0; i < s->nr_rows; i++)
		used[s->rows[i].has_counters ? 0 : 1] = true;
	for (int i = 0; i < 2; i++) {
		char *sql;
		int rc;

		if (!used[i])
			continue;
		sql = sqlite3_mprintf("INSERT INTO StringIds (id, value) SELECT coalesce(max(id), -1) + 1, "
					    "%Q FROM StringIds WHERE NOT EXISTS (SELECT 1 FROM StringIds "
					    "WHERE value = %Q)", names[i], names[i]);
		rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;

		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			return -1;
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO PROFILER_OVERHEAD (start, \"end\", globalTid, nameId, returnValue) "
			       "SELECT ?1 - o, ?2 - o, ?3, (SELECT id FROM StringIds WHERE value = ?4 LIMIT 1), 0 "
			       "FROM (SELECT CAST(value AS INTEGER) AS o FROM GPT_META "
			       "WHERE name = 'time_origin_ns' LIMIT 1)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < s->nr_rows; i++) {
		const struct metrics_row *row = &s->rows[i];

		if (!row->overhead_start || row->overhead_end < row->overhead_start)
			continue;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (sqlite3_int64)row->overhead_start);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)row->overhead_end);
		sqlite3_bind_int64(st, 3, thread_global_tid((uint32_t)pid, row->tid));
		sqlite3_bind_text(st, 4, names[row->has_counters ? 0 : 1], -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* Facts for GPT_META, when the trace has that table (ours always does). */
static void write_meta(struct metrics_session *s, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	char summary[1024];

	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO GPT_META (name, value) VALUES (?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	metrics_session_summary(s, summary, sizeof(summary));
	sqlite3_bind_text(st, 1, "metrics_summary", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, summary, -1, SQLITE_STATIC);
	sqlite3_step(st);
	if (s->first_problem) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, "metrics_problem", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, s->first_problem, -1, SQLITE_STATIC);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
}

int metrics_session_write(struct metrics_session *s, sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *kernel_st = NULL, *line_st = NULL;
	struct metrics_kernel *k;
	bool own_transaction;
	int ret = -1;
	size_t i, j;

	if (!s)
		return 0;
	if (s->stop_failed) {
		snprintf(err, errlen, "hardware metrics not written: a launch was still being "
			 "profiled when the trace ended");
		return -EBUSY;
	}
	own_transaction = sqlite3_get_autocommit(db);
	pthread_mutex_lock(&s->lock);
	if (own_transaction && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		goto out_sqlite;
	if (sqlite3_exec(db, kernel_table_sql, NULL, NULL, NULL) != SQLITE_OK)
		goto out_rollback;
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO GPT_KERNEL_METRICS VALUES "
			       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &kernel_st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "INSERT INTO GPT_SOURCE_METRICS VALUES "
			       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &line_st, NULL) != SQLITE_OK)
		goto out_rollback;
	for (i = 0; i < s->nr_rows; i++)
		if (write_kernel_row(kernel_st, &s->rows[i]) < 0)
			goto out_rollback;
	for (i = 0; i < METRICS_KERNEL_BUCKETS; i++)
		for (k = s->kernels[i]; k; k = k->next)
			for (j = 0; j < k->nr_lines; j++)
				if (write_line_row(line_st, k, &k->lines[j]) < 0)
					goto out_rollback;
	if (write_overhead(s, db) < 0)
		goto out_rollback;
	write_meta(s, db);
	if (own_transaction && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto out_rollback;
	ret = (int)s->nr_rows;
	goto out_finalize;

out_rollback:
	snprintf(err, errlen, "cannot write hardware metrics: %s", sqlite3_errmsg(db));
	if (own_transaction)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	goto out_finalize;
out_sqlite:
	snprintf(err, errlen, "cannot write hardware metrics: %s", sqlite3_errmsg(db));
out_finalize:
	sqlite3_finalize(kernel_st);
	sqlite3_finalize(line_st);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int metrics_session_write_file(struct metrics_session *s, const char *path, char *err,
			       size_t errlen)
{
	sqlite3 *db = NULL;
	int ret;

	if (!s)
		return 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot write hardware metrics to '%s': %s", path,
			 db ? sqlite3_errmsg(db) : strerror(ENOMEM));
		sqlite3_close(db);
		return -1;
	}
	sqlite3_busy_timeout(db, 5000);
	ret = metrics_session_write(s, db, err, errlen);
	sqlite3_close(db);
	return ret;
}

void metrics_session_free(struct metrics_session *s)
{
	struct metrics_context *c;
	struct metrics_cubin *cubin;
	struct metrics_kernel *k;
	size_t i, j;

	if (!s)
		return;
	for (i = 0; i < METRICS_KERNEL_BUCKETS; i++) {
		while ((k = s->kernels[i])) {
			s->kernels[i] = k->next;
			for (j = 0; j < k->nr_lines; j++)
				free(k->lines[j].file);
			free(k->lines);
			free(k->name);
			free(k->short_name);
			free(k);
		}
	}
	while ((c = s->contexts)) {
		s->contexts = c->next;
		free(c->counter_data);
		free(c);
	}
	while ((cubin = s->cubins)) {
		s->cubins = cubin->next;
		free(cubin->data);
		free(cubin);
	}
	metrics_chips_free(s);
	for (i = 0; i < s->nr_globs; i++)
		free(s->globs[i]);
	free(s->globs);
	free(s->rows);
	free(s->first_problem);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->cubin_lock);
	free(s);
}
