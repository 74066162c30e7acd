/*
 * Per-rank summaries (see summary.h): made from one trace through the loader, phases and the
 * collectives reader, written as text; read back header first, collectives streamed.
 */
#include "analyzer/ranks/summary.h"

#include "common/util.h"
#include "analyzer/loader/events.h"
#include "analyzer/loader/trace.h"
#include "analyzer/loader/windows.h"
#include "analyzer/analysis/phases.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *rank_summary_path(const char *trace_path)
{
	return xasprintf("%s%s", trace_path, RANK_SUMMARY_SUFFIX);
}

static int trace_stat(const char *path, int64_t *size, int64_t *mtime)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*size = (int64_t)st.st_size;
	*mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

/* One line of text: no newlines inside a field, "-" for nothing. */
static void put_text(FILE *f, const char *key, const char *text)
{
	if (*key)
		fprintf(f, "%s ", key);
	if (!text || !*text)
		text = "-";
	for (; *text; text++)
		fputc(*text == '\n' || *text == '\r' ? ' ' : *text, f);
	fputc('\n', f);
}

struct trace_identity {
	int64_t rank, local_rank, world_size, pid, origin, wall;
	int complete, has_origin, has_wall;
	char *host, *launcher, *job, *exit_reason;
	int64_t steps_first, steps_last;	/* gpt-trace run --steps A-B; 0 when not given */
	int imported;				/* made by gpt-trace import */
};

static void identity_read(struct trace *trace, struct trace_identity *id)
{
	sqlite3_stmt *st;

	*id = (struct trace_identity){ .rank = -1, .local_rank = -1, .world_size = -1, .pid = -1 };
	if (sqlite3_prepare_v2(trace_db(trace), "SELECT name, value FROM meta WHERE traceId = 0", -1, &st, NULL) ==
	    SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);
			const char *value = (const char *)sqlite3_column_text(st, 1);
			int64_t v = sqlite3_column_int64(st, 1);

			if (!name || !value)
				continue;
			if (!strcmp(name, "rank"))
				id->rank = v;
			else if (!strcmp(name, "local_rank"))
				id->local_rank = v;
			else if (!strcmp(name, "world_size"))
				id->world_size = v;
			else if (!strcmp(name, "pid"))
				id->pid = v;
			else if (!strcmp(name, "time_origin_ns"))
				id->origin = v, id->has_origin = 1;
			else if (!strcmp(name, "time_origin_utc_ns"))
				id->wall = v, id->has_wall = 1;
			else if (!strcmp(name, "trace_complete"))
				id->complete = v == 1;
			else if (!strcmp(name, "host") && !id->host)
				id->host = xstrdup(value);
			else if (!strcmp(name, "rank_launcher") && !id->launcher)
				id->launcher = xstrdup(value);
			else if (!strcmp(name, "job_id") && !id->job)
				id->job = xstrdup(value);
			else if (!strcmp(name, "exit_reason") && !id->exit_reason)
				id->exit_reason = xstrdup(value);
			else if (!strcmp(name, "import_source"))
				id->imported = 1;
			else if (!strcmp(name, "capture_steps") &&
				 sscanf(value, "%" SCNd64 "-%" SCNd64, &id->steps_first, &id->steps_last) != 2)
				id->steps_first = id->steps_last = 0;
		}
		sqlite3_finalize(st);
	}
	/* nsys exports: the process that did the GPU work */
	if (id->pid < 0 &&
	    sqlite3_prepare_v2(trace_db(trace), "SELECT MIN(pid) FROM processes WHERE traceId = 0", -1, &st, NULL) ==
		    SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			id->pid = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
}

static void identity_release(struct trace_identity *id)
{
	free(id->host);
	free(id->launcher);
	free(id->job);
	free(id->exit_reason);
}

/* The iteration whose GPU span holds t: iterations are in time order and do not overlap. */
static int64_t iteration_at(const struct trace_phases *tp, int64_t t)
{
	size_t lo = 0, hi = tp ? tp->niterations : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tp->iterations[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!tp || lo >= tp->niterations || tp->iterations[lo].start > t)
		return -1;
	return (int64_t)lo;
}

