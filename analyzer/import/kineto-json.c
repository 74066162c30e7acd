/*
 * Kineto's Chrome-trace JSON as a stream of events (see kineto-json.h): a yajl parser fed from zlib
 * (gzread reads gzip and plain files alike), and a stack of contexts that says what each value is
 * for. Values nobody reads (nested args, pg_config, "blocks per SM") are skipped by counting their
 * brackets, without a copy.
 */
#include "analyzer/import/kineto-json.h"

#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define READ_CHUNK (1 << 20)
#define MAX_DEPTH 64

/* What the open container is. */
enum context {
	CTX_ROOT,	/* the top-level object */
	CTX_EVENTS,	/* traceEvents */
	CTX_EVENT,	/* one of its elements */
	CTX_ARGS,	/* the event's args */
	CTX_DIMS,	/* args grid or block */
	CTX_DIST,	/* distributedInfo */
	CTX_DEVICES,	/* deviceProperties */
	CTX_DEVICE,	/* one of its elements */
};

/* The key whose value comes next. */
enum key {
	K_OTHER,
	/* top level */
	K_TRACE_EVENTS, K_SCHEMA_VERSION, K_BASE_TIME, K_DISTRIBUTED, K_DEVICES, K_TRACE_NAME, K_HOST,
	/* event */
	K_PH, K_CAT, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ARGS,
	/* args: K_ARG + enum kineto_arg, then the non-numeric ones */
	K_ARG, K_ARG_LAST = K_ARG + KA_COUNT - 1, K_GRID, K_BLOCK, K_ARG_NAME, K_SYNC_KIND,
	/* distributedInfo */
	K_RANK, K_WORLD_SIZE, K_BACKEND, K_NCCL_VERSION,
	/* deviceProperties[i]: K_DEV + enum kineto_device_field, then name */
	K_DEV, K_DEV_LAST = K_DEV + KD_COUNT - 1, K_DEV_NAME,
};

/* A growable text buffer, NUL-terminated. */
struct text {
	char *s;
	size_t len, cap;
};

struct reader {
	struct kineto_header *hdr;
	kineto_event_fn fn;
	void *fn_arg;
	int fn_ret;			/* fn's negative return, which stopped the parse */
	enum context stack[MAX_DEPTH];
	int depth;			/* containers open, the root included */
	int skip;			/* > 0: inside a skipped container, this many levels deep */
	int too_deep;
	enum key key;
	struct kineto_event ev;
	struct text cat, name, pid, tid, arg_name, sync_kind;
	int dims;			/* K_GRID or K_BLOCK while in CTX_DIMS */
	char error[256];		/* a problem found by a callback */
};

static const char *text_set(struct text *t, const unsigned char *s, size_t len)
{
	if (len + 1 > t->cap) {
		t->cap = (len + 1) * 2 < 64 ? 64 : (len + 1) * 2;
		t->s = xrealloc(t->s, t->cap);
	}
	memcpy(t->s, s, len);
	t->s[len] = '\0';
	t->len = len;
	return t->s;
}

/* ---- numbers ---- */

int kineto_us_to_ns(const char *s, size_t n, int64_t *out)
{
	char digits[48];
	size_t i = 0, nd = 0;
	long point = 0, exp = 0;
	int neg = 0, any = 0, exp_neg = 0;
	int64_t acc = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, any = 1) {
		if (!nd && s[i] == '0')
			continue;	/* leading zeros */
		if (nd < sizeof(digits))
			digits[nd++] = s[i];
		point++;
	}
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, any = 1) {
			if (!nd && s[i] == '0') {
				point--;	/* 0.00x: zeros after the point move it */
				continue;
			}
			if (nd < sizeof(digits))
				digits[nd++] = s[i];
		}
	if (!any)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			exp_neg = s[i++] == '-';
		if (i >= n)
			return -1;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (exp < 1000)
				exp = exp * 10 + (s[i] - '0');
	}
	if (i != n)
		return -1;
	/* value = 0.d1d2... x 10^point µs; in ns the point moves 3 digits right */
	point += (exp_neg ? -exp : exp) + 3;
	if (point > 19)
		return nd ? -1 : (*out = 0, 0);
	for (long k = 0; k < point; k++) {
		int d = (size_t)k < nd ? digits[k] - '0' : 0;

		if (__builtin_mul_overflow(acc, 10, &acc) || __builtin_add_overflow(acc, d, &acc))
			return -1;
	}
	if (point >= 0 && (size_t)point < nd && digits[point] >= '5')
		acc++;	/* below 1 ns: round half up */
	*out = neg ? -acc : acc;
	return 0;
}

