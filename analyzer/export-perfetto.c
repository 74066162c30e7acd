/*
 * Perfetto protobuf writer for the exporter: a Trace is a sequence of `packet` fields (field 1,
 * length-delimited), so each TracePacket is packed with protobuf-c and written at once with that
 * framing; nothing of the trace is kept in memory but the interning tables.
 *
 * Everything is on one packet sequence (trusted_packet_sequence_id 1). Event names, categories,
 * argument names and string argument values are interned: the first packet that uses a string
 * carries it in interned_data, later ones only its iid. Perfetto's reader drops every packet that
 * uses interned data unless the sequence's first packet says SEQ_INCREMENTAL_STATE_CLEARED, and
 * packets that rely on the state say SEQ_NEEDS_INCREMENTAL_STATE; both flags are set here. The
 * repeated ids (category_iids, flow_ids, terminating_flow_ids) must go out unpacked, one tag per
 * value, or the reader silently loses categories and flows: perfetto_trace.proto is proto2 without
 * [packed=true], so protoc-c emits them that way.
 *
 * The tables hold each distinct string once. Strings that are unique per event (NVTX text with a
 * step number, say) would make them grow with the trace, so past INTERN_MAX_BYTES new strings are
 * written inline instead.
 */
#include "analyzer/export-timeline.h"
#include "perfetto/perfetto_trace.pb-c.h"
#include "common/strtab.h"
#include "common/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SEQUENCE_ID 1
#define INTERN_MAX_BYTES (64u << 20)
#define INTERN_ENTRY_BYTES 32		/* counted per interned string beside its text */

/* iids of string constants (argument names, categories) by address: no hashing of the text. */
#define CONST_CACHE 64
struct const_cache {
	const char *key[CONST_CACHE];
	uint64_t iid[CONST_CACHE];
};

/* iids of strings by address, checked against the text: the same kernel name comes back at the same
 * address (trace_string()), and comparing it costs less than hashing it; a buffer that is reused for
 * other text only misses. */
#define SEEN_CACHE 256
struct seen_cache {
	const char *key[SEEN_CACHE];
	uint64_t iid[SEEN_CACHE];
};

/* A table of interned strings: iid = strtab index + 1 (iid 0 means "not set" to Perfetto). */
struct intern_table {
	struct strtab keys;
	char **valid;			/* by index: key made valid UTF-8, NULL when key already is */
	size_t cap;
	struct const_cache consts;	/* intern_const()'s */
	struct seen_cache seen;		/* intern()'s */
};

struct perfetto_sink {
	struct timeline_sink base;
	struct export_file *file;
	uint64_t npackets;
	size_t interned_bytes;

	struct intern_table names, categories, arg_names, arg_values;
	/* New entries of the current packet, by kind. */
	Perfetto__Protos__EventName *new_names;
	Perfetto__Protos__EventCategory *new_categories;
	Perfetto__Protos__DebugAnnotationName *new_arg_names;
	Perfetto__Protos__InternedString *new_arg_values;
	void **new_name_ptrs, **new_category_ptrs, **new_arg_name_ptrs, **new_arg_value_ptrs;
	size_t n_new_names, n_new_categories, n_new_arg_names, n_new_arg_values;
	size_t new_cap;		/* capacity of each of the arrays above */

	Perfetto__Protos__DebugAnnotation *anns;
	Perfetto__Protos__DebugAnnotation **ann_ptrs;
	size_t ann_cap;
	uint64_t category_iid;

	char *inline_copies[64];	/* made-valid copies of strings written inline, freed per packet */
	size_t n_inline_copies;

	uint8_t *buf;
	size_t buf_cap;
};

/*
 * The iid of s in t, adding it if new (*added set, *stored the table's copy, valid UTF-8). Returns 0
 * when s cannot be interned (memory limit reached): the caller writes it inline.
 */
