/*
 * The period of the kernel sequence (phases-private.h), for a trace without a step range. The kernel
 * that recurs at one fixed distance in the launch sequence over the longest stretch of launches (at
 * least a fifth of them) tells how many kernels an iteration has. That kernel can sit anywhere in the
 * step (AdamW's second kernel, a sort in the middle of the backward pass), so where each iteration
 * starts is chosen apart, in this order:
 *
 *   after the recurring gap       the first operation after the period's largest idle gap, when that
 *                                 gap falls at the same place in at least half of the periods and
 *                                 lasts at least RECURRING_GAP_MIN: where the host works between
 *                                 steps (loading data, the optimizer's Python, host code after a sync)
 *   the optimizer's first kernel  the first of the longest run of optimizer kernels in the period
 *   the recurring kernel          otherwise
 *
 * Three reads of the trace: its kernels as tokens (which kernel recurs, where its run is); its GPU
 * operations (kernels, copies, memsets) for each period's largest gap; and once more for the start
 * of each iteration. Memory grows with the distinct kernel names, the kernels of one period and the
 * number of periods, not with the operations.
 */
#include "analyzer/analysis/phases-private.h"

/* Shorter gaps are launch latency, not host work (the idle-gaps rule's min_gap_us). */
#define RECURRING_GAP_MIN 5000

/*
 * A period that nothing on the host marks (no recurring gap, no optimizer kernel) may be a layer
 * of the step: identical layers repeat the same kernels. Its multiples up to PERIOD_MULTIPLE_MAX
 * are tried for a recurring gap, which must then fall at the same place in at least 3 of 4 of
 * their periods: at twice a layer of a 4-layer step, the step's gap is in every other period, which
 * the single period's "at least half" would take.
 */
#define PERIOD_MULTIPLE_MAX 8

/* One kernel name in the launch sequence: the runs of equal distances between its launches. */
struct token {
	int64_t count, last_pos, dist, run, run_pos;
	int64_t best_run, best_dist, best_pos;	/* best_pos: where the best run's first launch is */
	int64_t first_end;			/* when its first launch ended */
};

/* The kernel sequence of one trace as tokens: one per kernel name, with its repeats' distances. */
struct kernel_tokens {
	struct key_index index;		/* name id -> tokens[], names[] */
	struct token *tokens;
	int64_t *names;
	int64_t pos;			/* kernels seen */
	int64_t first_start, last_end;
};

/* The recurring kernel's run: its launches at positions first + k * dist, k = 0 .. runs. */
struct period {
	int64_t first, dist, runs;
};

/* The GPU operations of one trace in start order, as (end, device, stream[, nameId]). */
static const char *const kernel_cols[] = { "end", "deviceId", "streamId", "nameId" };
enum { COL_END, COL_DEVICE, COL_NAME = 3 };
static const char *const op_views[] = { "kernels", "copies", "sets" };
#define OP_VIEWS 3

/* The next row of trace_id from s: 1, 0 after its last, or a negative error. */
static int next_row(struct event_stream *s, int64_t trace_id, const struct event_row **row, char *err,
		    size_t errlen)
{
	int ret;

	while ((ret = event_stream_next(s, row, err, errlen)) > 0 && (*row)->trace_id <= trace_id)
		if ((*row)->trace_id == trace_id)
			return 1;
	return ret < 0 ? ret : 0;
}

/* ---- which kernel recurs ---- */

/* A launch of token t at position pos: the run of equal distances it extends or starts. */
static void token_seen(struct token *t, int64_t pos)
{
	if (t->count) {
		int64_t dist = pos - t->last_pos;

		if (dist == t->dist) {
			t->run++;
		} else {
			t->dist = dist;
			t->run = 1;
			t->run_pos = t->last_pos;
		}
		if (t->run * t->dist > t->best_run * t->best_dist) {
			t->best_run = t->run;
			t->best_dist = t->dist;
			t->best_pos = t->run_pos;
		}
	}
	t->count++;
	t->last_pos = pos;
}

