/*
 * Removing registered files on a fatal signal (cleanup.h). The handler only reads the slots (a flag
 * and a fixed buffer each, written before the flag is set) and calls unlink, sigaction and raise,
 * all async-signal-safe. Slots are taken and freed under a mutex: conversions may run on several
 * threads (report -j).
 */
#include "common/cleanup.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSIGNALS (sizeof(signals) / sizeof(signals[0]))

static struct {
	atomic_int used;
	char path[4096];
} slots[CLEANUP_MAX];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction previous[NSIGNALS];
static int installed[NSIGNALS];

static void on_signal(int sig)
{
	for (size_t i = 0; i < CLEANUP_MAX; i++)
		if (atomic_load(&slots[i].used))
			unlink(slots[i].path);
	for (size_t i = 0; i < NSIGNALS; i++)
		if (signals[i] == sig && installed[i]) {
			sigaction(sig, &previous[i], NULL);
			break;
		}
	raise(sig);
}

/* Catch the signals the process does not ignore, once (under lock). */
static void install(void)
{
	static int done;
	struct sigaction sa;

	if (done)
		return;
	done = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGNALS; i++) {
		if (sigaction(signals[i], NULL, &previous[i]) < 0 || previous[i].sa_handler == SIG_IGN)
			continue;
		if (sigaction(signals[i], &sa, NULL) == 0)
			installed[i] = 1;
	}
}

int cleanup_add(const char *path)
{
	int ret = -1;

	if (strlen(path) >= sizeof(slots[0].path))
		return -1;
	pthread_mutex_lock(&lock);
	install();
	for (size_t i = 0; i < CLEANUP_MAX; i++)
		if (!atomic_load(&slots[i].used)) {
			strcpy(slots[i].path, path);
			atomic_store(&slots[i].used, 1);
			ret = 0;
			break;
		}
	pthread_mutex_unlock(&lock);
	return ret;
}

void cleanup_remove(const char *path)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < CLEANUP_MAX; i++)
		if (atomic_load(&slots[i].used) && !strcmp(slots[i].path, path)) {
			atomic_store(&slots[i].used, 0);
			break;
		}
	pthread_mutex_unlock(&lock);
}
