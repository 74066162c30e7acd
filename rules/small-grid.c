/*
 * small-grid: kernels launched with fewer thread blocks (gridX * gridY * gridZ) than the device has
 * SMs, so some SMs have nothing to do while they run. The SM count comes from the trace's GPU table;
 * when the trace lacks it the sm_count parameter is used (132, an H100/H200 SXM) and the evidence
 * says so.
 *
 * Recoverable time, an upper bound: a launch of B blocks on S SMs leaves (1 - B/S) of the GPU idle,
 * so if the work spread over all SMs it would take B/S of the time, but no less than the shortest a
 * kernel runs at all (min_kernel_us): a 1.2 us element-wise kernel on 256 floats has one block and
 * would not run faster on 132; what it costs is its launch, which is small-kernels' finding. The
 * rule sums duration - max(duration * B/S, min_kernel_us) over such launches, and reports a device
 * when that reaches min_waste_pct of its kernel time, weighting each kernel by the GPU time it
 * actually takes.
 */
#include "analyzer/analysis/gaps.h"
#include "rules/kernel-groups.h"
#include "rules/program-state.h"
#include "rules/rule-util.h"

#include "common/key-index.h"
#include "common/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "sm_count", 132, "count", "SM count assumed when the trace does not record the device's" },
	{ "min_waste_pct", 5, "%",
	  "report a device when the SM time its small grids leave idle reaches this share of its "
	  "kernel time" },
	{ "min_kernel_us", 2, "us",
	  "the shortest a kernel runs however many blocks it has (an empty kernel takes 0.6 us on an H200, "
	  "an element-wise one on a few floats 1-2 us): no launch is counted as taking less" },
};

static const char gpus_sql[] =
	"SELECT traceId, id, MAX(smCount) FROM gpus WHERE smCount > 0 GROUP BY traceId, id";

struct device_grid {
	struct rule_device key;
	int64_t sms;
	int known;		/* sms comes from the trace */
	int64_t kernel_ns;
	double waste;
	int64_t launches;
	int64_t first, last;	/* first small-grid launch's start, last one's end */
};

/* One kernel name of one device: its small-grid launches, weighted by their idle SM time. */
struct small_kernel {
	struct kernel_group group;
	int64_t min_blocks, max_blocks;
	int layout;		/* a layout conversion, or an NCHW kernel of a program that converts: left out */
};

struct grid_state {
	struct rule_context *ctx;
	int64_t default_sms;
	double min_kernel_ns;
	struct key_index device_index;	/* (trace, device) -> devices[] */
	struct device_grid *devices;
	size_t ndevices;
	struct kernel_groups kernels;	/* struct small_kernel */
	int nchw;		/* cuDNN converts the program's NCHW tensors (program-state.h) */
};

static struct device_grid *device_get(struct grid_state *s, int64_t trace_id, int64_t device)
{
	int created;
	struct device_grid *d = rule_device_get(&s->device_index, trace_id, device, &s->devices,
						&s->ndevices, sizeof(*s->devices), &created);

	if (created)
		d->sms = s->default_sms;
	return d;
}

/* One operation of the walk: kernels' totals and small grids are summed here, per key. */
static int on_op(const struct gap *g, void *arg)
{
	struct grid_state *s = arg;
	int64_t trace_id = g->trace_id, device = g->device, name_id = g->next_name_id, blocks = g->next_blocks;
	int64_t start = g->next_start, end = g->next_end, ns = end - start;
	struct device_grid *d;
	struct small_kernel *k;
	double waste;
	int created;

	if (g->next_op != GPU_OP_KERNEL || blocks < 0)
		return 0;
	d = device_get(s, trace_id, device);
	d->kernel_ns += ns;
	if (blocks >= d->sms || d->sms <= 0)
		return 0;
	waste = (double)ns - fmax((double)ns * (double)blocks / (double)d->sms, s->min_kernel_ns);
	if (waste <= 0)
		return 0;
	k = kernel_groups_get(&s->kernels, trace_id, device, name_id, &created);
	if (created) {
		const char *name = NULL;
		char err[256];

		/* cuDNN's NCHW <-> NHWC conversions, and in a program that converts, its NCHW batch norm and
		 * pooling kernels (which channels_last replaces), are layout-conversion's time, not a grid
		 * to size: the two fixes would count those kernels twice. */
		if (trace_string(s->ctx->an.trace, trace_id, name_id, &name, err, sizeof(err)) < 0)
			name = NULL;
		k->layout = program_layout_kernel(name) || (s->nchw && program_nchw_kernel(name));
		k->min_blocks = k->max_blocks = blocks;
	}
	if (k->layout)
		return 0;
	if (blocks < k->min_blocks)
		k->min_blocks = blocks;
	if (blocks > k->max_blocks)
		k->max_blocks = blocks;
	k->group.launches++;
	k->group.ns += ns;
	k->group.weight += waste;
	if (!d->launches || start < d->first)
		d->first = start;
	if (end > d->last)
		d->last = end;
	d->waste += waste;
	d->launches++;
	return 0;
}

static void kernel_line(struct finding *f, struct rule_context *ctx, const void *record)
{
	const struct small_kernel *k = record;
	struct fmt_text t1, t2, t3, t4;

	if (k->min_blocks == k->max_blocks)
		snprintf(t4.s, sizeof(t4.s), "%" PRId64 " blocks", k->min_blocks);
	else
		snprintf(t4.s, sizeof(t4.s), "%" PRId64 "-%" PRId64 " blocks", k->min_blocks,
			 k->max_blocks);
	finding_evidence(
	    f, "%s (%s): %" PRId64 " launch%s of %s, %s, idle SM time %s",
	    fmt_kernel_name(&t1, ctx->an.trace, k->group.trace_id, k->group.name_id),
	    kernel_owner_name(kernel_owner_of(ctx->an.trace, k->group.trace_id, k->group.name_id)),
	    k->group.launches, plural_es(k->group.launches), t4.s, fmt_duration(&t2, k->group.ns),
	    fmt_duration(&t3, (int64_t)k->group.weight));
}

