/*
 * libgpt_inject.so: entry points and the traced process's lifecycle.
 *
 * Two ways in, one initialisation. When preloaded (LD_PRELOAD), the ELF constructor does only cheap
 * things: read the configuration, take the time origin, register fork and exit hooks, and make sure
 * the CUDA driver will call us back (CUDA_INJECTION64_PATH) when the program initialises CUDA. When
 * the driver loads us (CUDA_INJECTION64_PATH), cuInit calls InitializeInjection, which starts
 * tracing: CUPTI is loaded and subscribed, the collector's writer thread and our flush thread start,
 * and exit and signal hooks are installed. A process that never initialises CUDA therefore never
 * loads CUPTI, starts no thread and leaves no file.
 *
 * The end of a trace (inject_finalize): force CUPTI to hand over every buffer, stop NVTX, read the
 * dropped-record counts, let the collector write metadata and indexes, add the hardware-metrics
 * tables when metrics were on, and append the trace's path to $GPT_TRACE_SESSION/traces. It runs at
 * exit (atexit, registered when CUDA initialises, so it runs before the CUDA runtime's own teardown),
 * or on SIGINT/SIGTERM when the program left them at their default action: the handler wakes our
 * flush thread to do the work (nothing in the handler itself but write and poll), waits for it
 * (bounded), restores the default action and re-raises, so the exit status is the one the program
 * would have had untraced.
 *
 * Problems that leave a process untraced are said once: under `gpt-trace run` (GPT_TRACE_SESSION)
 * they are only appended to the session file as `!pid reason` and the launcher prints them; run
 * without the launcher, the library prints them.
 *
 * fork: a child of a traced process has none of our threads and must never touch CUPTI (waiting for
 * CUPTI's missing worker thread is how forked children hang at exit); it becomes inert. A child
 * forked before CUDA was initialised is a fresh candidate: if it initialises CUDA, it is traced into
 * its own file (the pattern's %p). fork+exec children are traced through the inherited environment.
 */
#define _GNU_SOURCE
#include "inject/inject.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/rank.h"
#include "collector/trace-path.h"
#include "inject/clock.h"
#include "inject/gpu-metrics.h"
#include "inject/metrics.h"

#define SIGNAL_FINALIZE_MS 10000	/* longest a SIGINT/SIGTERM waits for the trace to be written */
#define SIGNAL_FLUSH_MS 1000		/* ... of which for CUPTI's final flush (ms when it can) */
#define FLUSH_QUIT 0			/* control byte: flush thread, stop; others are signal numbers */
#define FLUSH_EXIT 255			/* control byte: _exit()/_Exit() called (exit_status) */
#define METRICS_STOP_MS 30000		/* longest the exit waits for a launch being replayed */
#define SIGNAL_METRICS_STOP_MS 1000	/* ... on a signal (the launch may be the interrupted one) */
#define GPU_METRICS_STOP_MS 2000	/* longest the exit waits for the last GPU metrics decode */
#define SIGNAL_GPU_METRICS_STOP_MS 1000

enum inject_state {
	STATE_NONE,
	STATE_LOADED,		/* configured; CUDA not initialised (yet) */
	STATE_STARTING,
	STATE_ACTIVE,		/* tracing */
	STATE_FINALIZING,
	STATE_DONE,
	STATE_UNTRACED,		/* CUDA initialised but tracing could not start */
	STATE_INERT,		/* a forked child of a traced process */
};

static _Atomic int state = STATE_NONE;
static pid_t owner_pid;
static int forked_child;
static int preloaded;
static struct inject_config config;
static uint64_t time_origin, time_origin_utc_ns;
static struct collector *collector;
static pthread_t flush_thread;
static int control_pipe[2] = { -1, -1 }, done_pipe[2] = { -1, -1 }, flushed_pipe[2] = { -1, -1 };
static char exit_reason[32] = "exit";
static _Atomic pid_t finalizer_tid;
static atomic_int exit_status;		/* of an _exit()/_Exit() that finalizes (FLUSH_EXIT) */
static atomic_int error_reported;
static char api_setting[32];
static struct metrics_session *metrics;	/* NULL: hardware metrics off */
static struct gpu_metrics *gpu_metrics;	/* NULL: GPU metrics sampling off */
static char gpu_metrics_error[256];	/* a bad GPT_TRACE_GPU_METRICS, said when tracing starts */