/* The first read: every kernel of the trace as a token; *last_first_end: the end of the last first
 * launch of a kernel. */
static int read_tokens(const struct analysis_context *ctx, struct trace_phases *tp,
		       struct kernel_tokens *k, int64_t *last_first_end, char *err, size_t errlen)
{
	struct event_stream *st;
	const struct event_row *row;
	int ret, rc;

	k->last_end = INT64_MIN;
	ret = event_stream_open(ctx->trace, "kernels", kernel_cols, 4, 3, -1, &st, err, errlen);
	if (ret < 0)
		return ret;
	while ((rc = next_row(st, tp->trace_id, &row, err, errlen)) > 0) {
		int64_t key[KEY_INDEX_WORDS] = { row->v[COL_NAME] };
		int64_t end = row->v[COL_END];
		int created;
		size_t i = key_index_get(&k->index, key, &created);

		if (!k->pos)
			k->first_start = row->start;
		if (end > k->last_end)
			k->last_end = end;

		if (created) {
			k->tokens = xrealloc(k->tokens, (i + 1) * sizeof(*k->tokens));
			k->names = xrealloc(k->names, (i + 1) * sizeof(*k->names));
			memset(&k->tokens[i], 0, sizeof(k->tokens[i]));
			k->names[i] = key[0];
			k->tokens[i].first_end = end;
			if (end > *last_first_end)
				*last_first_end = end;
		}
		token_seen(&k->tokens[i], k->pos++);
	}
	if (rc < 0)
		ret = rc;
	event_stream_close(st);
	return ret;
}

/*
 * A period seen fewer times than this is taken only where no kernel repeats this often over a
 * fifth of the launches: under torch.compile, autotuning benchmarks each candidate kernel a few
 * times during the warm-up, and one kernel repeating twice 628 launches apart covered more than
 * the 35 real steps of 19 kernels (lngelu compiled, H200, tests/gpu/busy/advice.py, 2026-12-02),
 * which then became the tear-down.
 */
#define PERIOD_MIN_RUNS 4

/* The token whose longest run of equal distances covers the most kernels (at least a fifth, at
 * least min_run repeats); SIZE_MAX when none does. */
static size_t best_token_of(const struct kernel_tokens *k, int64_t min_run)
{
	int64_t best_cover = 0;
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < k->index.count; i++) {
		int64_t cover = k->tokens[i].best_run * k->tokens[i].best_dist;

		/* Ties go to the shorter period: the same stretch, finer iterations. */
		if (k->tokens[i].best_run >= min_run && cover * 5 >= k->pos &&
		    (cover > best_cover || (cover == best_cover && k->tokens[i].best_dist < k->tokens[best].best_dist))) {
			best_cover = cover;
			best = i;
		}
	}
	return best;
}

static size_t best_token(const struct kernel_tokens *k)
{
	size_t best = best_token_of(k, PERIOD_MIN_RUNS);

	return best != SIZE_MAX ? best : best_token_of(k, 2);
}

/* ---- the operations, and the idle gap before each kernel ---- */

struct period_op {
	int kernel, copy;
	int64_t start, end, device, name;
};

/* The kernels, copies and memsets of one trace merged in start order. */
struct op_reader {
	int64_t trace_id;
	struct event_stream *stream[OP_VIEWS];
	struct event_row row[OP_VIEWS];
	int live[OP_VIEWS];
};

static int reader_fill(struct op_reader *r, int i, char *err, size_t errlen)
{
	const struct event_row *row;
	int ret = next_row(r->stream[i], r->trace_id, &row, err, errlen);

	r->live[i] = ret > 0;
	if (ret > 0)
		r->row[i] = *row;
	return ret < 0 ? ret : 0;
}

static void reader_close(struct op_reader *r)
{
	for (int i = 0; i < OP_VIEWS; i++)
		if (r->stream[i])
			event_stream_close(r->stream[i]);
}