static uint64_t intern(struct perfetto_sink *ps, struct intern_table *t, const char *s, int *added,
		       const char **stored)
{
	uintptr_t a = (uintptr_t)s;
	size_t slot = (size_t)((a ^ (a >> 7) ^ (a >> 15)) % SEEN_CACHE), i;

	*added = 0;
	if (t->seen.key[slot] == s && !strcmp(strtab_at(&t->keys, t->seen.iid[slot] - 1), s))
		return t->seen.iid[slot];
	i = strtab_find(&t->keys, s);
	if (i != SIZE_MAX) {
		t->seen.key[slot] = s;
		t->seen.iid[slot] = i + 1;
		return i + 1;
	}
	if (ps->interned_bytes + strlen(s) > INTERN_MAX_BYTES)
		return 0;
	i = strtab_get(&t->keys, s, NULL);
	if (i >= t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->valid = xrealloc(t->valid, t->cap * sizeof(*t->valid));
	}
	t->valid[i] = export_utf8_valid(s) ? NULL : export_utf8_sanitize(s);
	ps->interned_bytes += strlen(s) + 1 + INTERN_ENTRY_BYTES;
	*added = 1;
	*stored = t->valid[i] ? t->valid[i] : strtab_at(&t->keys, i);
	t->seen.key[slot] = s;
	t->seen.iid[slot] = i + 1;
	return i + 1;
}

static void intern_release(struct intern_table *t)
{
	for (size_t i = 0; i < t->keys.count; i++)
		free(t->valid[i]);
	free(t->valid);
	strtab_release(&t->keys);
}

/* Room for n new entries of each kind in the current packet. */
static int reserve_new(struct perfetto_sink *ps, size_t n)
{
	size_t need = n + ps->n_new_names + ps->n_new_categories + ps->n_new_arg_names + ps->n_new_arg_values;
	size_t cap = ps->new_cap ? ps->new_cap : 16;

	if (need <= ps->new_cap)
		return 0;
	while (cap < need)
		cap *= 2;
#define GROW(field, type)                                                   \
	do {                                                                \
		type *p = realloc(ps->field, cap * sizeof(*p));             \
		if (!p)                                                     \
			return -ENOMEM;                                     \
		ps->field = p;                                              \
	} while (0)
	GROW(new_names, Perfetto__Protos__EventName);
	GROW(new_categories, Perfetto__Protos__EventCategory);
	GROW(new_arg_names, Perfetto__Protos__DebugAnnotationName);
	GROW(new_arg_values, Perfetto__Protos__InternedString);
	GROW(new_name_ptrs, void *);
	GROW(new_category_ptrs, void *);
	GROW(new_arg_name_ptrs, void *);
	GROW(new_arg_value_ptrs, void *);
#undef GROW
	ps->new_cap = cap;
	return 0;
}

static uint64_t intern_name(struct perfetto_sink *ps, const char *s)
{
	const char *stored;
	int added;
	uint64_t iid = intern(ps, &ps->names, s, &added, &stored);

	if (added) {
		Perfetto__Protos__EventName *e = &ps->new_names[ps->n_new_names];

		perfetto__protos__event_name__init(e);
		e->has_iid = 1;
		e->iid = iid;
		e->name = (char *)stored;
		ps->new_name_ptrs[ps->n_new_names++] = e;
	}
	return iid;
}

/* intern() of a string constant (export-timeline.h: argument names, categories), remembered by its
 * address. */
static uint64_t intern_const(struct perfetto_sink *ps, struct intern_table *t, const char *s, int *added,
			     const char **stored)
{
	uintptr_t a = (uintptr_t)s;
	size_t slot = (size_t)((a ^ (a >> 6) ^ (a >> 12)) % CONST_CACHE);
	uint64_t iid;

	*added = 0;
	if (t->consts.key[slot] == s)
		return t->consts.iid[slot];
	iid = intern(ps, t, s, added, stored);
	if (iid) {
		t->consts.key[slot] = s;
		t->consts.iid[slot] = iid;
	}
	return iid;
}

static uint64_t intern_category(struct perfetto_sink *ps, const char *s)
{
	const char *stored;
	int added;
	uint64_t iid = intern_const(ps, &ps->categories, s, &added, &stored);

	if (added) {
		Perfetto__Protos__EventCategory *e = &ps->new_categories[ps->n_new_categories];

		perfetto__protos__event_category__init(e);
		e->has_iid = 1;
		e->iid = iid;
		e->name = (char *)stored;
		ps->new_category_ptrs[ps->n_new_categories++] = e;
	}
	return iid;
}