static int env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && strcmp(v, value) == 0;
}

static void read_config(void)
{
	const char *output = getenv("GPT_TRACE_OUTPUT");
	const char *session = getenv("GPT_TRACE_SESSION");
	const char *api = getenv("GPT_TRACE_API");
	const char *commit = getenv("GPT_TRACE_COMMIT_MS");
	const char *metrics_spec = getenv("GPT_TRACE_METRICS");
	char cwd[PATH_MAX];

	if (!output || !*output)
		output = TRACE_PATH_DEFAULT;
	/* Absolute now: the program may change directory before it initialises CUDA. */
	if (output[0] == '/' || !getcwd(cwd, sizeof(cwd)) ||
	    snprintf(config.output, sizeof(config.output), "%s/%s", cwd, output) >=
		    (int)sizeof(config.output))
		snprintf(config.output, sizeof(config.output), "%s", output);
	snprintf(config.session, sizeof(config.session), "%s", session ? session : "");
	config.force = env_is("GPT_TRACE_FORCE", "1");
	config.monotonic_clock = !env_is("GPT_TRACE_CLOCK", "cupti");
	config.discard = env_is("GPT_TRACE_DISCARD", "1");
	config.quiet = env_is("GPT_TRACE_QUIET", "1");
	config.commit_ms = commit ? (unsigned)strtoul(commit, NULL, 10) : 0;
	if (!config.commit_ms)
		config.commit_ms = 1000;
	config.metrics = metrics_spec && *metrics_spec ? strdup(metrics_spec) : NULL;
	if (gpu_metrics_interval_parse(getenv("GPT_TRACE_GPU_METRICS"), &config.gpu_metrics_ns,
				       gpu_metrics_error, sizeof(gpu_metrics_error)) < 0)
		config.gpu_metrics_ns = 0;
	snprintf(api_setting, sizeof(api_setting), "%s", api && *api ? api : "default");
	if (strcmp(api_setting, "all") == 0)
		config.api = INJECT_API_ALL;
	else if (strcmp(api_setting, "none") == 0)
		config.api = INJECT_API_NONE;
	else
		config.api = INJECT_API_DEFAULT;
	capture_read_config(config.quiet);
}

static void session_append(const char *line)
{
	char path[PATH_MAX + 16];
	int fd;

	if (!config.session[0])
		return;
	snprintf(path, sizeof(path), "%s/traces", config.session);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* One write with O_APPEND: lines of concurrent processes stay whole. */
	if (write(fd, line, strlen(line)) < 0)
		errno = 0;
	close(fd);
}

/*
 * A process left untraced, or a trace that failed: under a session, one `!pid reason` line for
 * the launcher to print; otherwise the line on stderr (even with GPT_TRACE_QUIET: it is an error).
 */
static void report_failure(const char *reason)
{
	char line[PATH_MAX + 1200];

	if (!config.session[0]) {
		inject_say("%s", reason);
		return;
	}
	if (snprintf(line, sizeof(line), "!%ld %s\n", (long)getpid(), reason) >= (int)sizeof(line))
		return;
	session_append(line);
}

/* The metrics session's problem lines (no permission for the counters, ...): the trace goes on. */
static void report_metrics_problem(const char *line)
{
	inject_say("%s", line);
}

/*
 * The collector's error line, as it happens (from the writer thread): printed at once without a
 * session; under one, the same line reaches the session file when the trace ends (report_failure).
 */
static void inject_report(const char *line)
{
	atomic_store(&error_reported, 1);
	if (!config.session[0])
		inject_say("%s", line);
}

/*
 * The trace file exists (writer thread): tell the launcher, so that a trace this process never
 * finishes (SIGKILL, OOM kill) is still found, recovered and summarized: `+<pid> <path>`.
 */
