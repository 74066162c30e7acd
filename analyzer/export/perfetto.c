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
 *
 * Two halves. The sink's calls, on the exporter's thread, intern the strings and write each packet
 * as a record (iids, numbers, the few strings written inline) into a chunk of memory; the encoder
 * builds each record's protobuf-c messages, packs and writes them. protobuf-c is about a third of an
 * export (it sizes each nested message again at every level it packs), so with more than one CPU
 * the encoder runs on a thread of its own, a chunk at a time, while the exporter walks on; with one,
 * the exporter encodes each chunk when it is full. Records go out in order either way: the bytes
 * are the same.
 */
#include "analyzer/export/timeline.h"
#include "perfetto/perfetto_trace.pb-c.h"
#include "common/strtab.h"
#include "common/util.h"
#include "analyzer/loader/events.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SEQUENCE_ID 1
#define INTERN_MAX_BYTES (64u << 20)
#define INTERN_ENTRY_BYTES 32		/* counted per interned string beside its text */
#define CHUNK_BYTES (1u << 20)
#define NCHUNKS 4

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

/* ---- records: one per packet, from the exporter to the encoder ---- */

enum rec_kind { REC_TRACK, REC_SLICE_BEGIN, REC_SLICE_END, REC_INSTANT, REC_COUNTER };
/* the kinds of interned strings, in the order of InternedData's fields */
enum { NEW_NAME, NEW_CATEGORY, NEW_ARG_NAME, NEW_ARG_VALUE, NEW_KINDS };

/* A string the packet interns: its iid and the table's valid copy (it outlives the encoder). */
struct rec_new {
	uint64_t iid;
	const char *text;
};

struct rec_arg {
	uint64_t name_iid;		/* 0: name inline */
	const char *name;
	enum timeline_arg_type type;
	int64_t i;
	double d;
	uint64_t value_iid;		/* strings: 0: value inline */
	const char *value;
};

/* Everything in a record points into its chunk, or at strings that outlive the encoder. */
struct rec {
	struct rec *next;
	enum rec_kind kind;
	int needs_state;
	int64_t ts;
	uint64_t track_uuid;
	uint64_t name_iid;		/* events: 0: name inline */
	const char *name;
	uint64_t category_iid;		/* 0: none */
	uint64_t flow_in;
	const uint64_t *flows;
	size_t nflows;
	const struct rec_arg *args;
	size_t nargs;
	const struct rec_new *news[NEW_KINDS];
	size_t nnews[NEW_KINDS];
	double value;			/* counters */
	struct timeline_track track;	/* tracks: name and unit in the chunk */
};

struct chunk {
	unsigned char *mem;
	size_t cap, used;
	struct rec *first, *last;
	int own;			/* a chunk of one big record: freed once encoded */
};

/* The encoder's side: protobuf-c messages built from a record, and the packing. */
struct encoder {
	struct export_file *file;
	uint64_t npackets;
	Perfetto__Protos__DebugAnnotation *anns;
	Perfetto__Protos__DebugAnnotation **ann_ptrs;
	size_t ann_cap, ann_ptr_cap;
	void *news[NEW_KINDS];		/* Perfetto entries by kind, and pointers to them */
	void **new_ptrs[NEW_KINDS];
	size_t new_cap[NEW_KINDS], new_ptr_cap[NEW_KINDS];
	uint8_t *buf;
	size_t buf_cap;
};

/* Chunks between the two halves: free ones for the exporter, full ones for the encoder, in order. */
struct pipeline {
	pthread_t thread;
	int threaded;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct chunk chunks[NCHUNKS];
	struct chunk *free[NCHUNKS];
	size_t nfree;
	struct chunk **queue;		/* a FIFO of full chunks (pool ones and own ones) */
	size_t qhead, qcount, qcap;
	int busy;			/* the encoder works on a chunk now */
	int stop;
	int error;			/* the encoder's first error (negative errno); sticky */
};

struct perfetto_sink {
	struct timeline_sink base;
	size_t interned_bytes;
	struct intern_table tables[NEW_KINDS];	/* by kind: names, categories, argument names, values */
	/* the record being made: new interned strings and arguments, before they go in a chunk */
	struct rec_new *news[NEW_KINDS];
	size_t nnews[NEW_KINDS], news_cap[NEW_KINDS];
	struct rec_arg *args;
	size_t args_cap;
	char **inline_copies;		/* made-valid copies of strings written inline, freed per record */
	size_t n_inline_copies, inline_cap;
	struct chunk *cur;		/* where records go now: a chunk of the pool, but while a big
					   record is made in one of its own */
	struct chunk *spare;		/* then: the pool's, to go back to */
	struct pipeline pipe;
	struct encoder enc;
};