/* An integer value; a fraction is rounded (no field read this way carries one in Kineto's output). */
static int json_int(const char *s, size_t n, int64_t *out)
{
	char buf[64], *end;
	size_t i = n && s[0] == '-';
	int64_t v = 0;
	double d;

	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
			return -1;
	if (i == n && n > (size_t)(s[0] == '-')) {
		*out = s[0] == '-' ? -v : v;
		return 0;
	}
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	d = strtod(buf, &end);
	if (*end || !isfinite(d) || d > 9.2e18 || d < -9.2e18)
		return -1;
	*out = (int64_t)llround(d);
	return 0;
}

/* ---- keys ---- */

struct key_name {
	const char *name;
	unsigned char len;
	unsigned char key;
};

#define KEY(s, k) { s, sizeof(s) - 1, k }

static const struct key_name root_keys[] = {
	KEY("traceEvents", K_TRACE_EVENTS), KEY("schemaVersion", K_SCHEMA_VERSION),
	KEY("baseTimeNanoseconds", K_BASE_TIME), KEY("distributedInfo", K_DISTRIBUTED),
	KEY("deviceProperties", K_DEVICES), KEY("traceName", K_TRACE_NAME), KEY("host_name", K_HOST),
	KEY("hostname", K_HOST),
};

static const struct key_name event_keys[] = {
	KEY("ph", K_PH), KEY("cat", K_CAT), KEY("name", K_NAME), KEY("pid", K_PID), KEY("tid", K_TID),
	KEY("ts", K_TS), KEY("dur", K_DUR), KEY("args", K_ARGS),
};

static const struct key_name arg_keys[] = {
	KEY("correlation", K_ARG + KA_CORRELATION), KEY("External id", K_ARG + KA_EXTERNAL_ID),
	KEY("external id", K_ARG + KA_EXTERNAL_ID), KEY("device", K_ARG + KA_DEVICE),
	KEY("context", K_ARG + KA_CONTEXT), KEY("stream", K_ARG + KA_STREAM),
	KEY("registers per thread", K_ARG + KA_REGISTERS), KEY("shared memory", K_ARG + KA_SHARED_MEMORY),
	KEY("bytes", K_ARG + KA_BYTES), KEY("cbid", K_ARG + KA_CBID),
	KEY("wait_on_cuda_event_id", K_ARG + KA_WAIT_EVENT), KEY("wait_on_stream", K_ARG + KA_WAIT_STREAM),
	KEY("fromDevice", K_ARG + KA_FROM_DEVICE), KEY("toDevice", K_ARG + KA_TO_DEVICE),
	KEY("fromContext", K_ARG + KA_FROM_CONTEXT), KEY("toContext", K_ARG + KA_TO_CONTEXT),
	KEY("Bytes", K_ARG + KA_MEM_BYTES), KEY("Addr", K_ARG + KA_MEM_ADDR),
	KEY("Total Allocated", K_ARG + KA_MEM_ALLOCATED), KEY("Total Reserved", K_ARG + KA_MEM_RESERVED),
	KEY("Device Id", K_ARG + KA_MEM_DEVICE_ID), KEY("Device Type", K_ARG + KA_MEM_DEVICE_TYPE),
	KEY("grid", K_GRID), KEY("block", K_BLOCK), KEY("name", K_ARG_NAME),
	KEY("cuda_sync_kind", K_SYNC_KIND),
};