static void inject_trace_created(const char *path)
{
	char line[PATH_MAX + 32];

	if (snprintf(line, sizeof(line), "+%ld %s\n", (long)getpid(), path) < (int)sizeof(line))
		session_append(line);
}

static void fork_prepare(void)
{
	nvtx_fork_prepare();
}

static void fork_parent(void)
{
	nvtx_fork_parent();
}

static void fork_child(void)
{
	int current = atomic_load(&state);
	int inert = current != STATE_LOADED && current != STATE_NONE;

	forked_child = 1;
	owner_pid = getpid();
	if (inert)
		atomic_store(&state, STATE_INERT);
	nvtx_fork_child(inert);
}

static int dl_find_cuda(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	return info->dlpi_name && (strstr(info->dlpi_name, "libcudart.so") ||
				   strstr(info->dlpi_name, "libcuda.so"));
}

/* Does the executable carry CUDA code (static cudart: a .nv_fatbin section)? */
static int exe_has_fatbin(void)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL, strtab;
	char *names = NULL;
	int found = 0, fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum || eh.e_shnum > 4096)
		goto out;
	sh = malloc((size_t)eh.e_shnum * sizeof(*sh));
	if (!sh || pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
			   (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	strtab = sh[eh.e_shstrndx];
	if (strtab.sh_size == 0 || strtab.sh_size > (1u << 20))
		goto out;
	names = malloc(strtab.sh_size + 1);
	if (!names || pread(fd, names, strtab.sh_size, (off_t)strtab.sh_offset) !=
			      (ssize_t)strtab.sh_size)
		goto out;
	names[strtab.sh_size] = '\0';
	for (unsigned i = 0; i < eh.e_shnum && !found; i++)
		if (sh[i].sh_name < strtab.sh_size &&
		    (strcmp(names + sh[i].sh_name, ".nv_fatbin") == 0 ||
		     strcmp(names + sh[i].sh_name, ".nvFatBinSegment") == 0))
			found = 1;
out:
	free(names);
	free(sh);
	close(fd);
	return found;
}

static int libcuda_loaded(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

	if (!cuda)
		return 0;
	dlclose(cuda);
	return 1;
}

/* Does CUDA_INJECTION64_PATH name another library than this one (another tool's)? */
static int foreign_injection(char *other, size_t len)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	char theirs[PATH_MAX], ours[PATH_MAX];
	Dl_info self;

	if (!path || !*path || !dladdr((void *)foreign_injection, &self) || !self.dli_fname ||
	    !realpath(self.dli_fname, ours))
		return 0;
	if (realpath(path, theirs) && strcmp(theirs, ours) == 0)
		return 0;
	snprintf(other, len, "%s", path);
	return 1;
}

/*
 * At exit of a preloaded process that never reached CUDA initialisation: if it is a CUDA program
 * and this machine has no NVIDIA driver, or another tool took the driver's injection slot (nsys,
 * ncu and compute-sanitizer set CUDA_INJECTION64_PATH to their own library), say so once; the
 * program itself ran as it would untraced.
 */
static void inject_exit_check(void)
{
	const char *reason = "no NVIDIA driver or GPU on this machine (/dev/nvidiactl is missing): "
			     "the program ran untraced";
	char other[PATH_MAX], line[PATH_MAX + 128];

	if (getpid() != owner_pid || forked_child || !preloaded ||
	    atomic_load(&state) != STATE_LOADED)
		return;
	if (libcuda_loaded()) {
		if (!foreign_injection(other, sizeof(other)))
			return;
		snprintf(line, sizeof(line), "another tool holds the CUDA injection slot "
			 "(CUDA_INJECTION64_PATH=%.3000s): the program ran untraced", other);
		reason = line;
	} else if (access("/dev/nvidiactl", F_OK) == 0 ||
		   (!dl_iterate_phdr(dl_find_cuda, NULL) && !exe_has_fatbin())) {
		return;
	}
	report_failure(reason);
}

static void inject_finalize_now(int why);
static void inject_finalize_exit(int status);
static void inject_cupti_wanted(const char *name, const void *caller);

