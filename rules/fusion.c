/*
 * fusion: chains of memory-bound element-wise and reduction kernels, launched one after the other on
 * a stream over tensors of one size, each of which streams its inputs from DRAM and writes its
 * output back, where one fused kernel would read the inputs and write the result once. PyTorch's
 * eager mode does this for every line of arithmetic: a chain of eleven element-wise ops over two
 * 256 MB tensors took 2.46 ms a step on an H100, the same chain under torch.compile (one Triton
 * kernel) 0.37 ms (tests/gpu/busy/fusion.py).
 *
 * Which kernels: framework-owned element-wise and reduction kernels (ATen's elementwise_kernel
 * family and reduce_kernel, CuPy's), told by name and owner (rules/owner.h); a chain is at least
 * min_chain of them back to back on one stream (no other operation between, gaps under
 * max_gap_us) with the same grid, i.e. over tensors of one size, each running at least
 * min_kernel_us (shorter ones are launch-bound: small-kernels' finding).
 *
 * Recoverable time, an estimate: a fused kernel still has to stream the data once, at least as much
 * as the chain's largest member does, so each chain could save its time minus its longest kernel.
 * It leans low where the chain reads few distinct tensors and high where it reads many.
 */
#include "rules/gaps.h"
#include "rules/kernel-groups.h"
#include "rules/owner.h"
#include "rules/rule-util.h"

#include "common/key-index.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rule_param params[] = {
	{ "min_chain", 3, "count", "shortest chain of element-wise kernels reported" },
	{ "min_kernel_us", 10, "us", "shortest kernel counted in a chain (shorter ones are launch-bound)" },
	{ "max_gap_us", 20, "us", "longest idle gap between two kernels of one chain" },
	{ "min_gpu_pct", 5, "%", "report a device when the chains' saving reaches this share of its kernel time" },
};

/* The chain being built on one stream. */
struct chain {
	int64_t trace_id, device;
	int64_t blocks, end;
	int64_t count, ns, longest;
	int64_t first_start;
	int64_t name_id;		/* its first kernel */
};

struct device_fusion {
	struct rule_device key;
	int64_t kernel_ns;
	int64_t chains, chained_kernels, chained_ns, saving;
	int64_t longest_chain, first, last;
	enum kernel_owner owner;	/* owner of the kernels in the largest-saving chain */
};

struct fusion_state {
	struct rule_context *ctx;
	int64_t min_chain, min_kernel_ns, max_gap_ns;
	struct key_index stream_index, device_index, name_index;
	struct chain *chains;		/* by stream_index */
	size_t nchains;
	struct device_fusion *devices;
	size_t ndevices;
	signed char *candidate;		/* by name_index: 1 a chainable kernel, 0 not */
	enum kernel_owner *owner;	/* by name_index */
	size_t nnames;
	struct kernel_groups kernels;	/* the kernels in chains, weighted by their time there */
};

