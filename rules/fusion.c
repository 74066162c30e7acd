/*
 * fusion: runs of memory-bound element-wise, reduction, normalization and cast kernels launched one
 * after the other on a stream, each of which streams its inputs from DRAM and writes its output
 * back, where one fused kernel would read the inputs and write the outputs once. PyTorch's eager
 * mode does this for every line of arithmetic, and TorchInductor (torch.compile) fuses exactly
 * these runs: the element-wise ops, reductions (mean, sum, norm), dtype casts, rsqrt and the ops
 * between two matrix products (an RMSNorm became one triton_red_fused_..._mean_mul_pow_rsqrt
 * kernel, SwiGLU's silu * up one triton_poi_fused_mul_silu kernel; H200, tests/gpu/busy/advice.py).
 *
 * Which kernels: framework-owned element-wise, reduction, normalization and softmax kernels (ATen's
 * elementwise_kernel family, reduce_kernel, layer_norm and softmax kernels, CuPy's), told by name
 * and owner (analyzer/analysis/owner.h); a run is at least min_chain of them back to back on one
 * stream (no other operation between, gaps under max_gap_us), whatever their grids: a reduction's
 * grid is smaller than the element-wise kernels' around it, and Inductor fuses across it.
 *
 * Recoverable time, an estimate from the bytes moved: each member moves its bytes at the bandwidth
 * it reaches (its sampled DRAM bandwidth where GPU metrics cover it; otherwise, every member being
 * memory-bound, its bytes are its time at the best bandwidth the run reaches). Fused, the run reads
 * its inputs and writes its outputs once: at least what its widest member moves, and on the real
 * runs measured about that (docs/rules.md), so the fused kernel takes the widest member's bytes at
 * the best bandwidth the run's own kernels reach. Members shorter than min_kernel_us move little
 * (a mean's [tokens, 1] result, rsqrt over it): they are launch-bound and fused away whole. The
 * saving is the run's time less the fused kernel's.
 */
#include "analyzer/analysis/gaps.h"
#include "analyzer/analysis/kernel-efficiency.h"
#include "rules/kernel-groups.h"
#include "analyzer/analysis/owner.h"
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
	{ "min_chain", 2, "count", "fewest kernels in a run reported" },
	{ "min_kernel_us", 4, "us", "shorter members move little data: fused away whole, no bytes counted" },
	{ "max_gap_us", 20, "us", "longest idle gap between two kernels of one chain" },
	{ "min_gpu_pct", 5, "%", "report a device when the chains' saving reaches this share of its kernel time" },
};

/* The run being built on one stream. */
struct chain {
	int64_t trace_id, device;
	int64_t end;
	int64_t count, ns, longest;
	int64_t first_start;
	int64_t name_id;		/* its first kernel */
	enum kernel_owner owner;	/* of its first kernel */
	double max_bytes, best_gbps;	/* members with a sampled bandwidth: the widest, the fastest */
	int64_t longest_unsampled;	/* the longest memory-bound member without one */
};

struct device_fusion {
	struct rule_device key;
	int64_t kernel_ns;
	int64_t chains, chained_kernels, chained_ns, saving, fused_ns;
	int64_t longest_chain, first, last, best_saving;
	int64_t sampled_chains;		/* of which fused from sampled bytes */
	enum kernel_owner owner;	/* owner of the kernels in the largest-saving run */
};

struct fusion_state {
	struct rule_context *ctx;
	int64_t min_chain, min_kernel_ns, max_gap_ns;
	struct key_index stream_index, device_index, name_index, bandwidth_index;
	struct chain *chains;		/* by stream_index */
	size_t nchains;
	struct device_fusion *devices;
	size_t ndevices;
	signed char *candidate;		/* by name_index: 1 a fusible kernel, 0 not */
	enum kernel_owner *owner;	/* by name_index */
	const char **names;		/* by name_index */
	size_t nnames;
	double *gbps;			/* by bandwidth_index (name, blocks): sampled GB/s, NaN: none */
	size_t ngbps;
	struct kernel_efficiencies *metrics;	/* NULL: the trace has no GPU metrics */
	struct kernel_groups kernels;	/* the kernels in runs, weighted by their time there */
};

static int fusible(const char *name)
{
	static const char *const marks[] = { "elementwise_kernel", "reduce_kernel", "layer_norm",
					     "rms_norm", "softmax", "SoftMax", "cupy_" };

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (strstr(name, marks[i]))
			return 1;
	return 0;
}