/*
 * Where the iterations' step numbers come from: the step ranges' names when every one ends in a
 * number, in increasing order (a name's number that repeats or goes back is no step count); else
 * --steps A-B, whose window opened at the A-th step range (counted from 1), when the iterations are
 * those ranges; else none.
 */
static enum rank_steps_from steps_from(const struct trace_phases *tp, const struct trace_identity *id)
{
	int named = tp && tp->niterations > 0;

	for (size_t i = 0; named && i < tp->niterations; i++)
		named = tp->iterations[i].step >= 0 && (!i || tp->iterations[i].step > tp->iterations[i - 1].step);
	if (named)
		return RANK_STEPS_NAME;
	if (tp && tp->niterations && id->steps_first > 0 &&
	    (tp->source == ITERATIONS_NVTX || tp->source == ITERATIONS_STEP) &&
	    tp->niterations <= (size_t)(id->steps_last - id->steps_first + 1))
		return RANK_STEPS_CAPTURE;
	return RANK_STEPS_NONE;
}

/* The capture line and the iterations, each with its step number. */
static void write_iterations(FILE *f, struct trace *trace, const struct trace_phases *tp,
			     const struct trace_identity *id)
{
	struct trace_windows windows = { 0 };
	enum rank_steps_from from = steps_from(tp, id);
	size_t nwindows = 0;
	char why[256];

	/* a trace whose windows cannot be read is taken as recorded whole, as the phases take it */
	if (trace_windows_load(trace, &windows, why, sizeof(why)) == 0)
		for (size_t i = 0; i < windows.count; i++)
			nwindows += windows.list[i].trace_id == 0;
	trace_windows_release(&windows);
	fprintf(f, "capture %zu %d %d\n", nwindows, (int)from,
		!nwindows && !id->imported && trace_format(trace, 0) == TRACE_FORMAT_GPT);
	fprintf(f, "iterations %zu %zu %" PRId64 " ", tp ? tp->niterations : 0, tp ? tp->first_steady : 0,
		tp ? tp->median_ns : 0);
	put_text(f, "", tp && tp->source_name ? tp->source_name : NULL);
	for (size_t i = 0; tp && i < tp->niterations; i++) {
		int64_t step = from == RANK_STEPS_NAME	  ? tp->iterations[i].step
			       : from == RANK_STEPS_CAPTURE ? id->steps_first + (int64_t)i
							    : -1;

		fprintf(f, "i %" PRId64 " %" PRId64 " %d %" PRId64 "\n", tp->iterations[i].start, tp->iterations[i].end,
			i < tp->first_steady, step);
	}
}

/* The steady state's critical path as recorded (what-if.h), for the windows before the collectives
 * (the job's critical path goes through the late rank's): none when the trace has no steady
 * iterations or the replay cannot read it, which costs the job's path that rank's windows alone. */
static void recorded_path(struct trace *trace, const struct trace_phases *tp, struct what_if_segment **path,
			  size_t *npath)
{
	struct analysis_context a = { .trace = trace, .who = "what-if replay" };
	struct what_if *w = NULL;
	char why[256];

	if (what_if_load(&a, tp, &w, why, sizeof(why)) == 0) {
		what_if_critical_path(w, path, npath);
		what_if_free(w);
	}
}

