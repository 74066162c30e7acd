/*
 * Kernel timing comparison (see diff.h): reading kernel sets from traces, the verdict rule, the
 * configuration file, and the pairing of kernels between two sets. The output formats are in
 * output.c.
 */
#include "analyzer/diff/diff.h"
#include "analyzer/loader/events.h"
#include "analyzer/loader/trace.h"
#include "common/key-index.h"
#include "common/progress.h"
#include "common/strtab.h"
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

/*
 * Reading one side: every kernel, copy and memset once, in start order, from the loader's event
 * streams (one per file and view, merged by start: the files of one side are one timeline). Each
 * kernel launch goes to its group, keyed by its name and launch configuration; a group keeps its
 * durations in start order, so that the first skip_first launches are the warm-up it drops. The same
 * pass sums the GPU totals and sweeps each device's busy intervals (at most one open per device).
 * Memory: the groups' durations (what the rank test needs), not the rows.
 */
static const char *const load_kernel_cols[] = { "end", "deviceId", "streamId", "nameId", "shortNameId",
						 "mangledNameId", "gridX", "gridY", "gridZ", "blockX", "blockY",
						 "blockZ" };
static const char *const load_op_cols[] = { "end", "deviceId", "streamId" };
enum { L_END, L_DEVICE, L_STREAM, L_NAME, L_SHORT_NAME, L_MANGLED_NAME, L_GRID, L_BLOCK = L_GRID + 3 };

struct launch_group {
	size_t name;		/* index in names */
	int64_t grid[3], block[3];
	double *dur;		/* in start order */
	size_t count, cap;
};

struct load {
	struct trace *trace;
	struct kernel_set *set;
	struct progress progress;
	char *err;
	size_t errlen;
	/* (file, nameId, shortNameId, mangledNameId) -> names; names deduplicated by text */
	struct key_index name_of;
	size_t *name_slot;		/* per name_of index: its index in names */
	size_t name_slot_cap;
	struct strtab names;		/* distinct names (the trace's strings or "(unnamed)") */
	/* groups by (name, grid, block), two look-ups of four keys: (grid, blockX) -> a configuration,
	 * then (name, configuration, blockY, blockZ) -> the group */
	struct key_index configs, group_index;
	struct launch_group *groups;
	size_t ngroups;
	/* the busy sweep: per device, the open interval and the first start */
	struct device_sweep {
		int64_t device, first, busy_start, busy_end;
	} *devices;
	size_t ndevices;
};

/* The name of a kernel row, as the view's name column gives it: the first of its demangled, short
 * and mangled names that the strings hold; "(unnamed)" when none. */
static int row_name(struct load *ld, const struct event_row *r, size_t *out)
{
	int64_t key[KEY_INDEX_WORDS] = { r->trace_id, event_int(r, L_NAME, -1), event_int(r, L_SHORT_NAME, -1),
					 event_int(r, L_MANGLED_NAME, -1) };
	const char *text = NULL;
	int created, ret = 0;
	size_t i = key_index_get(&ld->name_of, key, &created);

	if (!created) {
		*out = ld->name_slot[i];
		return 0;
	}
	for (size_t c = L_NAME; c <= L_MANGLED_NAME && !text && ret >= 0; c++)
		if (!event_null(r, c))
			ret = trace_string(ld->trace, r->trace_id, r->v[c], &text, ld->err, ld->errlen);
	if (ret < 0)
		return ret;
	if (i >= ld->name_slot_cap) {
		ld->name_slot_cap = ld->name_slot_cap ? ld->name_slot_cap * 2 : 64;
		ld->name_slot = xrealloc(ld->name_slot, ld->name_slot_cap * sizeof(*ld->name_slot));
	}
	ld->name_slot[i] = strtab_get(&ld->names, text ? text : "(unnamed)", NULL);
	*out = ld->name_slot[i];
	return 0;
}