static uint64_t intern_arg_name(struct perfetto_sink *ps, const char *s)
{
	const char *stored;
	int added;
	uint64_t iid = intern_const(ps, &ps->arg_names, s, &added, &stored);

	if (added) {
		Perfetto__Protos__DebugAnnotationName *e = &ps->new_arg_names[ps->n_new_arg_names];

		perfetto__protos__debug_annotation_name__init(e);
		e->has_iid = 1;
		e->iid = iid;
		e->name = (char *)stored;
		ps->new_arg_name_ptrs[ps->n_new_arg_names++] = e;
	}
	return iid;
}

static uint64_t intern_arg_value(struct perfetto_sink *ps, const char *s)
{
	const char *stored;
	int added;
	uint64_t iid = intern(ps, &ps->arg_values, s, &added, &stored);

	if (added) {
		Perfetto__Protos__InternedString *e = &ps->new_arg_values[ps->n_new_arg_values];

		perfetto__protos__interned_string__init(e);
		e->has_iid = 1;
		e->iid = iid;
		e->has_str = 1;
		e->str.data = (uint8_t *)stored;
		e->str.len = strlen(stored);
		ps->new_arg_value_ptrs[ps->n_new_arg_values++] = e;
	}
	return iid;
}

/* A string written inline (not interned), made valid UTF-8 if needed. */
static char *inline_text(struct perfetto_sink *ps, const char *s)
{
	char *copy;

	if (export_utf8_valid(s) || ps->n_inline_copies == sizeof(ps->inline_copies) / sizeof(ps->inline_copies[0]))
		return (char *)s;
	copy = export_utf8_sanitize(s);
	if (!copy)
		return (char *)s;
	ps->inline_copies[ps->n_inline_copies++] = copy;
	return copy;
}

static void free_inline_copies(struct perfetto_sink *ps)
{
	while (ps->n_inline_copies)
		free(ps->inline_copies[--ps->n_inline_copies]);
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Frame and write one packet as Trace.packet; attaches the interned entries collected for it. */
static int write_packet(struct perfetto_sink *ps, Perfetto__Protos__TracePacket *packet, int needs_state)
{
	Perfetto__Protos__InternedData interned = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	size_t size, head;
	int ret;

	packet->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	packet->trusted_packet_sequence_id = SEQUENCE_ID;
	if (!ps->npackets) {
		packet->has_sequence_flags = 1;
		packet->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
		packet->has_first_packet_on_sequence = 1;
		packet->first_packet_on_sequence = 1;
	} else if (needs_state) {
		packet->has_sequence_flags = 1;
		packet->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	}
	if (ps->n_new_names || ps->n_new_categories || ps->n_new_arg_names || ps->n_new_arg_values) {
		interned.n_event_names = ps->n_new_names;
		interned.event_names = (Perfetto__Protos__EventName **)ps->new_name_ptrs;
		interned.n_event_categories = ps->n_new_categories;
		interned.event_categories = (Perfetto__Protos__EventCategory **)ps->new_category_ptrs;
		interned.n_debug_annotation_names = ps->n_new_arg_names;
		interned.debug_annotation_names = (Perfetto__Protos__DebugAnnotationName **)ps->new_arg_name_ptrs;
		interned.n_debug_annotation_string_values = ps->n_new_arg_values;
		interned.debug_annotation_string_values = (Perfetto__Protos__InternedString **)ps->new_arg_value_ptrs;
		packet->interned_data = &interned;
	}

	size = perfetto__protos__trace_packet__get_packed_size(packet);
	if (size + 11 > ps->buf_cap) {
		size_t cap = ps->buf_cap ? ps->buf_cap : 4096;
		uint8_t *buf;

		while (cap < size + 11)
			cap *= 2;
		buf = realloc(ps->buf, cap);
		if (!buf)
			return -ENOMEM;
		ps->buf = buf;
		ps->buf_cap = cap;
	}
	ps->buf[0] = (1 << 3) | 2;	/* Trace.packet, length-delimited */
	head = 1 + put_varint(ps->buf + 1, size);
	perfetto__protos__trace_packet__pack(packet, ps->buf + head);
	ret = export_file_write(ps->file, ps->buf, head + size);
	free_inline_copies(ps);
	ps->npackets++;
	ps->n_new_names = ps->n_new_categories = ps->n_new_arg_names = ps->n_new_arg_values = 0;
	return ret;
}

static int perfetto_begin(struct timeline_sink *sink, int64_t origin)
{
	(void)sink;
	(void)origin;	/* Perfetto keeps the trace's own nanosecond timestamps */
	return 0;
}

static int perfetto_track(struct timeline_sink *sink, const struct timeline_track *track)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;
	Perfetto__Protos__TracePacket packet = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor desc = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor process = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thread = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor counter = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	char *counter_name = NULL;
	int ret;

	desc.has_uuid = 1;
	desc.uuid = track->uuid;
	if (track->parent_uuid) {
		desc.has_parent_uuid = 1;
		desc.parent_uuid = track->parent_uuid;
	}
	switch (track->kind) {
	case TIMELINE_PROCESS:
		process.has_pid = 1;
		process.pid = track->pid;
		process.process_name = inline_text(ps, track->name);
		process.has_legacy_sort_index = 1;
		process.legacy_sort_index = track->sort_index;
		desc.process = &process;
		desc.has_child_ordering = 1;
		desc.child_ordering = PERFETTO__PROTOS__TRACK_DESCRIPTOR__CHILD_TRACKS_ORDERING__EXPLICIT;
		break;
	case TIMELINE_THREAD:
		thread.has_pid = 1;
		thread.pid = track->pid;
		thread.has_tid = 1;
		thread.tid = track->tid;
		thread.thread_name = inline_text(ps, track->name);
		thread.has_legacy_sort_index = 1;
		thread.legacy_sort_index = track->sort_index;
		desc.thread = &thread;
		desc.has_sibling_order_rank = 1;
		desc.sibling_order_rank = track->sort_index;
		break;
	case TIMELINE_LANE:
		desc.name = inline_text(ps, track->name);
		desc.has_sibling_order_rank = 1;
		desc.sibling_order_rank = track->sort_index;
		break;
	case TIMELINE_COUNTER:
		/* Named "<name> <unit>", as Perfetto names a Chrome JSON counter, so both formats agree. */
		counter_name = malloc(strlen(track->name) + strlen(track->unit) + 2);
		if (!counter_name)
			return -ENOMEM;
		strcpy(counter_name, track->name);
		strcat(counter_name, " ");
		strcat(counter_name, track->unit);
		desc.name = inline_text(ps, counter_name);
		counter.unit_name = (char *)track->unit;
		desc.counter = &counter;
		desc.has_sibling_order_rank = 1;
		desc.sibling_order_rank = track->sort_index;
		break;
	}
	packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	packet.track_descriptor = &desc;
	ret = write_packet(ps, &packet, 0);
	free(counter_name);
	return ret;
}