static int reader_open(const struct analysis_context *ctx, int64_t trace_id, struct op_reader *r,
		       char *err, size_t errlen)
{
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->trace_id = trace_id;
	for (int i = 0; i < OP_VIEWS && !ret; i++) {
		ret = event_stream_open(ctx->trace, op_views[i], kernel_cols, i ? 3 : 4, 3, -1, &r->stream[i], err,
					errlen);
		if (!ret)
			ret = reader_fill(r, i, err, errlen);
	}
	if (ret < 0)
		reader_close(r);
	return ret;
}

/* The next operation: 1, 0 after the trace's last, or a negative error. */
static int reader_next(struct op_reader *r, struct period_op *op, char *err, size_t errlen)
{
	int next = -1, ret;

	for (int i = 0; i < OP_VIEWS; i++)
		if (r->live[i] && (next < 0 || r->row[i].start < r->row[next].start))
			next = i;
	if (next < 0)
		return 0;
	*op = (struct period_op){ .kernel = next == 0, .copy = next == 1, .start = r->row[next].start, .end = r->row[next].v[COL_END],
			       .device = r->row[next].v[COL_DEVICE], .name = next == 0 ? r->row[next].v[COL_NAME] : -1 };
	ret = reader_fill(r, next, err, errlen);
	return ret < 0 ? ret : 1;
}

/*
 * A kernel's zone: the operations after the kernel before it, up to itself. Its gap is the longest
 * time a device sat idle before one of them (from the end of that device's earlier work), and its
 * cut the start of the operation after that gap: where an iteration starting after the gap begins.
 */
typedef void (*zone_fn)(void *arg, int64_t pos, const struct period_op *kernel, int64_t gap, int64_t cut,
			int64_t copies);

struct device_end {
	int64_t device, end;
};

/* Read the trace's operations, calling fn for each kernel up to position `last` with its zone. */
static int scan_zones(const struct analysis_context *ctx, int64_t trace_id, int64_t last,
		      zone_fn fn, void *arg, char *err, size_t errlen)
{
	struct device_end *devices = NULL;
	size_t ndevices = 0;
	int64_t pos = 0, zone_gap = -1, zone_cut = 0, zone_copies = 0;
	struct op_reader r;
	struct period_op op;
	int ret;

	ret = reader_open(ctx, trace_id, &r, err, errlen);
	if (ret < 0)
		return ret;
	while (pos <= last && (ret = reader_next(&r, &op, err, errlen)) > 0) {
		struct device_end *d = NULL;
		int64_t gap = 0;

		for (size_t i = 0; i < ndevices && !d; i++)
			if (devices[i].device == op.device)
				d = &devices[i];
		if (!d) {
			devices = xrealloc(devices, (ndevices + 1) * sizeof(*devices));
			d = &devices[ndevices++];
			*d = (struct device_end){ op.device, op.end };
		} else if (op.start > d->end) {
			gap = op.start - d->end;
		}
		if (op.end > d->end)
			d->end = op.end;
		if (gap > zone_gap) {
			zone_gap = gap;
			zone_cut = op.start;
		}
		if (op.copy)
			zone_copies++;
		if (op.kernel) {
			fn(arg, pos++, &op, zone_gap, zone_cut, zone_copies);
			zone_gap = -1;
			zone_copies = 0;
		}
	}
	reader_close(&r);
	free(devices);
	return ret < 0 ? ret : 0;
}

/* ---- where each iteration starts ---- */

/* Optimizer kernels: PyTorch's foreach and fused optimizers (multi_tensor_apply_kernel, also Apex's
 * and DeepSpeed's), and kernels named for Adam, SGD or an optimizer (bitsandbytes' kOptimizer...). */
static int optimizer_kernel(const char *name)
{
	static const char *const marks[] = { "multi_tensor_apply", "Adam", "ADAM", "adam_", "_adam", "Sgd", "SGD",
					     "sgd_", "_sgd", "Optimizer", "optimizer" };

	for (size_t i = 0; name && i < sizeof(marks) / sizeof(marks[0]); i++)
		if (strstr(name, marks[i]))
			return 1;
	return 0;
}