static struct launch_group *group_of(struct load *ld, size_t name, const int64_t grid[3], const int64_t block[3])
{
	int64_t config[KEY_INDEX_WORDS] = { grid[0], grid[1], grid[2], block[0] };
	int64_t key[KEY_INDEX_WORDS] = { (int64_t)name, (int64_t)key_index_get(&ld->configs, config, NULL), block[1],
					 block[2] };
	int created;
	size_t g = key_index_get(&ld->group_index, key, &created);

	if (created) {
		ld->groups = xrealloc(ld->groups, (g + 1) * sizeof(*ld->groups));
		ld->groups[g] = (struct launch_group){ .name = name };
		memcpy(ld->groups[g].grid, grid, sizeof(ld->groups[g].grid));
		memcpy(ld->groups[g].block, block, sizeof(ld->groups[g].block));
		ld->ngroups = g + 1;
	}
	return &ld->groups[g];
}

static int add_launch(struct load *ld, const struct event_row *r)
{
	int64_t grid[3], block[3];
	struct launch_group *g;
	size_t name;
	double dur;
	int ret = row_name(ld, r, &name);

	if (ret < 0)
		return ret;
	for (int i = 0; i < 3; i++) {
		grid[i] = event_int(r, L_GRID + (size_t)i, 0);
		block[i] = event_int(r, L_BLOCK + (size_t)i, 0);
	}
	g = group_of(ld, name, grid, block);
	if (g->count == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->dur = xrealloc(g->dur, g->cap * sizeof(*g->dur));
	}
	/* the view's dur (end - start), NULL read as 0, and no negative durations */
	dur = event_null(r, L_END) || (r->null & EVENT_START_NULL) ? 0 : (double)(r->v[L_END] - r->start);
	g->dur[g->count++] = dur > 0 ? dur : 0;
	return 0;
}

/* One operation into the GPU totals: its count and time, and its device's busy intervals. */
static void add_operation(struct load *ld, int view, const struct event_row *r)
{
	struct gpu_totals *t = &ld->set->totals;
	size_t *counts[] = { &t->kernels, &t->copies, &t->sets };
	double *times[] = { &t->kernel_ns, &t->copy_ns, &t->set_ns };
	int64_t device = event_int(r, L_DEVICE, 0), start = r->start, end = event_int(r, L_END, 0);
	struct device_sweep *d = NULL;

	(*counts[view])++;
	if (!event_null(r, L_END) && !(r->null & EVENT_START_NULL))
		*times[view] += (double)(r->v[L_END] - r->start);
	if (end < start)
		end = start;
	for (size_t i = 0; i < ld->ndevices && !d; i++)
		if (ld->devices[i].device == device)
			d = &ld->devices[i];
	if (!d) {
		ld->devices = xrealloc(ld->devices, (ld->ndevices + 1) * sizeof(*ld->devices));
		d = &ld->devices[ld->ndevices++];
		*d = (struct device_sweep){ device, start, start, end };
		return;
	}
	if (start > d->busy_end) {
		t->busy_ns += (double)(d->busy_end - d->busy_start);
		d->busy_start = start;
	}
	if (end > d->busy_end)
		d->busy_end = end;
}

/* The groups into kernels of the set: durations sorted, the warm-up dropped. */
static void add_groups(struct load *ld, size_t skip_first)
{
	for (size_t g = 0; g < ld->ngroups; g++) {
		struct launch_group *grp = &ld->groups[g];
		struct kernel_timing *k;
		size_t keep;

		if (grp->count <= skip_first)
			continue;
		keep = grp->count - skip_first;
		memmove(grp->dur, grp->dur + skip_first, keep * sizeof(*grp->dur));
		qsort(grp->dur, keep, sizeof(*grp->dur), compare_double);
		k = kernel_set_add(ld->set, xstrdup(strtab_at(&ld->names, grp->name)), grp->grid, grp->block,
				   grp->dur, keep);
		grp->dur = NULL;
		k->skipped = skip_first;
	}
}

static void load_release(struct load *ld)
{
	for (size_t g = 0; g < ld->ngroups; g++)
		free(ld->groups[g].dur);
	free(ld->groups);
	key_index_release(&ld->configs);
	key_index_release(&ld->group_index);
	key_index_release(&ld->name_of);
	free(ld->name_slot);
	strtab_release(&ld->names);
	free(ld->devices);
}