static void early_init_once(void)
{
	struct timespec utc;

	owner_pid = getpid();
	read_config();
	capture_announce();
	gpt_clock_source = config.monotonic_clock ? gpt_clock_monotonic : gpt_clock_realtime;
	time_origin = gpt_clock_now();
	clock_gettime(CLOCK_REALTIME, &utc);
	time_origin_utc_ns = (uint64_t)utc.tv_sec * 1000000000ull + (uint64_t)utc.tv_nsec;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(inject_exit_check);
	cupti_trace_on_wanted(inject_cupti_wanted);
	exits_set_finishers(inject_finalize_now, inject_finalize_exit);
	atomic_store(&state, STATE_LOADED);
}

static void inject_early_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, early_init_once);
}

static void set_meta_u64(const char *name, uint64_t value)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
	collector_set_meta(collector, name, text);
}

static void set_meta_cb(void *arg, const char *name, const char *value)
{
	(void)arg;
	collector_set_meta(collector, name, value);
}

static void short_hostname(char *host, size_t len)
{
	if (gethostname(host, len) < 0)
		snprintf(host, len, "unknown");
	host[len - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
}

/* The process's rank in a parallel job, read when the trace starts. */
static struct rank_identity rank = { .rank = -1, .local_rank = -1, .world_size = -1 };

static const char *env_value(const char *name)
{
	return getenv(name);
}

static void describe_process(void)
{
	char cmdline[4096], host[256], when[64];
	time_t secs = (time_t)(time_origin_utc_ns / 1000000000ull);
	ssize_t n = 0;
	struct tm tm;
	int fd;

	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cmdline, sizeof(cmdline) - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	cmdline[n] = '\0';
	for (ssize_t i = 0; i + 1 < n; i++)
		if (cmdline[i] == '\0')
			cmdline[i] = ' ';
	short_hostname(host, sizeof(host));
	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);

	collector_set_meta(collector, "tool_version", GPT_TRACE_VERSION);
	collector_set_meta(collector, "command_line", cmdline);
	set_meta_u64("pid", (uint64_t)getpid());
	collector_set_meta(collector, "host", host);
	collector_set_meta(collector, "start_time_utc", when);
	set_meta_u64("time_origin_utc_ns", time_origin_utc_ns);
	collector_set_meta(collector, "api_tracing", api_setting);
	collector_set_meta(collector, "inject_entry", preloaded ? "LD_PRELOAD" : "CUDA_INJECTION64_PATH");
	set_meta_u64("commit_interval_ms", config.commit_ms);
	/* Which rank of a parallel job (rank.h); none for a process that was not launched as one. */
	if (rank.rank >= 0) {
		set_meta_u64("rank", (uint64_t)rank.rank);
		if (rank.local_rank >= 0)
			set_meta_u64("local_rank", (uint64_t)rank.local_rank);
		if (rank.world_size >= 0)
			set_meta_u64("world_size", (uint64_t)rank.world_size);
		collector_set_meta(collector, "rank_launcher", rank.launcher);
		if (rank.job[0])
			collector_set_meta(collector, "job_id", rank.job);
	}
}

static int dl_find_cudart(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name ? strstr(info->dlpi_name, "libcudart.so") : NULL;

	(void)size;
	if (name)
		snprintf(data, 64, "%s", name);
	return name != NULL;
}

static void describe_cuda_versions(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	int (*driver_version)(int *) = cuda ? (int (*)(int *))dlsym(cuda, "cuDriverGetVersion") : NULL;
	int (*runtime_version)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
	char soname[64] = "";
	int version;

	if (driver_version && driver_version(&version) == 0)
		set_meta_u64("cuda_driver_version", (uint64_t)version);
	if (runtime_version && runtime_version(&version) == 0)
		set_meta_u64("cuda_runtime_version", (uint64_t)version);
	else if (dl_iterate_phdr(dl_find_cudart, soname))
		collector_set_meta(collector, "cuda_runtime_library", soname);
	else
		collector_set_meta(collector, "cuda_runtime_library", "static (version not exported)");
	if (cuda)
		dlclose(cuda);
}

