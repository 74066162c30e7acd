/*
 * The timeline walk's GPU pass (walk.h): kernels, copies and sets of every file merged in time
 * order onto their streams, with each device's busy, bandwidth and memory-in-use counters.
 */
#define _GNU_SOURCE /* qsort_r */
#include "analyzer/export/walk.h"
#include "analyzer/loader/gpu-samples.h"

#include <math.h>

/* GPU streams and counters. */

enum gpu_kind {
	GPU_KERNEL = 0,
	GPU_COPY = 1,
	GPU_SET = 2,
};

static const char *const direction_names[NDIRS] = { "HtoD", "DtoH", "DtoD", "PtoP", "other" };

static enum copy_direction copy_direction(int64_t copy_kind)
{
	switch (copy_kind) {
	case 1: case 11: return DIR_HTOD;
	case 2: case 12: return DIR_DTOH;
	case 8: case 13: return DIR_DTOD;
	case 10: return DIR_PTOP;
	default: return DIR_OTHER;
	}
}

/* 1, 2 or 5 times a power of ten, at least 1 us, so buckets read well on the time axis. */
static int64_t bucket_width(int64_t span)
{
	int64_t want = span / COUNTER_BUCKETS + 1;

	for (int64_t p = 1000;; p *= 10) {
		if (want <= p)
			return p;
		if (want <= 2 * p)
			return 2 * p;
		if (want <= 5 * p)
			return 5 * p;
	}
}

static int64_t bucket_length(const struct counter_buckets *b, size_t i)
{
	int64_t s = b->origin + (int64_t)i * b->width;
	int64_t e = s + b->width < b->end ? s + b->width : b->end;

	return e > s ? e - s : b->width;
}

/* Spread amount over the buckets [start, end) covers, in proportion to the time in each. */
static void spread(const struct counter_buckets *b, double *series, int64_t start, int64_t end, double amount)
{
	size_t first, last;

	if (start < b->origin)
		start = b->origin;
	if (end > b->end)
		end = b->end;
	first = (size_t)((start - b->origin) / b->width);
	if (first >= b->n)
		first = b->n - 1;
	if (end <= start) {
		series[first] += amount;
		return;
	}
	last = (size_t)((end - 1 - b->origin) / b->width);
	if (last >= b->n)
		last = b->n - 1;
	for (size_t i = first; i <= last; i++) {
		int64_t bs = b->origin + (int64_t)i * b->width;
		int64_t s = start > bs ? start : bs;
		int64_t e = end < bs + b->width ? end : bs + b->width;

		if (e > s)
			series[i] += amount * (double)(e - s) / (double)(end - start);
	}
}

static int emit_series(struct timeline *tl, const struct timeline_track *track, const struct counter_buckets *b,
		       const double *series, double scale)
{
	double last = -1;

	for (size_t i = 0; i < b->n; i++) {
		double v = series[i] / (double)bucket_length(b, i) * scale;
		int ret;

		if (v == last)
			continue;
		ret = tl->sink->ops->counter(tl->sink, track, b->origin + (int64_t)i * b->width, v);
		if (ret < 0)
			return ret;
		last = v;
	}
	if (last != 0)
		return tl->sink->ops->counter(tl->sink, track, b->end, 0);
	return 0;
}

/*
 * The sampled metrics shown as counters, each as it was sampled (a step per sample); PCIe where
 * the trace has it (gpt-trace's since 2026-11-27, nsys's).
 */
static const enum gpu_sample_metric sampled_tracks[] = { GS_SM_ACTIVE, GS_TENSOR, GS_DRAM_READ,
							 GS_DRAM_WRITE, GS_PCIE_RX, GS_PCIE_TX };
#define NSAMPLED_TRACKS ((int32_t)(sizeof(sampled_tracks) / sizeof(sampled_tracks[0])))

static int emit_sampled_track(struct timeline *tl, const struct gpu_samples *d,
			      struct timeline_track *track, enum gpu_sample_metric m)
{
	double last = -1;
	int64_t end = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < d->count; i++) {
		const struct gpu_sample *s = &d->samples[i];
		double v = isnan(s->value[m]) ? 0 : s->value[m];

		/* an idle GPU between samples (their rows are not stored) reads 0 */
		if (end && s->start > end && last != 0) {
			ret = tl->sink->ops->counter(tl->sink, track, end, 0);
			last = 0;
		}
		if (!ret && v != last)
			ret = tl->sink->ops->counter(tl->sink, track, s->start, v);
		last = v;
		end = s->end;
	}
	if (!ret && last > 0)
		ret = tl->sink->ops->counter(tl->sink, track, end, 0);
	return ret;
}

