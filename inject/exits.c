/*
 * Deaths that atexit never sees: fatal signals, and exits that skip atexit.
 *
 * Fatal signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT). Once tracing is active our handler is
 * the one the kernel calls; the program's own handler, installed before or after us, is kept aside
 * and called first, with its own flags and mask, exactly as the kernel would have called it:
 *   - it may fix the fault and return (a JIT's or a garbage collector's guard pages): we return too
 *     and the program goes on, trace untouched;
 *   - it may restore the previous disposition and re-raise (Python's faulthandler, most crash
 *     reporters): the previous disposition it got from us is the one it would have had untraced
 *     (SIG_DFL), so the re-raised signal comes back to our handler, which now finds no program
 *     handler and ends the trace;
 *   - it may _exit() (interposed below) or abort() (SIGABRT comes back to us).
 * Then, with no program handler left: hand the trace to the flush thread (the finisher inject.c set:
 * CUPTI's last flush, the writer's last commit, GPT_META exit_reason "signal N"), wait for it with
 * a bound, put the default action back, unblock the signal and raise it: the process dies of the
 * same signal with the same core dump as untraced, and the launcher sees the same status.
 *
 * Why interpose sigaction() and signal() instead of looking at the disposition when the signal
 * arrives: by then a handler the program installed after us has replaced ours and we are never
 * called; chaining only works if we stay installed and keep theirs. The cost is that we must keep
 * the program's view exact: sigaction() returns to the program what it set (or what it had before
 * we came), never our handler. SIG_IGN set by the program is passed to the kernel as it is (a
 * raised SIGFPE is then ignored, as untraced), and our handler comes back when it sets a handler
 * again. The interposition works when the library is preloaded (LD_PRELOAD, what `gpt-trace run`
 * does); loaded by the driver alone (CUDA_INJECTION64_PATH) our symbols do not interpose, and a
 * handler the program installs after CUDA starts replaces ours (its _exit is still seen only when
 * preloaded).
 *
 * Async-signal-safety: the handler calls only sigaction (the kernel's, __sigaction),
 * pthread_sigmask, raise, getpid, gettid, write and poll, all async-signal-safe, and reads atomics
 * and a two-slot table of the program's actions (written with every signal blocked under a spin
 * flag, read by index, so a handler never waits for a lock). The non-safe work (SQLite, malloc,
 * CUPTI) runs on the flush thread, which blocks all signals. Recursion: a fault inside our own part
 * of the handler (fatal_tid is this thread) dies at once with the default action; a fault on the
 * flush or writer thread is delivered while blocked, which the kernel turns into the default action.
 * Stack overflow: the handler runs with SA_ONSTACK, on an alternate stack that we give the thread
 * that starts CUDA (usually the main thread, where deep recursion happens) when it has none;
 * other threads use theirs if the program gave them one.
 *
 * Exits: _exit() and _Exit() (Python's os._exit) finish the trace as exit does, then exit_group.
 * quick_exit() is covered by at_quick_exit (inject.c). A raw syscall(SYS_exit_group) is out of
 * reach: nothing runs in the process, the launcher recovers the trace as for SIGKILL.
 */
#define _GNU_SOURCE
#include "inject/inject.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALT_STACK_SIZE (64 * 1024)

/* glibc's own sigaction, under the name that our interposed sigaction() does not replace. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *oldact);

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

/* The program's action for each fatal signal: two slots, the current one by index. */
static struct program_action {
	struct sigaction slot[2];
	atomic_int current;
} program_actions[NFATAL];
static atomic_int hooked;		/* our handler is installed: sigaction() keeps theirs aside */
static atomic_flag actions_lock = ATOMIC_FLAG_INIT;
static _Atomic pid_t fatal_tid;		/* the thread inside our own part of the handler */

typedef void (*finisher_fn)(int);
static _Atomic(finisher_fn) finisher_now, finisher_exit;	/* inject.c's (exits_set_finishers) */

void exits_set_finishers(void (*now)(int why), void (*exit_now)(int status))
{
	atomic_store(&finisher_now, now);
	atomic_store(&finisher_exit, exit_now);
}

static int fatal_index(int sig)
{
	for (size_t i = 0; i < NFATAL; i++)
		if (fatal_signals[i] == sig)
			return (int)i;
	return -1;
}

static int is_handler(const struct sigaction *sa)
{
	/* sa_handler and sa_sigaction share their storage: SIG_DFL and SIG_IGN read the same. */
	return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static void on_fatal_signal(int sig, siginfo_t *info, void *ucontext);

static void our_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = on_fatal_signal;
	sa->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa->sa_mask);
}

/* Store the program's new action for fatal signal i; with every signal blocked, so no handler of
 * this thread can spin on the flag we hold. */