/* Fill a TrackEvent's name, category and arguments, interning as it goes. */
static int fill_event(struct perfetto_sink *ps, Perfetto__Protos__TrackEvent *te, const struct timeline_event *ev)
{
	uint64_t iid;

	if (reserve_new(ps, 2 + 2 * ev->nargs) < 0)
		return -ENOMEM;
	if (ev->nargs > ps->ann_cap) {
		size_t cap = ev->nargs * 2;
		Perfetto__Protos__DebugAnnotation *anns = realloc(ps->anns, cap * sizeof(*anns));
		Perfetto__Protos__DebugAnnotation **ptrs;

		if (!anns)
			return -ENOMEM;
		ps->anns = anns;
		ptrs = realloc(ps->ann_ptrs, cap * sizeof(*ptrs));
		if (!ptrs)
			return -ENOMEM;
		ps->ann_ptrs = ptrs;
		ps->ann_cap = cap;
	}
	te->has_track_uuid = 1;
	te->track_uuid = ev->track->uuid;
	iid = intern_name(ps, ev->name ? ev->name : "");
	if (iid) {
		te->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
		te->name_iid = iid;
	} else {
		te->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
		te->name = inline_text(ps, ev->name ? ev->name : "");
	}
	if (ev->category) {
		ps->category_iid = intern_category(ps, ev->category);
		if (ps->category_iid) {
			te->n_category_iids = 1;
			te->category_iids = &ps->category_iid;
		}
	}
	for (size_t i = 0; i < ev->nargs; i++) {
		const struct timeline_arg *arg = &ev->args[i];
		Perfetto__Protos__DebugAnnotation *ann = &ps->anns[i];

		perfetto__protos__debug_annotation__init(ann);
		iid = intern_arg_name(ps, arg->name);
		if (iid) {
			ann->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
			ann->name_iid = iid;
		} else {
			ann->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
			ann->name = inline_text(ps, arg->name);
		}
		switch (arg->type) {
		case TIMELINE_ARG_INT:
			ann->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
			ann->int_value = arg->i;
			break;
		case TIMELINE_ARG_DOUBLE:
			ann->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
			ann->double_value = arg->d;
			break;
		case TIMELINE_ARG_STRING:
			iid = intern_arg_value(ps, arg->s ? arg->s : "");
			if (iid) {
				ann->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID;
				ann->string_value_iid = iid;
			} else {
				ann->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
				ann->string_value = inline_text(ps, arg->s ? arg->s : "");
			}
			break;
		}
		ps->ann_ptrs[i] = ann;
	}
	te->n_debug_annotations = ev->nargs;
	te->debug_annotations = ps->ann_ptrs;
	return 0;
}