/* The second read: each period's largest gap, and the last period's optimizer kernels. */
struct period_gaps {
	const struct period *p;
	const struct kernel_tokens *k;
	const char *token_optimizer;	/* per token */
	/* By multiple m = 1 .. PERIOD_MULTIPLE_MAX of the period (index m - 1), per period of m * dist
	 * kernels j = 1 .. runs / m: the offset of its largest gap (the distance in kernels back from
	 * the period's last recurring kernel), its ns; and the same of the period being read. */
	int64_t (*largest[PERIOD_MULTIPLE_MAX])[2];
	int64_t best_gap[PERIOD_MULTIPLE_MAX];
	int64_t best_offset[PERIOD_MULTIPLE_MAX];
	/* By multiple: the copies of the period being read, and the count every period had (-1: not
	 * the same in all): copies in each period mark it as the host's (a batch, an .item()). */
	int64_t copies[PERIOD_MULTIPLE_MAX], copies_per[PERIOD_MULTIPLE_MAX];
	char *optimizer;		/* the last period's kernels in order: an optimizer's */
};

static void period_gap_zone(void *arg, int64_t pos, const struct period_op *kernel, int64_t gap, int64_t cut,
			    int64_t copies)
{
	struct period_gaps *pg = arg;
	const struct period *p = pg->p;
	int64_t rel = pos - p->first, k = (rel + p->dist - 1) / p->dist, end = p->first + k * p->dist;

	(void)cut;
	if (rel <= 0 || k > p->runs)
		return;
	for (int64_t m = 1; m <= PERIOD_MULTIPLE_MAX && m <= p->runs; m++) {
		int64_t dist = m * p->dist, j = (rel + dist - 1) / dist, end_m = p->first + j * dist;

		if (j > p->runs / m)	/* the tail after its last whole period */
			continue;
		if (gap > pg->best_gap[m - 1]) {
			pg->best_gap[m - 1] = gap;
			pg->best_offset[m - 1] = end_m - pos;
		}
		pg->copies[m - 1] += copies;
		if (pos == end_m) {
			pg->largest[m - 1][j - 1][0] = pg->best_offset[m - 1];
			pg->largest[m - 1][j - 1][1] = pg->best_gap[m - 1];
			pg->best_gap[m - 1] = -1;
			/* copies per period: the same count in all so far, or -1 */
			if (j == 1)
				pg->copies_per[m - 1] = pg->copies[m - 1];
			else if (pg->copies_per[m - 1] != pg->copies[m - 1])
				pg->copies_per[m - 1] = -1;
			pg->copies[m - 1] = 0;
		}
	}
	if (k == p->runs) {
		int64_t key[KEY_INDEX_WORDS] = { kernel->name };
		size_t t = key_index_find(&pg->k->index, key);

		pg->optimizer[pos - (end - p->dist) - 1] = t != SIZE_MAX && pg->token_optimizer[t];
	}
}

static int compare_pairs(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return (a[1] > b[1]) - (a[1] < b[1]);
}

/* The offset where the largest gaps of runs periods fall most often (ties: the longer median), if
 * that is in at least share (a fraction) of the periods and its median is at least
 * RECURRING_GAP_MIN: 1, else 0. */
static int recurring_gap(int64_t (*largest)[2], int64_t runs, double share, int64_t *offset, int64_t *median)
{
	int64_t best_votes = 0, best_median = 0, best_offset = 0;

	if (runs <= 0)
		return 0;
	qsort(largest, (size_t)runs, sizeof(*largest), compare_pairs);
	for (int64_t i = 0, j; i < runs; i = j) {
		int64_t votes, mid;

		for (j = i; j < runs && largest[j][0] == largest[i][0];)
			j++;
		votes = j - i;
		mid = largest[i + votes / 2][1];
		if (votes > best_votes || (votes == best_votes && mid > best_median)) {
			best_votes = votes;
			best_median = mid;
			best_offset = largest[i][0];
		}
	}
	*offset = best_offset;
	*median = best_median;
	return (double)best_votes >= share * (double)runs && best_median >= RECURRING_GAP_MIN;
}