/* ---- interning (the exporter's thread) ---- */

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

/* intern() of a string constant (timeline.h: argument names, categories), remembered by its
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

/* The iid of s in the table of kind `kind` (constants by address), noting a new one for the record;
 * 0: write s inline. */
static uint64_t intern_new(struct perfetto_sink *ps, int kind, const char *s)
{
	struct intern_table *t = &ps->tables[kind];
	const char *stored = NULL;
	int added;
	uint64_t iid = kind == NEW_CATEGORY || kind == NEW_ARG_NAME ? intern_const(ps, t, s, &added, &stored)
								      : intern(ps, t, s, &added, &stored);

	if (added) {
		if (ps->nnews[kind] == ps->news_cap[kind]) {
			ps->news_cap[kind] = ps->news_cap[kind] ? 2 * ps->news_cap[kind] : 16;
			ps->news[kind] = xrealloc(ps->news[kind], ps->news_cap[kind] * sizeof(*ps->news[kind]));
		}
		ps->news[kind][ps->nnews[kind]++] = (struct rec_new){ iid, stored };
	}
	return iid;
}

/* A string written inline (not interned), made valid UTF-8 if needed; valid until the record is made. */
static const char *inline_text(struct perfetto_sink *ps, const char *s)
{
	char *copy;

	if (export_utf8_valid(s) || !(copy = export_utf8_sanitize(s)))
		return s;
	if (ps->n_inline_copies == ps->inline_cap) {
		ps->inline_cap = ps->inline_cap ? 2 * ps->inline_cap : 16;
		ps->inline_copies = xrealloc(ps->inline_copies, ps->inline_cap * sizeof(*ps->inline_copies));
	}
	ps->inline_copies[ps->n_inline_copies++] = copy;
	return copy;
}

/* ---- the encoder ---- */

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

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* The record's interned strings as InternedData (NULL when none), in the encoder's arrays. */
static int build_interned(struct encoder *e, const struct rec *r, Perfetto__Protos__InternedData *interned,
			  Perfetto__Protos__InternedData **out)
{
	static const size_t sizes[NEW_KINDS] = {
		sizeof(Perfetto__Protos__EventName), sizeof(Perfetto__Protos__EventCategory),
		sizeof(Perfetto__Protos__DebugAnnotationName), sizeof(Perfetto__Protos__InternedString),
	};
	size_t any = 0;

	*out = NULL;
	for (int k = 0; k < NEW_KINDS; k++) {
		any += r->nnews[k];
		if (grow(&e->news[k], &e->new_cap[k], r->nnews[k], sizes[k]) < 0 ||
		    grow((void **)&e->new_ptrs[k], &e->new_ptr_cap[k], r->nnews[k], sizeof(void *)) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < r->nnews[k]; i++) {
			const struct rec_new *n = &r->news[k][i];
			void *entry = (char *)e->news[k] + i * sizes[k];

/* An interned name: three message types of the same fields (iid, name). */
#define NAMED_ENTRY(type, init)                      \
	do {                                         \
		type *x = entry;                     \
		init(x);                             \
		x->has_iid = 1;                      \
		x->iid = n->iid;                     \
		x->name = (char *)n->text;           \
	} while (0)
			switch (k) {
			case NEW_NAME:
				NAMED_ENTRY(Perfetto__Protos__EventName, perfetto__protos__event_name__init);
				break;
			case NEW_CATEGORY:
				NAMED_ENTRY(Perfetto__Protos__EventCategory, perfetto__protos__event_category__init);
				break;
			case NEW_ARG_NAME:
				NAMED_ENTRY(Perfetto__Protos__DebugAnnotationName,
					    perfetto__protos__debug_annotation_name__init);
				break;
			case NEW_ARG_VALUE: {
				Perfetto__Protos__InternedString *x = entry;

				perfetto__protos__interned_string__init(x);
				x->has_iid = 1;
				x->iid = n->iid;
				x->has_str = 1;
				x->str.data = (uint8_t *)n->text;
				x->str.len = strlen(n->text);
				break;
			}
			}
			e->new_ptrs[k][i] = entry;
		}
	}
#undef NAMED_ENTRY
	if (!any)
		return 0;
	interned->n_event_names = r->nnews[NEW_NAME];
	interned->event_names = (Perfetto__Protos__EventName **)e->new_ptrs[NEW_NAME];
	interned->n_event_categories = r->nnews[NEW_CATEGORY];
	interned->event_categories = (Perfetto__Protos__EventCategory **)e->new_ptrs[NEW_CATEGORY];
	interned->n_debug_annotation_names = r->nnews[NEW_ARG_NAME];
	interned->debug_annotation_names = (Perfetto__Protos__DebugAnnotationName **)e->new_ptrs[NEW_ARG_NAME];
	interned->n_debug_annotation_string_values = r->nnews[NEW_ARG_VALUE];
	interned->debug_annotation_string_values = (Perfetto__Protos__InternedString **)e->new_ptrs[NEW_ARG_VALUE];
	*out = interned;
	return 0;
}