/* A traced process that recorded nothing: was there a GPU at all? */
static void check_no_device(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	int (*device_count)(int *) = cuda ? (int (*)(int *))dlsym(cuda, "cuDeviceGetCount") : NULL;
	int count = -1;

	if (device_count && device_count(&count) != 0)
		count = 0;
	if (cuda)
		dlclose(cuda);
	if (count == 0) {
		report_failure("no CUDA device found: the program ran untraced");
	}
}

static void wait_done(void)
{
	struct pollfd p = { .fd = done_pipe[0], .events = POLLIN };

	while (poll(&p, 1, SIGNAL_FINALIZE_MS) < 0 && errno == EINTR)
		;
}

static void *forced_flush_main(void *arg)
{
	(void)arg;
	cupti_trace_flush(1);
	if (write(flushed_pipe[1], "x", 1) < 0)
		errno = 0;
	return NULL;
}

/*
 * CUPTI's final flush, on a signal: the interrupted thread may hold a lock that the flush needs
 * (a signal can land inside a CUDA call), so flush from a helper thread and give up waiting after
 * SIGNAL_FLUSH_MS; the trace then ends with what CUPTI had delivered.
 */
static void forced_flush_bounded(void)
{
	struct pollfd p = { .fd = flushed_pipe[0], .events = POLLIN };
	pthread_t helper;

	if (pthread_create(&helper, NULL, forced_flush_main, NULL) != 0) {
		cupti_trace_flush(1);
		return;
	}
	pthread_detach(helper);
	while (poll(&p, 1, SIGNAL_FLUSH_MS) < 0 && errno == EINTR)
		;
}

/*
 * The hardware-metrics tables, into the finished trace (path, NULL when none was written), and
 * the one line saying how much replay happened: wanted under a session too, since the launcher's
 * summary does not know it. The session is not freed: a launch callback may still come.
 */
static void metrics_finish(const char *path)
{
	char err[512], line[1024];

	if (!metrics)
		return;
	if (path && metrics_session_write_file(metrics, path, err, sizeof(err)) < 0)
		inject_say("%s", err);
	metrics_session_summary(metrics, line, sizeof(line));
	if (!config.quiet)
		inject_say("%s", line);
}

/* Progress of the end of a trace with GPU metrics, for the device checks. */
static void gpu_debug(const char *what)
{
	const char *debug = getenv("GPT_TRACE_GPU_METRICS_DEBUG");

	if (gpu_metrics && debug && !strcmp(debug, "1"))
		inject_say("gpu metrics debug: %s", what);
}