/* GPU metrics sampled on this device (gpt-trace run --gpu-metrics, nsys exports), when any. */
static int emit_sampled_metrics(struct timeline *tl, struct gpu *g, struct timeline_track *track,
				char *name, size_t len)
{
	const struct gpu_samples *d = NULL;
	int ret = 0;

	if (tl->nsample_devices < 0) {
		tl->nsample_devices = gpu_samples_load(tl->trace, &tl->samples, tl->err, tl->errlen);
		if (tl->nsample_devices < 0)
			return tl->nsample_devices;
	}
	for (int i = 0; i < tl->nsample_devices && !d; i++)
		if (tl->samples[i].device == g->device && tl->samples[i].count)
			d = &tl->samples[i];
	for (size_t k = 0; d && !ret && k < sizeof(sampled_tracks) / sizeof(sampled_tracks[0]); k++) {
		if (sampled_tracks[k] >= GS_PCIE_RX && !d->present[sampled_tracks[k]])
			continue;
		snprintf(name, len, "GPU %" PRId64 " %s", g->device, gpu_sample_names[sampled_tracks[k]]);
		track->uuid = tl->next_uuid++;
		track->unit = "%";
		track->sort_index = SORT_COUNTERS + 1 + NDIRS + (int32_t)k;
		ret = tl->sink->ops->track(tl->sink, track);
		if (!ret)
			ret = emit_sampled_track(tl, d, track, sampled_tracks[k]);
	}
	return ret;
}

/* Memory in use on the device (analyzer/analysis/memory-use.h), one counter track per trace that
 * allocated on it. */
static int emit_memory_counters(struct timeline *tl, struct gpu *g, struct timeline_track *track, char *name,
				size_t namelen)
{
	int ret = 0;

	for (size_t i = 0; tl->memory && !ret && i < tl->memory->ndevices; i++) {
		const struct memory_device *d = &tl->memory->devices[i];

		if (d->device != g->device || !d->npoints)
			continue;
		if (trace_count(tl->trace) > 1)
			snprintf(name, namelen, "GPU %" PRId64 " memory in use (trace %" PRId64 ")", g->device, d->trace_id);
		else
			snprintf(name, namelen, "GPU %" PRId64 " memory in use", g->device);
		track->uuid = tl->next_uuid++;
		track->unit = "MB";
		track->sort_index = SORT_COUNTERS + 1 + NDIRS + NSAMPLED_TRACKS + (int32_t)i;
		ret = tl->sink->ops->track(tl->sink, track);
		for (size_t j = 0; !ret && j < d->npoints; j++)
			ret = tl->sink->ops->counter(tl->sink, track, d->points[j].at, (double)d->points[j].bytes / 1e6);
	}
	return ret;
}

