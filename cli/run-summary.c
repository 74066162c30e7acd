/*
 * The end-of-run summary of `gpt-trace run` (see run-summary.h). Each trace is opened with the
 * analyzer's loader and read only through its canonical views (kernels, copies, sets, meta), so the
 * summary counts exactly what `gpt-trace stats` and the rules will see.
 *
 * GPU busy share: per device, the length of the union of kernel, copy and set intervals divided by
 * the span from the first of them to start to the last of them to end. Overlapping work (several
 * streams, copy engines beside kernels) counts once, so the share never exceeds 100%.
 */
#include "cli/run-summary.h"
#include "cli/run-recover.h"
#include "analyzer/loader/trace.h"
#include "common/units.h"
#include "common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct device_busy {
	int64_t device;
	int64_t first_start, last_end;
	int64_t busy_ns;
};

struct trace_summary {
	int64_t kernels;
	int64_t copies;
	int64_t copy_bytes;
	int64_t dropped;	/* CUPTI records; -1: the trace does not say (nsys exports) */
	int64_t nvtx_dropped;	/* NVTX events the library could not queue; -1: not said */
	struct device_busy *devices;
	size_t ndevices;
};

static int query_int64(sqlite3 *db, const char *sql, int64_t *a, int64_t *b)
{
	sqlite3_stmt *stmt;
	int ret = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(stmt) == SQLITE_ROW) {
		*a = sqlite3_column_int64(stmt, 0);
		if (b)
			*b = sqlite3_column_int64(stmt, 1);
		ret = 0;
	}
	sqlite3_finalize(stmt);
	return ret;
}

/* The union of the GPU intervals, device by device, swept in start order. */
static int query_busy(sqlite3 *db, struct trace_summary *summary)
{
	static const char sql[] =
		"SELECT deviceId, start, end FROM kernels"
		" WHERE deviceId IS NOT NULL AND start IS NOT NULL AND end IS NOT NULL"
		" UNION ALL SELECT deviceId, start, end FROM copies"
		" WHERE deviceId IS NOT NULL AND start IS NOT NULL AND end IS NOT NULL"
		" UNION ALL SELECT deviceId, start, end FROM sets"
		" WHERE deviceId IS NOT NULL AND start IS NOT NULL AND end IS NOT NULL"
		" ORDER BY 1, 2";
	struct device_busy *dev = NULL;
	int64_t run_start = 0, run_end = 0;
	sqlite3_stmt *stmt;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int64_t device = sqlite3_column_int64(stmt, 0);
		int64_t start = sqlite3_column_int64(stmt, 1);
		int64_t end = sqlite3_column_int64(stmt, 2);

		if (end < start)
			end = start;
		if (!dev || dev->device != device) {
			if (dev)
				dev->busy_ns += run_end - run_start;
			if (summary->ndevices == cap) {
				cap = cap ? 2 * cap : 4;
				summary->devices =
					xrealloc(summary->devices, cap * sizeof(*summary->devices));
			}
			dev = &summary->devices[summary->ndevices++];
			dev->device = device;
			dev->first_start = start;
			dev->last_end = end;
			dev->busy_ns = 0;
			run_start = start;
			run_end = end;
			continue;
		}
		if (end > dev->last_end)
			dev->last_end = end;
		if (start > run_end) {
			dev->busy_ns += run_end - run_start;
			run_start = start;
			run_end = end;
		} else if (end > run_end) {
			run_end = end;
		}
	}
	if (dev)
		dev->busy_ns += run_end - run_start;
	sqlite3_finalize(stmt);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* A count from GPT_META (through the meta view); -1 if absent or not a count. */
static int64_t query_meta_count(sqlite3 *db, const char *name)
{
	static const char sql[] = "SELECT value FROM meta WHERE name = ?";
	sqlite3_stmt *stmt;
	int64_t count = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
		const char *text = (const char *)sqlite3_column_text(stmt, 0);
		char *end;
		long long value = strtoll(text, &end, 10);

		if (end != text && *end == '\0' && value >= 0)
			count = value;
	}
	sqlite3_finalize(stmt);
	return count;
}

