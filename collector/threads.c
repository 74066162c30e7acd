/*
 * Thread names for ThreadNames (see threads.h): a table of the threads seen, read from /proc.
 */
#define _GNU_SOURCE
#include "collector/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void threads_init(struct threads *t, uint32_t self_pid)
{
	memset(t, 0, sizeof(*t));
	t->self_pid = self_pid;
}

void threads_release(struct threads *t)
{
	for (size_t i = 0; i < t->count; i++) {
		free(t->items[i].os_name);
		free(t->items[i].nvtx_name);
	}
	free(t->items);
	u64map_release(&t->index);
	memset(t, 0, sizeof(*t));
}

struct thread_info *threads_get(struct threads *t, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)thread_global_tid(pid, tid);
	uint64_t *found = u64map_get(&t->index, key);
	struct thread_info *thread;

	if (found)
		return &t->items[*found - 1];
	if (t->count == t->capacity) {
		size_t cap = t->capacity ? t->capacity * 2 : 16;
		struct thread_info *grown = realloc(t->items, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		t->items = grown;
		t->capacity = cap;
	}
	if (u64map_put(&t->index, key, t->count + 1) < 0)
		return NULL;
	thread = &t->items[t->count++];
	memset(thread, 0, sizeof(*thread));
	thread->pid = pid;
	thread->tid = tid;
	return thread;
}

long threads_read_proc(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (long)n;
}

static void task_path(const struct threads *t, const struct thread_info *thread, const char *file,
		      char *path, size_t len)
{
	/* Our own threads through /proc/self: options.pid is the traced process, this one. */
	if (thread->pid == t->self_pid)
		snprintf(path, len, "/proc/self/task/%u/%s", thread->tid, file);
	else
		snprintf(path, len, "/proc/%u/task/%u/%s", thread->pid, thread->tid, file);
}

/* Field 18 of /proc/.../stat, after the parenthesized comm (which may hold spaces). */
static int parse_priority(const char *stat, int *priority)
{
	const char *p = strrchr(stat, ')');

	if (!p)
		return -1;
	p++;
	/* Fields 3 (state) to 17 (cstime) come before it. */
	for (int field = 3; field < 18; field++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	return sscanf(p, "%d", priority) == 1 ? 0 : -1;
}

int threads_read(struct threads *t, struct thread_info *thread)
{
	char path[96], comm[64], stat[1024], *copy;
	long n;

	task_path(t, thread, "comm", path, sizeof(path));
	n = threads_read_proc(path, comm, sizeof(comm));
	if (n <= 0)
		return -1;
	comm[strcspn(comm, "\n")] = '\0';
	copy = strdup(comm);
	if (!copy)
		return -1;
	free(thread->os_name);
	thread->os_name = copy;
	task_path(t, thread, "stat", path, sizeof(path));
	if (threads_read_proc(path, stat, sizeof(stat)) > 0 && parse_priority(stat, &thread->priority) == 0)
		thread->has_priority = 1;
	return 0;
}

void threads_see(struct threads *t, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)thread_global_tid(pid, tid);
	struct thread_info *thread;

	if (key == t->last)
		return;
	thread = threads_get(t, pid, tid);
	if (!thread)
		return;
	t->last = key;
	/* Once, and not when the thread named itself: it may be gone by the end of the run. */
	if (!thread->read_tried && !thread->os_name) {
		thread->read_tried = 1;
		threads_read(t, thread);
	}
}

void threads_set_nvtx_name(struct threads *t, uint32_t pid, uint32_t tid, const char *name,
			   size_t len)
{
	struct thread_info *thread = threads_get(t, pid, tid);
	char *copy;

	if (!thread || !(copy = strndup(name, len)))
		return;
	free(thread->nvtx_name);
	thread->nvtx_name = copy;
}

void threads_set_reported_name(struct threads *t, uint32_t pid, uint32_t tid, const char *name,
			       size_t len, int has_priority, int priority)
{
	struct thread_info *thread = threads_get(t, pid, tid);

	if (!thread || thread->os_name || !(thread->os_name = strndup(name, len)))
		return;
	thread->has_priority = has_priority;
	thread->priority = priority;
}

const char *thread_name(const struct thread_info *thread, char *buf, size_t len, int *fallback)
{
	*fallback = 0;
	if (thread->nvtx_name)
		return thread->nvtx_name;
	if (thread->os_name)
		return thread->os_name;
	*fallback = 1;
	snprintf(buf, len, "%u", thread->tid);
	return buf;
}