static int summarize(FILE *f, const char *trace_path, const char *step, char *why, size_t whylen)
{
	const char *paths[1] = { trace_path };
	struct trace *trace = NULL;
	struct phases *phases = NULL;
	struct trace_collectives list = { 0 };
	struct trace_identity id = { 0 };
	const struct trace_phases *tp = NULL;
	int64_t count[COLLECTIVE_TYPES] = { 0 }, ns[COLLECTIVE_TYPES] = { 0 }, overlap[COLLECTIVE_TYPES] = { 0 };
	int64_t *used;
	size_t nused = 0, npath = 0;
	struct what_if_segment *path = NULL;
	int ret;

	ret = trace_open(paths, 1, &trace, why, whylen);
	if (ret < 0)
		return ret;
	/* the phases, then the collectives: each table is read from the trace once */
	phases_keep_walk(trace);
	identity_read(trace, &id);
	ret = phases_compute(trace, step, &phases, why, whylen);
	if (ret < 0)
		goto out;
	if (phases->ntraces)
		tp = &phases->traces[0];
	ret = collectives_read(trace, 0, &list, why, whylen);
	if (ret < 0)
		goto out;
	fprintf(f, "rank %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %d %d\n", id.rank, id.local_rank,
		id.world_size, id.pid, (int)trace_format(trace, 0), id.complete);
	put_text(f, "host", id.host);
	put_text(f, "launcher", id.launcher);
	put_text(f, "job", id.job);
	put_text(f, "exit", id.exit_reason);
	fprintf(f, "clock %" PRId64 " %" PRId64 " %d\n", id.has_origin ? id.origin : 0, id.has_wall ? id.wall : 0,
		id.has_origin && id.has_wall);
	write_iterations(f, trace, tp, &id);
	used = xcalloc(list.count ? list.count : 1, sizeof(*used));
	for (size_t i = 0; i < list.count; i++) {
		const struct collective *c = &list.items[i];
		int64_t it = iteration_at(tp, c->start);
		int steady = tp && tp->niterations ? it >= (int64_t)tp->first_steady
						   : (tp && c->start >= tp->warmup_until);
		size_t k;

		if (steady) {
			count[c->type]++;
			ns[c->type] += c->end - c->start;
			overlap[c->type] += c->overlap_ns;
		}
		for (k = 0; k < nused && used[k] != c->longest_name; k++)
			;
		if (k == nused && c->longest_name >= 0)
			used[nused++] = c->longest_name;
	}
	for (int t = 0; t < COLLECTIVE_TYPES; t++)
		if (count[t])
			fprintf(f, "comm %d %" PRId64 " %" PRId64 " %" PRId64 "\n", t, count[t], ns[t], overlap[t]);
	for (size_t k = 0; k < nused; k++) {
		char key[32];

		snprintf(key, sizeof(key), "k %" PRId64, used[k]);
		put_text(f, key, collectives_kernel_name(&list, used[k]));
	}
	free(used);
	if (tp)
		recorded_path(trace, tp, &path, &npath);
	fprintf(f, "collectives %zu\n", list.count);
	for (size_t i = 0; i < list.count; i++) {
		const struct collective *c = &list.items[i];
		int64_t parts[WHAT_IF_PARTS] = { 0 };

		what_if_path_parts(path, npath, c->window_start, c->start, parts);
		fprintf(f,
			"c %d %d %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
			" %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64,
			c->type, c->stream_ordinal, c->seq, c->start, c->end, iteration_at(tp, c->start), c->overlap_ns,
			c->compute_ns, c->copy_ns, c->idle_ns, c->longest_ns, c->longest_name, c->window_start);
		for (int p = 0; p < WHAT_IF_PARTS; p++)
			fprintf(f, " %" PRId64, parts[p]);
		fputc('\n', f);
	}
	ret = 0;
out:
	free(path);
	collectives_release(&list);
	phases_free(phases);
	identity_release(&id);
	trace_close(trace);
	return ret;
}

int rank_summary_write(const char *trace_path, const char *summary_path, const char *step, char *err, size_t errlen)
{
	char *tmp = xasprintf("%s.tmp.%ld", summary_path, (long)getpid());
	char why[1024] = "";
	int64_t size = 0, mtime = 0;
	FILE *f = fopen(tmp, "w");
	int ret = 0;

	if (!f) {
		snprintf(err, errlen, "cannot write '%s': %s", summary_path, strerror(errno));
		free(tmp);
		return -errno;
	}
	fprintf(f, "%s\n", RANK_SUMMARY_MAGIC);
	trace_stat(trace_path, &size, &mtime);
	fprintf(f, "source %" PRId64 " %" PRId64 " ", size, mtime);
	put_text(f, "", trace_path);
	put_text(f, "step", step);
	if (summarize(f, trace_path, step, why, sizeof(why)) < 0) {
		/* start again after the source line: what was written before the failure is dropped */
		fflush(f);
		if (ftruncate(fileno(f), 0) < 0 || fseek(f, 0, SEEK_SET) < 0)
			ret = -EIO;
		fprintf(f, "%s\nsource %" PRId64 " %" PRId64 " ", RANK_SUMMARY_MAGIC, size, mtime);
		put_text(f, "", trace_path);
		put_text(f, "step", step);
		put_text(f, "error", why[0] ? why : "cannot summarize the trace");
	}
	fprintf(f, "end\n");
	if (fclose(f) != 0 || ret < 0 || rename(tmp, summary_path) < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", summary_path, strerror(errno ? errno : EIO));
		unlink(tmp);
		free(tmp);
		return -EIO;
	}
	free(tmp);
	return 0;
}

