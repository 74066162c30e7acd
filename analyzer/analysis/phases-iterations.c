/*
 * Finding a trace's iterations (phases-private.h): the NVTX ranges --step names, else the repeating
 * NVTX range covering the most time (a library's own domains left out); the period of the kernel
 * sequence is phases-period.c. phases.c walks them and puts the phases together.
 */
#include "analyzer/analysis/phases-private.h"

/*
 * "ProfilerStep#12" and "ProfilerStep#13" are one range: trailing digits do not count. A step of
 * JAX's jax.profiler.StepTraceAnnotation arrives in XLA's TraceMe form, "train:#step_num=12#": its
 * name is what precedes the metadata.
 */
static void normalize(const char *text, char *out, size_t len)
{
	const char *meta = strstr(text, ":#");
	size_t n = meta && strstr(meta, "step_num=") ? (size_t)(meta - text) : strlen(text);

	while (n > 0 && isdigit((unsigned char)text[n - 1]))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(out, text, n);
	out[n] = '\0';
}

/*
 * Library ranges are not steps: NCCL's own (ncclAllReduce, ncclCommInitRankConfig...), and XLA's
 * (JAX, TensorFlow) compiler passes and thunks ("XlaCompile:#module=jit_step#", "XlaPass:#...#",
 * "Thunk:#...#"), which cover most of a JAX program's time and hold kernels of their own (the
 * autotuner's). XLA's range around one execution of a compiled program is a step when the program is
 * the user's (jax.jit's "XlaModule:#hlo_module=jit_step,program_id=7#", or pmap_), not an autotuning
 * candidate ("XlaModule:#hlo_module=gemm_fusion_dot.4#"). Empty texts are not steps either.
 */
/* The step number a range's name ends with, as normalize() strips it: -1 when it ends in none. */
static int64_t step_number(const char *text)
{
	const char *meta = strstr(text, ":#"), *num = meta ? strstr(meta, "step_num=") : NULL;
	size_t n = strlen(text), digits = 0;

	if (num)
		text = num + 9, n = strspn(text, "0123456789");
	while (digits < n && isdigit((unsigned char)text[n - 1 - digits]))
		digits++;
	/* 18 digits at most: an int64_t, and no step count reaches it */
	if (!digits || digits > 18)
		return -1;
	return strtoll(text + n - digits, NULL, 10);
}

static int candidate_text(const char *text)
{
	if (!text[0] || !strncasecmp(text, "nccl", 4) || !strncmp(text, "Thunk:#", 7))
		return 0;
	if (!strncmp(text, "XlaModule:#", 11)) {
		const char *module = strstr(text, "hlo_module=");

		return module && (!strncmp(module + 11, "jit_", 4) || !strncmp(module + 11, "pmap_", 5));
	}
	return strncmp(text, "Xla", 3) != 0 || !strstr(text, ":#");
}

/*
 * NVTX domains that libraries create for their own ranges: CCCL's ("cub::DeviceRadixSort" once per
 * step of a PyTorch model whose embedding backward sorts), NCCL's, cuDNN's, cuBLAS'... Their ranges
 * describe the library's work, not the program's loop, so they are no iteration candidates unless
 * --step names them (docs/phases.md lists them). A range in a library domain nested in a user range
 * stays what it is: time in that call.
 */
static const char *const library_domains[] = {
	"CCCL", "CUB", "Thrust", "NCCL", "cuDNN", "cuBLAS", "cuBLASLt", "cuFFT", "cuSPARSE", "cuSOLVER",
	"cuRAND", "NVSHMEM", "TensorRT", "Triton", "NPP", "nvJPEG",
};

static int library_domain(const char *name)
{
	for (size_t i = 0; i < sizeof(library_domains) / sizeof(library_domains[0]); i++)
		if (!strcasecmp(name, library_domains[i]))
			return 1;
	return 0;
}