static int emit_device_counters(struct timeline *tl, struct gpu *g, struct counter_buckets *b)
{
	char name[96];
	int ret;
	struct timeline_track track = {
		.parent_uuid = g->track.uuid, .kind = TIMELINE_COUNTER, .pid = g->track.pid, .name = name,
	};

	snprintf(name, sizeof(name), "GPU %" PRId64 " busy", g->device);
	track.uuid = tl->next_uuid++;
	track.unit = "%";
	track.sort_index = SORT_COUNTERS;
	ret = tl->sink->ops->track(tl->sink, &track);
	if (!ret)
		ret = emit_series(tl, &track, b, b->busy, 100.0);
	for (int d = 0; !ret && d < NDIRS; d++) {
		if (!b->used[d])
			continue;
		snprintf(name, sizeof(name), "GPU %" PRId64 " copy %s", g->device, direction_names[d]);
		track.uuid = tl->next_uuid++;
		track.unit = "GB/s";
		track.sort_index = SORT_COUNTERS + 1 + d;
		ret = tl->sink->ops->track(tl->sink, &track);
		if (!ret)
			ret = emit_series(tl, &track, b, b->bytes[d], 1.0);	/* bytes/ns = GB/s */
	}
	if (!ret)
		ret = emit_sampled_metrics(tl, g, &track, name, sizeof(name));
	if (!ret)
		ret = emit_memory_counters(tl, g, &track, name, sizeof(name));
	return ret;
}
static struct gpu_stream *find_stream(struct timeline *tl, int64_t device, int64_t stream, int64_t trace_id,
				      int32_t pid)
{
	size_t lo = 0, hi = tl->nstreams;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gpu_stream *s = &tl->streams[mid];
		int cmp = s->device != device ? (s->device < device ? -1 : 1)
			  : s->stream != stream ? (s->stream < stream ? -1 : 1)
			  : s->trace_id != trace_id ? (s->trace_id < trace_id ? -1 : 1)
			  : s->pid != pid ? (s->pid < pid ? -1 : 1) : 0;

		if (!cmp)
			return &tl->streams[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The rank of this GPU item among those of its correlation id, 1..nwork. Almost every id has one
 * item; a graph launch has several, counted here until the last one is seen, so the table holds
 * only the launches whose items are still arriving.
 */
static int flow_rank(struct timeline *tl, int64_t trace_id, int64_t corr, int64_t nwork, int64_t *rank)
{
	size_t i;

	*rank = 1;
	if (nwork <= 1)
		return 0;
	for (i = 0; i < tl->nranks; i++) {
		if (tl->ranks[i].trace_id == trace_id && tl->ranks[i].correlation_id == corr)
			break;
	}
	if (i == tl->nranks) {
		if (tl->nranks == tl->ranks_cap) {
			size_t cap = tl->ranks_cap ? tl->ranks_cap * 2 : 16;
			struct flow_rank *ranks = realloc(tl->ranks, cap * sizeof(*ranks));

			if (!ranks)
				return -ENOMEM;
			tl->ranks = ranks;
			tl->ranks_cap = cap;
		}
		tl->ranks[tl->nranks++] = (struct flow_rank){ trace_id, corr, 0 };
	}
	*rank = ++tl->ranks[i].seen;
	if (*rank >= nwork)
		tl->ranks[i] = tl->ranks[--tl->nranks];
	return 0;
}

/* A device's work is all seen: close its streams' slices and write its counters. */

/* A device's work is all seen: close its streams' slices and write its counters. */
static int finish_device(struct timeline *tl, struct gpu *gpu)
{
	struct counter_buckets *b = &gpu->b;
	int ret;

	for (size_t i = 0; i < tl->nstreams; i++) {
		if (tl->streams[i].device == gpu->device && (ret = lane_set_flush(tl, &tl->streams[i].lanes)) < 0)
			return ret;
	}
	if (gpu->busy_open)
		spread(b, b->busy, gpu->busy_start, gpu->busy_end, (double)(gpu->busy_end - gpu->busy_start));
	return emit_device_counters(tl, gpu, b);
}

/* The text of a grid (which 0) or block (1) of columns x, y, z of r (NULL reads 0), valid until the
 * next call for the same which. */
static const char *dims_text(struct timeline *tl, int which, const struct event_row *r, size_t x, size_t y,
			     size_t z)
{
	int64_t d[3] = { event_int(r, x, 0), event_int(r, y, 0), event_int(r, z, 0) };
	uint64_t h = ((uint64_t)d[0] * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)d[1] * 0xff51afd7ed558ccdull) ^
		     ((uint64_t)d[2] * 0xc4ceb9fe1a85ec53ull);
	struct dims_memo *m = &tl->dims[which][(h ^ (h >> 32)) % DIMS_MEMO];

	if (!m->used || memcmp(m->d, d, sizeof(d))) {
		memcpy(m->d, d, sizeof(d));
		m->used = 1;
		snprintf(m->text, sizeof(m->text), "(%lld, %lld, %lld)", (long long)d[0], (long long)d[1],
			 (long long)d[2]);
	}
	return m->text;
}

/* Name and arguments of a kernel, copy or set. *ret: 0 or a negative error. */
static void describe_gpu_item(struct timeline *tl, const struct held_row *h, struct timeline_event *ev,
			      struct timeline_arg *args, size_t *nargs, char *label, size_t size, int *ret)
{
	const struct event_row *r = &h->row;
	int64_t context = 0;

	*ret = 0;
	switch ((enum gpu_kind)h->kind) {
	case GPU_KERNEL: {
		/* name: the first of the demangled, short and mangled names that exists (as the view) */
		const char *full, *shortname = NULL;

		*ret = walk_string_of(tl, r, K_NAME, &full);
		if (*ret >= 0)
			*ret = walk_string_of(tl, r, K_SHORT_NAME, &shortname);
		if (!full)
			full = shortname;
		if (!full && *ret >= 0)
			*ret = walk_string_of(tl, r, K_MANGLED_NAME, &full);
		if (*ret < 0)
			return;
		ev->category = "cuda.kernel";
		ev->name = full ? full : "(unnamed kernel)";
		if (full && strlen(full) > EXPORT_KERNEL_NAME_MAX && shortname && *shortname)
			ev->name = shortname;
		walk_arg_string(args, nargs, "kernel", full ? full : ev->name);
		walk_arg_string(args, nargs, "grid", dims_text(tl, 0, r, K_GRIDX, K_GRIDY, K_GRIDZ));
		walk_arg_string(args, nargs, "block", dims_text(tl, 1, r, K_BLOCKX, K_BLOCKY, K_BLOCKZ));
		walk_arg_int(args, nargs, "registers per thread", event_int(r, K_REGISTERS, 0));
		walk_arg_int(args, nargs, "static shared memory", event_int(r, K_STATIC_SMEM, 0));
		walk_arg_int(args, nargs, "dynamic shared memory", event_int(r, K_DYNAMIC_SMEM, 0));
		walk_arg_int(args, nargs, "local memory per thread", event_int(r, K_LOCAL_MEM, 0));
		if (!event_null(r, K_GRAPH))
			walk_arg_int(args, nargs, "graph id", r->v[K_GRAPH]);
		context = event_int(r, K_CONTEXT, 0);
		break;
	}
	case GPU_COPY: {
		int64_t bytes = event_int(r, C_BYTES, 0);
		int64_t copy_kind = event_int(r, C_KIND, 0);

		ev->category = "cuda.memcpy";
		snprintf(label, size, "[CUDA memcpy %s]", LABEL(copy_kind_labels, copy_kind));
		ev->name = label;
		walk_arg_int(args, nargs, "bytes", bytes);
		walk_arg_string(args, nargs, "copy kind", LABEL(copy_kind_labels, copy_kind));
		if (!event_null(r, C_SRC))
			walk_arg_string(args, nargs, "source memory", LABEL(mem_kind_labels, r->v[C_SRC]));
		if (!event_null(r, C_DST))
			walk_arg_string(args, nargs, "destination memory", LABEL(mem_kind_labels, r->v[C_DST]));
		if (ev->end > ev->start)
			walk_arg_double(args, nargs, "bandwidth GB/s", (double)bytes / (double)(ev->end - ev->start));
		context = event_int(r, C_CONTEXT, 0);
		break;
	}
	case GPU_SET:
		ev->category = "cuda.memset";
		ev->name = "[CUDA memset]";
		walk_arg_int(args, nargs, "bytes", event_int(r, S_BYTES, 0));
		walk_arg_int(args, nargs, "value", event_int(r, S_VALUE, 0));
		if (!event_null(r, S_MEM_KIND))
			walk_arg_string(args, nargs, "memory kind", LABEL(mem_kind_labels, r->v[S_MEM_KIND]));
		context = event_int(r, S_CONTEXT, 0);
		break;
	}
	if (!event_null(r, G_CORR))
		walk_arg_int(args, nargs, "correlation id", r->v[G_CORR]);
	walk_arg_int(args, nargs, "device", event_int(r, G_DEVICE, 0));
	walk_arg_int(args, nargs, "stream", event_int(r, G_STREAM, 0));
	walk_arg_int(args, nargs, "context", context);
	if (!event_null(r, G_GRAPH_NODE))
		walk_arg_int(args, nargs, "graph node id", r->v[G_GRAPH_NODE]);
}

static struct gpu *find_gpu(struct timeline *tl, int64_t device)
{
	for (size_t i = 0; i < tl->ngpus; i++)
		if (tl->gpus[i].device == device)
			return &tl->gpus[i];
	return NULL;
}

static int emit_gpu(struct timeline *tl, const struct held_row *h)
{
	const struct event_row *r = &h->row;
	int64_t device = event_int(r, G_DEVICE, 0);
	struct gpu *gpu = find_gpu(tl, device);
	struct gpu_stream *stream = find_stream(tl, device, event_int(r, G_STREAM, 0), r->trace_id,
						(int32_t)event_int(r, G_PID, 0));
	struct timeline_arg args[20];
	struct timeline_event ev = { .start = r->start, .end = h->end, .args = args };
	char label[80];
	size_t nargs = 0;
	uint64_t *w;
	int ret;

	if (!gpu || !stream)
		return walk_missing(tl, "GPU stream");
	describe_gpu_item(tl, h, &ev, args, &nargs, label, sizeof(label), &ret);
	if (ret < 0)
		return ret;
	ev.nargs = nargs;
	w = corr_word(tl, r, G_CORR);
	if (w && (*w & CORR_HAS_API)) {
		int64_t rank;

		ret = flow_rank(tl, r->trace_id, r->v[G_CORR], (int64_t)((*w >> CORR_NWORK_SHIFT) & CORR_NWORK_MAX),
				&rank);
		if (ret < 0)
			return ret;
		ev.flow_in = flow_id(r->trace_id, r->v[G_CORR], rank);
	}
	ret = lane_place(tl, &stream->lanes, ev.start, ev.end, &ev.track);
	if (!ret)
		ret = tl->sink->ops->slice_begin(tl->sink, &ev);
	if (ret < 0)
		return ret;

	/* Busy is the union over streams: merge overlapping work before counting it. */
	if (gpu->busy_open && ev.start <= gpu->busy_end) {
		if (ev.end > gpu->busy_end)
			gpu->busy_end = ev.end;
	} else {
		if (gpu->busy_open)
			spread(&gpu->b, gpu->b.busy, gpu->busy_start, gpu->busy_end,
			       (double)(gpu->busy_end - gpu->busy_start));
		gpu->busy_start = ev.start;
		gpu->busy_end = ev.end;
		gpu->busy_open = 1;
	}
	if (h->kind == GPU_COPY) {
		enum copy_direction d = copy_direction(event_int(r, C_KIND, 0));

		spread(&gpu->b, gpu->b.bytes[d], ev.start, ev.end, (double)event_int(r, C_BYTES, 0));
		gpu->b.used[d] = 1;
	}
	return 0;
}

/* Every GPU's counter buckets over the trace's time range. */
static int gpu_buckets(struct timeline *tl)
{
	int64_t end = tl->end > tl->origin ? tl->end : tl->origin + 1;
	int64_t width = bucket_width(end - tl->origin);

	for (size_t i = 0; i < tl->ngpus; i++) {
		struct counter_buckets *b = &tl->gpus[i].b;

		*b = (struct counter_buckets){ .origin = tl->origin, .end = end, .width = width };
		b->n = (size_t)((end - tl->origin + width - 1) / width);
		b->busy = calloc(b->n, sizeof(double));
		if (!b->busy)
			return -ENOMEM;
		for (int d = 0; d < NDIRS; d++)
			if (!(b->bytes[d] = calloc(b->n, sizeof(double))))
				return -ENOMEM;
	}
	return 0;
}

/*
 * Kernels, copies and sets of every file, merged in time order (a GPU's streams may come from
 * several processes), onto their streams; then each device's counters, in device order.
 */
int walk_gpu(struct timeline *tl)
{
	static const int views[] = { V_KERNELS, V_COPIES, V_SETS };
	size_t n = 3 * trace_count(tl->trace);
	struct event_stream **s = xcalloc(n ? n : 1, sizeof(*s));
	const struct event_row **cur = xcalloc(n ? n : 1, sizeof(*cur));
	int ret = gpu_buckets(tl);

	for (size_t k = 0; k < n && ret >= 0; k++) {
		const struct event_columns *c = &export_streams[views[k % 3]];

		ret = event_stream_open_file(tl->trace, k / 3, c->view, c->cols, c->ncols, c->nkey, c->text_col,
					     &s[k], tl->err, tl->errlen);
		if (ret >= 0)
			ret = event_stream_next(s[k], &cur[k], tl->err, tl->errlen);
	}
	while (ret >= 0) {
		int b = walk_first_row(cur, n, 0);
		int64_t start;

		if (b < 0)
			break;
		start = cur[b]->start;
		held_clear(&tl->held);
		for (size_t k = 0; k < n && ret >= 0; k++) {
			while (ret >= 0 && cur[k] && cur[k]->start == start) {
				progress_tick(&tl->progress);
				ret = walk_hold(&tl->held, cur[k], (int)(k % 3), 0) ? 0 : -ENOMEM;
				if (ret >= 0)
					ret = event_stream_next(s[k], &cur[k], tl->err, tl->errlen);
			}
		}
		if (tl->held.n > 1)
			qsort(tl->held.items, tl->held.n, sizeof(*tl->held.items), held_compare_gpu);
		for (size_t i = 0; i < tl->held.n && ret >= 0; i++)
			ret = emit_gpu(tl, &tl->held.items[i]);
	}
	for (size_t k = 0; k < n; k++)
		event_stream_close(s[k]);
	free(s);
	free(cur);
	for (size_t i = 0; i < tl->ngpus && ret >= 0; i++)
		ret = finish_device(tl, &tl->gpus[i]);
	return ret < 0 ? ret : 0;
}
