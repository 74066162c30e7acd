/*
 * The threads a trace mentions and their names, for nsys's ThreadNames(nameId, priority,
 * globalTid).
 *
 * Third-party SQL joins ThreadNames to name the thread of every API call and NVTX range, and such
 * a join silently drops the rows of a thread without a ThreadNames row; nsys exports have one for
 * every thread (nsys takes names from the OS's own trace). We note each (pid, tid) the first time
 * a row carries it and read its name at once from /proc/PID/task/TID/comm (with the scheduling
 * priority from .../stat, as nsys's priority column holds it: 20 + nice for normal threads),
 * because a thread may be gone by the end of the run: a PyTorch autograd thread, a data loader's
 * worker. The writer reads the names again when the trace is finished, for the threads still
 * alive, so that a thread that renamed itself after its first recorded call gets its final name
 * (docs/schema.md says why not more often). Names given with nvtxNameOsThread win over the OS's;
 * a name the thread reported itself (the NVTX handlers send the thread's comm with its first
 * event) stands in for /proc when the thread died before the writer saw it. A thread whose name
 * was never read is named by its tid in decimal, with priority NULL.
 *
 * Writer thread only. The table owns its strings; threads_release() frees them.
 */
#ifndef GPT_COLLECTOR_THREADS_H
#define GPT_COLLECTOR_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "collector/hash.h"

struct thread_info {
	uint32_t pid, tid;
	char *os_name;		/* the kernel's comm as last read, NULL when never read */
	char *nvtx_name;	/* from nvtxNameOsThread, NULL when none */
	int priority;		/* as /proc/PID/task/TID/stat field 18, when has_priority */
	uint8_t has_priority;
	uint8_t read_tried;	/* threads_see() has read /proc for it */
};

struct threads {
	uint32_t self_pid;		/* the traced process: read through /proc/self */
	struct u64map index;		/* globalTid -> 1 + index into items */
	struct thread_info *items;
	size_t count, capacity;
	uint64_t last;			/* globalTid of the last threads_see(), 0: none */
};

/* nsys packs pid and tid into one id (tids fit: Linux's PID_MAX_LIMIT is 2^22). */
static inline int64_t thread_global_tid(uint32_t pid, uint32_t tid)
{
	return ((int64_t)pid << 24) | (tid & 0xffffff);
}

void threads_init(struct threads *threads, uint32_t self_pid);
void threads_release(struct threads *threads);

/*
 * A row carries (pid, tid): the first time, add the thread and read its name now. Cheap when the
 * same thread is seen again (the common case: one comparison). Out of memory only loses the row.
 */
void threads_see(struct threads *threads, uint32_t pid, uint32_t tid);

/* The thread's entry, added if new (without reading /proc); NULL when out of memory. */
struct thread_info *threads_get(struct threads *threads, uint32_t pid, uint32_t tid);

/* A name given with nvtxNameOsThread (len bytes). */
void threads_set_nvtx_name(struct threads *threads, uint32_t pid, uint32_t tid, const char *name,
			   size_t len);

/* The thread's comm as it reported it itself; used only while /proc has not been read. */
void threads_set_reported_name(struct threads *threads, uint32_t pid, uint32_t tid,
			       const char *name, size_t len, int has_priority, int priority);

/* Read the thread's comm and priority from /proc again; 0, or -1 when the thread is gone. */
int threads_read(struct threads *threads, struct thread_info *thread);

/* A small /proc file into buf (NUL-terminated, at most len - 1 bytes); its length or -1. */
long threads_read_proc(const char *path, char *buf, size_t len);

/*
 * The name ThreadNames gets: the NVTX name, else the OS name, else the tid in decimal (in buf,
 * len bytes). *fallback is set to 1 in the last case.
 */
const char *thread_name(const struct thread_info *thread, char *buf, size_t len, int *fallback);

#endif