static const struct key_name dist_keys[] = {
	KEY("rank", K_RANK), KEY("world_size", K_WORLD_SIZE), KEY("backend", K_BACKEND),
	KEY("nccl_version", K_NCCL_VERSION),
};

static const struct key_name device_keys[] = {
	KEY("id", K_DEV + KD_ID), KEY("name", K_DEV_NAME), KEY("totalGlobalMem", K_DEV + KD_TOTAL_MEM),
	KEY("computeMajor", K_DEV + KD_MAJOR), KEY("computeMinor", K_DEV + KD_MINOR),
	KEY("maxThreadsPerBlock", K_DEV + KD_THREADS_PER_BLOCK),
	KEY("maxThreadsPerMultiprocessor", K_DEV + KD_THREADS_PER_SM),
	KEY("regsPerBlock", K_DEV + KD_REGS_PER_BLOCK), KEY("regsPerMultiprocessor", K_DEV + KD_REGS_PER_SM),
	KEY("warpSize", K_DEV + KD_WARP_SIZE), KEY("sharedMemPerBlock", K_DEV + KD_SHMEM_PER_BLOCK),
	KEY("sharedMemPerBlockOptin", K_DEV + KD_SHMEM_OPTIN),
	KEY("sharedMemPerMultiprocessor", K_DEV + KD_SHMEM_PER_SM),
	KEY("maxSharedMemoryPerMultiProcessor", K_DEV + KD_SHMEM_PER_SM), KEY("numSms", K_DEV + KD_NUM_SMS),
};

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

static enum key key_find(const struct key_name *keys, size_t n, const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (keys[i].len == len && keys[i].name[0] == s[0] && !memcmp(keys[i].name, s, len))
			return keys[i].key;
	return K_OTHER;
}

/* ---- the context stack ---- */

static enum context top(const struct reader *r)
{
	return r->stack[r->depth - 1];
}

static int push(struct reader *r, enum context c)
{
	if (r->depth >= MAX_DEPTH) {
		r->too_deep = 1;
		return 0;
	}
	r->stack[r->depth++] = c;
	r->key = K_OTHER;
	return 1;
}

static void event_reset(struct reader *r)
{
	struct kineto_event *ev = &r->ev;

	ev->ph = 0;
	ev->cat = ev->name = "";
	ev->pid_text = ev->tid_text = NULL;
	ev->has_pid = ev->has_tid = ev->has_ts = ev->has_dur = ev->bad_time = 0;
	ev->args = 0;
	ev->ngrid = ev->nblock = 0;
	ev->arg_name = ev->sync_kind = NULL;
}

static struct kineto_device *device_current(struct reader *r)
{
	return &r->hdr->devices[r->hdr->ndevices - 1];
}

/* A container starts: what it is, from where it is; or skip it. */
static int open_container(struct reader *r, int is_map)
{
	enum key key = r->key;

	if (r->skip) {
		r->skip++;
		return 1;
	}
	if (!r->depth) {
		if (!is_map) {
			snprintf(r->error, sizeof(r->error), "a JSON array at the top level (Chrome's array "
				 "form), not the PyTorch profiler's trace object");
			return 0;
		}
		r->hdr->object = 1;
		return push(r, CTX_ROOT);
	}
	r->key = K_OTHER;
	switch (top(r)) {
	case CTX_ROOT:
		if (!is_map && key == K_TRACE_EVENTS) {
			r->hdr->has_trace_events = 1;
			return push(r, CTX_EVENTS);
		}
		if (is_map && key == K_DISTRIBUTED) {
			r->hdr->has_distributed = 1;
			return push(r, CTX_DIST);
		}
		if (!is_map && key == K_DEVICES)
			return push(r, CTX_DEVICES);
		break;
	case CTX_EVENTS:
		if (is_map) {
			event_reset(r);
			return push(r, CTX_EVENT);
		}
		break;
	case CTX_EVENT:
		if (is_map && key == K_ARGS)
			return push(r, CTX_ARGS);
		break;
	case CTX_ARGS:
		if (!is_map && (key == K_GRID || key == K_BLOCK)) {
			r->dims = key;
			return push(r, CTX_DIMS);
		}
		break;
	case CTX_DEVICES:
		if (is_map) {
			struct kineto_header *h = r->hdr;

			h->devices = xrealloc(h->devices, (h->ndevices + 1) * sizeof(*h->devices));
			memset(&h->devices[h->ndevices++], 0, sizeof(*h->devices));
			return push(r, CTX_DEVICE);
		}
		break;
	default:
		break;
	}
	r->skip = 1;
	return 1;
}