static size_t name_slot(struct fusion_state *s, int64_t trace_id, int64_t name_id)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, name_id };
	int created;
	size_t i = key_index_get(&s->name_index, key, &created);

	if (created) {
		const char *name = NULL;
		char err[256];
		enum kernel_owner owner;

		if (trace_string(s->ctx->an.trace, trace_id, name_id, &name, err, sizeof(err)) < 0)
			name = NULL;
		owner = kernel_owner(name);
		s->candidate = xrealloc(s->candidate, (i + 1) * sizeof(*s->candidate));
		s->owner = xrealloc(s->owner, (i + 1) * sizeof(*s->owner));
		s->names = xrealloc(s->names, (i + 1) * sizeof(*s->names));
		s->candidate[i] = name && (owner == OWNER_ATEN || owner == OWNER_CUPY) && fusible(name);
		s->owner[i] = owner;
		s->names[i] = name;
		s->nnames = i + 1;
	}
	return i;
}

static struct device_fusion *device_get(struct fusion_state *s, int64_t trace_id, int64_t device)
{
	return rule_device_get(&s->device_index, trace_id, device, &s->devices, &s->ndevices,
			       sizeof(*s->devices), NULL);
}

static void kernel_add(struct fusion_state *s, int64_t trace_id, int64_t device, int64_t name_id, int64_t ns)
{
	struct kernel_group *k = kernel_groups_get(&s->kernels, trace_id, device, name_id, NULL);

	k->launches++;
	k->ns += ns;
	k->weight += (double)ns;
}

/* The DRAM bandwidth sampled over a kernel (by name and grid), GB/s; NaN where not sampled. */
static double sampled_gbps(struct fusion_state *s, int64_t trace_id, size_t name, int64_t blocks)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, (int64_t)name, blocks };
	int created;
	size_t i = key_index_get(&s->bandwidth_index, key, &created);

	if (created) {
		double gbps = NAN;

		for (size_t k = 0; s->metrics && s->names[name] && k < s->metrics->count; k++) {
			const struct kernel_efficiency *e = &s->metrics->kernels[k];

			if (e->bound != KERNEL_BOUND_UNKNOWN && !isnan(e->dram_gbps) && e->dram_gbps > 0 &&
			    e->grid[0] * e->grid[1] * e->grid[2] == blocks && !strcmp(e->name, s->names[name])) {
				gbps = e->dram_gbps;
				break;
			}
		}
		s->gbps = xrealloc(s->gbps, (i + 1) * sizeof(*s->gbps));
		s->gbps[i] = gbps;
		s->ngbps = i + 1;
	}
	return s->gbps[i];
}

/* The fused kernel's time: the widest member's bytes at the best bandwidth the run reaches. */
static int64_t fused_ns(const struct chain *c)
{
	double ns = (double)c->longest_unsampled;

	if (c->best_gbps > 0 && c->max_bytes / c->best_gbps > ns)
		ns = c->max_bytes / c->best_gbps;	/* bytes / (GB/s) = ns */
	if (ns <= 0)
		ns = (double)c->longest;	/* only launch-bound members: one kernel still runs */
	return (int64_t)ns;
}

/* A run ends: count it when it is long enough. */
static void chain_close(struct fusion_state *s, struct device_fusion *d, struct chain *c)
{
	int64_t fused = fused_ns(c), saving = c->ns - fused;

	if (c->count >= s->min_chain && saving > 0) {
		if (!d->chains || c->first_start < d->first)
			d->first = c->first_start;
		if (c->end > d->last)
			d->last = c->end;
		d->chains++;
		d->chained_kernels += c->count;
		d->chained_ns += c->ns;
		d->saving += saving;
		d->fused_ns += fused;
		d->sampled_chains += c->best_gbps > 0;
		if (c->count > d->longest_chain)
			d->longest_chain = c->count;
		if (saving > d->best_saving) {
			d->best_saving = saving;
			d->owner = c->owner;
		}
	}
	c->count = 0;
}