/* Read one line into *buf (grown as needed); strips the newline. Returns its length, -1 at the end. */
static long read_line(FILE *f, char **buf, size_t *cap)
{
	ssize_t n = getline(buf, cap, f);

	if (n < 0)
		return -1;
	if (n && (*buf)[n - 1] == '\n')
		(*buf)[--n] = '\0';
	return (long)n;
}

/* The text after "key " on a line, "" for "-". */
static char *text_after(const char *line, size_t keylen)
{
	const char *s = line + keylen;

	if (*s == ' ')
		s++;
	return xstrdup(strcmp(s, "-") ? s : "");
}

int rank_summary_fresh(const char *trace_path, const char *summary_path, const char *step)
{
	FILE *f = fopen(summary_path, "r");
	char *line = NULL;
	size_t cap = 0;
	int64_t size = 0, mtime = 0, s, m;
	int fresh = 0;

	if (!f)
		return 0;
	if (trace_stat(trace_path, &size, &mtime) == 0 && read_line(f, &line, &cap) >= 0 &&
	    !strcmp(line, RANK_SUMMARY_MAGIC) && read_line(f, &line, &cap) >= 0 &&
	    sscanf(line, "source %" SCNd64 " %" SCNd64, &s, &m) == 2 && s == size && m == mtime &&
	    read_line(f, &line, &cap) >= 0 && !strncmp(line, "step ", 5) &&
	    !strcmp(line + 5, step && *step ? step : "-")) {
		/* a summary cut short (a worker killed) ends without its "end" line */
		long last = -1;

		if (fseek(f, -4, SEEK_END) == 0)
			last = read_line(f, &line, &cap);
		fresh = last == 3 && !strcmp(line, "end");
	}
	free(line);
	fclose(f);
	return fresh;
}

int rank_summaries_make(const char *const *paths, const char *const *out_paths, size_t n, int jobs, const char *step,
			char *err, size_t errlen)
{
	size_t *todo = xmalloc((n ? n : 1) * sizeof(*todo)), ntodo = 0;
	pid_t *workers;
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		if (rank_summary_fresh(paths[i], out_paths[i], step))
			continue;
		/* a stale summary goes first: if its worker dies, the trace has none rather than an old one */
		unlink(out_paths[i]);
		todo[ntodo++] = i;
	}
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > ntodo)
		jobs = (int)ntodo;
	workers = xcalloc((size_t)jobs + 1, sizeof(*workers));
	fflush(NULL);
	for (int w = 0; w < jobs; w++) {
		pid_t pid = fork();

		if (pid < 0) {
			snprintf(err, errlen, "cannot start a summary worker: %s", strerror(errno));
			failed = 1;
			break;
		}
		if (pid == 0) {
			int status = 0;

			/* the workers share the CPUs: each loader's threads take their part */
			event_threads_share((size_t)jobs);
			for (size_t k = (size_t)w; k < ntodo; k += (size_t)jobs) {
				char why[1024];

				if (rank_summary_write(paths[todo[k]], out_paths[todo[k]], step, why, sizeof(why)) < 0) {
					fprintf(stderr, "gpt-trace: %s\n", why);
					status = 1;
				}
			}
			fflush(NULL);
			_exit(status);
		}
		workers[w] = pid;
	}
	for (int w = 0; w < jobs; w++) {
		int status;

		if (workers[w] <= 0)
			continue;
		if (waitpid(workers[w], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (!failed)
				snprintf(err, errlen, "a summary worker failed (%s)",
					 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "could not write a summary");
			failed = 1;
		}
	}
	free(workers);
	free(todo);
	return failed ? -EIO : 0;
}