static int elementwise(const char *name)
{
	static const char *const marks[] = { "elementwise_kernel", "reduce_kernel", "cupy_" };

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

		if (trace_string(s->ctx->trace, trace_id, name_id, &name, err, sizeof(err)) < 0)
			name = NULL;
		owner = kernel_owner(name);
		s->candidate = xrealloc(s->candidate, (i + 1) * sizeof(*s->candidate));
		s->owner = xrealloc(s->owner, (i + 1) * sizeof(*s->owner));
		s->candidate[i] = name && (owner == OWNER_ATEN || owner == OWNER_CUPY) && elementwise(name);
		s->owner[i] = owner;
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

/* A chain ends: count it when it is long enough. */
static void chain_close(struct fusion_state *s, struct device_fusion *d, struct chain *c, enum kernel_owner owner)
{
	int64_t saving = c->ns - c->longest;

	if (c->count >= s->min_chain && saving > 0) {
		if (!d->chains || c->first_start < d->first)
			d->first = c->first_start;
		if (c->end > d->last)
			d->last = c->end;
		d->chains++;
		d->chained_kernels += c->count;
		d->chained_ns += c->ns;
		d->saving += saving;
		if (c->count > d->longest_chain) {
			d->longest_chain = c->count;
			d->owner = owner;
		}
	}
	c->count = 0;
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
	fits = g->next_op == GPU_OP_KERNEL && s->candidate[name] && ns >= s->min_kernel_ns;
	if (c->count && (!fits || g->next_blocks != c->blocks || g->next_start - c->end > s->max_gap_ns))
		chain_close(s, d, c, s->owner[name]);
	if (!fits)
		return 0;
	if (!c->count) {
		c->blocks = g->next_blocks;
		c->first_start = g->next_start;
		c->name_id = g->next_name_id;
		c->ns = c->longest = 0;
	}
	c->count++;
	c->ns += ns;
	if (ns > c->longest)
		c->longest = ns;
	c->end = g->next_end;
	kernel_add(s, g->trace_id, g->device, g->next_name_id, ns);
	return 0;
}

static const char *fix_text(enum kernel_owner owner)
{
	if (owner == OWNER_CUPY)
		return "Fuse the chain into one kernel: cupy.fuse() or a cupy.ElementwiseKernel for the whole "
		       "expression, so the arrays are read and written once.";
	return "Let a compiler fuse the chain into one kernel: wrap the function that does this "
	       "arithmetic in torch.compile (TorchInductor emits one Triton kernel that reads each "
	       "input and writes the result once); for optimizer updates use fused=True or foreach=True. "
	       "Otherwise write the fused kernel by hand (Triton or CUDA C).";
}

static void kernel_line(struct finding *f, struct rule_context *ctx, const void *record)
{
	const struct kernel_group *k = record;
	struct rule_text t1, t2;

	finding_evidence(f, "%s: %" PRId64 " launch%s in chains, %s",
			 rule_kernel_name(&t1, ctx, k->trace_id, k->name_id), k->launches,
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
			  const void *record, const struct rule_clock *clock)
{
	struct fusion_state *s = state;
	const struct device_fusion *d = record;
	int64_t trace_id = d->key.trace_id, device = d->key.device;
	struct rule_text t1, t2, t3;
	struct finding *f;

	f = findings_add(ctx->out, rule, rule_severity(d->saving, rule_clock_span(clock, trace_id)), d->saving,
			 fix_text(d->owner),
			 "%s: %" PRId64 " chain%s of memory-bound %s element-wise kernels (%s, %s of kernel "
			 "time) each stream the same-sized tensors through DRAM again",
			 fmt_device(&t1, ctx, trace_id, device), d->chains, plural(d->chains),
			 kernel_owner_name(d->owner), fmt_duration(&t2, d->chained_ns),
			 fmt_percent(&t3, d->kernel_ns ? (double)d->chained_ns / (double)d->kernel_ns : 0));
	f->device = (int32_t)device;
	f->owner = d->owner;
	f->start = d->first;
	f->end = d->last;
	finding_evidence(f, "%" PRId64 " kernels in chains, the longest %" PRId64 " back to back; fused, each "
			 "chain would still take about as long as its longest kernel",
			 d->chained_kernels, d->longest_chain);
	kernel_groups_evidence(&s->kernels, f, ctx, trace_id, device, kernel_line, "kernel");
}

static void state_free(struct fusion_state *s)
{
	if (!s)
		return;
	key_index_release(&s->stream_index);
	key_index_release(&s->device_index);
	key_index_release(&s->name_index);
	kernel_groups_release(&s->kernels);
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

	(void)err;
	(void)errlen;
	s->ctx = ctx;
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

		if (c->count) {
			size_t name = name_slot(s, c->trace_id, c->name_id);

			chain_close(s, device_get(s, c->trace_id, c->device), c, s->owner[name]);
		}
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
	.title = "Element-wise chains that a fused kernel would stream once",
	.measures = "chains of memory-bound element-wise kernels over same-sized tensors, and the DRAM "
		    "passes a fused kernel would save",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = rule_walk_run,
	.begin = fusion_begin,
	.finish = fusion_finish,
};