static int summarize(const char *path, struct trace_summary *summary)
{
	struct trace *trace;
	char err[512];
	sqlite3 *db;
	int ret = -1;

	memset(summary, 0, sizeof(*summary));
	summary->dropped = -1;
	if (trace_open(&path, 1, &trace, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -1;
	}
	db = trace_db(trace);
	if (query_int64(db, "SELECT count(*) FROM kernels", &summary->kernels, NULL) < 0 ||
	    query_int64(db, "SELECT count(*), coalesce(sum(bytes), 0) FROM copies",
			&summary->copies, &summary->copy_bytes) < 0 ||
	    query_busy(db, summary) < 0) {
		pr_err("cannot summarize '%s': %s", path, sqlite3_errmsg(db));
		goto out_close;
	}
	summary->dropped = query_meta_count(db, "cupti_dropped_records");
	summary->nvtx_dropped = query_meta_count(db, "nvtx_dropped_events");
	ret = 0;
out_close:
	trace_close(trace);
	return ret;
}

/* state: "wrote PATH" for a finished trace, "recovered PATH (...)" or "partial trace PATH (...)". */
static void print_summary(const char *state, const struct trace_summary *summary)
{
	char line[2048], bytes[32], span[32];
	size_t len;

	units_bytes(bytes, sizeof(bytes), (double)summary->copy_bytes, UNITS_BRIEF);
	len = snprintf(line, sizeof(line), "%s: %" PRId64 " kernel%s, %" PRId64 " cop%s (%s)",
		       state, summary->kernels, summary->kernels == 1 ? "" : "s", summary->copies,
		       summary->copies == 1 ? "y" : "ies", bytes);
	if (!summary->ndevices && len < sizeof(line))
		len += snprintf(line + len, sizeof(line) - len, ", no GPU activity");
	for (size_t i = 0; i < summary->ndevices && len < sizeof(line); i++) {
		const struct device_busy *dev = &summary->devices[i];
		int64_t span_ns = dev->last_end - dev->first_start;
		double share = span_ns > 0 ? 100.0 * dev->busy_ns / span_ns : 100.0;

		units_duration(span, sizeof(span), span_ns, UNITS_BRIEF);
		len += snprintf(line + len, sizeof(line) - len,
				", GPU %" PRId64 " busy %.1f%% of %s", dev->device, share, span);
	}
	fprintf(stderr, GPT_PREFIX "%s\n", line);
}

/* "!<pid> <reason>", written by a process whose trace failed. */
static void print_failure(const char *line)
{
	const char *reason = strchr(line, ' ');

	if (reason)
		pr_err("process %.*s: %s", (int)(reason - line - 1), line + 1, reason + 1);
	else
		pr_err("process %s: trace failed", line + 1);
}

/* Loud whatever -q says: counts read from this trace are too low. */
static void print_dropped(const char *path, const struct trace_summary *summary)
{
	if (summary->dropped > 0)
		pr_err("WARNING: CUPTI DROPPED %" PRId64 " RECORDS in %s: the trace is incomplete",
		       summary->dropped, path);
	if (summary->nvtx_dropped > 0)
		pr_err("WARNING: %" PRId64 " NVTX EVENTS DROPPED in %s: NVTX ranges are incomplete",
		       summary->nvtx_dropped, path);
}

/* "+<pid> <path>": the trace file exists; is it also listed as finished? */
static int finished(char *const *lines, size_t nlines, const char *path)
{
	for (size_t i = 0; i < nlines; i++)
		if (lines[i][0] != '!' && lines[i][0] != '+' && !strcmp(lines[i], path))
			return 1;
	return 0;
}

static void print_trace(const char *path, const char *state, int quiet, int problem)
{
	struct trace_summary summary;

	if (summarize(path, &summary) < 0) {
		free(summary.devices);
		return;
	}
	if (!quiet || problem)
		print_summary(state, &summary);
	print_dropped(path, &summary);
	free(summary.devices);
}

/*
 * A trace its process never finished: recover it (run-recover.h) once that process is gone, and
 * say what it is. Killed by signal 9 at the end of the run, it is the program itself or one of
 * its processes: only the program's own status is known.
 */
static int failed(char *const *lines, size_t nlines, long pid)
{
	char prefix[32];
	size_t len = (size_t)snprintf(prefix, sizeof(prefix), "!%ld ", pid);

	for (size_t i = 0; i < nlines; i++)
		if (!strncmp(lines[i], prefix, len))
			return 1;
	return 0;
}

static void print_unfinished(char *const *lines, size_t nlines, const char *line,
			     pid_t program_pid, int program_status, int quiet)
{
	char *end, state[4096 + 256], how[128], err[4200];
	long pid = strtol(line + 1, &end, 10);
	const char *path = end + 1;
	struct run_recovery recovery;
	int status = pid == program_pid ? program_status : -1;

	if (end == line + 1 || *end != ' ' || !*path)
		return;
	if (access(path, F_OK) < 0) {
		pr_err("process %ld: its trace '%s' is gone", pid, path);
		return;
	}
	if (status != -1 && WIFSIGNALED(status))
		snprintf(how, sizeof(how), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (status != -1)
		snprintf(how, sizeof(how), "exited with status %d without finishing it",
			 WEXITSTATUS(status));
	else
		snprintf(how, sizeof(how), "ended without finishing it");
	if (failed(lines, nlines, pid) && !access(path, R_OK)) {
		/* Its writer failed (disk full, I/O error) and said why: the file ends at its last
		 * commit, closed cleanly. */
		snprintf(state, sizeof(state), "partial trace %s (process %ld could not write it to the "
			 "end; what was committed before is kept)", path, pid);
		print_trace(path, state, quiet, 1);
		return;
	}
	if (kill((pid_t)pid, 0) == 0 || errno == EPERM) {
		/* Still running (a background process): its writer owns the file. */
		snprintf(state, sizeof(state), "partial trace %s (process %ld is still running)", path,
			 pid);
		print_trace(path, state, quiet, 0);
		return;
	}
	if (run_recover(path, (pid_t)pid, status, &recovery, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		snprintf(state, sizeof(state), "partial trace %s (process %ld %s; not recovered)", path,
			 pid, how);
		print_trace(path, state, quiet, 1);
		return;
	}
	snprintf(state, sizeof(state), "recovered %s (process %ld %s; what it had not committed, "
		 "up to --commit-ms, is lost)", path, pid, how);
	print_trace(path, state, quiet, 1);
}

void run_summary_print(char *const *lines, size_t nlines, int quiet, pid_t program_pid,
		       int program_status)
{

	for (size_t i = 0; i < nlines; i++) {
		char state[4096 + 16];

		if (lines[i][0] == '!') {
			print_failure(lines[i]);
			continue;
		}
		if (lines[i][0] == '+') {
			const char *path = strchr(lines[i], ' ');

			if (path && !finished(lines, nlines, path + 1))
				print_unfinished(lines, nlines, lines[i], program_pid,
						 program_status, quiet);
			continue;
		}
		snprintf(state, sizeof(state), "wrote %s", lines[i]);
		print_trace(lines[i], state, quiet, 0);
	}
	if (nlines || quiet)
		return;
	if (WIFSIGNALED(program_status))
		pr_err("no trace was written: the program was killed by signal %d (%s) before any "
		       "process created one", WTERMSIG(program_status),
		       strsignal(WTERMSIG(program_status)));
	else
		fprintf(stderr, GPT_PREFIX "no trace was written: no process used CUDA\n");
}