void rank_summary_release(struct rank_summary *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->trace);
	free(s->error);
	free(s->host);
	free(s->launcher);
	free(s->job);
	free(s->exit_reason);
	free(s->iteration_source);
	free(s->iterations);
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i].text);
	free(s->names);
	memset(s, 0, sizeof(*s));
}

const char *rank_summary_name(const struct rank_summary *s, int64_t name_id)
{
	for (size_t i = 0; i < s->nnames; i++)
		if (s->names[i].id == name_id)
			return s->names[i].text;
	return "";
}

/*
 * Summaries travel between machines: every time read back is bounded, so that the merge's
 * differences and sums of a damaged file cannot overflow (2^61 ns is 73 years; wall-clock
 * nanoseconds stay below it until 2043).
 */
#define SUMMARY_TIME_MAX ((int64_t)1 << 61)

static int in_range(int64_t v)
{
	return v > -SUMMARY_TIME_MAX && v < SUMMARY_TIME_MAX;
}

static int damaged(const char *path, const char *why, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot read summary '%s': %s", path, why);
	return -EINVAL;
}

/* A line of text the summary keeps (its trace, error, host, launcher, job, exit): 1 if it was one. */
static int text_line(struct rank_summary *s, const char *line)
{
	if (!strncmp(line, "source ", 7)) {
		const char *p = strchr(line + 7, ' ');

		p = p ? strchr(p + 1, ' ') : NULL;
		free(s->trace);
		s->trace = xstrdup(p ? p + 1 : "");
	} else if (!strncmp(line, "error ", 6)) {
		free(s->error);
		s->error = text_after(line, 5);
	} else if (!strncmp(line, "host ", 5)) {
		free(s->host);
		s->host = text_after(line, 4);
	} else if (!strncmp(line, "launcher ", 9)) {
		free(s->launcher);
		s->launcher = text_after(line, 8);
	} else if (!strncmp(line, "job ", 4)) {
		free(s->job);
		s->job = text_after(line, 3);
	} else if (!strncmp(line, "exit ", 5)) {
		free(s->exit_reason);
		s->exit_reason = text_after(line, 4);
	} else {
		return 0;
	}
	return 1;
}

/* An "i" line: one iteration of the cap_it announced. */
static int iteration_line(struct rank_summary *s, const char *line, size_t cap_it)
{
	struct rank_iteration *it = s->iterations ? &s->iterations[s->niterations] : NULL;

	if (s->niterations >= cap_it ||
	    sscanf(line + 2, "%" SCNd64 " %" SCNd64 " %d %" SCNd64, &it->start, &it->end, &it->warmup, &it->step) != 4 ||
	    !in_range(it->start) || !in_range(it->end) || it->end < it->start || it->step < -1 || !in_range(it->step))
		return -1;
	s->niterations++;
	return 0;
}

/* A "comm" line: one collective type's count, time and overlap. */
static int comm_line(struct rank_summary *s, const char *line)
{
	int t;
	int64_t a, b, c;

	if (sscanf(line + 5, "%d %" SCNd64 " %" SCNd64 " %" SCNd64, &t, &a, &b, &c) != 4 || t < 0 ||
	    t >= COLLECTIVE_TYPES || a < 0 || !in_range(b) || b < 0 || !in_range(c) || c < 0 || c > b)
		return -1;
	s->comm_count[t] = a, s->comm_ns[t] = b, s->overlap_ns[t] = c;
	return 0;
}

/* A "k" line: one kernel name. */
static void name_line(struct rank_summary *s, const char *line)
{
	char *end;
	int64_t id = strtoll(line + 2, &end, 10);

	s->names = xrealloc(s->names, (s->nnames + 1) * sizeof(*s->names));
	s->names[s->nnames].id = id;
	s->names[s->nnames].text = xstrdup(*end == ' ' ? end + 1 : "");
	s->nnames++;
}

