/*
 * The HTML report's own data and its renderers (private to the files of report/html/ and
 * analyzer/report/report.c).
 *
 * The page renders the same struct report_header and struct findings as the text, Markdown and JSON
 * reports; what those do not hold (per-stream busy time at pixel scale, top kernels, copies by
 * kind, idle gaps by length) is struct report_charts, read from the canonical views in a few
 * aggregating passes whose memory grows with the number of streams, kernel names and pixels, never
 * with the number of events (data.c). overview.c draws the overview timeline, utilization.c the GPU
 * utilization chart under its lanes and what bounds the GPU (traces with GPU metrics), page.c the
 * rest of the page.
 */
#ifndef GPT_REPORT_HTML_HTML_H
#define GPT_REPORT_HTML_HTML_H

#include "analyzer/report/report.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CHART_BUCKETS 1000	/* pixels across a timeline: busy time is merged at this scale */
#define CHART_WINDOWS 2		/* the whole span, and the steady state zoomed */
#define CHART_TOP_KERNELS 20
#define CHART_LANES_MAX 128	/* streams drawn apart; more are merged into one lane per device */
#define CHART_GAP_BINS 23	/* idle gaps by length: < 1 us, 1-2-5 steps up to 10 s, >= 10 s */

enum chart_work {
	CHART_COMPUTE = 0,	/* kernels other than NCCL's */
	CHART_COMM,		/* NCCL kernels */
	CHART_COPY,		/* copies and memsets */
};
#define CHART_WORKS 3

/* A time window cut into CHART_BUCKETS equal buckets. */
struct chart_window {
	int64_t start, end;	/* end - start == width * CHART_BUCKETS, end covers the window asked */
	int64_t width;		/* ns per bucket, at least 1 */
};

/* One stream (or the merged rest of a device's streams, stream == -1). */
struct chart_lane {
	int64_t trace_id, device, stream;
	int64_t ops, busy_ns;			/* its operations and the sum of their times */
	int64_t (*busy[CHART_WINDOWS])[CHART_WORKS];	/* per bucket, ns of each kind of work */
};

/* One device of one trace: the union of its streams' work, and the gaps in it. */
struct chart_device {
	int64_t trace_id, device;
	int64_t first, last;		/* first operation's start, last one's end */
	int64_t busy_ns, idle_ns;	/* busy: union of operations; idle: last - first - busy */
	int64_t gaps;
	int64_t *idle[CHART_WINDOWS];	/* per bucket, idle ns between first and last */
};

struct chart_kernel {
	char *name;
	int64_t count, total_ns, min_ns, max_ns;
	double median_ns;		/* as gpt-trace stats: the mean of the two middle values */
};

/* Copies by (copyKind, srcKind, dstKind); memsets with copy_kind -1 and their memKind as src_kind. */
struct chart_copy {
	int64_t copy_kind, src_kind, dst_kind;	/* -1: NULL */
	int64_t count, bytes, total_ns;
};

struct chart_gap_bin {
	int64_t lo_ns, hi_ns;		/* [lo, hi); hi 0 for the last bin */
	int64_t count, ns;
};

/* The sampled GPU metrics drawn as a device's utilization chart (utilization.c). */
enum chart_util_metric {
	UTIL_SM,		/* SMs active: share of the SMs holding a warp */
	UTIL_TENSOR,		/* tensor pipes active */
	UTIL_DRAM_READ,		/* DRAM read bandwidth, share of peak */
	UTIL_DRAM_WRITE,
	UTIL_PCIE_RX,		/* PCIe received by the GPU, share of the link's peak */
	UTIL_PCIE_TX,
};
#define UTIL_METRICS 6

/* One device's GPU metrics (gpt-trace run --gpu-metrics), per bucket of each window. */
struct chart_util {
	int64_t trace_id, device;
	int64_t first, last;		/* the sampled range: the first sample's start, the last one's end */
	int64_t samples, period_ns;	/* how many, and the median sampling period */
	int present[UTIL_METRICS];	/* some sample holds the metric */
	/* per bucket, percent: the time-weighted mean of the samples over the part of the bucket in
	   [first, last), time without a stored sample (the GPU was idle) counting 0; NaN outside it */
	float (*pct[CHART_WINDOWS])[UTIL_METRICS];
};