/* A member joins the run: its bytes where its bandwidth was sampled, else its time. */
static void chain_add(struct fusion_state *s, struct chain *c, size_t name, int64_t blocks, int64_t ns)
{
	double gbps;

	c->count++;
	c->ns += ns;
	if (ns > c->longest)
		c->longest = ns;
	if (ns < s->min_kernel_ns)
		return;
	gbps = sampled_gbps(s, c->trace_id, name, blocks);
	if (isnan(gbps)) {
		if (ns > c->longest_unsampled)
			c->longest_unsampled = ns;
		return;
	}
	if (gbps * (double)ns > c->max_bytes)
		c->max_bytes = gbps * (double)ns;
	if (gbps > c->best_gbps)
		c->best_gbps = gbps;
}

static int on_op(const struct gap *g, void *arg)
{
	struct fusion_state *s = arg;
	int64_t key[KEY_INDEX_WORDS] = { g->trace_id, g->device, g->stream };
	int64_t ns = g->next_end - g->next_start;
	struct device_fusion *d = device_get(s, g->trace_id, g->device);
	size_t name = 0;
	struct chain *c;
	int created, fits;
	size_t i = rule_slot(&s->stream_index, key, &s->chains, &s->nchains, sizeof(*s->chains), &created);

	if (created) {
		s->chains[i].trace_id = g->trace_id;
		s->chains[i].device = g->device;
	}
	c = &s->chains[i];
	if (g->next_op == GPU_OP_KERNEL) {
		d->kernel_ns += ns;
		name = name_slot(s, g->trace_id, g->next_name_id);
	}
	fits = g->next_op == GPU_OP_KERNEL && s->candidate[name];
	if (c->count && (!fits || g->next_start - c->end > s->max_gap_ns))
		chain_close(s, d, c);
	if (!fits)
		return 0;
	if (!c->count) {
		c->first_start = g->next_start;
		c->name_id = g->next_name_id;
		c->owner = s->owner[name];
		c->ns = c->longest = c->longest_unsampled = 0;
		c->max_bytes = c->best_gbps = 0;
	}
	chain_add(s, c, name, g->next_blocks, ns);
	c->end = g->next_end;
	kernel_add(s, g->trace_id, g->device, g->next_name_id, ns);
	return 0;
}

/* The lever, by what the program already does (program-state.h). */
static const char *fix_text(enum kernel_owner owner, const struct program_state *p)
{
	if (owner == OWNER_CUPY)
		return "Fuse the run into one kernel: cupy.fuse() or a cupy.ElementwiseKernel for the whole "
		       "expression, so the arrays are read and written once.";
	if (program_compiled(p))
		return "Part of this program is already compiled (it runs Triton kernels), but these runs "
		       "are eager ATen kernels: extend torch.compile to the code that launches them (a "
		       "module or function left out, or a graph break: torch._dynamo.explain(fn)(*args) "
		       "lists the breaks and their reasons), so Inductor fuses them too.";
	return "Let a compiler fuse each run into one kernel: wrap the model or the function that does "
	       "this arithmetic in torch.compile (TorchInductor emits one Triton kernel per run that "
	       "reads each input and writes the result once, normalizations and casts included). "
	       "Otherwise write the fused kernel by hand (Triton or CUDA C).";
}

static void kernel_line(struct finding *f, struct rule_context *ctx, const void *record)
{
	const struct kernel_group *k = record;
	struct fmt_text t1, t2;

	finding_evidence(f, "%s: %" PRId64 " launch%s in chains, %s",
			 fmt_kernel_name(&t1, ctx->an.trace, k->trace_id, k->name_id), k->launches,
			 plural_es(k->launches), fmt_duration(&t2, k->ns));
}

/* A device whose chains' saving reaches min_gpu_pct of its kernel time. */
static int wanted(const struct rule *rule, struct rule_context *ctx, const void *record)
{
	const struct device_fusion *d = record;
	double min_gpu_pct = rule_param(ctx, rule, "min_gpu_pct");

	return d->chains && (double)d->saving * 100.0 >= min_gpu_pct * (double)d->kernel_ns;
}