/* The offset of the optimizer's first kernel (the first of the longest run of optimizer kernels in
 * the period, read around its end), or -1 when the period has none, or nothing else. */
static int64_t optimizer_offset(const char *optimizer, int64_t dist)
{
	int64_t other = -1, best = -1, best_len = 0, len = 0, start = 0;

	for (int64_t i = 0; i < dist && other < 0; i++)
		if (!optimizer[i])
			other = i;
	if (other < 0)
		return -1;
	for (int64_t n = 1; n <= dist; n++) {
		int64_t i = (other + n) % dist;

		if (!optimizer[i]) {
			len = 0;
			continue;
		}
		if (!len++)
			start = i;
		if (len > best_len) {
			best_len = len;
			best = start;
		}
	}
	return best < 0 ? -1 : dist - 1 - best;
}

/*
 * Where the iterations start: the offset back from the recurring kernel, and how it was chosen.
 * A period that neither a recurring gap nor an optimizer kernel marks becomes its smallest multiple
 * that a recurring gap marks (*p changes: one step of several identical layers), or stays, said
 * to be perhaps a layer (tp->period_unmarked).
 */
static int choose_start(const struct analysis_context *ctx, struct trace_phases *tp,
			const struct kernel_tokens *k, struct period *p, int64_t *offset, char *err,
			size_t errlen)
{
	struct period_gaps pg = { .p = p, .k = k };
	char *token_optimizer = xcalloc(k->index.count ? k->index.count : 1, 1);
	int64_t gap_offset, median, opt;
	int ret;

	for (size_t i = 0; i < k->index.count; i++) {
		const char *name = NULL;

		if (trace_string(ctx->trace, tp->trace_id, k->names[i], &name, err, errlen) == 0)
			token_optimizer[i] = (char)optimizer_kernel(name);
	}
	pg.token_optimizer = token_optimizer;
	for (int m = 1; m <= PERIOD_MULTIPLE_MAX; m++) {
		pg.largest[m - 1] = xcalloc((size_t)(p->runs / m) + 1, sizeof(*pg.largest[m - 1]));
		pg.best_gap[m - 1] = -1;
	}
	pg.optimizer = xcalloc((size_t)p->dist, 1);
	ret = scan_zones(ctx, tp->trace_id, p->first + p->runs * p->dist, period_gap_zone, &pg, err, errlen);
	*offset = 0;
	tp->start_by = ITERATION_START_KERNEL;
	if (!ret && recurring_gap(pg.largest[0], p->runs, 0.5, &gap_offset, &median)) {
		*offset = gap_offset;
		tp->start_by = ITERATION_START_GAP;
		tp->start_gap_ns = median;
	} else if (!ret && (opt = optimizer_offset(pg.optimizer, p->dist)) >= 0) {
		*offset = opt;
		tp->start_by = ITERATION_START_OPTIMIZER;
	} else if (!ret && pg.copies_per[0] <= 0) {
		tp->period_unmarked = 1;
		for (int64_t m = 2; m <= PERIOD_MULTIPLE_MAX && p->runs / m >= PERIOD_MIN_RUNS; m++) {
			int gapped = recurring_gap(pg.largest[m - 1], p->runs / m, 0.75, &gap_offset, &median);

			if (!gapped && pg.copies_per[m - 1] <= 0)
				continue;
			if (gapped) {
				*offset = gap_offset;
				tp->start_by = ITERATION_START_GAP;
				tp->start_gap_ns = median;
			}
			tp->period_multiple = m;
			tp->period_unmarked = 0;
			p->dist *= m;
			p->runs /= m;
			break;
		}
	}
	free(token_optimizer);
	for (int m = 1; m <= PERIOD_MULTIPLE_MAX; m++)
		free(pg.largest[m - 1]);
	free(pg.optimizer);
	return ret;
}

/* The third read: when each iteration starts, at the kernels first + k * dist - offset, k = 0 ..
 * runs + 1 (the first and the last outside the run: they count only with the same kernel). */