struct kernel_efficiencies;

struct report_charts {
	struct chart_window windows[CHART_WINDOWS];
	size_t nwindows;		/* 0 without GPU work; 2 when the steady state is worth zooming */
	struct chart_lane *lanes;	/* by trace, device, stream */
	size_t nlanes;
	struct chart_device *devices;	/* by trace, device */
	size_t ndevices;
	struct chart_kernel *kernels;	/* the CHART_TOP_KERNELS with most total time, most first */
	size_t nkernels;
	int64_t kernel_names, kernel_ns;	/* every kernel name, every kernel's time */
	struct chart_copy *copies;	/* most total time first */
	size_t ncopies;
	struct chart_gap_bin gap_bins[CHART_GAP_BINS];
	struct chart_util *utils;	/* devices drawn with GPU metrics, by trace and device; none without */
	size_t nutils;
	struct kernel_efficiencies *bounds;	/* kernel time by what bounds it; NULL without GPU metrics */
	int64_t bounds_start, bounds_end;	/* its window: the steady state; both 0: the whole scope */
};

/* report_charts_read() is in report.h; report_header_release() frees with this (NULL is fine). */
void report_charts_free(struct report_charts *charts);

/* For the cross-rank page: only the lanes and devices (busy and idle time per bucket), over windows
   on the trace's clock (at most CHART_WINDOWS). Free *out with report_charts_free(). */
int report_charts_read_windows(struct trace *trace, const struct chart_window *windows, size_t nwindows,
			       struct report_charts **out, char *err, size_t errlen);
/* [start, end) cut into CHART_BUCKETS buckets of a whole number of ns (end rounded up). */
struct chart_window html_chart_window(int64_t start, int64_t end);

/* The page; charts may be NULL (then only what the header and findings hold is drawn). */
void report_write_html(FILE *out, const struct report_header *hdr, const struct findings *findings,
		       const struct report_options *opt);

/* ---- shared by the renderers ---- */

void html_text(FILE *out, const char *s);			/* s escaped for text and attributes */
const char *html_time(int64_t origin, int64_t t, char *buf, size_t len);	/* "+1.234 ms" from origin */
const char *html_at(const struct report_header *hdr, int64_t t, char *buf, size_t len); /* from hdr's origin */
const char *html_short(int64_t ns, char *buf, size_t len);	/* 3 digits at most: "500 us", "1.23 ms" */
const char *html_work_color(int work);
const char *html_idle_color(int kind);
const char *html_idle_words(int kind);				/* "blocked in a sync", ... */
const char *html_copy_label(const struct chart_copy *c, char *buf, size_t len);
int html_copy_pageable(const struct chart_copy *c);
/* A long C++ kernel name as its head and tail ("void at::native::...::LerpFunctor<float>, float)"). */
void html_kernel_name(FILE *out, const char *name);

void html_write_timeline(FILE *out, const struct report_header *hdr, const struct findings *findings);

/* ---- the frame both pages share (frame.c) ---- */

/* From <!DOCTYPE> to </head>: the style sheet, then more_css (NULL: none); title escaped here. */
void html_write_head(FILE *out, const char *title, const char *more_css);
void html_swatch(FILE *out, const char *color, const char *label);	/* a legend entry */
void html_write_notes(FILE *out, char *const *notes, size_t n);	/* a "Note:" paragraph each */
const char *html_severity_word(enum finding_severity s);
int64_t html_nice_step(int64_t range, int ticks);	/* a 1-2-5 step giving about ticks ticks */
/* The findings as cards (<section id="findings">); times from origin, per iteration when
   steady_iterations > 0. */
void html_write_findings(FILE *out, int64_t origin, int64_t steady_iterations, const struct findings *findings);

/* ---- the timeline's rows, drawn by the single-trace page and the cross-rank one (overview.c) ---- */

#define TL_W 1200
#define TL_LEFT 190	/* lane labels */
#define TL_AXIS 24
#define ROW_TRACE 20
#define ROW_STEPS 14
#define ROW_LANE 16