static void report_device(const struct rule *rule, struct rule_context *ctx, void *state,
			  const void *record, const struct span_clock *clock)
{
	struct fusion_state *s = state;
	const struct device_fusion *d = record;
	int64_t trace_id = d->key.trace_id, device = d->key.device;
	struct program_state program;
	struct fmt_text t1, t2, t3;
	struct finding *f;
	char err[256];

	if (program_state_read(ctx, &program, err, sizeof(err)) < 0)
		memset(&program, 0, sizeof(program));
	f = findings_add(
	    ctx->out, rule, rule_severity(d->saving, span_clock_span(clock, trace_id)), d->saving,
	    fix_text(d->owner, &program),
	    "%s: %" PRId64
	    " run%s of memory-bound %s element-wise and reduction kernels (%s, %s of "
	    "kernel time) each stream their tensors through DRAM again",
	    fmt_device(&t1, ctx->an.trace, trace_id, device), d->chains, plural(d->chains),
	    kernel_owner_name(d->owner), fmt_duration(&t2, d->chained_ns),
	    fmt_percent(&t3, d->kernel_ns ? (double)d->chained_ns / (double)d->kernel_ns : 0));
	f->device = (int32_t)device;
	f->owner = d->owner;
	f->start = d->first;
	f->end = d->last;
	/* the replay's fix: the chained kernels' names, each launch at the runs' fused share of its time
	 * (launches outside the runs too: the names do not tell them apart) */
	finding_what_if(f, kernel_groups_fix(&s->kernels, WHAT_IF_KERNELS, trace_id, device,
					     d->chained_ns ? (double)d->fused_ns / (double)d->chained_ns : 1.0));
	finding_evidence(f, "%" PRId64 " kernels in runs, the longest %" PRId64 " back to back; fused, each run "
			 "would read its inputs and write its outputs once: %s in all, the widest member's "
			 "bytes at the best bandwidth the run reaches (%s)",
			 d->chained_kernels, d->longest_chain, fmt_duration(&t1, d->fused_ns),
			 d->sampled_chains == d->chains ? "bandwidths sampled"
			 : d->sampled_chains ? "bandwidths sampled for some runs, the others by time"
					     : "no bandwidth sampled: bytes in proportion to time");
	kernel_groups_evidence(&s->kernels, f, ctx, trace_id, device, kernel_line, "kernel");
	program_state_evidence(f, &program);
}

static void state_free(struct fusion_state *s)
{
	if (!s)
		return;
	key_index_release(&s->stream_index);
	key_index_release(&s->device_index);
	key_index_release(&s->name_index);
	key_index_release(&s->bandwidth_index);
	kernel_groups_release(&s->kernels);
	kernel_efficiency_free(s->metrics);
	free(s->names);
	free(s->gbps);
	free(s->chains);
	free(s->devices);
	free(s->candidate);
	free(s->owner);
	free(s);
}

static int fusion_begin(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
			void **state, char *err, size_t errlen)
{
	struct fusion_state *s = xcalloc(1, sizeof(*s));
	int ret;

	s->ctx = ctx;
	ret = kernel_efficiency_compute(ctx->an.trace, 0, 0, &s->metrics, err, errlen);
	if (ret < 0) {
		state_free(s);
		*state = NULL;
		return ret;
	}
	kernel_groups_init(&s->kernels, sizeof(struct kernel_group));
	s->min_chain = (int64_t)rule_param(ctx, rule, "min_chain");
	s->min_kernel_ns = (int64_t)(rule_param(ctx, rule, "min_kernel_us") * 1e3);
	s->max_gap_ns = (int64_t)(rule_param(ctx, rule, "max_gap_us") * 1e3);
	*visitor = (struct gap_visitor){ .min_gap = 0, .fn = on_op, .arg = s };
	*state = s;
	return 0;
}

/* Chains still open when the walk ends. */
static void close_open_chains(struct fusion_state *s)
{
	for (size_t i = 0; i < s->nchains; i++) {
		struct chain *c = &s->chains[i];

		if (c->count)
			chain_close(s, device_get(s, c->trace_id, c->device), c);
	}
}

static int fusion_finish(const struct rule *rule, struct rule_context *ctx, void *state,
			 const struct gap_walk *walk, char *err, size_t errlen)
{
	struct fusion_state *s = state;
	int ret = 0;

	if (walk) {
		close_open_chains(s);
		kernel_groups_rank(&s->kernels);
		ret = rule_report_each(rule, ctx, s, s->devices, s->ndevices, sizeof(*s->devices),
				       wanted, report_device, err, errlen);
	}
	state_free(s);
	return ret;
}

const struct rule rule_fusion = {
	.id = "fusion",
	.title = "Element-wise runs that a fused kernel would stream once",
	.measures = "runs of memory-bound element-wise, reduction and cast kernels, and the DRAM passes a "
		    "fused kernel would save, from the bytes they move",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = fusion_begin,
	.finish = fusion_finish,
};