static int close_container(struct reader *r)
{
	if (r->skip) {
		r->skip--;
		return 1;
	}
	if (!r->depth)
		return 1;
	if (top(r) == CTX_EVENT) {
		r->hdr->events++;
		r->depth--;
		r->key = K_OTHER;
		r->fn_ret = r->fn(r->fn_arg, &r->ev, r->hdr);
		return r->fn_ret >= 0;
	}
	r->depth--;
	r->key = K_OTHER;
	return 1;
}

/* ---- values ---- */

static void put_number(struct reader *r, const char *s, size_t len)
{
	struct kineto_event *ev = &r->ev;
	struct kineto_header *h = r->hdr;
	enum key key = r->key;
	int64_t v;

	r->key = K_OTHER;
	switch (top(r)) {
	case CTX_EVENT:
		if (key == K_TS)
			ev->bad_time |= !(ev->has_ts = kineto_us_to_ns(s, len, &ev->ts) == 0);
		else if (key == K_DUR)
			ev->bad_time |= !(ev->has_dur = kineto_us_to_ns(s, len, &ev->dur) == 0);
		else if (key == K_PID)
			ev->has_pid = json_int(s, len, &ev->pid) == 0;
		else if (key == K_TID)
			ev->has_tid = json_int(s, len, &ev->tid) == 0;
		break;
	case CTX_ARGS:
		if (key >= K_ARG && key <= K_ARG_LAST && json_int(s, len, &v) == 0) {
			ev->arg[key - K_ARG] = v;
			ev->args |= 1u << (key - K_ARG);
		}
		break;
	case CTX_DIMS:
		if (json_int(s, len, &v) == 0) {
			if (r->dims == K_GRID && ev->ngrid < 3)
				ev->grid[ev->ngrid++] = v;
			else if (r->dims == K_BLOCK && ev->nblock < 3)
				ev->block[ev->nblock++] = v;
		}
		break;
	case CTX_ROOT:
		if (key == K_SCHEMA_VERSION)
			h->has_schema_version = json_int(s, len, &h->schema_version) == 0;
		else if (key == K_BASE_TIME) {
			h->has_base = json_int(s, len, &h->base_ns) == 0 && h->base_ns >= 0;
			h->bad_base = !h->has_base;
		}
		break;
	case CTX_DIST:
		if (key == K_RANK)
			h->has_rank = json_int(s, len, &h->rank) == 0;
		else if (key == K_WORLD_SIZE)
			h->has_world_size = json_int(s, len, &h->world_size) == 0;
		break;
	case CTX_DEVICE:
		if (key >= K_DEV && key <= K_DEV_LAST && json_int(s, len, &v) == 0) {
			device_current(r)->v[key - K_DEV] = v;
			device_current(r)->have |= 1u << (key - K_DEV);
		}
		break;
	default:
		break;
	}
}