/*
 * An upper bound of an event record's packed TracePacket, from the wire format's limits: a tag takes
 * at most 2 bytes here (every field number is below 2048), a varint or fixed64 value at most 10 and a
 * length prefix at most 5. Packing into a buffer this big needs no sizing pass, which is a third of
 * protobuf-c's work on an event: it packs a nested message first and then moves it behind its length.
 */
#define FIELD_MAX 12				/* tag and value */
#define LEN_FIELD_MAX(n) (2 + 5 + (size_t)(n))	/* tag, length and n bytes */

/* A string field (protobuf-c packs a NULL string as an empty one). */
static size_t text_bound(const char *s)
{
	return LEN_FIELD_MAX(s ? strlen(s) : 0);
}

static size_t event_bound(const struct rec *r)
{
	/* timestamp, sequence id, flags, first packet; track_event's and interned_data's framing; type,
	   track uuid, category, counter value, terminating flow; the flows */
	size_t n = 4 * FIELD_MAX + 2 * LEN_FIELD_MAX(0) + 5 * FIELD_MAX + r->nflows * FIELD_MAX;

	n += r->name_iid ? FIELD_MAX : text_bound(r->name);
	for (size_t i = 0; i < r->nargs; i++) {
		const struct rec_arg *arg = &r->args[i];

		n += LEN_FIELD_MAX(0) + (arg->name_iid ? FIELD_MAX : text_bound(arg->name));
		n += arg->type == TIMELINE_ARG_STRING && !arg->value_iid ? text_bound(arg->value) : FIELD_MAX;
	}
	for (int k = 0; k < NEW_KINDS; k++)
		for (size_t i = 0; i < r->nnews[k]; i++)
			n += LEN_FIELD_MAX(0) + FIELD_MAX + text_bound(r->news[k][i].text);
	return n;
}

/* The room write_packet() keeps before a packet for its Trace.packet tag and length. */
#define FRAME_MAX 16

/*
 * Frame and write one packet as Trace.packet, with the record's interned strings. bound: at least the
 * packed size (event_bound()), or 0 to have protobuf-c size it.
 */
static int write_packet(struct encoder *e, const struct rec *r, Perfetto__Protos__TracePacket *packet,
			size_t bound)
{
	Perfetto__Protos__InternedData interned = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	uint8_t frame[FRAME_MAX];
	size_t size, head;
	int ret;

	packet->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	packet->trusted_packet_sequence_id = SEQUENCE_ID;
	if (!e->npackets) {
		packet->has_sequence_flags = 1;
		packet->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
		packet->has_first_packet_on_sequence = 1;
		packet->first_packet_on_sequence = 1;
	} else if (r->needs_state) {
		packet->has_sequence_flags = 1;
		packet->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	}
	if (build_interned(e, r, &interned, &packet->interned_data) < 0)
		return -ENOMEM;
	if (!bound)
		bound = perfetto__protos__trace_packet__get_packed_size(packet);
	if (grow((void **)&e->buf, &e->buf_cap, FRAME_MAX + bound, 1) < 0)
		return -ENOMEM;
	size = perfetto__protos__trace_packet__pack(packet, e->buf + FRAME_MAX);
	if (size > bound)
		abort();	/* event_bound() is wrong: the buffer overflowed */
	frame[0] = (1 << 3) | 2;	/* Trace.packet, length-delimited */
	head = 1 + put_varint(frame + 1, size);
	memcpy(e->buf + FRAME_MAX - head, frame, head);
	ret = export_file_write(e->file, e->buf + FRAME_MAX - head, head + size);
	e->npackets++;
	return ret;
}