/*
 * One line of the summary's head into s: 1 at its end (the collectives follow at f's position, or
 * "end"), -1 for a damaged line, 0 to read on. cap_it: the iterations announced.
 */
static int summary_line(struct rank_summary *s, FILE *f, const char *line, size_t *cap_it)
{
	if (text_line(s, line))
		return 0;
	if (!strncmp(line, "rank ", 5)) {
		/* ranks beyond 2^24 are no job's: a damaged count must not drive the missing-rank scan */
		if (sscanf(line + 5, "%" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %d %d", &s->rank,
			   &s->local_rank, &s->world_size, &s->pid, &s->format, &s->complete) != 6 ||
		    s->rank < -1 || s->rank >= (1 << 24) || s->world_size < -1 || s->world_size > (1 << 24) ||
		    !in_range(s->pid))
			return -1;
	} else if (!strncmp(line, "clock ", 6)) {
		if (sscanf(line + 6, "%" SCNd64 " %" SCNd64 " %d", &s->origin_ns, &s->wall_ns, &s->has_anchor) != 3 ||
		    !in_range(s->origin_ns) || !in_range(s->wall_ns))
			return -1;
	} else if (!strncmp(line, "capture ", 8)) {
		int from;

		if (sscanf(line + 8, "%zu %d %d", &s->windows, &from, &s->whole) != 3 || from < RANK_STEPS_NONE ||
		    from > RANK_STEPS_CAPTURE)
			return -1;
		s->steps_from = (enum rank_steps_from)from;
	} else if (!strncmp(line, "iterations ", 11)) {
		int used = 0;

		/* a count no trace reaches is a damaged file, not an allocation to attempt */
		if (sscanf(line + 11, "%zu %zu %" SCNd64 "%n", cap_it, &s->first_steady, &s->median_ns, &used) != 3 ||
		    *cap_it > 100000000 || s->iterations)
			return -1;
		s->iterations = xcalloc(*cap_it ? *cap_it : 1, sizeof(*s->iterations));
		free(s->iteration_source);
		s->iteration_source = text_after(line, 11 + (size_t)used);
	} else if (!strncmp(line, "i ", 2)) {
		return iteration_line(s, line, *cap_it);
	} else if (!strncmp(line, "comm ", 5)) {
		return comm_line(s, line);
	} else if (!strncmp(line, "k ", 2)) {
		name_line(s, line);
	} else if (!strncmp(line, "collectives ", 12)) {
		s->ncollectives = (size_t)strtoull(line + 12, NULL, 10);
		s->collectives_at = ftell(f);
		return 1;
	} else if (!strcmp(line, "end")) {
		return 1;
	}
	return 0;
}

/* The texts a summary left out, empty (its trace: the summary's own path). */
static void text_defaults(struct rank_summary *s, const char *path)
{
	if (!s->host)
		s->host = xstrdup("");
	if (!s->launcher)
		s->launcher = xstrdup("");
	if (!s->job)
		s->job = xstrdup("");
	if (!s->exit_reason)
		s->exit_reason = xstrdup("");
	if (!s->iteration_source)
		s->iteration_source = xstrdup("");
	if (!s->trace)
		s->trace = xstrdup(path);
}

int rank_summary_load(const char *path, struct rank_summary *s, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, cap_it = 0;
	int ret = 0, ended = 0;

	memset(s, 0, sizeof(*s));
	s->rank = s->local_rank = s->world_size = s->pid = -1;
	if (!f) {
		snprintf(err, errlen, "cannot read summary '%s': %s", path, strerror(errno));
		return -errno;
	}
	s->path = xstrdup(path);
	if (read_line(f, &line, &cap) < 0 || strcmp(line, RANK_SUMMARY_MAGIC)) {
		ret = damaged(path,
			      line && !strncmp(line, RANK_SUMMARY_PREFIX, strlen(RANK_SUMMARY_PREFIX))
				      ? "made by another version of gpt-trace: run gpt-trace summarize on its trace again"
				      : "not a gpt-trace rank summary",
			      err, errlen);
		goto out;
	}
	while (!ended && read_line(f, &line, &cap) >= 0) {
		int r = summary_line(s, f, line, &cap_it);

		if (r < 0)
			break;
		ended = r;
	}
	if (!ended)
		ret = damaged(path, "truncated or damaged", err, errlen);
	if (s->niterations != cap_it && !ret)
		ret = damaged(path, "fewer iterations than announced", err, errlen);
	text_defaults(s, path);
out:
	free(line);
	fclose(f);
	return ret;
}