static void put_string(struct reader *r, const unsigned char *s, size_t len)
{
	struct kineto_event *ev = &r->ev;
	enum key key = r->key;

	r->key = K_OTHER;
	switch (top(r)) {
	case CTX_EVENT:
		if (key == K_PH)
			ev->ph = len ? (char)s[0] : 0;
		else if (key == K_CAT)
			ev->cat = text_set(&r->cat, s, len);
		else if (key == K_NAME)
			ev->name = text_set(&r->name, s, len);
		else if (key == K_PID) {
			ev->pid_text = text_set(&r->pid, s, len);
			ev->has_pid = len && json_int((const char *)s, len, &ev->pid) == 0;
		}
		else if (key == K_TID)
			ev->tid_text = text_set(&r->tid, s, len);
		else if (key == K_TS)	/* a number written as a string */
			ev->bad_time |= !(ev->has_ts = kineto_us_to_ns((const char *)s, len, &ev->ts) == 0);
		else if (key == K_DUR)
			ev->bad_time |= !(ev->has_dur = kineto_us_to_ns((const char *)s, len, &ev->dur) == 0);
		break;
	case CTX_ARGS:
		if (key == K_ARG_NAME)
			ev->arg_name = text_set(&r->arg_name, s, len);
		else if (key == K_SYNC_KIND)
			ev->sync_kind = text_set(&r->sync_kind, s, len);
		break;
	case CTX_ROOT:
		if (key == K_TRACE_NAME || key == K_HOST) {
			char **dst = key == K_TRACE_NAME ? &r->hdr->trace_name : &r->hdr->host;

			free(*dst);
			*dst = xstrdup(text_set(&r->arg_name, s, len));
		}
		break;
	case CTX_DIST:
		if (key == K_BACKEND || key == K_NCCL_VERSION) {
			char **dst = key == K_BACKEND ? &r->hdr->backend : &r->hdr->nccl_version;

			free(*dst);
			*dst = xstrdup(text_set(&r->arg_name, s, len));
		} else if (key == K_RANK) {	/* on-demand traces write it as text */
			r->hdr->has_rank = json_int((const char *)s, len, &r->hdr->rank) == 0;
		}
		break;
	case CTX_DEVICE:
		if (key == K_DEV_NAME) {
			free(device_current(r)->name);
			device_current(r)->name = xstrdup(text_set(&r->arg_name, s, len));
		}
		break;
	default:
		break;
	}
}

static int top_scalar(struct reader *r)
{
	if (r->depth)
		return 1;
	snprintf(r->error, sizeof(r->error), "a JSON value at the top level, not a trace object");
	return 0;
}

/* ---- yajl callbacks ---- */

static int cb_null(void *ctx)
{
	struct reader *r = ctx;

	if (!r->skip && r->depth)
		r->key = K_OTHER;
	return r->skip || top_scalar(r);
}

static int cb_boolean(void *ctx, int b)
{
	(void)b;
	return cb_null(ctx);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	struct reader *r = ctx;

	if (r->skip)
		return 1;
	if (!top_scalar(r))
		return 0;
	put_number(r, s, len);
	return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	struct reader *r = ctx;

	if (r->skip)
		return 1;
	if (!top_scalar(r))
		return 0;
	put_string(r, s, len);
	return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct reader *r = ctx;

	if (r->skip || !len) {
		r->key = K_OTHER;
		return 1;
	}
	switch (top(r)) {
	case CTX_EVENT:
		r->key = key_find(event_keys, NKEYS(event_keys), s, len);
		break;
	case CTX_ARGS:
		r->key = key_find(arg_keys, NKEYS(arg_keys), s, len);
		break;
	case CTX_ROOT:
		r->key = key_find(root_keys, NKEYS(root_keys), s, len);
		break;
	case CTX_DIST:
		r->key = key_find(dist_keys, NKEYS(dist_keys), s, len);
		break;
	case CTX_DEVICE:
		r->key = key_find(device_keys, NKEYS(device_keys), s, len);
		break;
	default:
		r->key = K_OTHER;
		break;
	}
	return 1;
}

static int cb_start_map(void *ctx)
{
	return open_container(ctx, 1);
}

static int cb_start_array(void *ctx)
{
	return open_container(ctx, 0);
}

