/*
 * The NVTX injection: NVTX (header-only nvtx3, or the old libnvToolsExt) loads the library named by
 * NVTX_INJECTION64_PATH at a process's first NVTX call and calls InitializeInjectionNvtx2, which
 * fills NVTX's function tables with the handlers below.
 *
 * Why our own handlers rather than CUPTI's NVTX support (CUPTI_ACTIVITY_KIND_MARKER): CUPTI records
 * NVTX only when NVTX loads libcupti itself, which would load CUPTI into every process that touches
 * NVTX, CUDA or not; its marker records arrive as separate start and end records (plus marker-data
 * records for colour and payload) that we would have to pair anyway; and handlers of our own can be
 * tested on a machine without a GPU. Each handler reads the clock (the same one CUPTI uses, see
 * clock.h), copies the message, and appends one fixed-size event to a batch under a mutex; the
 * collector's writer thread pairs events into nsys rows (collector/nvtx-rows.c).
 *
 * Events recorded before CUDA is initialised are kept (at most NVTX_PENDING_MAX) and handed to the
 * collector when tracing starts; a process that never initialises CUDA just frees them at exit.
 */
#define _GNU_SOURCE
#define NVTX_NO_IMPL
#include "inject/inject.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "inject/clock.h"

#define NVTX_BATCH_EVENTS 4096		/* hand a batch over when it holds this many events */
#define NVTX_BATCH_TEXT (1u << 20)	/* ... or this many bytes of text */
#define NVTX_PENDING_MAX (1u << 18)	/* events kept before CUDA starts */
#define NVTX_TEXT_MAX 4096		/* longer messages are cut */

/* Domains and registered strings: handles we give out; never freed (NVTX allows that). */
struct nvtxDomainRegistration_st {
	uint32_t id;
	char *name;
	struct nvtxDomainRegistration_st *next;
};

struct nvtxStringRegistration_st {
	uint32_t id;
	struct nvtxStringRegistration_st *next;
};

enum nvtx_mode {
	NVTX_PENDING,	/* no collector yet: keep events */
	NVTX_ATTACHED,	/* deliver to the collector */
	NVTX_OFF,	/* detached, or an inert forked child: record nothing */
};

static pthread_mutex_t nvtx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct collector_nvtx_batch *batch;
static struct collector *sink;
static _Atomic int mode = NVTX_PENDING;
static struct nvtxDomainRegistration_st *domains;
static struct nvtxStringRegistration_st *strings;
static atomic_uint next_domain_id = 1;
static atomic_uint next_string_id = 1;
static atomic_ullong next_range_id = 1;
static __thread uint32_t thread_id;
static __thread int push_depth;

static void report_thread_name(void);

static uint32_t current_tid(void)
{
	if (!thread_id) {
		thread_id = (uint32_t)syscall(SYS_gettid);
		report_thread_name();
	}
	return thread_id;
}

static struct collector_nvtx_batch *batch_new(void)
{
	return calloc(1, sizeof(struct collector_nvtx_batch));
}

static void batch_free(struct collector_nvtx_batch *b)
{
	if (!b)
		return;
	free(b->events);
	free(b->text);
	free(b);
}

/* Room for one more event and len bytes of text; 0 or -1 (out of memory). */
static int batch_reserve(struct collector_nvtx_batch *b, size_t len)
{
	if (b->count == b->capacity) {
		size_t cap = b->capacity ? b->capacity * 2 : 256;
		struct collector_nvtx_event *events = realloc(b->events, cap * sizeof(*events));

		if (!events)
			return -1;
		b->events = events;
		b->capacity = cap;
	}
	if (b->text_len + len > b->text_capacity) {
		size_t cap = b->text_capacity ? b->text_capacity : 4096;
		char *text;

		while (cap < b->text_len + len)
			cap *= 2;
		text = realloc(b->text, cap);
		if (!text)
			return -1;
		b->text = text;
		b->text_capacity = cap;
	}
	return 0;
}

