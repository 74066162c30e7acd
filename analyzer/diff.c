/*
 * Kernel timing comparison (see diff.h): reading kernel sets from traces, the verdict rule, the
 * configuration file, and the pairing of kernels between two sets. The output formats are in
 * diff-output.c.
 */
#include "analyzer/diff.h"
#include "loader/events.h"
#include "loader/trace.h"
#include "common/progress.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct kernel_set *kernel_set_new(const char *source)
{
	struct kernel_set *set = xcalloc(1, sizeof(*set));

	set->source = xstrdup(source ? source : "");
	return set;
}

struct kernel_timing *kernel_set_add(struct kernel_set *set, char *name, const int64_t grid[3],
				     const int64_t block[3], double *sample, size_t nsample)
{
	struct kernel_timing *k;

	/* Grow by doubling: a PyTorch trace holds a few hundred distinct kernels. */
	if ((set->count & (set->count - 1)) == 0)
		set->kernels = xrealloc(set->kernels, (set->count ? set->count * 2 : 1) * sizeof(*k));
	k = &set->kernels[set->count++];
	memset(k, 0, sizeof(*k));
	k->name = name;
	memcpy(k->grid, grid, sizeof(k->grid));
	memcpy(k->block, block, sizeof(k->block));
	k->sample = sample;
	k->nsample = nsample;
	duration_summarize(sample, nsample, &k->summary);
	return k;
}

static int compare_config(const struct kernel_timing *a, const struct kernel_timing *b)
{
	for (int i = 0; i < 3; i++) {
		if (a->grid[i] != b->grid[i])
			return a->grid[i] < b->grid[i] ? -1 : 1;
	}
	for (int i = 0; i < 3; i++) {
		if (a->block[i] != b->block[i])
			return a->block[i] < b->block[i] ? -1 : 1;
	}
	return 0;
}

static int compare_kernel(const void *pa, const void *pb)
{
	const struct kernel_timing *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : compare_config(a, b);
}

void kernel_set_sort(struct kernel_set *set)
{
	if (set->count)
		qsort(set->kernels, set->count, sizeof(set->kernels[0]), compare_kernel);
}

void kernel_set_free(struct kernel_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->count; i++) {
		free(set->kernels[i].name);
		free(set->kernels[i].sample);
	}
	free(set->kernels);
	free(set->source);
	free(set->nvtx);
	free(set);
}

size_t kernel_set_drop_ignored(struct kernel_set *set, const struct diff_config *cfg)
{
	size_t kept = 0, dropped;
	struct diff_limits limits;

	for (size_t i = 0; i < set->count; i++) {
		struct kernel_timing *k = &set->kernels[i];

		if (diff_config_limits(cfg, k->name, &limits)) {
			free(k->name);
			free(k->sample);
			continue;
		}
		set->kernels[kept++] = *k;
	}
	dropped = set->count - kept;
	set->count = kept;
	return dropped;
}

void kernel_timing_label(const struct kernel_timing *k, int with_config, char *buf, size_t len)
{
	if (!with_config)
		snprintf(buf, len, "%s", k->name);
	else
		snprintf(buf, len,
			 "%s [grid %" PRId64 "x%" PRId64 "x%" PRId64 " block %" PRId64 "x%" PRId64
			 "x%" PRId64 "]",
			 k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
			 k->block[2]);
}

static int compare_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* The launches of the kernel being read, in start order, before the warm-up is dropped. */
struct launch_buffer {
	double *dur;
	size_t count, cap;
};

static void flush_kernel(struct kernel_set *set, struct launch_buffer *buf, const char *name,
			 const int64_t grid[3], const int64_t block[3], size_t skip_first)
{
	size_t keep;
	double *sample;
	struct kernel_timing *k;

	if (buf->count <= skip_first) {
		buf->count = 0;
		return;
	}
	keep = buf->count - skip_first;
	sample = xmalloc(keep * sizeof(*sample));
	memcpy(sample, buf->dur + skip_first, keep * sizeof(*sample));
	qsort(sample, keep, sizeof(*sample), compare_double);
	k = kernel_set_add(set, xstrdup(name), grid, block, sample, keep);
	k->skipped = skip_first;
	buf->count = 0;
}