static int cb_end(void *ctx)
{
	return close_container(ctx);
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

/* ---- the read ---- */

/* yajl's message, without its trailing newline, and where the parse stopped. */
static void parse_error(struct reader *r, yajl_handle h, const char *path, int at_end, char *err, size_t errlen)
{
	unsigned char *msg;
	size_t n;

	if (r->error[0]) {
		set_err(err, errlen, "cannot import '%s': %s", path, r->error);
		return;
	}
	if (r->too_deep) {
		set_err(err, errlen, "cannot import '%s': JSON nested more than %d levels deep", path, MAX_DEPTH);
		return;
	}
	msg = yajl_get_error(h, 0, NULL, 0);
	n = strlen((char *)msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	if (at_end)
		set_err(err, errlen, "cannot import '%s': truncated JSON: the text ends after %lld bytes, "
			"inside the trace (%lld events read; was the profiler stopped while writing?)", path,
			(long long)r->hdr->bytes, (long long)r->hdr->events);
	else
		set_err(err, errlen, "cannot import '%s': malformed JSON near byte %lld (%s)", path,
			(long long)(r->hdr->bytes), (char *)msg);
	yajl_free_error(h, msg);
}

static int read_chunks(struct reader *r, yajl_handle h, gzFile gz, const char *path, char *err, size_t errlen)
{
	unsigned char *buf = xmalloc(READ_CHUNK);
	yajl_status st = yajl_status_ok;
	int n, at_end = 0, zerr = Z_OK;

	while ((n = gzread(gz, buf, READ_CHUNK)) > 0) {
		st = yajl_parse(h, buf, (size_t)n);
		if (st != yajl_status_ok) {
			r->hdr->bytes += (int64_t)yajl_get_bytes_consumed(h);
			break;
		}
		r->hdr->bytes += n;
	}
	free(buf);
	if (st == yajl_status_ok)
		gzerror(gz, &zerr);	/* a gzip stream cut short ends like a file, with Z_BUF_ERROR */
	if (st == yajl_status_ok && (n < 0 || zerr == Z_BUF_ERROR)) {
		const char *msg = gzerror(gz, &zerr);

		set_err(err, errlen, "cannot import '%s': %s", path,
			zerr == Z_BUF_ERROR ? "truncated gzip file (it ends mid-stream)" :
			zerr == Z_ERRNO ? strerror(errno) : msg);
		return -EIO;
	}
	if (st == yajl_status_ok && !r->hdr->bytes) {
		set_err(err, errlen, "cannot import '%s': empty file", path);
		return -EINVAL;
	}
	if (st == yajl_status_ok) {
		st = yajl_complete_parse(h);
		at_end = 1;
	}
	if (st == yajl_status_ok)
		return 0;
	if (st == yajl_status_client_canceled && r->fn_ret < 0)
		return r->fn_ret;	/* the callback's own error */
	parse_error(r, h, path, at_end && st == yajl_status_error, err, errlen);
	return -EINVAL;
}

int kineto_read(const char *path, kineto_event_fn fn, void *arg, struct kineto_header *hdr, char *err,
		size_t errlen)
{
	struct reader r = { .hdr = hdr, .fn = fn, .fn_arg = arg };
	yajl_handle h;
	gzFile gz;
	int ret;

	memset(hdr, 0, sizeof(*hdr));
	gz = gzopen(path, "rb");
	if (!gz) {
		int e = errno ? errno : ENOMEM;

		set_err(err, errlen, "cannot import '%s': %s", path, e == ENOENT ? "no such file" : strerror(e));
		return -e;
	}
	gzbuffer(gz, READ_CHUNK);
	h = yajl_alloc(&callbacks, NULL, &r);
	yajl_config(h, yajl_allow_comments, 0);
	ret = read_chunks(&r, h, gz, path, err, errlen);
	yajl_free(h);
	gzclose(gz);
	free(r.cat.s);
	free(r.name.s);
	free(r.pid.s);
	free(r.tid.s);
	free(r.arg_name.s);
	free(r.sync_kind.s);
	return ret;
}

void kineto_header_release(struct kineto_header *hdr)
{
	if (!hdr)
		return;
	for (size_t i = 0; i < hdr->ndevices; i++)
		free(hdr->devices[i].name);
	free(hdr->devices);
	free(hdr->backend);
	free(hdr->nccl_version);
	free(hdr->trace_name);
	free(hdr->host);
	memset(hdr, 0, sizeof(*hdr));
}