static void inject_finalize(int on_flush_thread)
{
	int expected = STATE_ACTIVE;
	char err[1024] = "", line[PATH_MAX + 8];
	uint64_t dropped;
	const char *path;
	int rc;

	if (!atomic_compare_exchange_strong(&state, &expected, STATE_FINALIZING)) {
		if (expected == STATE_FINALIZING && atomic_load(&finalizer_tid) != gettid())
			wait_done();
		return;
	}
	atomic_store(&finalizer_tid, gettid());
	if (!on_flush_thread) {
		unsigned char quit = FLUSH_QUIT;

		if (write(control_pipe[1], &quit, 1) == 1)
			pthread_join(flush_thread, NULL);
	}
	/* The samplers stop and hand over their last samples while the collector still takes them. */
	if (gpu_metrics) {
		cupti_trace_gpu_metrics(NULL);
		if (gpu_metrics_stop(gpu_metrics, on_flush_thread ? SIGNAL_GPU_METRICS_STOP_MS
								  : GPU_METRICS_STOP_MS) < 0)
			inject_say("gpu metrics: the last samples were still being decoded at the "
				   "end; they are not written");
		gpu_metrics_describe(gpu_metrics, set_meta_cb, NULL);
		gpu_debug("samplers stopped");
	}
	/* The profilers are released while CUDA still works, before CUPTI's final flush. */
	if (metrics && metrics_session_stop_within(metrics, on_flush_thread ? SIGNAL_METRICS_STOP_MS
									     : METRICS_STOP_MS) < 0)
		inject_say("hardware metrics: a launch was still being profiled at the end; "
			   "its metrics are not written");
	if (on_flush_thread)
		forced_flush_bounded();
	else
		cupti_trace_flush(1);
	gpu_debug("activity flushed");
	nvtx_detach();
	capture_finish(gpt_clock_now());
	dropped = cupti_trace_stop();
	gpu_debug("activity stopped");
	describe_cuda_versions();
	collector_set_meta(collector, "exit_reason", exit_reason);

	rc = collector_stop(collector, dropped, err, sizeof(err));
	gpu_debug("collector stopped");
	/* Last of all: disabling a sampler finalizes CUPTI (gpu-metrics.h). */
	gpu_metrics_release(gpu_metrics);
	path = collector_path(collector);
	metrics_finish(rc > 0 ? path : NULL);
	if (gpu_metrics && !config.quiet) {
		gpu_metrics_summary(gpu_metrics, line, sizeof(line));
		if (line[0])
			inject_say("%s", line);
	}
	if (rc > 0 && path) {
		snprintf(line, sizeof(line), "%s\n", path);
		session_append(line);
		/* Under gpt-trace run (a session), the launcher's summary says all this. */
		if (dropped && !config.session[0])
			inject_say("CUPTI dropped %llu records: trace '%s' is incomplete",
				   (unsigned long long)dropped, path);
		else if (!config.session[0] && !config.quiet)
			inject_say("trace written to '%s'", path);
	} else if (rc == 0) {
		check_no_device();
	} else if (config.session[0] || !atomic_load(&error_reported)) {
		/* Without a session, the writer's line was printed when it happened. */
		report_failure(err);
	}
	/* The collector is not freed: a late CUPTI callback may still look at it. */
	atomic_store(&state, STATE_DONE);
	if (write(done_pipe[1], "x", 1) < 0)
		errno = 0;
}

static void *flush_main(void *arg)
{
	int period = (int)(config.commit_ms / 2 > 10 ? config.commit_ms / 2 : 10);
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p = { .fd = control_pipe[0], .events = POLLIN };
		unsigned char byte;
		int n = poll(&p, 1, period);

		if (n == 0) {
			/* Buffers that are not full yet reach the writer, so commits stay timely. */
			cupti_trace_flush(0);
			nvtx_flush();
			capture_poll();
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || read(control_pipe[0], &byte, 1) != 1 || byte == FLUSH_QUIT)
			break;
		if (byte == FLUSH_EXIT)
			snprintf(exit_reason, sizeof(exit_reason), "_exit(%d)", atomic_load(&exit_status));
		else
			snprintf(exit_reason, sizeof(exit_reason), "signal %d", byte);
		inject_finalize(1);
		break;
	}
	return NULL;
}

/*
 * Finalize from any context, a signal handler included (inject.h): only async-signal-safe calls
 * here (atomics, getpid, gettid, write, poll). The work itself (CUPTI's flush, the writer's last
 * commit and metadata) happens on our flush thread, which blocks every signal; this thread waits
 * for it at most SIGNAL_FINALIZE_MS, so a flush that cannot finish (the interrupted thread holds a
 * lock that CUPTI or malloc needs) costs a bounded delay, and the trace then holds what was
 * committed. Returns without waiting when this process has no trace to finish.
 */
static void inject_finalize_now(int why)
{
	int current = atomic_load(&state);
	struct pollfd p = { .fd = done_pipe[0], .events = POLLIN };
	unsigned char byte = (unsigned char)why;

	if ((current != STATE_ACTIVE && current != STATE_FINALIZING) || getpid() != owner_pid ||
	    atomic_load(&finalizer_tid) == gettid())
		return;
	if (current == STATE_FINALIZING || write(control_pipe[1], &byte, 1) == 1)
		while (poll(&p, 1, SIGNAL_FINALIZE_MS) < 0 && errno == EINTR)
			;
}

static void inject_finalize_exit(int status)
{
	if (atomic_load(&state) == STATE_LOADED)
		capture_unannounce();	/* dash ends with _exit: no atexit handler runs */
	atomic_store(&exit_status, status);
	inject_finalize_now(FLUSH_EXIT);
}