/*
 * The progress line of one side's load: its events (kernels sorted by name, then the totals and the
 * device sweep over every operation); the sorts run inside SQLite, whose progress handler keeps the
 * line fresh meanwhile.
 */
static struct progress load_progress;

static int on_sqlite_progress(void *arg)
{
	progress_update(arg);
	return 0;
}

static int64_t view_rows(struct trace *trace, const char *view)
{
	struct event_summary m;
	char err[256];
	int64_t n = 0;

	for (size_t t = 0; t < trace_count(trace); t++)
		if (event_summary_get(trace, view, t, &m, err, sizeof(err)) == 0)
			n += m.rows;
	return n;
}

static int read_kernels(sqlite3 *db, struct kernel_set *set, size_t skip_first, char *err,
			size_t errlen)
{
	static const char sql[] =
		"SELECT coalesce(name, '(unnamed)'), gridX, gridY, gridZ, blockX, blockY, blockZ, dur"
		" FROM kernels ORDER BY 1, 2, 3, 4, 5, 6, 7, start";
	struct launch_buffer buf = { 0 };
	char *name = NULL;
	int64_t grid[3] = { 0 }, block[3] = { 0 };
	sqlite3_stmt *stmt;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot read kernels of '%s': %s", set->source,
			 sqlite3_errmsg(db));
		return -EIO;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *row_name = (const char *)sqlite3_column_text(stmt, 0);
		int64_t row_grid[3], row_block[3];
		double dur = sqlite3_column_double(stmt, 7);

		for (int i = 0; i < 3; i++) {
			row_grid[i] = sqlite3_column_int64(stmt, 1 + i);
			row_block[i] = sqlite3_column_int64(stmt, 4 + i);
		}
		if (!name || strcmp(name, row_name) || memcmp(grid, row_grid, sizeof(grid)) ||
		    memcmp(block, row_block, sizeof(block))) {
			if (name)
				flush_kernel(set, &buf, name, grid, block, skip_first);
			free(name);
			name = xstrdup(row_name);
			memcpy(grid, row_grid, sizeof(grid));
			memcpy(block, row_block, sizeof(block));
		}
		if (buf.count == buf.cap) {
			buf.cap = buf.cap ? buf.cap * 2 : 256;
			buf.dur = xrealloc(buf.dur, buf.cap * sizeof(*buf.dur));
		}
		buf.dur[buf.count++] = dur > 0 ? dur : 0;
		progress_tick(&load_progress);
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read kernels of '%s': %s", set->source,
			 sqlite3_errmsg(db));
		ret = -EIO;
	} else if (name) {
		flush_kernel(set, &buf, name, grid, block, skip_first);
	}
	sqlite3_finalize(stmt);
	free(name);
	free(buf.dur);
	return ret;
}

static int read_totals(sqlite3 *db, struct kernel_set *set, char *err, size_t errlen)
{
	static const char *const sums[] = {
		"SELECT count(*), total(dur) FROM kernels",
		"SELECT count(*), total(dur) FROM copies",
		"SELECT count(*), total(dur) FROM sets",
	};
	static const char intervals[] =
		"SELECT deviceId, start, end FROM kernels UNION ALL"
		" SELECT deviceId, start, end FROM copies UNION ALL"
		" SELECT deviceId, start, end FROM sets ORDER BY 1, 2";
	struct gpu_totals *t = &set->totals;
	size_t *counts[] = { &t->kernels, &t->copies, &t->sets };
	double *times[] = { &t->kernel_ns, &t->copy_ns, &t->set_ns };
	sqlite3_stmt *stmt = NULL;
	int64_t device = 0, first = 0, busy_start = 0, busy_end = 0;
	int rc, any = 0;

	for (int i = 0; i < 3; i++) {
		if (sqlite3_prepare_v2(db, sums[i], -1, &stmt, NULL) != SQLITE_OK ||
		    sqlite3_step(stmt) != SQLITE_ROW)
			goto out_sql;
		*counts[i] = (size_t)sqlite3_column_int64(stmt, 0);
		*times[i] = sqlite3_column_double(stmt, 1);
		load_progress.done += (int64_t)*counts[i];
		sqlite3_finalize(stmt);
		stmt = NULL;
	}

	/*
	 * Sweep the intervals of each device in start order, merging overlaps into busy time.
	 * busy_end only grows, so at a device's last interval it is the device's last end.
	 */
	if (sqlite3_prepare_v2(db, intervals, -1, &stmt, NULL) != SQLITE_OK)
		goto out_sql;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(stmt, 0);
		int64_t start = sqlite3_column_int64(stmt, 1), end = sqlite3_column_int64(stmt, 2);

		progress_tick(&load_progress);
		if (end < start)
			end = start;
		if (!any || dev != device) {
			if (any) {
				t->busy_ns += (double)(busy_end - busy_start);
				t->span_ns += (double)(busy_end - first);
			}
			any = 1;
			device = dev;
			first = busy_start = start;
			busy_end = end;
			continue;
		}
		if (start > busy_end) {
			t->busy_ns += (double)(busy_end - busy_start);
			busy_start = start;
		}
		if (end > busy_end)
			busy_end = end;
	}
	if (rc != SQLITE_DONE)
		goto out_sql;
	if (any) {
		t->busy_ns += (double)(busy_end - busy_start);
		t->span_ns += (double)(busy_end - first);
	}
	t->idle_ns = t->span_ns - t->busy_ns;
	sqlite3_finalize(stmt);
	return 0;