/* Append ev (with len bytes of text) to the batch; hand the batch over when it is full. */
static void nvtx_record(struct collector_nvtx_event *ev, const char *text, size_t len)
{
	struct collector_nvtx_batch *full = NULL;
	struct collector *to = NULL;
	int essential = ev->kind == NVTX_EV_DOMAIN || ev->kind == NVTX_EV_REGISTER ||
			ev->kind == NVTX_EV_OS_THREAD_NAME;

	if (atomic_load_explicit(&mode, memory_order_relaxed) == NVTX_OFF)
		return;
	if (len > NVTX_TEXT_MAX)
		len = NVTX_TEXT_MAX;
	/* --capture-range=nvtx (capture.c): one branch per event when it is off. */
	if (capture_nvtx_on)
		capture_nvtx_event(ev, text, len);
	pthread_mutex_lock(&nvtx_lock);
	if (mode == NVTX_OFF)
		goto out_unlock;
	if (!batch && !(batch = batch_new()))
		goto out_unlock;
	/* Before CUDA, keep a bounded number; never lose the names later events refer to. */
	if ((mode == NVTX_PENDING && batch->count >= NVTX_PENDING_MAX && !essential) ||
	    batch_reserve(batch, text ? len : 0) < 0) {
		batch->dropped++;
		goto out_unlock;
	}
	if (text) {
		ev->text_offset = (uint32_t)batch->text_len;
		ev->text_len = (uint32_t)len;
		memcpy(batch->text + batch->text_len, text, len);
		batch->text_len += len;
	} else {
		ev->text_offset = NVTX_NO_TEXT;
		ev->text_len = 0;
	}
	batch->events[batch->count++] = *ev;
	if (mode == NVTX_ATTACHED &&
	    (batch->count >= NVTX_BATCH_EVENTS || batch->text_len >= NVTX_BATCH_TEXT)) {
		full = batch;
		batch = NULL;
		to = sink;
	}
out_unlock:
	pthread_mutex_unlock(&nvtx_lock);
	if (full)
		collector_submit_nvtx(to, full);
}

static void event_init(struct collector_nvtx_event *ev, enum collector_nvtx_kind kind,
		       nvtxDomainHandle_t domain)
{
	memset(ev, 0, sizeof(*ev));
	ev->timestamp = gpt_clock_now();
	ev->kind = (uint8_t)kind;
	ev->tid = current_tid();
	ev->domain = domain ? domain->id : 0;
}

/* The calling thread's priority as field 18 of /proc/TID/stat shows it; 0 or -1. */
static int thread_priority(int *priority)
{
	struct sched_param param;
	int policy = sched_getscheduler(0), nice;

	if (policy == SCHED_FIFO || policy == SCHED_RR) {
		if (sched_getparam(0, &param) < 0)
			return -1;
		*priority = -1 - param.sched_priority;
		return 0;
	}
	if (policy < 0)
		return -1;
	/* Linux: PRIO_PROCESS with 0 is the calling thread. */
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (nice == -1 && errno)
		return -1;
	*priority = 20 + nice;
	return 0;
}

/*
 * With a thread's first event, its comm (and priority): the writer reads names from /proc, and a
 * thread may be gone by then (collector.h, NVTX_EV_OS_THREAD_NAME). Three system calls per thread.
 */
static void report_thread_name(void)
{
	struct collector_nvtx_event ev;
	char name[17] = "";
	int priority;

	if (prctl(PR_GET_NAME, name) != 0)
		return;
	event_init(&ev, NVTX_EV_OS_THREAD_NAME, NULL);
	if (thread_priority(&priority) == 0) {
		ev.payload = (uint64_t)(int64_t)priority;
		ev.payload_type = 1;
	}
	nvtx_record(&ev, name, strnlen(name, 16));
}