/* One collective line into *c; 0 when it is damaged. */
static int collective_line(const char *line, struct rank_collective *c)
{
	int64_t *p = c->path_ns, sum = 0;

	if (sscanf(line,
		   "c %d %d %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
		   " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
		   " %" SCNd64,
		   &c->type, &c->ordinal, &c->seq, &c->start, &c->end, &c->iteration, &c->overlap_ns, &c->compute_ns,
		   &c->copy_ns, &c->idle_ns, &c->longest_ns, &c->name_id, &c->window_start, &p[WHAT_IF_HOST],
		   &p[WHAT_IF_COMPUTE], &p[WHAT_IF_COMM], &p[WHAT_IF_COPY], &p[WHAT_IF_LAUNCH]) != 13 + WHAT_IF_PARTS)
		return 0;
	_Static_assert(WHAT_IF_PARTS == 5, "a collective line holds five parts");
	for (int k = 0; k < WHAT_IF_PARTS; k++) {
		if (p[k] < 0 || !in_range(p[k]))
			return 0;
		sum += p[k];
	}
	return c->type >= 0 && c->type < COLLECTIVE_TYPES && c->ordinal >= 0 && c->seq >= 0 && in_range(c->start) &&
	       in_range(c->end) && c->end >= c->start && in_range(c->overlap_ns) && in_range(c->compute_ns) &&
	       in_range(c->copy_ns) && in_range(c->idle_ns) && in_range(c->longest_ns) &&
	       in_range(c->window_start) && c->window_start <= c->start && sum <= c->start - c->window_start;
}

int rank_summary_collectives(const struct rank_summary *s, int (*fn)(const struct rank_collective *c, void *arg),
			     void *arg, char *err, size_t errlen)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0, n = 0;
	int ret = 0;

	if (!s->ncollectives)
		return 0;
	f = fopen(s->path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read summary '%s': %s", s->path, strerror(errno));
		return -errno;
	}
	if (fseek(f, s->collectives_at, SEEK_SET) < 0) {
		ret = damaged(s->path, "cannot seek to its collectives", err, errlen);
		goto out;
	}
	for (; n < s->ncollectives && read_line(f, &line, &cap) >= 0; n++) {
		struct rank_collective c;

		if (!collective_line(line, &c)) {
			ret = damaged(s->path, "a damaged collective line", err, errlen);
			goto out;
		}
		if (fn(&c, arg))
			break;
	}
	if (n < s->ncollectives && !ret)
		ret = damaged(s->path, "fewer collectives than announced", err, errlen);
out:
	free(line);
	fclose(f);
	return ret;
}

int rank_traces_are_job(const char *const *paths, size_t n)
{
	int ranked = 0, nccl = 0, opened = 0;

	if (n < 2)
		return 0;

	for (size_t i = 0; i < n; i++) {
		struct trace *trace;
		sqlite3_stmt *st;
		char err[256];

		/* a trace that cannot be opened is left to the report, which notes it */
		if (trace_open(paths + i, 1, &trace, err, sizeof(err)) < 0)
			continue;
		opened++;
		if (sqlite3_prepare_v2(trace_db(trace),
				       "SELECT EXISTS (SELECT 1 FROM meta WHERE name = 'rank'), "
				       "EXISTS (SELECT 1 FROM kernels WHERE name LIKE 'nccl%')",
				       -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW) {
				ranked += sqlite3_column_int(st, 0);
				nccl += sqlite3_column_int(st, 1);
			}
			sqlite3_finalize(st);
		}
		trace_close(trace);
	}
	return n > 1 && opened && (ranked == opened || nccl == opened);
}