out_sql:
	snprintf(err, errlen, "cannot read GPU totals of '%s': %s", set->source,
		 sqlite3_errmsg(db));
	sqlite3_finalize(stmt);
	return -EIO;
}

int kernel_set_load(struct trace *trace, const char *nvtx, size_t skip_first,
		    struct kernel_set **out, char *err, size_t errlen)
{
	struct kernel_set *set = kernel_set_new(trace_path(trace, 0));
	sqlite3 *db = trace_db(trace);
	int ret;

	*out = NULL;
	set->skip_first = skip_first;
	if (nvtx) {
		struct trace_scope scope = { .nvtx_range = nvtx };

		ret = trace_set_scope(trace, &scope, err, errlen);
		if (ret < 0)
			goto out_free;
		set->nvtx = xstrdup(nvtx);
	}
	memset(&load_progress, 0, sizeof(load_progress));
	if (progress_visible()) {
		int64_t kernels = view_rows(trace, "kernels");
		int64_t ops = kernels + view_rows(trace, "copies") + view_rows(trace, "sets");

		progress_begin(&load_progress, "diff", "events", kernels + 2 * ops);
		sqlite3_progress_handler(db, 1 << 20, on_sqlite_progress, &load_progress);
	}
	ret = read_kernels(db, set, skip_first, err, errlen);
	if (ret >= 0)
		ret = read_totals(db, set, err, errlen);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	progress_end(&load_progress);
	if (ret < 0)
		goto out_free;
	kernel_set_sort(set);
	*out = set;
	return 0;

out_free:
	kernel_set_free(set);
	return ret;
}

const char *diff_verdict_name(enum diff_verdict verdict)
{
	static const char *const names[] = {
		[DIFF_SLOWER] = "slower",	  [DIFF_FASTER] = "faster",
		[DIFF_NEW] = "new",		  [DIFF_MISSING] = "missing",
		[DIFF_INSUFFICIENT] = "insufficient", [DIFF_SAME] = "same",
		[DIFF_IGNORED] = "ignored",
	};

	return (unsigned)verdict <= DIFF_IGNORED ? names[verdict] : "?";
}

enum diff_verdict diff_judge(const struct rank_test *test, size_t n_base, size_t n_new,
			     const struct diff_limits *limits)
{
	int significant = test->p_value < limits->alpha;

	if (n_base < limits->min_samples || n_new < limits->min_samples)
		return DIFF_INSUFFICIENT;
	if (significant && test->ratio_lo > 1 + limits->threshold)
		return DIFF_SLOWER;
	/* Symmetric on the log scale: 3% slower is x1.03, 3% faster is /1.03. */
	if (significant && test->ratio_hi < 1 / (1 + limits->threshold))
		return DIFF_FASTER;
	return DIFF_SAME;
}

int diff_parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	if (*end == '%') {
		end++;
		v /= 100;
	} else if (v >= 1) {
		/* "5" is most likely meant as 5%, and a 500% threshold would pass every check. */
		return -EINVAL;
	}
	if (*end || v >= 1)
		return -EINVAL;
	*out = v;
	return 0;
}