static int perfetto_slice_begin(struct timeline_sink *sink, const struct timeline_event *ev)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;
	Perfetto__Protos__TracePacket packet = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	uint64_t flow_in = ev->flow_in;
	int ret = fill_event(ps, &te, ev);

	if (ret < 0)
		return ret;
	te.has_type = 1;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	te.n_flow_ids = ev->nflows_out;
	te.flow_ids = (uint64_t *)ev->flows_out;
	if (flow_in) {
		te.n_terminating_flow_ids = 1;
		te.terminating_flow_ids = &flow_in;
	}
	packet.has_timestamp = 1;
	packet.timestamp = (uint64_t)ev->start;
	packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	packet.track_event = &te;
	return write_packet(ps, &packet, 1);
}

static int perfetto_slice_end(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;
	Perfetto__Protos__TracePacket packet = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	te.has_type = 1;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	te.has_track_uuid = 1;
	te.track_uuid = track->uuid;
	packet.has_timestamp = 1;
	packet.timestamp = (uint64_t)ts;
	packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	packet.track_event = &te;
	return write_packet(ps, &packet, 0);
}

static int perfetto_instant(struct timeline_sink *sink, const struct timeline_event *ev)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;
	Perfetto__Protos__TracePacket packet = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	int ret = fill_event(ps, &te, ev);

	if (ret < 0)
		return ret;
	te.has_type = 1;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
	packet.has_timestamp = 1;
	packet.timestamp = (uint64_t)ev->start;
	packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	packet.track_event = &te;
	return write_packet(ps, &packet, 1);
}

static int perfetto_counter(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts,
			    double value)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;
	Perfetto__Protos__TracePacket packet = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	te.has_type = 1;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	te.has_track_uuid = 1;
	te.track_uuid = track->uuid;
	te.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
	te.double_counter_value = value;
	packet.has_timestamp = 1;
	packet.timestamp = (uint64_t)ts;
	packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	packet.track_event = &te;
	return write_packet(ps, &packet, 0);
}

static int perfetto_finish(struct timeline_sink *sink)
{
	(void)sink;
	return 0;
}

static void perfetto_free(struct timeline_sink *sink)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;

	if (!ps)
		return;
	intern_release(&ps->names);
	intern_release(&ps->categories);
	intern_release(&ps->arg_names);
	intern_release(&ps->arg_values);
	free(ps->new_names);
	free(ps->new_categories);
	free(ps->new_arg_names);
	free(ps->new_arg_values);
	free(ps->new_name_ptrs);
	free(ps->new_category_ptrs);
	free(ps->new_arg_name_ptrs);
	free(ps->new_arg_value_ptrs);
	free(ps->anns);
	free(ps->ann_ptrs);
	free_inline_copies(ps);
	free(ps->buf);
	free(ps);
}

static const struct timeline_sink_ops perfetto_ops = {
	.begin = perfetto_begin,
	.track = perfetto_track,
	.slice_begin = perfetto_slice_begin,
	.slice_end = perfetto_slice_end,
	.instant = perfetto_instant,
	.counter = perfetto_counter,
	.finish = perfetto_finish,
	.free = perfetto_free,
};

struct timeline_sink *perfetto_sink_new(struct export_file *file)
{
	struct perfetto_sink *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->base.ops = &perfetto_ops;
	ps->file = file;
	return &ps->base;
}