/*
 * The scan that finds each table's storage order keeps the rows' columns, and the streams read them
 * from that copy: one read of each table instead of that scan and a second read of every row
 * (baseline save on 1M kernels: 0.49 -> 0.38 s user). No effect on a table already read.
 */
static void load_keep(struct trace *trace)
{
	const struct event_columns sets[3] = {
		{ "kernels", load_kernel_cols, sizeof(load_kernel_cols) / sizeof(load_kernel_cols[0]), 3, -1 },
		{ "copies", load_op_cols, 3, 3, -1 },
		{ "sets", load_op_cols, 3, 3, -1 },
	};

	event_streams_keep(trace, sets, 3);
}

/* Every kernel, copy and memset of every file, merged by start. */
static int read_operations(struct load *ld)
{
	static const char *const views[] = { "kernels", "copies", "sets" };
	size_t nfiles = trace_count(ld->trace), n = 3 * nfiles;
	struct event_stream **in = xcalloc(n ? n : 1, sizeof(*in));
	const struct event_row **row = xcalloc(n ? n : 1, sizeof(*row));
	struct gpu_totals *t = &ld->set->totals;
	int64_t total = 0;
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++) {
		int v = (int)(i % 3);

		ret = event_stream_open_file(ld->trace, i / 3, views[v], v ? load_op_cols : load_kernel_cols,
					     v ? 3 : sizeof(load_kernel_cols) / sizeof(load_kernel_cols[0]), 3, -1,
					     &in[i], ld->err, ld->errlen);
		if (ret >= 0) {
			total += event_stream_total(in[i]);
			ret = event_stream_next(in[i], &row[i], ld->err, ld->errlen);
		}
	}
	progress_begin(&ld->progress, "diff", "events", total);
	while (ret >= 0) {
		size_t next = n;

		for (size_t i = 0; i < n; i++)
			if (row[i] && (next == n || row[i]->start < row[next]->start))
				next = i;
		if (next == n)
			break;
		progress_tick(&ld->progress);
		if (next % 3 == 0)
			ret = add_launch(ld, row[next]);
		add_operation(ld, (int)(next % 3), row[next]);
		if (ret >= 0)
			ret = event_stream_next(in[next], &row[next], ld->err, ld->errlen);
		if (ret == 0)
			row[next] = NULL;
	}
	progress_end(&ld->progress);
	for (size_t d = 0; d < ld->ndevices; d++) {
		t->busy_ns += (double)(ld->devices[d].busy_end - ld->devices[d].busy_start);
		t->span_ns += (double)(ld->devices[d].busy_end - ld->devices[d].first);
	}
	t->idle_ns = t->span_ns - t->busy_ns;
	for (size_t i = 0; i < n; i++)
		if (in[i])
			event_stream_close(in[i]);
	free(in);
	free((void *)row);
	return ret < 0 ? ret : 0;
}

int kernel_set_load(struct trace *trace, const char *nvtx, size_t skip_first,
		    struct kernel_set **out, char *err, size_t errlen)
{
	struct load ld = { .trace = trace, .err = err, .errlen = errlen };
	int ret;

	*out = NULL;
	load_keep(trace);
	ld.set = kernel_set_new(trace_path(trace, 0));
	ld.set->skip_first = skip_first;
	if (nvtx) {
		struct trace_scope scope = { .nvtx_range = nvtx };

		ret = trace_set_scope(trace, &scope, err, errlen);
		if (ret < 0)
			goto out;
		ld.set->nvtx = xstrdup(nvtx);
	}
	ret = read_operations(&ld);
	if (ret < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "cannot read the kernels of '%s': %s", ld.set->source, why);
		goto out;
	}
	add_groups(&ld, skip_first);
	kernel_set_sort(ld.set);
	*out = ld.set;
	ld.set = NULL;
out:
	load_release(&ld);
	kernel_set_free(ld.set);
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