void diff_config_init(struct diff_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->defaults.threshold = DIFF_DEFAULT_THRESHOLD;
	cfg->defaults.alpha = DIFF_DEFAULT_ALPHA;
	cfg->defaults.min_samples = DIFF_DEFAULT_MIN_SAMPLES;
}

void diff_config_release(struct diff_config *cfg)
{
	for (size_t i = 0; i < cfg->noverrides; i++)
		free(cfg->overrides[i].glob);
	free(cfg->overrides);
	for (size_t i = 0; i < cfg->nignore; i++)
		free(cfg->ignore[i]);
	free(cfg->ignore);
	free(cfg->nvtx);
	memset(cfg, 0, sizeof(*cfg));
}

void diff_config_add_ignore(struct diff_config *cfg, const char *glob)
{
	cfg->ignore = xrealloc(cfg->ignore, (cfg->nignore + 1) * sizeof(*cfg->ignore));
	cfg->ignore[cfg->nignore++] = xstrdup(glob);
}

int diff_config_limits(const struct diff_config *cfg, const char *name, struct diff_limits *out)
{
	*out = cfg->defaults;
	for (size_t i = 0; i < cfg->nignore; i++) {
		if (!fnmatch(cfg->ignore[i], name, 0))
			return 1;
	}
	for (size_t i = 0; i < cfg->noverrides; i++) {
		const struct diff_override *o = &cfg->overrides[i];

		if (fnmatch(o->glob, name, 0))
			continue;
		if (o->ignore)
			return 1;
		if (o->set & DIFF_SET_THRESHOLD)
			out->threshold = o->limits.threshold;
		if (o->set & DIFF_SET_ALPHA)
			out->alpha = o->limits.alpha;
		if (o->set & DIFF_SET_MIN_SAMPLES)
			out->min_samples = o->limits.min_samples;
		break;
	}
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int parse_count(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > SIZE_MAX / 2)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

enum config_section {
	SECTION_DEFAULTS,
	SECTION_IGNORE,
	SECTION_KERNEL,
};

/* One "key = value" line of [defaults] or a [kernel "GLOB"] section. */
static int config_set(struct diff_config *cfg, struct diff_override *o, const char *key,
		      const char *value, char *why, size_t whylen)
{
	struct diff_limits *limits = o ? &o->limits : &cfg->defaults;

	if (!strcmp(key, "threshold")) {
		if (diff_parse_fraction(value, &limits->threshold) < 0)
			goto bad_value;
		if (o)
			o->set |= DIFF_SET_THRESHOLD;
	} else if (!strcmp(key, "alpha")) {
		if (diff_parse_fraction(value, &limits->alpha) < 0 || limits->alpha <= 0)
			goto bad_value;
		if (o)
			o->set |= DIFF_SET_ALPHA;
	} else if (!strcmp(key, "min-samples")) {
		if (parse_count(value, &limits->min_samples) < 0)
			goto bad_value;
		if (o)
			o->set |= DIFF_SET_MIN_SAMPLES;
	} else if (o && !strcmp(key, "ignore")) {
		if (!strcmp(value, "true") || !strcmp(value, "yes") || !strcmp(value, "1"))
			o->ignore = 1;
		else if (!strcmp(value, "false") || !strcmp(value, "no") || !strcmp(value, "0"))
			o->ignore = 0;
		else
			goto bad_value;
	} else if (!o && !strcmp(key, "skip-first")) {
		if (parse_count(value, &cfg->skip_first) < 0)
			goto bad_value;
		cfg->has_skip_first = 1;
	} else if (!o && !strcmp(key, "nvtx")) {
		free(cfg->nvtx);
		cfg->nvtx = *value ? xstrdup(value) : NULL;
		cfg->has_nvtx = 1;
	} else {
		snprintf(why, whylen, "unknown key '%s' in %s (expected %s)", key,
			 o ? "a [kernel] section" : "[defaults]",
			 o ? "threshold, alpha, min-samples or ignore"
			   : "threshold, alpha, min-samples, skip-first or nvtx");
		return -EINVAL;
	}
	return 0;

bad_value:
	snprintf(why, whylen, "bad value '%s' for %s (%s)", value, key,
		 !strcmp(key, "min-samples") || !strcmp(key, "skip-first") ? "a count"
		 : !strcmp(key, "ignore")				 ? "true or false"
			 : "a fraction below 1 such as 0.03, or a percentage such as 3%");
	return -EINVAL;
}

/* A '#' or ';' after white space starts a comment ("threshold = 3%  # why"). */
static void strip_comment(char *s)
{
	for (char *c = s + 1; *c; c++) {
		if ((*c == '#' || *c == ';') && isspace((unsigned char)c[-1])) {
			*c = '\0';
			break;
		}
	}
	trim(s);
}

/* "[kernel "GLOB"]" -> GLOB, in place; NULL if the header is not of that form. */
static char *kernel_section_glob(char *header)
{
	char *glob, *end;

	if (strncmp(header, "kernel", 6))
		return NULL;
	glob = trim(header + 6);
	end = glob + strlen(glob);
	if (end - glob < 2 || glob[0] != '"' || end[-1] != '"')
		return NULL;
	end[-1] = '\0';
	return glob + 1;
}

int diff_config_read(struct diff_config *cfg, const char *path, char *err, size_t errlen)
{
	enum config_section section = SECTION_DEFAULTS;
	struct diff_override *o = NULL;
	char line[4096], why[512];
	unsigned lineno = 0;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot open config '%s': %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(why, sizeof(why), "line too long");
			goto bad_line;
		}
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s != '[')
			strip_comment(s);
		if (*s == '[') {
			char *close = strrchr(s, ']'), *glob;

			if (!close || close[1]) {
				snprintf(why, sizeof(why), "section header without ']'");
				goto bad_line;
			}
			*close = '\0';
			s = trim(s + 1);
			if (!strcmp(s, "defaults")) {
				section = SECTION_DEFAULTS;
			} else if (!strcmp(s, "ignore")) {
				section = SECTION_IGNORE;
			} else if ((glob = kernel_section_glob(s))) {
				section = SECTION_KERNEL;
				cfg->overrides = xrealloc(cfg->overrides, (cfg->noverrides + 1) *
									  sizeof(*cfg->overrides));
				o = &cfg->overrides[cfg->noverrides++];
				memset(o, 0, sizeof(*o));
				o->glob = xstrdup(glob);
			} else {
				snprintf(why, sizeof(why),
					 "unknown section '[%s]' (expected [defaults], [ignore] or "
					 "[kernel \"GLOB\"])",
					 s);
				goto bad_line;
			}
			continue;
		}
		if (section == SECTION_IGNORE) {
			diff_config_add_ignore(cfg, s);
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(why, sizeof(why), "expected 'key = value'");
			goto bad_line;
		}
		*eq = '\0';
		if (config_set(cfg, section == SECTION_KERNEL ? o : NULL, trim(s), trim(eq + 1),
			       why, sizeof(why)) < 0)
			goto bad_line;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read config '%s': %s", path, strerror(errno));
		ret = -EIO;
	}
	fclose(f);
	return ret;