/* UTF-32 (Linux wchar_t) to UTF-8 into out (size NVTX_TEXT_MAX); returns the length. */
static size_t wide_to_utf8(const wchar_t *in, char *out)
{
	size_t n = 0;

	for (; in && *in; in++) {
		uint32_t c = (uint32_t)*in;

		if (c < 0x80) {
			if (n + 1 > NVTX_TEXT_MAX)
				break;
			out[n++] = (char)c;
		} else if (c < 0x800) {
			if (n + 2 > NVTX_TEXT_MAX)
				break;
			out[n++] = (char)(0xc0 | (c >> 6));
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			if (n + 3 > NVTX_TEXT_MAX)
				break;
			out[n++] = (char)(0xe0 | (c >> 12));
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			if (n + 4 > NVTX_TEXT_MAX)
				break;
			out[n++] = (char)(0xf0 | ((c >> 18) & 0x07));
			out[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return n;
}

/* Record an event described by NVTX event attributes (message, colour, category, payload). */
static void record_attributes(enum collector_nvtx_kind kind, nvtxDomainHandle_t domain,
			      const nvtxEventAttributes_t *attr, uint64_t range_id)
{
	struct collector_nvtx_event ev;
	const char *text = NULL;
	char wide[NVTX_TEXT_MAX];
	size_t len = 0;

	event_init(&ev, kind, domain);
	ev.range_id = range_id;
	/* Fields up to the message exist since the first version of the structure. */
	if (attr && attr->size >= sizeof(nvtxEventAttributes_t)) {
		ev.category = attr->category;
		if (attr->colorType == NVTX_COLOR_ARGB) {
			ev.has_color = 1;
			ev.color = attr->color;
		}
		if (attr->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 &&
		    attr->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT) {
			ev.payload_type = (uint8_t)attr->payloadType;
			memcpy(&ev.payload, &attr->payload, sizeof(ev.payload));
		}
		switch (attr->messageType) {
		case NVTX_MESSAGE_TYPE_ASCII:
			text = attr->message.ascii;
			len = text ? strlen(text) : 0;
			break;
		case NVTX_MESSAGE_TYPE_UNICODE:
			len = wide_to_utf8(attr->message.unicode, wide);
			text = wide;
			break;
		case NVTX_MESSAGE_TYPE_REGISTERED:
			if (attr->message.registered)
				ev.registered = attr->message.registered->id;
			break;
		}
	}
	nvtx_record(&ev, text, len);
}

static void record_text(enum collector_nvtx_kind kind, const char *text, uint64_t range_id)
{
	struct collector_nvtx_event ev;

	event_init(&ev, kind, NULL);
	ev.range_id = range_id;
	nvtx_record(&ev, text, text ? strlen(text) : 0);
}

static void record_wide(enum collector_nvtx_kind kind, const wchar_t *text, uint64_t range_id)
{
	struct collector_nvtx_event ev;
	char utf8[NVTX_TEXT_MAX];

	event_init(&ev, kind, NULL);
	ev.range_id = range_id;
	nvtx_record(&ev, utf8, wide_to_utf8(text, utf8));
}

static uint64_t new_range_id(void)
{
	return atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
}

/* The handlers. Push returns the depth of the new range and pop that of the popped one (0-based),
 * counted per thread over all domains. */

static void NVTX_API on_mark_ex(const nvtxEventAttributes_t *attr)
{
	record_attributes(NVTX_EV_MARK, NULL, attr, 0);
}

static void NVTX_API on_mark_a(const char *message)
{
	record_text(NVTX_EV_MARK, message, 0);
}

static void NVTX_API on_mark_w(const wchar_t *message)
{
	record_wide(NVTX_EV_MARK, message, 0);
}

static nvtxRangeId_t NVTX_API on_range_start_ex(const nvtxEventAttributes_t *attr)
{
	uint64_t id = new_range_id();

	record_attributes(NVTX_EV_START, NULL, attr, id);
	return id;
}

static nvtxRangeId_t NVTX_API on_range_start_a(const char *message)
{
	uint64_t id = new_range_id();

	record_text(NVTX_EV_START, message, id);
	return id;
}

static nvtxRangeId_t NVTX_API on_range_start_w(const wchar_t *message)
{
	uint64_t id = new_range_id();

	record_wide(NVTX_EV_START, message, id);
	return id;
}

static void NVTX_API on_range_end(nvtxRangeId_t id)
{
	record_text(NVTX_EV_END, NULL, id);
}

static int NVTX_API on_range_push_ex(const nvtxEventAttributes_t *attr)
{
	record_attributes(NVTX_EV_PUSH, NULL, attr, 0);
	return push_depth++;
}

static int NVTX_API on_range_push_a(const char *message)
{
	record_text(NVTX_EV_PUSH, message, 0);
	return push_depth++;
}

static int NVTX_API on_range_push_w(const wchar_t *message)
{
	record_wide(NVTX_EV_PUSH, message, 0);
	return push_depth++;
}

static int NVTX_API on_range_pop(void)
{
	record_text(NVTX_EV_POP, NULL, 0);
	return push_depth > 0 ? --push_depth : -1;
}

static void name_category(nvtxDomainHandle_t domain, uint32_t category, const char *name, size_t len)
{
	struct collector_nvtx_event ev;

	event_init(&ev, NVTX_EV_CATEGORY, domain);
	ev.category = category;
	nvtx_record(&ev, name, len);
}

static void NVTX_API on_name_category_a(uint32_t category, const char *name)
{
	name_category(NULL, category, name, name ? strlen(name) : 0);
}

static void NVTX_API on_name_category_w(uint32_t category, const wchar_t *name)
{
	char utf8[NVTX_TEXT_MAX];

	name_category(NULL, category, utf8, wide_to_utf8(name, utf8));
}

static void name_thread(uint32_t tid, const char *name, size_t len)
{
	struct collector_nvtx_event ev;

	event_init(&ev, NVTX_EV_THREAD_NAME, NULL);
	ev.category = tid;
	nvtx_record(&ev, name, len);
}

static void NVTX_API on_name_os_thread_a(uint32_t tid, const char *name)
{
	name_thread(tid, name, name ? strlen(name) : 0);
}

static void NVTX_API on_name_os_thread_w(uint32_t tid, const wchar_t *name)
{
	char utf8[NVTX_TEXT_MAX];

	name_thread(tid, utf8, wide_to_utf8(name, utf8));
}

static void NVTX_API on_domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attr)
{
	record_attributes(NVTX_EV_MARK, domain, attr, 0);
}

static nvtxRangeId_t NVTX_API on_domain_range_start_ex(nvtxDomainHandle_t domain,
						       const nvtxEventAttributes_t *attr)
{
	uint64_t id = new_range_id();

	record_attributes(NVTX_EV_START, domain, attr, id);
	return id;
}

static void NVTX_API on_domain_range_end(nvtxDomainHandle_t domain, nvtxRangeId_t id)
{
	struct collector_nvtx_event ev;

	/* Range ids are unique over all domains: the end is matched by id alone. */
	event_init(&ev, NVTX_EV_END, domain);
	ev.range_id = id;
	nvtx_record(&ev, NULL, 0);
}

static int NVTX_API on_domain_range_push_ex(nvtxDomainHandle_t domain,
					    const nvtxEventAttributes_t *attr)
{
	record_attributes(NVTX_EV_PUSH, domain, attr, 0);
	return push_depth++;
}

static int NVTX_API on_domain_range_pop(nvtxDomainHandle_t domain)
{
	struct collector_nvtx_event ev;

	event_init(&ev, NVTX_EV_POP, domain);
	nvtx_record(&ev, NULL, 0);
	return push_depth > 0 ? --push_depth : -1;
}

static nvtxResourceHandle_t NVTX_API on_domain_resource_create(nvtxDomainHandle_t domain,
							       nvtxResourceAttributes_t *attribs)
{
	(void)domain;
	(void)attribs;
	return NULL;
}

static void NVTX_API on_domain_resource_destroy(nvtxResourceHandle_t resource)
{
	(void)resource;
}

static void NVTX_API on_domain_name_category_a(nvtxDomainHandle_t domain, uint32_t category,
					       const char *name)
{
	name_category(domain, category, name, name ? strlen(name) : 0);
}

static void NVTX_API on_domain_name_category_w(nvtxDomainHandle_t domain, uint32_t category,
					       const wchar_t *name)
{
	char utf8[NVTX_TEXT_MAX];

	name_category(domain, category, utf8, wide_to_utf8(name, utf8));
}

static nvtxStringHandle_t register_string(nvtxDomainHandle_t domain, const char *text, size_t len)
{
	struct nvtxStringRegistration_st *handle = malloc(sizeof(*handle));
	struct collector_nvtx_event ev;

	if (!handle)
		return NULL;
	handle->id = atomic_fetch_add(&next_string_id, 1);
	pthread_mutex_lock(&nvtx_lock);
	handle->next = strings;
	strings = handle;
	pthread_mutex_unlock(&nvtx_lock);
	event_init(&ev, NVTX_EV_REGISTER, domain);
	ev.range_id = handle->id;
	nvtx_record(&ev, text ? text : "", text ? len : 0);
	return handle;
}

static nvtxStringHandle_t NVTX_API on_domain_register_string_a(nvtxDomainHandle_t domain,
							       const char *text)
{
	return register_string(domain, text, text ? strlen(text) : 0);
}

static nvtxStringHandle_t NVTX_API on_domain_register_string_w(nvtxDomainHandle_t domain,
							       const wchar_t *text)
{
	char utf8[NVTX_TEXT_MAX];

	return register_string(domain, utf8, wide_to_utf8(text, utf8));
}

static nvtxDomainHandle_t create_domain(const char *name, size_t len)
{
	struct nvtxDomainRegistration_st *d;
	struct collector_nvtx_event ev;

	/* One handle per name, as nsys shows one domain per name. */
	pthread_mutex_lock(&nvtx_lock);
	for (d = domains; d; d = d->next)
		if (strlen(d->name) == len && memcmp(d->name, name, len) == 0)
			break;
	if (d) {
		pthread_mutex_unlock(&nvtx_lock);
		return d;
	}
	d = calloc(1, sizeof(*d));
	if (d && !(d->name = strndup(name, len))) {
		free(d);
		d = NULL;
	}
	if (d) {
		d->id = atomic_fetch_add(&next_domain_id, 1);
		d->next = domains;
		domains = d;
	}
	pthread_mutex_unlock(&nvtx_lock);
	if (d) {
		event_init(&ev, NVTX_EV_DOMAIN, d);
		nvtx_record(&ev, d->name, len);
	}
	return d;
}

static nvtxDomainHandle_t NVTX_API on_domain_create_a(const char *name)
{
	return create_domain(name ? name : "", name ? strlen(name) : 0);
}

static nvtxDomainHandle_t NVTX_API on_domain_create_w(const wchar_t *name)
{
	char utf8[NVTX_TEXT_MAX];

	return create_domain(utf8, wide_to_utf8(name, utf8));
}

static void NVTX_API on_domain_destroy(nvtxDomainHandle_t domain)
{
	/* Handles stay valid: a racing call on another thread may still use it. */
	(void)domain;
}

static void NVTX_API on_initialize(const void *reserved)
{
	(void)reserved;
}

struct handler {
	unsigned cbid;
	NvtxFunctionPointer fn;
};

#define HANDLER(id, fn) { id, (NvtxFunctionPointer)(fn) }

static const struct handler core_handlers[] = {
	HANDLER(NVTX_CBID_CORE_MarkEx, on_mark_ex),
	HANDLER(NVTX_CBID_CORE_MarkA, on_mark_a),
	HANDLER(NVTX_CBID_CORE_MarkW, on_mark_w),
	HANDLER(NVTX_CBID_CORE_RangeStartEx, on_range_start_ex),
	HANDLER(NVTX_CBID_CORE_RangeStartA, on_range_start_a),
	HANDLER(NVTX_CBID_CORE_RangeStartW, on_range_start_w),
	HANDLER(NVTX_CBID_CORE_RangeEnd, on_range_end),
	HANDLER(NVTX_CBID_CORE_RangePushEx, on_range_push_ex),
	HANDLER(NVTX_CBID_CORE_RangePushA, on_range_push_a),
	HANDLER(NVTX_CBID_CORE_RangePushW, on_range_push_w),
	HANDLER(NVTX_CBID_CORE_RangePop, on_range_pop),
	HANDLER(NVTX_CBID_CORE_NameCategoryA, on_name_category_a),
	HANDLER(NVTX_CBID_CORE_NameCategoryW, on_name_category_w),
	HANDLER(NVTX_CBID_CORE_NameOsThreadA, on_name_os_thread_a),
	HANDLER(NVTX_CBID_CORE_NameOsThreadW, on_name_os_thread_w),
};

static const struct handler core2_handlers[] = {
	HANDLER(NVTX_CBID_CORE2_DomainMarkEx, on_domain_mark_ex),
	HANDLER(NVTX_CBID_CORE2_DomainRangeStartEx, on_domain_range_start_ex),
	HANDLER(NVTX_CBID_CORE2_DomainRangeEnd, on_domain_range_end),
	HANDLER(NVTX_CBID_CORE2_DomainRangePushEx, on_domain_range_push_ex),
	HANDLER(NVTX_CBID_CORE2_DomainRangePop, on_domain_range_pop),
	HANDLER(NVTX_CBID_CORE2_DomainResourceCreate, on_domain_resource_create),
	HANDLER(NVTX_CBID_CORE2_DomainResourceDestroy, on_domain_resource_destroy),
	HANDLER(NVTX_CBID_CORE2_DomainNameCategoryA, on_domain_name_category_a),
	HANDLER(NVTX_CBID_CORE2_DomainNameCategoryW, on_domain_name_category_w),
	HANDLER(NVTX_CBID_CORE2_DomainRegisterStringA, on_domain_register_string_a),
	HANDLER(NVTX_CBID_CORE2_DomainRegisterStringW, on_domain_register_string_w),
	HANDLER(NVTX_CBID_CORE2_DomainCreateA, on_domain_create_a),
	HANDLER(NVTX_CBID_CORE2_DomainCreateW, on_domain_create_w),
	HANDLER(NVTX_CBID_CORE2_DomainDestroy, on_domain_destroy),
	HANDLER(NVTX_CBID_CORE2_Initialize, on_initialize),
};

static int install(const NvtxExportTableCallbacks *callbacks, NvtxCallbackModule module,
		   const struct handler *handlers, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0;

	if (!callbacks->GetModuleFunctionTable(module, &table, &size) || !table)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (handlers[i].cbid < size && table[handlers[i].cbid])
			*table[handlers[i].cbid] = handlers[i].fn;
	return 1;
}

/*
 * Called once per NVTX instance (through InitializeInjectionNvtx2, inject.c): every library that
 * includes the nvtx3 headers has its own, so a PyTorch process may call this several times; each
 * call fills that instance's tables.
 */
int nvtx_install(const void *(*get)(uint32_t table_id))
{
	const NvtxExportTableCallbacks *callbacks;

	if (atomic_load(&mode) == NVTX_OFF || !get)
		return 0;	/* NVTX then makes every call a no-op */
	callbacks = get(NVTX_ETID_CALLBACKS);
	if (!callbacks || callbacks->struct_size < sizeof(*callbacks))
		return 0;
	if (!install(callbacks, NVTX_CB_MODULE_CORE, core_handlers,
		     sizeof(core_handlers) / sizeof(core_handlers[0])))
		return 0;
	install(callbacks, NVTX_CB_MODULE_CORE2, core2_handlers,
		sizeof(core2_handlers) / sizeof(core2_handlers[0]));
	return 1;
}

void nvtx_attach(struct collector *collector)
{
	struct collector_nvtx_batch *pending;

	pthread_mutex_lock(&nvtx_lock);
	if (mode != NVTX_PENDING) {
		pthread_mutex_unlock(&nvtx_lock);
		return;
	}
	sink = collector;
	mode = NVTX_ATTACHED;
	pending = batch;
	batch = NULL;
	pthread_mutex_unlock(&nvtx_lock);
	if (pending)
		collector_submit_nvtx(collector, pending);
}

void nvtx_flush(void)
{
	struct collector_nvtx_batch *current = NULL;
	struct collector *to = NULL;

	pthread_mutex_lock(&nvtx_lock);
	if (mode == NVTX_ATTACHED && batch && (batch->count || batch->dropped)) {
		current = batch;
		batch = NULL;
		to = sink;
	}
	pthread_mutex_unlock(&nvtx_lock);
	if (current)
		collector_submit_nvtx(to, current);
}

void nvtx_detach(void)
{
	nvtx_flush();
	pthread_mutex_lock(&nvtx_lock);
	mode = NVTX_OFF;
	batch_free(batch);
	batch = NULL;
	pthread_mutex_unlock(&nvtx_lock);
}

void nvtx_shift_pending(int64_t delta)
{
	pthread_mutex_lock(&nvtx_lock);
	for (size_t i = 0; batch && i < batch->count; i++)
		batch->events[i].timestamp += (uint64_t)delta;
	pthread_mutex_unlock(&nvtx_lock);
}

void nvtx_fork_prepare(void)
{
	pthread_mutex_lock(&nvtx_lock);
}

void nvtx_fork_parent(void)
{
	pthread_mutex_unlock(&nvtx_lock);
}

void nvtx_fork_child(int inert)
{
	/* The child has one thread, ours: the lock can be reset, the parent's events dropped. */
	pthread_mutex_init(&nvtx_lock, NULL);
	batch_free(batch);
	batch = NULL;
	thread_id = 0;
	push_depth = 0;
	mode = inert ? NVTX_OFF : NVTX_PENDING;
}