static int encode_track(struct encoder *e, const struct rec *r)
{
	const struct timeline_track *track = &r->track;
	Perfetto__Protos__TracePacket packet = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor desc = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor process = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thread = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor counter = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;

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
		process.process_name = (char *)track->name;
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
		thread.thread_name = (char *)track->name;
		thread.has_legacy_sort_index = 1;
		thread.legacy_sort_index = track->sort_index;
		desc.thread = &thread;
		desc.has_sibling_order_rank = 1;
		desc.sibling_order_rank = track->sort_index;
		break;
	case TIMELINE_LANE:
		desc.name = (char *)track->name;
		desc.has_sibling_order_rank = 1;
		desc.sibling_order_rank = track->sort_index;
		break;
	case TIMELINE_COUNTER:
		desc.name = (char *)track->name;	/* "<name> <unit>" (perfetto_track) */
		counter.unit_name = (char *)track->unit;
		desc.counter = &counter;
		desc.has_sibling_order_rank = 1;
		desc.sibling_order_rank = track->sort_index;
		break;
	}
	packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	packet.track_descriptor = &desc;
	return write_packet(e, r, &packet, 0);
}

static int encode_event(struct encoder *e, const struct rec *r)
{
	Perfetto__Protos__TracePacket packet = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	uint64_t category = r->category_iid, flow_in = r->flow_in;

	te.has_track_uuid = 1;
	te.track_uuid = r->track_uuid;
	te.has_type = 1;
	packet.has_timestamp = 1;
	packet.timestamp = (uint64_t)r->ts;
	packet.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	packet.track_event = &te;
	if (r->kind == REC_SLICE_END) {
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
		return write_packet(e, r, &packet, event_bound(r));
	}
	if (r->kind == REC_COUNTER) {
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
		te.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
		te.double_counter_value = r->value;
		return write_packet(e, r, &packet, event_bound(r));
	}
	if (grow((void **)&e->anns, &e->ann_cap, r->nargs, sizeof(*e->anns)) < 0 ||
	    grow((void **)&e->ann_ptrs, &e->ann_ptr_cap, r->nargs, sizeof(*e->ann_ptrs)) < 0)
		return -ENOMEM;
	te.type = r->kind == REC_INSTANT ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT
					 : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	if (r->name_iid) {
		te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
		te.name_iid = r->name_iid;
	} else {
		te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
		te.name = (char *)r->name;
	}
	if (category) {
		te.n_category_iids = 1;
		te.category_iids = &category;
	}
	for (size_t i = 0; i < r->nargs; i++) {
		const struct rec_arg *arg = &r->args[i];
		Perfetto__Protos__DebugAnnotation *ann = &e->anns[i];

		perfetto__protos__debug_annotation__init(ann);
		if (arg->name_iid) {
			ann->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
			ann->name_iid = arg->name_iid;
		} else {
			ann->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
			ann->name = (char *)arg->name;
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
			if (arg->value_iid) {
				ann->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID;
				ann->string_value_iid = arg->value_iid;
			} else {
				ann->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
				ann->string_value = (char *)arg->value;
			}
			break;
		}
		e->ann_ptrs[i] = ann;
	}
	te.n_debug_annotations = r->nargs;
	te.debug_annotations = e->ann_ptrs;
	if (r->kind == REC_SLICE_BEGIN) {
		te.n_flow_ids = r->nflows;
		te.flow_ids = (uint64_t *)r->flows;
		if (flow_in) {
			te.n_terminating_flow_ids = 1;
			te.terminating_flow_ids = &flow_in;
		}
	}
	return write_packet(e, r, &packet, event_bound(r));
}

/* Encode and write a chunk's records, unless an earlier one failed (ret: that error). */
static int encode_chunk(struct encoder *e, const struct chunk *c, int ret)
{
	for (const struct rec *r = c->first; r && ret >= 0; r = r->next)
		ret = r->kind == REC_TRACK ? encode_track(e, r) : encode_event(e, r);
	return ret;
}

static void encoder_release(struct encoder *e)
{
	free(e->anns);
	free(e->ann_ptrs);
	for (int k = 0; k < NEW_KINDS; k++) {
		free(e->news[k]);
		free(e->new_ptrs[k]);
	}
	free(e->buf);
}

/* ---- the pipeline ---- */