bad_line:
	snprintf(err, errlen, "bad config '%s' line %u: %s", path, lineno, why);
	fclose(f);
	return -EINVAL;
}

/* Report order: verdict, then the kernel's GPU time on the side that has more, then name. */
static int compare_diff(const void *pa, const void *pb)
{
	const struct kernel_diff *a = pa, *b = pb;
	double ta, tb;
	const struct kernel_timing *ka, *kb;
	int c;

	if (a->verdict != b->verdict)
		return a->verdict < b->verdict ? -1 : 1;
	ta = fmax(a->base ? a->base->summary.total : 0, a->new ? a->new->summary.total : 0);
	tb = fmax(b->base ? b->base->summary.total : 0, b->new ? b->new->summary.total : 0);
	if (ta != tb)
		return ta > tb ? -1 : 1;
	ka = a->base ? a->base : a->new;
	kb = b->base ? b->base : b->new;
	c = strcmp(ka->name, kb->name);
	return c ? c : compare_config(ka, kb);
}

static void judge_pair(struct kernel_diff *d, const struct diff_config *cfg)
{
	const struct kernel_timing *k = d->base ? d->base : d->new;

	if (diff_config_limits(cfg, k->name, &d->limits)) {
		d->verdict = DIFF_IGNORED;
		return;
	}
	if (!d->base || !d->new) {
		d->verdict = d->base ? DIFF_MISSING : DIFF_NEW;
		return;
	}
	/*
	 * Inputs are sorted and non-empty and alpha is in (0, 1): the test cannot fail. It runs even
	 * with too few launches, so that the report still shows the ratio it could not judge.
	 */
	d->tested = rank_test_run(d->base->sample, d->base->nsample, d->new->sample,
				  d->new->nsample, d->limits.alpha, &d->test) == 0;
	if (!d->tested) {
		d->verdict = DIFF_INSUFFICIENT;
		return;
	}
	d->verdict = diff_judge(&d->test, d->base->summary.count, d->new->summary.count,
				&d->limits);
}

