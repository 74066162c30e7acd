/*
 * Capture windows (see capture-windows.h): a short list of [start, end) spans, consulted once per row.
 * Rows come nearly in time order, so the last window is tried first.
 */
#include "collector/capture-windows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void windows_gate(struct capture_windows *w)
{
	w->gated = 1;
}

static struct capture_window *windows_last(struct capture_windows *w)
{
	return w->count ? &w->list[w->count - 1] : NULL;
}

int windows_open(struct capture_windows *w, uint64_t at, const char *why)
{
	struct capture_window *last = windows_last(w);

	/* Still open at `at` (no end, or a future one): nothing to open. */
	if (w->full || (last && at < last->end))
		return 0;
	if (w->count == w->capacity) {
		size_t cap = w->capacity ? w->capacity * 2 : 8;
		struct capture_window *grown = realloc(w->list, cap * sizeof(*grown));

		if (!grown)
			return -1;
		w->list = grown;
		w->capacity = cap;
	}
	last = &w->list[w->count++];
	memset(last, 0, sizeof(*last));
	last->start = at;
	last->end = WINDOW_OPEN_END;
	snprintf(last->opened, sizeof(last->opened), "%s", why);
	w->changed = 1;
	return 0;
}

void windows_close(struct capture_windows *w, uint64_t at, const char *why)
{
	struct capture_window *last = windows_last(w);

	if (!last || at >= last->end)
		return;
	w->changed = 1;
	if (at <= last->start) {
		w->count--;
		return;
	}
	last->end = at;
	snprintf(last->closed, sizeof(last->closed), "%s", why);
}

void windows_end(struct capture_windows *w, uint64_t at, const char *why)
{
	while (w->count && windows_last(w)->start >= at) {
		w->count--;
		w->changed = 1;
	}
	windows_close(w, at, why);
}

void windows_fill(struct capture_windows *w, uint64_t at)
{
	struct capture_window *last = windows_last(w);

	if (w->full)
		return;
	/* The row at `at` is the first one not kept: the window ends just before it. */
	if (last && last->end > at)
		windows_close(w, at > last->start ? at : last->start + 1, "max-size");
	w->full = 1;
	w->changed = 1;
}

int windows_keep(struct capture_windows *w, uint64_t t)
{
	if (!w->gated)
		return 1;
	if (!w->full)
		for (size_t i = w->count; i-- > 0;) {
			const struct capture_window *win = &w->list[i];

			if (t >= win->start && t < win->end)
				return 1;
			if (t >= win->end)
				break;
		}
	w->dropped++;
	return 0;
}

void windows_release(struct capture_windows *w)
{
	free(w->list);
	memset(w, 0, sizeof(*w));
}
