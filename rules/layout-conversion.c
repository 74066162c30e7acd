/*
 * layout-conversion: the cost of keeping a conv net's tensors in NCHW (PyTorch's default memory
 * format) where cuDNN works in NHWC, as one finding with the one fix, channels_last (issue 38).
 * On Hopper cuDNN runs its convolutions on NHWC kernels whatever the tensors' layout, and converts
 * every NCHW activation and gradient on the way in and out (nchwToNhwcKernel, nhwcToNchwKernel);
 * batch norm and pooling then run their NCHW kernels (bn_*_1C11_*, *_nchw), slower than the NHWC
 * ones channels_last gets.
 *
 * Recoverable time, an estimate: the conversion kernels' time, plus the NCHW batch-norm and pooling
 * kernels' time times (1 - nhwc_pct / 100), nhwc_pct being what their NHWC twins took in the same
 * model: on resnet50 training on the H200 (tests/gpu/busy/advice.py conv nchw|cl, 2026-12-02)
 * 1.86 ms of conversions and 5.68 ms of NCHW batch norm and pooling per step (3.54 ms in NHWC,
 * 62%) give 4.1 ms against 3.8 ms measured (18.47 -> 14.66 ms per step, untraced). These
 * nanoseconds are this rule's alone: small-grid leaves the conversions (and, in a program that
 * converts, the NCHW kernels) out, and tensor-idle and small-grid no longer advise channels_last.
 *
 * Replayed (docs/what-if.md): the conversions removed, their launches and the host time that prepared
 * them included, the NCHW kernels at nhwc_pct; on the same resnet50 trace 2.56 ms a step.
 */
#include "rules/program-state.h"
#include "rules/rule-util.h"

#include <inttypes.h>
#include <stdio.h>

static const struct rule_param params[] = {
	{ "nhwc_pct", 60, "%",
	  "the time NHWC batch norm and pooling take against their NCHW twins (resnet50, H200: 62%)" },
	{ "min_gpu_pct", 2, "%", "report when the estimate reaches this share of the kernel time" },
};

static const char fix_text[] =
	"Keep the conv net in channels_last (NHWC), the layout cuDNN computes in: "
	"model = model.to(memory_format=torch.channels_last) and the same for each input batch "
	"(x = x.to(memory_format=torch.channels_last), or in the DataLoader's collate). The conversions "
	"disappear, and batch norm and pooling run their NHWC kernels.";

static struct finding *report(const struct rule *rule, struct rule_context *ctx, const struct program_state *p,
			      int64_t saving, int64_t nchw_saving, const struct span_clock *clock)
{
	int64_t span = span_clock_total_span(clock);
	struct fmt_text t1, t2, t3;
	struct finding *f;

	f = findings_add(ctx->out, rule, rule_severity(saving, span), saving, fix_text,
			 "the conv net's tensors are NCHW: cuDNN converted them to NHWC and back %" PRId64
			 " times (%s, %s of kernel time), and batch norm and pooling ran their NCHW kernels",
			 p->layout_launches, fmt_duration(&t1, p->layout_ns),
			 fmt_percent(&t2, p->kernel_ns ? (double)p->layout_ns / (double)p->kernel_ns : 0));
	f->owner = OWNER_CUDNN;
	if (clock->ntraces == 1) {
		f->start = clock->span_start[0];
		f->end = clock->span_end[0];
	}
	finding_evidence(f, "layout conversions (nchwToNhwcKernel, nhwcToNchwKernel): %" PRId64 " launches, %s",
			 p->layout_launches, fmt_duration(&t1, p->layout_ns));
	finding_evidence(f, "NCHW batch norm and pooling kernels: %s; in NHWC they would take about %.0f%% of "
			 "that, %s less", fmt_duration(&t1, p->nchw_ns), rule_param(ctx, rule, "nhwc_pct"),
			 fmt_duration(&t3, nchw_saving));
	program_state_evidence(f, p);
	return f;
}

/* The fix as replayed: the conversions gone, the NCHW kernels at their NHWC twins' share. */
static double replayed_factor(const char *name, void *arg)
{
	return program_layout_kernel(name) ? 0 : program_nchw_kernel(name) ? *(const double *)arg : -1;
}

static int layout_conversion_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen)
{
	double keep = rule_param(ctx, rule, "nhwc_pct") / 100.0;
	struct program_state p;
	struct span_clock clock = {0};
	int64_t saving, nchw_saving;
	struct finding *f = NULL;
	int ret = program_state_read(ctx, &p, err, errlen);

	if (ret < 0 || !p.layout_launches)
		return ret;
	nchw_saving = (int64_t)((double)p.nchw_ns * (1.0 - (keep < 1.0 ? keep : 1.0)));
	saving = p.layout_ns + nchw_saving;
	if ((double)saving * 100.0 < rule_param(ctx, rule, "min_gpu_pct") * (double)p.kernel_ns)
		return 0;
	ret = span_clock_init(&clock, &ctx->an, err, errlen);
	if (ret >= 0)
		f = report(rule, ctx, &p, saving, nchw_saving, &clock);
	if (f && clock.ntraces == 1) {	/* a replay is one trace's */
		struct what_if_fix *fix;

		keep = keep < 1.0 ? keep : 1.0;
		ret = rule_kernels_fix(ctx, 0, replayed_factor, &keep, &fix, err, errlen);
		if (ret >= 0)
			finding_what_if(f, fix);
	}
	span_clock_release(&clock);
	return ret < 0 ? ret : 0;
}

const struct rule rule_layout_conversion = {
	.id = "layout-conversion",
	.title = "NCHW tensors that cuDNN converts to NHWC and back",
	.measures = "cuDNN's NCHW/NHWC conversion kernels and the NCHW batch-norm and pooling kernels, and "
		    "what channels_last would save",
	.params = params,
	.nparams = sizeof(params) / sizeof(params[0]),
	.run = layout_conversion_run,
};