static void inject_cupti_wanted(const char *name, const void *caller)
{
	const char *who = "the program", *base;
	char value[PATH_MAX + 64];
	Dl_info info;
	uint64_t at;

	if (atomic_load(&state) != STATE_ACTIVE || getpid() != owner_pid || !cupti_trace_yield())
		return;
	at = gpt_clock_now() - time_origin;
	if (dladdr(caller, &info) && info.dli_fname && *info.dli_fname)
		who = info.dli_fname;
	base = strrchr(who, '/') ? strrchr(who, '/') + 1 : who;
	set_meta_u64("cupti_yielded_at_ns", at);
	snprintf(value, sizeof(value), "%s (%s)", name, who);
	collector_set_meta(collector, "cupti_yielded_to", value);
	/* Said even with -q: the trace has no CUDA activity after this point. */
	inject_say("the program's own profiler took CUPTI (%s from %s): CUDA activity is not "
		   "recorded after %.3f s", name, base, (double)at / 1e9);
}

static void on_signal(int sig)
{
	struct sigaction dfl;
	int saved = errno;
	int current = atomic_load(&state);

	if ((current == STATE_ACTIVE || current == STATE_FINALIZING) && getpid() == owner_pid &&
	    atomic_load(&finalizer_tid) != gettid()) {
		struct pollfd p = { .fd = done_pipe[0], .events = POLLIN };
		unsigned char byte = (unsigned char)sig;

		if (current == STATE_FINALIZING || write(control_pipe[1], &byte, 1) == 1)
			poll(&p, 1, SIGNAL_FINALIZE_MS);
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* Pending until this handler returns, then the default action: the untraced exit status. */
	raise(sig);
	errno = saved;
}

static void install_signal(int sig)
{
	struct sigaction old, sa;

	if (sigaction(sig, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

static void inject_atexit(void)
{
	if (getpid() == owner_pid)
		inject_finalize(0);
}

/*
 * GPU metrics sampling, when asked for (GPT_TRACE_GPU_METRICS): not beside --metrics, whose
 * range profiler holds the same counters and replays kernels. Problems cost the metrics only.
 */
static void gpu_metrics_start(void)
{
	char err[512];

	if (gpu_metrics_error[0]) {
		inject_say("%s: GPU metrics are off", gpu_metrics_error);
		return;
	}
	if (!config.gpu_metrics_ns)
		return;
	if (metrics) {
		inject_say("no GPU metrics: --metrics profiles kernels with replay in this process, "
			   "and its range profiler holds the counters PM sampling needs; tracing "
			   "goes on without them");
		return;
	}
	if (gpu_metrics_open(config.gpu_metrics_ns, collector, cupti_trace_library(),
			     report_metrics_problem, &gpu_metrics, err, sizeof(err)) < 0) {
		inject_say("%s", err);
		return;
	}
	cupti_trace_gpu_metrics(gpu_metrics);
}

static void inject_start(void)
{
	struct collector_options options = { 0 };
	int expected = STATE_LOADED;
	char err[1024], host[256], path[PATH_MAX];
	int64_t shift = 0;
	sigset_t all, old;
	int rc;

	if (!atomic_compare_exchange_strong(&state, &expected, STATE_STARTING))
		return;
	if (cupti_trace_subscribe(&config, &shift, err, sizeof(err)) < 0)
		goto out_untraced;
	/* What was timed before CUPTI, onto CUPTI's clock (clock.h). */
	time_origin += (uint64_t)shift;
	nvtx_shift_pending(shift);

	short_hostname(host, sizeof(host));
	rank_identity_read(&rank, env_value);
	if (trace_path_expand(config.output, getpid(), host, rank.rank, path, sizeof(path)) < 0) {
		snprintf(err, sizeof(err), "trace name too long: '%.900s': running untraced",
			 config.output);
		goto out_untraced;
	}
	options.path = path;
	options.force = config.force;
	options.commit_interval_ms = config.commit_ms;
	options.time_origin = time_origin;
	options.time_origin_utc_ns = time_origin_utc_ns;
	options.pid = (uint32_t)getpid();
	options.next_record = cupti_next_record;
	options.api_name = cupti_api_name;
	options.report = inject_report;
	options.created = inject_trace_created;
	options.discard = config.discard;
	options.wal = env_is("GPT_TRACE_JOURNAL", "wal");
	options.max_size = capture_max_size();
	options.full = capture_full;
	rc = collector_start(&options, &collector);
	if (rc < 0) {
		snprintf(err, sizeof(err), "cannot start the trace writer: %s: running untraced",
			 strerror(-rc));
		goto out_untraced;
	}
	if (pipe2(control_pipe, O_CLOEXEC) < 0 || pipe2(done_pipe, O_CLOEXEC) < 0 ||
	    pipe2(flushed_pipe, O_CLOEXEC) < 0) {
		snprintf(err, sizeof(err), "cannot create a pipe: %s: running untraced",
			 strerror(errno));
		goto out_stop;
	}
	describe_process();
	capture_start(collector, time_origin);
	/* A bad spec costs the metrics only: one line, and the trace goes on without them. */
	if (config.metrics && metrics_session_open(config.metrics, report_metrics_problem, &metrics,
						   err, sizeof(err)) < 0)
		inject_say("%s", err);
	/*
	 * No source lines unless asked for (source=1): beside our kernel activity tracing, the SASS
	 * instrumentation counted nothing and corrupted the launch's kernel record (H200, CUDA 13.0).
	 */
	metrics_session_default_source(metrics, false);
	if (metrics)
		collector_set_meta(collector, "metrics_spec", config.metrics);
	if (cupti_trace_enable(&config, collector, metrics, err, sizeof(err)) < 0)
		goto out_stop;
	cupti_trace_describe(collector);
	capture_armed();
	gpu_metrics_start();
	nvtx_attach(collector);

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&flush_thread, NULL, flush_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		cupti_trace_stop();
		snprintf(err, sizeof(err), "cannot start the flush thread: %s: running untraced",
			 strerror(rc));
		goto out_stop;
	}
	/* Registered now, after the CUDA runtime's own exit handler: ours runs first. */
	atexit(inject_atexit);
	/* quick_exit() skips atexit; its own list runs, ours last-registered-first as above. */
	at_quick_exit(inject_atexit);
	install_signal(SIGINT);
	install_signal(SIGTERM);
	atomic_store(&state, STATE_ACTIVE);
	/* After ACTIVE: a fault from here on finds a trace to finish. */
	exits_install_fatal();
	return;

out_stop:
	collector_stop(collector, 0, path, sizeof(path));
out_untraced:
	report_failure(err);
	atomic_store(&state, STATE_UNTRACED);
}

/* The CUDA driver's entry point (CUDA_INJECTION64_PATH), called from cuInit. */
int InitializeInjection(void)
{
	inject_early_init();
	inject_start();
	return 1;
}

/* NVTX's entry point (NVTX_INJECTION64_PATH, or the preloaded library), once per NVTX instance; it
 * may come before CUDA starts and before our constructor ran. nvtx.c does the work. */
int InitializeInjectionNvtx2(const void *(*get)(uint32_t table_id))
{
	inject_early_init();
	return nvtx_install(get);
}

static int in_ld_preload(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload && strstr(preload, "libgpt_inject");
}

__attribute__((constructor)) static void inject_constructor(void)
{
	Dl_info self;
	char path[PATH_MAX];

	inject_early_init();
	preloaded = in_ld_preload();
	/*
	 * Preloaded without the driver's variable (someone ran LD_PRELOAD by hand): name ourselves,
	 * so that cuInit calls InitializeInjection. Only then, and only this early, do we touch the
	 * environment (setenv is not safe once the program runs threads).
	 */
	if (!preloaded || getenv("CUDA_INJECTION64_PATH") ||
	    !dladdr((void *)inject_constructor, &self) || !self.dli_fname ||
	    !realpath(self.dli_fname, path))
		return;
	setenv("CUDA_INJECTION64_PATH", path, 0);
	setenv("NVTX_INJECTION64_PATH", path, 0);
}