struct cuts {
	const struct period *p;
	int64_t offset;
	int after_gap;
	int64_t *at, *name;	/* per k; name -1: not seen */
};

static void cut_zone(void *arg, int64_t pos, const struct period_op *kernel, int64_t gap, int64_t cut,
		     int64_t copies)
{
	struct cuts *c = arg;
	int64_t rel = pos + c->offset - c->p->first, k = rel / c->p->dist;

	(void)gap;
	(void)copies;
	if (rel < 0 || rel % c->p->dist || k > c->p->runs + 1)
		return;
	c->at[k] = c->after_gap ? cut : kernel->start;
	c->name[k] = kernel->name;
}

static int period_iterations(const struct analysis_context *ctx, struct trace_phases *tp,
			     const struct period *p, int64_t offset, char *err, size_t errlen)
{
	struct cuts c = { .p = p, .offset = offset, .after_gap = tp->start_by == ITERATION_START_GAP };
	int64_t runs = p->runs, first, end;
	struct fmt_text name;
	int ret;

	c.at = xcalloc((size_t)runs + 2, sizeof(*c.at));
	c.name = xmalloc(((size_t)runs + 2) * sizeof(*c.name));
	for (int64_t k = 0; k < runs + 2; k++)
		c.name[k] = -1;
	ret = scan_zones(ctx, tp->trace_id, p->first + (runs + 1) * p->dist - offset, cut_zone, &c, err, errlen);
	if (!ret && c.name[runs] < 0)
		ret = -EIO;	/* the trace changed under us: the run's kernels are gone */
	if (ret < 0) {
		if (ret == -EIO)
			snprintf(err, errlen, "the kernel sequence changed between two reads of the trace");
		goto out;
	}
	/* Before the run, the kernel at the offset may not be the same: the first iteration then starts
	   at the next cut, and what precedes it is warm-up. */
	first = c.name[0] == c.name[runs] ? 0 : 1;
	for (int64_t k = first; k < runs; k++)
		add_iteration(tp, c.at[k], c.at[k + 1]);
	/* The last is as long as the others on average, unless the next one begins after it. */
	end = c.name[runs + 1] == c.name[runs] ? c.at[runs + 1]
					       : c.at[runs] + (c.at[runs] - c.at[first]) / (runs - first);
	add_iteration(tp, c.at[runs], end);
	tp->source = ITERATIONS_KERNELS;
	tp->period_ops = p->dist;
	tp->source_name = xstrdup(fmt_kernel_name(&name, ctx->trace, tp->trace_id, c.name[runs]));
out:
	free(c.at);
	free(c.name);
	return ret;
}

int find_kernel_period(const struct analysis_context *ctx, struct trace_phases *tp,
		       int64_t *last_first_end, char *err, size_t errlen)
{
	struct kernel_tokens k = { 0 };
	size_t best = SIZE_MAX;
	int64_t offset = 0;
	int ret;

	*last_first_end = INT64_MIN;
	tp->warmup_until = INT64_MIN;
	ret = read_tokens(ctx, tp, &k, last_first_end, err, errlen);
	/* Without iterations, the warm-up lasts until the last first launch if that is early; when most
	 * launches are first launches (every kernel runs about once: JIT-compiled fusions, a test),
	 * nothing repeats and all of it is warm-up. */
	if (k.pos && *last_first_end - k.first_start <= (k.last_end - k.first_start) / 2)
		tp->warmup_until = *last_first_end;
	else if (k.pos && (int64_t)k.index.count * 2 > k.pos)
		tp->warmup_until = INT64_MAX;
	if (!ret)
		best = best_token(&k);
	if (!ret && best != SIZE_MAX) {
		struct period p = { .first = k.tokens[best].best_pos, .dist = k.tokens[best].best_dist,
				    .runs = k.tokens[best].best_run };

		ret = choose_start(ctx, tp, &k, &p, &offset, err, errlen);
		if (!ret)
			ret = period_iterations(ctx, tp, &p, offset, err, errlen);
	}
	key_index_release(&k.index);
	free(k.tokens);
	free(k.names);
	return ret;
}
