/*
 * Whether traces were recorded together (job-check.h).
 */
#include "analyzer/loader/job-check.h"

#include <stdio.h>
#include <time.h>

/* "2026-11-27 01:02 UTC" */
static const char *utc_words(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000LL);
	struct tm tm;

	if (!gmtime_r(&s, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm))
		snprintf(buf, len, "%lld ns", (long long)ns);
	return buf;
}

/* "19.4 h", "3.2 days" */
static const char *apart_words(int64_t ns, char *buf, size_t len)
{
	double h = (double)ns / 3.6e12;

	if (h < 48)
		snprintf(buf, len, "%.1f h", h);
	else
		snprintf(buf, len, "%.1f days", h / 24);
	return buf;
}

int job_starts_apart(const struct job_start *starts, size_t n, char *why, size_t len)
{
	const struct job_start *first = NULL, *last = NULL;
	char a[40], b[40], d[32];

	for (size_t i = 0; i < n; i++) {
		if (starts[i].wall_ns < 0)
			continue;
		if (!first || starts[i].wall_ns < first->wall_ns)
			first = &starts[i];
		if (!last || starts[i].wall_ns > last->wall_ns)
			last = &starts[i];
	}
	if (!first || last->wall_ns - first->wall_ns < JOB_APART_NS)
		return 0;
	snprintf(why, len, "'%s' and '%s' were recorded %s apart (%s and %s): traces of different runs, not "
		 "one job's; report and stats read them together with --force-job", first->name, last->name,
		 apart_words(last->wall_ns - first->wall_ns, d, sizeof(d)), utc_words(first->wall_ns, a, sizeof(a)),
		 utc_words(last->wall_ns, b, sizeof(b)));
	return 1;
}