/* One timeline SVG being drawn, row by row from the top. */
struct html_timeline {
	FILE *out;
	int64_t origin;			/* times are labelled from it: "+1.234 ms" */
	const struct chart_window *w;
	size_t wi;			/* w's index in the lanes' windows */
	int y, height;			/* the next row's top; the SVG's height (the grid lines') */
};

/* An iteration on a steps row. */
struct html_step {
	int64_t start, end;
	int64_t number;			/* as labelled: "iteration #3" */
	int warmup;
	int64_t late_ns;		/* > 0: its rank was the straggler, the others waited this long */
};

double html_timeline_x(const struct html_timeline *tl, int64_t t);
void html_timeline_label(struct html_timeline *tl, int height, const char *text, const char *cls);
void html_timeline_axis(struct html_timeline *tl);	/* ticks and grid lines; the first row */
/* words: the row's label; noun: one step's ("iteration", "step") */
void html_timeline_steps(struct html_timeline *tl, const struct html_step *steps, size_t n, const char *words,
			 const char *noun);
/* A lane's busy time in window tl->wi, coloured by the work that dominates each pixel. */
void html_timeline_lane(struct html_timeline *tl, const struct chart_lane *l, const char *text);

/* ---- GPU utilization under the timeline, and what bounds the GPU (utilization.c) ---- */

/*
 * Into charts, once its windows and devices are read: each device's GPU metrics per bucket of each
 * window, and the kernel time by what bounds it (analyzer/analysis/kernel-efficiency.h) over hdr's
 * steady state (the whole scope when a scope was given or nothing repeats). Nothing when the trace
 * holds no GPU metrics. Returns 0 or a negative error with one line in err; html_util_release()
 * frees.
 */
int html_util_read(struct trace *trace, const struct report_header *hdr, struct report_charts *charts, char *err,
		   size_t errlen);
void html_util_release(struct report_charts *charts);
/* A device's utilization chart, the timeline's next row (html_util_height high). */
void html_util_row(struct html_timeline *tl, const struct chart_util *u);
/* Its height: three bands, four where the device's samples have PCIe. */
int html_util_height(const struct chart_util *u);
/* Under the timeline: the chart's legend, then what bounds the GPU; nothing without GPU metrics. */
void html_write_utilization(FILE *out, const struct report_header *hdr);

/* ---- the cross-rank page (ranks-page.c) and its timeline (ranks-timeline.c) ---- */

struct job_report;

#define RANK_LANES_MAX 16	/* ranks drawn on the timeline: those that held the others up first */

/* One rank on the cross-rank timeline. */
struct ranks_timeline_rank {
	size_t index;			/* into job->ranks */
	struct html_step *steps;	/* its iterations on the job's clock, numbered as the job's */
	size_t nsteps;
	struct chart_lane *lanes;	/* per GPU: compute and copies (stream -1), NCCL kernels (-2); no ops
					   counted, busy_ns in the first window */
	size_t nlanes;
	char *error;			/* why its trace could not be read; NULL when it was */
};

struct ranks_timeline {
	struct chart_window windows[CHART_WINDOWS];	/* on the job's clock: steady state, one iteration */
	size_t nwindows;
	int64_t zoomed;			/* the job iteration windows[1] shows; -1: none */
	int64_t origin;			/* the first GPU operation of the ranks drawn, on the job's clock */
	ssize_t straggler;		/* index into job->ranks of the rank worth calling the straggler; -1 */
	int compact;			/* many ranks: each its lanes only, the job's iterations once */
	struct ranks_timeline_rank *ranks;	/* those drawn, in rank order */
	size_t nranks;
	struct html_step *job_steps;	/* the job's iterations on its clock; NULL when not known */
};

/* Read the ranks drawn: iterations from summaries[i] (job rank i's summary; NULL: none), busy time
   from the traces. A rank that cannot be read is drawn with its reason. Release with
   ranks_timeline_release(). */
void ranks_timeline_read(const struct job_report *job, const char *const *summaries, struct ranks_timeline *tl);
void ranks_timeline_write(FILE *out, const struct job_report *job, const struct ranks_timeline *tl);
void ranks_timeline_release(struct ranks_timeline *tl);

/* The cross-rank report as one self-contained page (analyzer/report/ranks-report.h); summaries as above.
 */
void report_ranks_write_html(FILE *out, const struct job_report *job, const char *const *summaries);

#endif