/* The domainIds of one trace that belong to libraries, from its domain-creation rows. */
static int find_library_domains(const struct analysis_context *ctx, const struct trace_phases *tp,
				int64_t **ids, size_t *nids, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ret, rc;

	*ids = NULL;
	*nids = 0;
	ret = analysis_prepare(
	    ctx,
	    "SELECT DISTINCT domainId, text FROM nvtx WHERE traceId = ?1 AND eventType = 75"
	    " AND text IS NOT NULL",
	    &st, err, errlen);
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, tp->trace_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!library_domain(analysis_column_text(st, 1)))
			continue;
		*ids = xrealloc(*ids, (*nids + 1) * sizeof(**ids));
		(*ids)[(*nids)++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE)
		ret = analysis_step_error(ctx, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

static int in_ids(const int64_t *ids, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* One more iteration, of host time [host_start, host_end), its GPU work not yet walked. */
void add_iteration(struct trace_phases *tp, int64_t host_start, int64_t host_end)
{
	size_t n = tp->niterations;
	struct iteration *it;

	/* room for twice as many at each power of two (16 at first): one copy per doubling, not per
	 * iteration (a kernel-period trace can have one iteration per kernel) */
	if (!n || (n >= 16 && !(n & (n - 1))))
		tp->iterations = xrealloc(tp->iterations, (n ? 2 * n : 16) * sizeof(*tp->iterations));
	it = &tp->iterations[tp->niterations++];
	memset(it, 0, sizeof(*it));
	it->host_start = host_start;
	it->host_end = host_end;
	it->start = INT64_MAX;
	it->end = INT64_MIN;
	it->step = -1;
}

/* The NVTX ranges of one trace, in start order: columns start, end, text, domainId. */
static int prepare_ranges(const struct analysis_context *ctx, const struct trace_phases *tp,
			  sqlite3_stmt **st, char *err, size_t errlen)
{
	int ret = analysis_prepare(
	    ctx,
	    "SELECT start, end, text, domainId FROM nvtx WHERE traceId = ?1 AND end > start"
	    " AND text IS NOT NULL ORDER BY start",
	    st, err, errlen);

	if (!ret)
		sqlite3_bind_int64(*st, 1, tp->trace_id);
	return ret;
}

struct range_group {
	char name[128];
	int64_t count, total, last_end;
};

/* Collect the ranges of one trace that pass keep_range into tp's iterations, skipping any that
 * overlaps the previous one kept (a range nested in one of the same name). */
int collect_ranges(const struct analysis_context *ctx, struct trace_phases *tp, const regex_t *re,
		   const char *norm, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int ret, rc;
	int64_t last_end = INT64_MIN;

	ret = prepare_ranges(ctx, tp, &st, err, errlen);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
		const char *text = analysis_column_text(st, 2);
		char name[128];

		if (re) {
			if (regexec(re, text, 0, NULL, 0) != 0)
				continue;
		} else {
			normalize(text, name, sizeof(name));
			if (strcmp(name, norm) != 0)
				continue;
		}
		if (start < last_end)
			continue;
		last_end = end;
		add_iteration(tp, start, end);
		tp->iterations[tp->niterations - 1].step = step_number(text);
	}
	if (rc != SQLITE_DONE)
		ret = analysis_step_error(ctx, err, errlen);
	sqlite3_finalize(st);
	return ret;
}

/* The repeating user range that covers the most time, with at least 3 non-overlapping instances; the
 * PyTorch profiler's ProfilerStep#N, when there is one, however many. */
int find_nvtx_step(const struct analysis_context *ctx, struct trace_phases *tp, char *err,
		   size_t errlen)
{
	struct range_group *groups = NULL, *best = NULL;
	size_t ngroups = 0, nlibrary;
	int64_t *library;
	sqlite3_stmt *st;
	int ret, rc;

	ret = find_library_domains(ctx, tp, &library, &nlibrary, err, errlen);
	if (ret < 0)
		return ret;
	ret = prepare_ranges(ctx, tp, &st, err, errlen);
	if (ret < 0) {
		free(library);
		return ret;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
		const char *text = analysis_column_text(st, 2);
		struct range_group *g = NULL;
		char name[128];

		if (!candidate_text(text) || in_ids(library, nlibrary, sqlite3_column_int64(st, 3)))
			continue;
		normalize(text, name, sizeof(name));
		for (size_t i = 0; i < ngroups && !g; i++)
			if (!strcmp(groups[i].name, name))
				g = &groups[i];
		if (!g) {
			/* Distinct range names are few; a program naming every range apart has no step. */
			if (ngroups == 4096)
				continue;
			groups = xrealloc(groups, (ngroups + 1) * sizeof(*groups));
			g = &groups[ngroups++];
			memset(g, 0, sizeof(*g));
			snprintf(g->name, sizeof(g->name), "%s", name);
			g->last_end = INT64_MIN;
		}
		if (start < g->last_end)
			continue;
		g->count++;
		g->total += end - start;
		g->last_end = end;
	}
	if (rc != SQLITE_DONE)
		ret = analysis_step_error(ctx, err, errlen);
	sqlite3_finalize(st);
	free(library);
	for (size_t i = 0; !ret && i < ngroups; i++)
		if (groups[i].count >= 3 && (!best || groups[i].total > best->total))
			best = &groups[i];
	/* The PyTorch profiler's steps are the iterations however few were recorded: with one or two,
	 * the range covering the most time in 3 instances or more was an op's (aten::t, forward,
	 * ConvolutionBackward on HTA's and the device's 2-step traces), not the program's step. */
	for (size_t i = 0; !ret && i < ngroups; i++)
		if (!strcmp(groups[i].name, "ProfilerStep#") && groups[i].count >= 1)
			best = &groups[i];
	if (!ret && best) {
		ret = collect_ranges(ctx, tp, NULL, best->name, err, errlen);
		if (!ret) {
			tp->source = ITERATIONS_NVTX;
			tp->source_name = xstrdup(best->name);
		}
	}
	free(groups);
	return ret;
}