static struct kernel_diff *add_diff(struct diff_result *r, const struct kernel_timing *base,
				    const struct kernel_timing *new, int show_config)
{
	struct kernel_diff *d = &r->kernels[r->count++];

	memset(d, 0, sizeof(*d));
	d->base = base;
	d->new = new;
	d->show_config = show_config;
	d->config_changed = base && new && compare_config(base, new);
	return d;
}

/* Pair the configurations of one kernel name: base[0..nb) and new[0..nn), each sorted. */
static void pair_name(struct diff_result *r, const struct kernel_timing *base, size_t nb,
		      const struct kernel_timing *new, size_t nn)
{
	size_t i = 0, j = 0, nlone_base = 0, nlone_new = 0;
	const struct kernel_timing *lone_base = NULL, *lone_new = NULL;
	int show = nb > 1 || nn > 1;

	/* First pass: count the configurations that have no twin on the other side. */
	while (i < nb || j < nn) {
		int c = i >= nb ? 1 : j >= nn ? -1 : compare_config(&base[i], &new[j]);

		if (c < 0) {
			lone_base = &base[i++];
			nlone_base++;
		} else if (c > 0) {
			lone_new = &new[j++];
			nlone_new++;
		} else {
			i++;
			j++;
		}
	}
	if (nlone_base == 1 && nlone_new == 1) {
		/* The launch configuration changed: compare the kernel with its old self. */
		add_diff(r, lone_base, lone_new, 1);
	} else {
		lone_base = lone_new = NULL;
	}
	for (i = j = 0; i < nb || j < nn;) {
		int c = i >= nb ? 1 : j >= nn ? -1 : compare_config(&base[i], &new[j]);

		if (c < 0) {
			if (&base[i] != lone_base)
				add_diff(r, &base[i], NULL, show);
			i++;
		} else if (c > 0) {
			if (&new[j] != lone_new)
				add_diff(r, NULL, &new[j], show);
			j++;
		} else {
			add_diff(r, &base[i++], &new[j++], show);
		}
	}
}

int diff_compare(const struct kernel_set *base, const struct kernel_set *new,
		 const struct diff_config *cfg, struct diff_result **out, char *err, size_t errlen)
{
	struct diff_result *r = xcalloc(1, sizeof(*r));
	size_t i = 0, j = 0;

	(void)err;
	(void)errlen;
	r->base = base;
	r->new = new;
	r->defaults = cfg->defaults;
	r->kernels = xcalloc(base->count + new->count, sizeof(*r->kernels));
	while (i < base->count || j < new->count) {
		const char *name;
		size_t i_end = i, j_end = j;

		if (i >= base->count)
			name = new->kernels[j].name;
		else if (j >= new->count)
			name = base->kernels[i].name;
		else
			name = strcmp(base->kernels[i].name, new->kernels[j].name) <= 0
				       ? base->kernels[i].name
				       : new->kernels[j].name;
		while (i_end < base->count && !strcmp(base->kernels[i_end].name, name))
			i_end++;
		while (j_end < new->count && !strcmp(new->kernels[j_end].name, name))
			j_end++;
		pair_name(r, &base->kernels[i], i_end - i, &new->kernels[j], j_end - j);
		i = i_end;
		j = j_end;
	}
	for (size_t k = 0; k < r->count; k++) {
		judge_pair(&r->kernels[k], cfg);
		r->verdicts[r->kernels[k].verdict]++;
	}
	qsort(r->kernels, r->count, sizeof(r->kernels[0]), compare_diff);
	*out = r;
	return 0;
}

void diff_result_free(struct diff_result *result)
{
	if (!result)
		return;
	free(result->kernels);
	free(result);
}