/* A device whose small grids leave min_waste_pct of its kernel time idle. */
static int wanted(const struct rule *rule, struct rule_context *ctx, const void *record)
{
	const struct device_grid *d = record;
	double min_waste_pct = rule_param(ctx, rule, "min_waste_pct");

	return d->launches && d->waste * 100.0 >= min_waste_pct * (double)d->kernel_ns;
}

/* The fix as replayed: each kernel at what its launches would take spread over every SM (the waste
   gone), an upper bound as the rule's estimate is. */
static double replayed_factor(const void *record)
{
	const struct small_kernel *k = record;

	return k->group.ns > 0 ? 1.0 - k->group.weight / (double)k->group.ns : 1.0;
}

static void report_device(const struct rule *rule, struct rule_context *ctx, void *state,
			  const void *record, const struct span_clock *clock)
{
	struct grid_state *s = state;
	const struct device_grid *d = record;
	int64_t trace_id = d->key.trace_id, device = d->key.device;
	struct owner_weights owners = { 0 };
	size_t names = kernel_groups_owners(&s->kernels, ctx, trace_id, device, &owners);
	struct fmt_text t1, t2, t3;
	struct finding *f;

	f = findings_add(
	    ctx->out, rule, rule_severity((int64_t)d->waste, span_clock_span(clock, trace_id)),
	    (int64_t)d->waste,
	    owner_fix(
		&owners, FIX_GRID,
		"Give these kernels at least one block per SM: split the work finer (smaller "
		"tiles, split-K, more blocks per row), size grid-stride loops to the SM count, "
		"or run independent small kernels concurrently on separate streams."),
	    "%s: %" PRId64 " launch%s of %zu kernel%s use fewer blocks than its %" PRId64
	    " SMs, leaving up to %s of SM time idle",
	    fmt_device(&t1, ctx->an.trace, trace_id, device), d->launches, plural_es(d->launches),
	    names, plural((int64_t)names), d->sms, fmt_duration(&t2, (int64_t)d->waste));
	f->device = (int32_t)device;
	f->owner = owner_weights_top(&owners);
	f->start = d->first;
	f->end = d->last;
	if (d->known)
		finding_evidence(f, "SM count %" PRId64 " from the trace's GPU table", d->sms);
	else
		finding_evidence(f, "SM count unknown in this trace: assumed %" PRId64
				 " (small-grid.sm_count)", d->sms);
	finding_evidence(f, "idle SM time %s of %s kernel time (%s)", fmt_duration(&t1, (int64_t)d->waste),
			 fmt_duration(&t2, d->kernel_ns),
			 fmt_percent(&t3, d->kernel_ns ? d->waste / (double)d->kernel_ns : 0));
	owner_evidence(f, &owners, "idle SM time");
	kernel_groups_evidence(&s->kernels, f, ctx, trace_id, device, kernel_line, "kernel");
	finding_what_if(f, kernel_groups_fix_each(&s->kernels, trace_id, device, replayed_factor));
	if (f->what_if)
		f->what_if->at_most = 1;
}

static void state_free(struct grid_state *s)
{
	key_index_release(&s->device_index);
	kernel_groups_release(&s->kernels);
	free(s->devices);
	free(s);
}

/* A device's SM count from the trace's GPU table. */
static void gpu_row(sqlite3_stmt *row, void *arg)
{
	struct device_grid *d = device_get(arg, sqlite3_column_int64(row, 0),
					   sqlite3_column_int64(row, 1));

	d->sms = sqlite3_column_int64(row, 2);
	d->known = 1;
}

/* The SM counts first; then every kernel from the walk. */
static int small_grid_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
			    void **state, char *err, size_t errlen)
{
	struct grid_state *s = xcalloc(1, sizeof(*s));
	int ret;

	kernel_groups_init(&s->kernels, sizeof(struct small_kernel));
	s->ctx = ctx;
	s->default_sms = (int64_t)rule_param(ctx, rule, "sm_count");
	s->min_kernel_ns = rule_param(ctx, rule, "min_kernel_us") * 1e3;
	ret = analysis_query(&ctx->an, gpus_sql, gpu_row, s, err, errlen);
	if (ret >= 0) {
		struct program_state p;

		ret = program_state_read(ctx, &p, err, errlen);
		s->nchw = ret >= 0 && p.layout_launches > 0;
	}
	*visitor = (struct gap_visitor){ .min_gap = 0, .fn = on_op, .arg = s };
	if (ret < 0) {
		state_free(s);
		s = NULL;
	}
	*state = s;
	return ret;
}

static int small_grid_finish(const struct rule *rule, struct rule_context *ctx, void *state,
			     const struct gap_walk *walk, char *err, size_t errlen)
{
	struct grid_state *s = state;
	int ret = 0;

	if (walk) {
		kernel_groups_rank(&s->kernels);
		ret = rule_report_each(rule, ctx, s, s->devices, s->ndevices, sizeof(*s->devices),
				       wanted, report_device, err, errlen);
	}
	state_free(s);
	return ret;
}

const struct rule rule_small_grid = {
	.id = "small-grid",
	.title = "Grids smaller than the GPU",
	.measures = "kernels launched with fewer thread blocks than the device has SMs, weighted by "
		    "the GPU time they take",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = small_grid_begin,
	.finish = small_grid_finish,
};