static void program_action_set(int i, const struct sigaction *act, struct sigaction *old)
{
	struct program_action *pa = &program_actions[i];
	sigset_t all, saved;
	int cur;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	while (atomic_flag_test_and_set(&actions_lock))
		;
	cur = atomic_load(&pa->current);
	if (old)
		*old = pa->slot[cur];
	if (act) {
		pa->slot[!cur] = *act;
		atomic_store(&pa->current, !cur);
	}
	atomic_flag_clear(&actions_lock);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

static void program_action_get(int i, struct sigaction *out)
{
	struct program_action *pa = &program_actions[i];

	*out = pa->slot[atomic_load(&pa->current)];
}

/* Die of sig as untraced: default action, unblocked, raised. */
static void die_default(int sig)
{
	struct sigaction dfl;
	sigset_t set;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	__sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/* Call the program's handler as the kernel would have: its mask, SA_NODEFER, SA_RESETHAND. */
static void call_program_handler(int i, int sig, const struct sigaction *theirs, siginfo_t *info,
				 void *ucontext)
{
	sigset_t mask, saved;

	if (theirs->sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		program_action_set(i, &dfl, NULL);
	}
	pthread_sigmask(SIG_BLOCK, &theirs->sa_mask, &saved);
	if (theirs->sa_flags & SA_NODEFER) {
		sigemptyset(&mask);
		sigaddset(&mask, sig);
		pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
	}
	if (theirs->sa_flags & SA_SIGINFO)
		theirs->sa_sigaction(sig, info, ucontext);
	else
		theirs->sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/*
 * GPT_TRACE_BACKTRACE=1, for device checks on machines without gdb: the faulting thread's frames
 * as module+offset (and the nearest exported symbol), for addr2line on our own library. Not
 * async-signal-safe (dladdr, snprintf): a diagnosis aid, never on by default.
 */
static int backtrace_wanted;

static void backtrace_say(int sig)
{
	void *frames[48];
	int n = backtrace(frames, 48);
	char line[512];

	snprintf(line, sizeof(line), "gpt-trace: signal %d, backtrace of thread %ld:\n", sig,
		 (long)syscall(SYS_gettid));
	if (write(2, line, strlen(line)) < 0)
		return;
	for (int k = 0; k < n; k++) {
		Dl_info dl;
		int len;

		if (dladdr(frames[k], &dl) && dl.dli_fname)
			len = snprintf(line, sizeof(line), "  #%d %s+0x%lx (%s)\n", k, dl.dli_fname,
				       (unsigned long)((char *)frames[k] - (char *)dl.dli_fbase),
				       dl.dli_sname ? dl.dli_sname : "?");
		else
			len = snprintf(line, sizeof(line), "  #%d %p\n", k, frames[k]);
		if (len > 0 && write(2, line, (size_t)len) < 0)
			return;
	}
}

static void on_fatal_signal(int sig, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno, i = fatal_index(sig);
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct sigaction theirs;
	finisher_fn finisher;

	if (backtrace_wanted)
		backtrace_say(sig);
	/* A fault in our own part below (or a signal raised there): no second try. */
	if (i < 0 || atomic_load(&fatal_tid) == tid) {
		die_default(sig);
		return;
	}
	program_action_get(i, &theirs);
	if (is_handler(&theirs)) {
		call_program_handler(i, sig, &theirs, info, ucontext);
		errno = saved_errno;
		return;
	}
	/* SIG_IGN never reaches us (passed to the kernel); SIG_DFL: the signal kills, trace first. */
	atomic_store(&fatal_tid, tid);
	finisher = atomic_load(&finisher_now);
	if (finisher)
		finisher(sig);
	die_default(sig);
	/* Only if raise failed. */
	atomic_store(&fatal_tid, 0);
	errno = saved_errno;
}

/* An alternate signal stack for this thread, unless it has one (stack overflows). */
static void alt_stack_install(void)
{
	stack_t current, ours;
	void *mem;

	if (sigaltstack(NULL, &current) < 0 || !(current.ss_flags & SS_DISABLE))
		return;
	mem = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return;
	ours.ss_sp = mem;
	ours.ss_size = ALT_STACK_SIZE;
	ours.ss_flags = 0;
	if (sigaltstack(&ours, NULL) < 0)
		munmap(mem, ALT_STACK_SIZE);
}

void exits_install_fatal(void)
{
	struct sigaction ours, cur;

	if (atomic_load(&hooked))
		return;
	backtrace_wanted = getenv("GPT_TRACE_BACKTRACE") && !strcmp(getenv("GPT_TRACE_BACKTRACE"), "1");
	if (backtrace_wanted) {
		void *warm[1];

		backtrace(warm, 1);	/* loads libgcc_s now, not in the handler */
	}
	alt_stack_install();
	our_action(&ours);
	for (size_t i = 0; i < NFATAL; i++) {
		if (__sigaction(fatal_signals[i], NULL, &cur) < 0)
			continue;
		program_action_set((int)i, &cur, NULL);
		if (cur.sa_handler != SIG_IGN)
			__sigaction(fatal_signals[i], &ours, NULL);
	}
	atomic_store(&hooked, 1);
}

#ifndef GPT_INJECT_NO_INTERPOSE
/*
 * The interposed calls (exported by exports.map; not built into the test binaries, which link
 * the library's sources statically). sigaction() and signal() are async-signal-safe and stay so.
 */
__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						     struct sigaction *oldact)
{
	struct sigaction ours, keep;
	int i = fatal_index(sig);

	if (i < 0 || !atomic_load(&hooked))
		return __sigaction(sig, act, oldact);
	if (act) {
		keep = *act;
		/* Flags the kernel would reject are not ours to judge; SA_SIGINFO decides the field. */
		program_action_set(i, &keep, oldact);
		if (keep.sa_handler == SIG_IGN)
			return __sigaction(sig, &keep, NULL);
		our_action(&ours);
		return __sigaction(sig, &ours, NULL);
	}
	if (oldact)
		program_action_set(i, NULL, oldact);
	return 0;
}

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler). */
__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
	finisher_fn finisher = atomic_load(&finisher_exit);

	if (finisher)
		finisher(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
	_exit(status);
}
#endif