static void chunk_reset(struct chunk *c)
{
	c->used = 0;
	c->first = c->last = NULL;
}

/* A chunk encoded (ret: how it went): the first error kept, a chunk of its own freed, a pool chunk
 * emptied, and put back in the free list when the encoder thread had it (under the lock). */
static void chunk_encoded(struct pipeline *p, struct chunk *c, int ret, int to_free_list)
{
	if (ret < 0 && !p->error)
		p->error = ret;
	if (c->own) {
		free(c->mem);
		free(c);
		return;
	}
	chunk_reset(c);
	if (to_free_list)
		p->free[p->nfree++] = c;
}

static void *encoder_thread(void *arg)
{
	struct perfetto_sink *ps = arg;
	struct pipeline *p = &ps->pipe;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct chunk *c;
		int ret;

		while (!p->qcount && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->qcount)
			break;
		c = p->queue[p->qhead];
		p->qhead = (p->qhead + 1) % p->qcap;
		p->qcount--;
		p->busy = 1;
		ret = p->error;
		pthread_mutex_unlock(&p->lock);
		ret = encode_chunk(&ps->enc, c, ret);
		pthread_mutex_lock(&p->lock);
		p->busy = 0;
		chunk_encoded(p, c, ret, 1);
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Hand chunk c to the encoder (or encode it now); returns the encoder's first error, if any. */
static int hand_over(struct perfetto_sink *ps, struct chunk *c)
{
	struct pipeline *p = &ps->pipe;
	int ret;

	if (!p->threaded) {
		chunk_encoded(p, c, encode_chunk(&ps->enc, c, p->error), 0);
		return p->error;
	}
	pthread_mutex_lock(&p->lock);
	if (p->qcount == p->qcap) {
		struct chunk **q = xcalloc(p->qcap * 2, sizeof(*q));

		for (size_t i = 0; i < p->qcount; i++)
			q[i] = p->queue[(p->qhead + i) % p->qcap];
		free(p->queue);
		p->queue = q;
		p->qhead = 0;
		p->qcap *= 2;
	}
	p->queue[(p->qhead + p->qcount++) % p->qcap] = c;
	pthread_cond_broadcast(&p->cond);
	ret = p->error;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* Room for `need` bytes at ps->cur: the current chunk, or, when it holds records, the next one once
 * it is handed over; a record bigger than a chunk gets one of its own, handed over as soon as it is
 * made (put_record). */
static int make_room(struct perfetto_sink *ps, size_t need)
{
	struct pipeline *p = &ps->pipe;
	struct chunk *c = ps->cur;
	int ret;

	if (c->cap - c->used >= need)
		return 0;
	if (c->first) {
		ret = hand_over(ps, c);		/* on one thread: encoded, and c is empty again */
		if (ret < 0)
			return ret;
		if (p->threaded) {
			pthread_mutex_lock(&p->lock);
			while (!p->nfree)
				pthread_cond_wait(&p->cond, &p->lock);
			ps->cur = p->free[--p->nfree];
			pthread_mutex_unlock(&p->lock);
		}
	}
	if (ps->cur->cap - ps->cur->used >= need)
		return 0;
	c = xcalloc(1, sizeof(*c));
	c->mem = xmalloc(need);
	c->cap = need;
	c->own = 1;
	ps->spare = ps->cur;
	ps->cur = c;
	return 0;
}

/* Room for n bytes in the current chunk (make_room() made it), 8-byte aligned. */
static void *take(struct perfetto_sink *ps, size_t n)
{
	struct chunk *c = ps->cur;
	void *p = c->mem + c->used;

	c->used += (n + 7) & ~(size_t)7;
	return p;
}

static char *take_string(struct perfetto_sink *ps, const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(take(ps, n), s, n);
}

static size_t string_room(const char *s)
{
	return s ? (strlen(s) + 1 + 7) & ~(size_t)7 : 0;
}

/*
 * Put the record made so far in a chunk: r (its scalars), with the arguments (ps->args), flows and
 * the new interned strings (ps->news) copied in, and its inline strings (name, argument names and
 * values that have no iid; track name and unit).
 */
static int put_record(struct perfetto_sink *ps, const struct rec *r, const uint64_t *flows)
{
	size_t need = sizeof(*r) + 8 + r->nflows * sizeof(*flows) + r->nargs * sizeof(struct rec_arg) + 8 +
		      string_room(r->name) + string_room(r->track.name) + string_room(r->track.unit);
	struct rec *out;
	struct rec_arg *args;
	int ret;

	for (int k = 0; k < NEW_KINDS; k++)
		need += ps->nnews[k] * sizeof(struct rec_new) + 8;
	for (size_t i = 0; i < r->nargs; i++)
		need += (ps->args[i].name_iid ? 0 : string_room(ps->args[i].name)) +
			(ps->args[i].type == TIMELINE_ARG_STRING && !ps->args[i].value_iid ? string_room(ps->args[i].value)
											 : 0);
	ret = make_room(ps, need);
	if (ret < 0)
		goto out;
	out = take(ps, sizeof(*out));
	*out = *r;
	out->next = NULL;
	if (r->name)
		out->name = take_string(ps, r->name);
	if (r->track.name)
		out->track.name = take_string(ps, r->track.name);
	if (r->track.unit)
		out->track.unit = take_string(ps, r->track.unit);
	if (r->nflows)
		out->flows = memcpy(take(ps, r->nflows * sizeof(*flows)), flows, r->nflows * sizeof(*flows));
	args = r->nargs ? take(ps, r->nargs * sizeof(*args)) : NULL;
	for (size_t i = 0; i < r->nargs; i++) {
		args[i] = ps->args[i];
		if (!args[i].name_iid)
			args[i].name = take_string(ps, args[i].name);
		if (args[i].type == TIMELINE_ARG_STRING && !args[i].value_iid)
			args[i].value = take_string(ps, args[i].value);
	}
	out->args = args;
	for (int k = 0; k < NEW_KINDS; k++) {
		out->nnews[k] = ps->nnews[k];
		out->news[k] = ps->nnews[k] ? memcpy(take(ps, ps->nnews[k] * sizeof(struct rec_new)), ps->news[k],
						     ps->nnews[k] * sizeof(struct rec_new))
					    : NULL;
	}
	if (ps->cur->last)
		ps->cur->last->next = out;
	else
		ps->cur->first = out;
	ps->cur->last = out;
	if (ps->cur->own) {
		ret = hand_over(ps, ps->cur);
		ps->cur = ps->spare;
	}
out:
	for (int k = 0; k < NEW_KINDS; k++)
		ps->nnews[k] = 0;
	while (ps->n_inline_copies)
		free(ps->inline_copies[--ps->n_inline_copies]);
	return ret;
}

/* ---- the sink's calls (the exporter's thread) ---- */

static int perfetto_begin(struct timeline_sink *sink, int64_t origin)
{
	(void)sink;
	(void)origin;	/* Perfetto keeps the trace's own nanosecond timestamps */
	return 0;
}

static int perfetto_track(struct timeline_sink *sink, const struct timeline_track *track)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;
	struct rec r = { .kind = REC_TRACK, .track = *track };
	char *counter_name = NULL;
	int ret;

	r.track.unit = NULL;
	if (track->kind == TIMELINE_COUNTER) {
		/* Named "<name> <unit>", as Perfetto names a Chrome JSON counter, so both formats agree. */
		counter_name = xasprintf("%s %s", track->name, track->unit);
		r.track.name = inline_text(ps, counter_name);
		r.track.unit = track->unit;
	} else {
		r.track.name = inline_text(ps, track->name);
	}
	ret = put_record(ps, &r, NULL);
	free(counter_name);
	return ret;
}

/* A slice's or instant's record: name, category and arguments, interned as they come. */
static int put_event(struct perfetto_sink *ps, enum rec_kind kind, const struct timeline_event *ev)
{
	struct rec r = { .kind = kind, .needs_state = 1, .ts = ev->start, .track_uuid = ev->track->uuid,
			 .nargs = ev->nargs };

	if (ev->nargs > ps->args_cap) {
		ps->args_cap = ev->nargs * 2;
		ps->args = xrealloc(ps->args, ps->args_cap * sizeof(*ps->args));
	}
	r.name_iid = intern_new(ps, NEW_NAME, ev->name ? ev->name : "");
	if (!r.name_iid)
		r.name = inline_text(ps, ev->name ? ev->name : "");
	if (ev->category)
		r.category_iid = intern_new(ps, NEW_CATEGORY, ev->category);
	for (size_t i = 0; i < ev->nargs; i++) {
		const struct timeline_arg *arg = &ev->args[i];
		struct rec_arg *a = &ps->args[i];

		*a = (struct rec_arg){ .type = arg->type, .i = arg->i, .d = arg->d };
		a->name_iid = intern_new(ps, NEW_ARG_NAME, arg->name);
		if (!a->name_iid)
			a->name = inline_text(ps, arg->name);
		if (arg->type == TIMELINE_ARG_STRING) {
			a->value_iid = intern_new(ps, NEW_ARG_VALUE, arg->s ? arg->s : "");
			if (!a->value_iid)
				a->value = inline_text(ps, arg->s ? arg->s : "");
		}
	}
	if (kind == REC_SLICE_BEGIN) {
		r.nflows = ev->nflows_out;
		r.flow_in = ev->flow_in;
	}
	return put_record(ps, &r, ev->flows_out);
}

static int perfetto_slice_begin(struct timeline_sink *sink, const struct timeline_event *ev)
{
	return put_event((struct perfetto_sink *)sink, REC_SLICE_BEGIN, ev);
}

static int perfetto_instant(struct timeline_sink *sink, const struct timeline_event *ev)
{
	return put_event((struct perfetto_sink *)sink, REC_INSTANT, ev);
}

static int perfetto_slice_end(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts)
{
	struct rec r = { .kind = REC_SLICE_END, .ts = ts, .track_uuid = track->uuid };

	return put_record((struct perfetto_sink *)sink, &r, NULL);
}

static int perfetto_counter(struct timeline_sink *sink, const struct timeline_track *track, int64_t ts,
			    double value)
{
	struct rec r = { .kind = REC_COUNTER, .ts = ts, .track_uuid = track->uuid, .value = value };

	return put_record((struct perfetto_sink *)sink, &r, NULL);
}

/* Stop the encoder: after the chunks handed over (drain) or at once. */
static void pipeline_stop(struct pipeline *p, int drain)
{
	if (!p->threaded)
		return;
	pthread_mutex_lock(&p->lock);
	while (drain && (p->qcount || p->busy))
		pthread_cond_wait(&p->cond, &p->lock);
	p->stop = 1;
	/* what was not encoded is dropped: the export failed */
	while (p->qcount) {
		struct chunk *c = p->queue[p->qhead];

		p->qhead = (p->qhead + 1) % p->qcap;
		p->qcount--;
		chunk_encoded(p, c, 0, 0);
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	p->threaded = 0;
}

static int perfetto_finish(struct timeline_sink *sink)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;
	int ret = 0;

	if (ps->cur->first)
		ret = hand_over(ps, ps->cur);
	pipeline_stop(&ps->pipe, 1);
	return ret < 0 ? ret : ps->pipe.error;
}

static void perfetto_free(struct timeline_sink *sink)
{
	struct perfetto_sink *ps = (struct perfetto_sink *)sink;

	if (!ps)
		return;
	pipeline_stop(&ps->pipe, 0);
	for (size_t i = 0; i < NCHUNKS; i++)
		free(ps->pipe.chunks[i].mem);
	free(ps->pipe.queue);
	for (int k = 0; k < NEW_KINDS; k++)
		intern_release(&ps->tables[k]);
	for (int k = 0; k < NEW_KINDS; k++)
		free(ps->news[k]);
	free(ps->args);
	while (ps->n_inline_copies)
		free(ps->inline_copies[--ps->n_inline_copies]);
	free(ps->inline_copies);
	encoder_release(&ps->enc);
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
	struct pipeline *p;

	if (!ps)
		return NULL;
	ps->base.ops = &perfetto_ops;
	ps->enc.file = file;
	p = &ps->pipe;
	for (size_t i = 0; i < NCHUNKS; i++) {
		p->chunks[i].mem = xmalloc(CHUNK_BYTES);
		p->chunks[i].cap = CHUNK_BYTES;
		p->free[p->nfree++] = &p->chunks[NCHUNKS - 1 - i];
	}
	ps->cur = p->free[--p->nfree];
	p->qcap = NCHUNKS + 1;
	p->queue = xcalloc(p->qcap, sizeof(*p->queue));
	if (event_threads() > 1) {
		pthread_mutex_init(&p->lock, NULL);
		pthread_cond_init(&p->cond, NULL);
		p->threaded = pthread_create(&p->thread, NULL, encoder_thread, ps) == 0;
		if (!p->threaded) {
			pthread_cond_destroy(&p->cond);
			pthread_mutex_destroy(&p->lock);
		}
	}
	return &ps->base;
}
