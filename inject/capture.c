/*
 * Capture windows inside the traced process: what `gpt-trace run --delay, --duration,
 * --capture-range, --capture-range-end and --max-size` ask for (docs/run.md), turned into window
 * opens and closes queued to the collector, whose writer keeps only the rows that start inside a
 * window (collector/capture-windows.h says why the gate is there and not on CUPTI's activity kinds).
 *
 * The options keep Nsight Systems' meanings, with one difference: nsys ends the program when a
 * --duration or a stop-shutdown range ends; we never end the program, its run is left as it is.
 *   --delay D       nothing is recorded before D seconds after the launch (gpt-trace run's start,
 *                   GPT_TRACE_LAUNCH_NS, so all processes of a job share the reference);
 *   --duration T    a window lasts at most T seconds (from the delay, or from each range start);
 *   cudaProfilerApi windows open at cudaProfilerStart (cuProfilerStart) and close at
 *                   cudaProfilerStop, which PyTorch's torch.cuda.profiler.start()/stop() call;
 *   nvtx            with --nvtx-capture RANGE[@DOMAIN]: a window from the push (or start) of an
 *                   NVTX range of that message in that domain (none: the default domain, '*': any)
 *                   to its pop (the same thread's pop at the same depth in that domain) or end
 *                   (the same range id); registered strings match by their text too;
 *   range end       stop: only the first range; repeat[:N]: every range (the first N); none: the
 *                   first start opens a window that only the end of the run closes.
 * A range start before the delay has passed is ignored. A range that opens before CUDA starts
 * (before the trace exists) opens its window when the trace starts.
 *
 * On demand (--start-later): the process starts armed, its CUPTI event kinds off, and announces
 * itself with a file <dir>/<pid>.armed (dir: $GPT_TRACE_CONTROL_DIR, else /tmp/gpt-trace-<uid>).
 * `gpt-trace start` and `stop` (cli/cmd-start.c) write a command to <dir>/<pid>.cmd, which the
 * library's flush thread reads at its next tick (half the commit interval: 500 ms by default):
 * "start DURATION_NS AT_NS" turns the kinds on and opens a window at AT_NS, "stop AT_NS" closes it
 * at AT_NS and then turns them off. AT_NS, on CLOCK_MONOTONIC, is the same instant for every
 * process the command reached (cli/run-control.h), so the ranks of a job record the same steps;
 * a process that reads its command after that instant acts at once. A file and not a signal: a
 * signal would reach the program's own handlers. The .armed file is written when the process
 * starts (the preloaded constructor), saying "starting" until CUDA starts: a command sent then
 * waits in <pid>.cmd and is done when CUDA starts.
 */
#define _GNU_SOURCE
#include "inject/inject.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inject/clock.h"

#include <limits.h>

enum capture_range {
	RANGE_NONE,
	RANGE_CUDA_PROFILER_API,
	RANGE_NVTX,
};

enum range_end {
	END_STOP,
	END_REPEAT,
	END_NONE,
};

static struct {
	int on;				/* any capture option given */
	enum capture_range range;
	enum range_end end;
	unsigned repeat_max;		/* END_REPEAT: 0 unlimited */
	uint64_t delay, duration;	/* ns; duration 0: no limit */
	uint64_t max_size;		/* bytes, 0: none */
	uint64_t age;			/* ns from the launch to this process's configuration */
	int quiet;
	char nvtx_range[256];		/* --nvtx-capture's RANGE ... */
	char nvtx_domain[256];		/* ... and DOMAIN ("": the default domain, "*": any) */
	unsigned long steps_first, steps_last;	/* --steps A-B (0: not given) */
	int start_later;			/* armed until `gpt-trace start` */
	char control[PATH_MAX];			/* the control folder */
} config;

/* On demand: a window opened by a start command, and when its --duration ends (0: never). */
static int demand_open;
static uint64_t demand_deadline;
/* The process that wrote <pid>.armed before CUDA started (a forked child inherits the atexit), and
 * its control files, named in advance for capture_unannounce(). */
static pid_t announced_pid;
static char announced_armed[PATH_MAX + 32], announced_cmd[PATH_MAX + 32];

int capture_nvtx_on;

/* The NVTX range that opened the window (nvtx), and the ids of the wanted domain and strings. */
static struct {
	int open;
	uint32_t tid, domain;
	int depth;			/* pushes of that thread in that domain since, pops taken off */
	uint64_t range_id;		/* a start/end range: its id; 0 for push/pop */
	uint32_t domain_id;		/* the wanted domain's id once created (0: the default) */
	int domain_known;
	uint32_t strings[64];		/* registered strings whose text is the wanted range */
	size_t nstrings;
	uint64_t pending_open;		/* opened before the trace existed (0: no) */
	unsigned long count;		/* matching ranges begun so far (--steps counts them) */
} nvtx;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct collector *sink;
static uint64_t not_before;		/* absolute: launch + delay */
static int window_open;			/* a range window, until its stop or deadline */
static uint64_t deadline;		/* its --duration end, 0: none */
static unsigned windows_opened;
static int finished;			/* no more windows: stop mode done, repeat:N done, max-size */

static uint64_t env_u64(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 10) : 0;
}

static uint64_t monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* RANGE[@DOMAIN] of --nvtx-capture; an empty RANGE turns the capture off. */
static void nvtx_config(const char *spec)
{
	const char *at = spec ? strrchr(spec, '@') : NULL;

	if (!spec || !*spec || spec == at)
		return;
	snprintf(config.nvtx_range, sizeof(config.nvtx_range), "%.*s",
		 (int)(at ? (size_t)(at - spec) : strlen(spec)), spec);
	snprintf(config.nvtx_domain, sizeof(config.nvtx_domain), "%s", at ? at + 1 : "");
	nvtx.domain_known = !config.nvtx_domain[0];
	capture_nvtx_on = 1;
}

/*
 * --steps A-B: the A-th to the B-th NVTX range of the step name (--nvtx-capture, else PyTorch's
 * "ProfilerStep#*"), one window; the ranges are counted from 1 as they begin.
 */
static void steps_config(const char *spec)
{
	char *end;

	if (!spec || !*spec)
		return;
	config.steps_first = strtoul(spec, &end, 10);
	config.steps_last = *end == '-' ? strtoul(end + 1, NULL, 10) : config.steps_first;
	if (!config.steps_first || config.steps_last < config.steps_first) {
		config.steps_first = config.steps_last = 0;
		return;
	}
	config.range = RANGE_NVTX;
	config.end = END_STOP;
	if (!getenv("GPT_TRACE_NVTX_CAPTURE"))
		nvtx_config("ProfilerStep#*");
}

void capture_read_config(int quiet)
{
	const char *range = getenv("GPT_TRACE_CAPTURE_RANGE");
	const char *end = getenv("GPT_TRACE_CAPTURE_RANGE_END");
	uint64_t launch = env_u64("GPT_TRACE_LAUNCH_NS"), now = monotonic_now();

	config.quiet = quiet;
	config.delay = env_u64("GPT_TRACE_DELAY_NS");
	config.duration = env_u64("GPT_TRACE_DURATION_NS");
	config.max_size = env_u64("GPT_TRACE_MAX_SIZE");
	config.age = launch && launch <= now ? now - launch : 0;
	config.range = range && !strcmp(range, "cudaProfilerApi") ? RANGE_CUDA_PROFILER_API
		       : range && !strcmp(range, "nvtx")	    ? RANGE_NVTX
								    : RANGE_NONE;
	steps_config(getenv("GPT_TRACE_STEPS"));
	if (config.range == RANGE_NVTX)
		nvtx_config(getenv("GPT_TRACE_NVTX_CAPTURE"));
	/* --steps makes one window: its end mode is stop. */
	config.end = END_STOP;
	if (!config.steps_last && end && !strncmp(end, "repeat", 6)) {
		config.end = END_REPEAT;
		if (end[6] == ':')
			config.repeat_max = (unsigned)strtoul(end + 7, NULL, 10);
	} else if (!config.steps_last && end && !strcmp(end, "none")) {
		config.end = END_NONE;
	}
	config.start_later = getenv("GPT_TRACE_START_LATER") &&
			     !strcmp(getenv("GPT_TRACE_START_LATER"), "1");
	if (config.start_later) {
		const char *dir = getenv("GPT_TRACE_CONTROL_DIR");

		if (dir && *dir)
			snprintf(config.control, sizeof(config.control), "%s", dir);
		else
			snprintf(config.control, sizeof(config.control), "/tmp/gpt-trace-%u",
				 (unsigned)getuid());
		/* On demand replaces the other windows: a start command opens each. */
		config.range = RANGE_NONE;
		config.delay = 0;
	}
	config.on = config.delay || config.duration || config.max_size ||
		    config.range != RANGE_NONE || config.start_later;
}

uint64_t capture_max_size(void)
{
	return config.max_size;
}


static void describe(struct collector *collector)
{
	char value[64];

	collector_set_meta(collector, "capture_range",
			   config.range == RANGE_CUDA_PROFILER_API ? "cudaProfilerApi"
			   : config.range == RANGE_NVTX		  ? "nvtx"
								  : "none");
	if (config.range == RANGE_NVTX) {
		char spec[520];

		snprintf(spec, sizeof(spec), "%s%s%s", config.nvtx_range,
			 config.nvtx_domain[0] ? "@" : "", config.nvtx_domain);
		collector_set_meta(collector, "capture_nvtx", spec);
	}
	if (config.steps_last) {
		snprintf(value, sizeof(value), "%lu-%lu", config.steps_first, config.steps_last);
		collector_set_meta(collector, "capture_steps", value);
	}
	if (config.range != RANGE_NONE) {
		if (config.end == END_REPEAT && config.repeat_max)
			snprintf(value, sizeof(value), "repeat:%u", config.repeat_max);
		else
			snprintf(value, sizeof(value), "%s", config.end == END_REPEAT ? "repeat"
							     : config.end == END_NONE ? "none" : "stop");
		collector_set_meta(collector, "capture_range_end", value);
	}
	snprintf(value, sizeof(value), "%llu", (unsigned long long)config.delay);
	collector_set_meta(collector, "capture_delay_ns", value);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)config.duration);
	collector_set_meta(collector, "capture_duration_ns", value);
	if (config.max_size) {
		snprintf(value, sizeof(value), "%llu", (unsigned long long)config.max_size);
		collector_set_meta(collector, "max_size_bytes", value);
	}
}

static int range_start_locked(uint64_t now, const char *name);

void capture_start(struct collector *collector, uint64_t origin)
{
	/* The launch on the trace's clock: this process was configured config.age after it. */
	uint64_t launch = origin > config.age ? origin - config.age : 0;

	if (!config.on)
		return;
	if (config.range == RANGE_CUDA_PROFILER_API)
		cupti_trace_on_profiler_calls(capture_range_call);
	pthread_mutex_lock(&lock);
	sink = collector;
	/* A window opened before this process began starts with its trace (no negative times). */
	not_before = launch + config.delay > origin ? launch + config.delay : origin;
	describe(collector);
	collector_capture_gate(collector);
	if (config.start_later) {
		collector_set_meta(collector, "capture_start_later", "1");
	} else if (config.range == RANGE_NONE) {
		collector_window_open(collector, not_before, config.delay ? "delay" : "start");
		if (config.duration)
			collector_window_close(collector, not_before + config.duration, "duration");
		windows_opened = 1;
	}
	/* An NVTX range that began before the trace: its window opens now, at the range's start. */
	if (config.range == RANGE_NVTX && nvtx.open && nvtx.pending_open &&
	    !range_start_locked(nvtx.pending_open > not_before ? nvtx.pending_open : not_before,
				"nvtx range start"))
		nvtx.open = 0;
	pthread_mutex_unlock(&lock);
}

/* Whether the range window is still open at now (its --duration may have ended it). */
static int range_open(uint64_t now)
{
	if (window_open && deadline && now >= deadline) {
		window_open = 0;
		if (config.end == END_STOP)
			finished = 1;
	}
	return window_open;
}

static int may_open(void)
{
	if (finished)
		return 0;
	if (config.end == END_REPEAT && config.repeat_max && windows_opened >= config.repeat_max)
		return 0;
	return !(config.end != END_REPEAT && windows_opened);
}

/* A range starts at now (lock held): open a window if the range end mode allows one. */
static int range_start_locked(uint64_t now, const char *name)
{
	if (range_open(now) || now < not_before || !may_open())
		return 0;
	collector_window_open(sink, now, name);
	window_open = 1;
	windows_opened++;
	deadline = config.duration ? now + config.duration : 0;
	if (deadline)
		collector_window_close(sink, deadline, "duration");
	return 1;
}

/* The range ends at now (lock held). */
static void range_stop_locked(uint64_t now, const char *name)
{
	if (!range_open(now) || config.end == END_NONE)
		return;
	collector_window_close(sink, now, name);
	window_open = 0;
	if (config.end == END_STOP)
		finished = 1;
}

void capture_range_call(int start, const char *name)
{
	uint64_t now = gpt_clock_now();

	pthread_mutex_lock(&lock);
	if (sink && config.range == RANGE_CUDA_PROFILER_API) {
		if (start)
			range_start_locked(now, name);
		else
			range_stop_locked(now, name);
	}
	pthread_mutex_unlock(&lock);
}

static int nvtx_wanted_domain(uint32_t domain)
{
	return !strcmp(config.nvtx_domain, "*") || (nvtx.domain_known && domain == nvtx.domain_id);
}

static int nvtx_wanted_text(const struct collector_nvtx_event *ev, const char *text, size_t len)
{
	size_t want = strlen(config.nvtx_range);

	/* "ProfilerStep#*": a trailing '*' matches any rest. */
	if (text && want && config.nvtx_range[want - 1] == '*')
		return len >= want - 1 && !memcmp(text, config.nvtx_range, want - 1);
	if (text)
		return len == want && !memcmp(text, config.nvtx_range, len);
	for (size_t i = 0; ev->registered && i < nvtx.nstrings; i++)
		if (nvtx.strings[i] == ev->registered)
			return 1;
	return 0;
}

/* Learn the wanted domain's id and the registered strings that spell the wanted range (lock held). */
static void nvtx_learn(const struct collector_nvtx_event *ev, const char *text, size_t len)
{
	if (ev->kind == NVTX_EV_DOMAIN && text && len == strlen(config.nvtx_domain) &&
	    !memcmp(text, config.nvtx_domain, len)) {
		nvtx.domain_id = ev->domain;
		nvtx.domain_known = 1;
	} else if (ev->kind == NVTX_EV_REGISTER && text && nvtx.nstrings < 64 &&
		   nvtx_wanted_text(&(struct collector_nvtx_event){ 0 }, text, len)) {
		nvtx.strings[nvtx.nstrings++] = (uint32_t)ev->range_id;
	}
}

/* Whether the tracked range's end closes the window: always, except before the last --steps step. */
static int nvtx_closes(void)
{
	return !config.steps_last || nvtx.count >= config.steps_last;
}

/* Start following a matching range (lock held): the window opens unless --steps says not yet. */
static void nvtx_track(const struct collector_nvtx_event *ev)
{
	const char *why = config.steps_last ? "step start" : "nvtx range start";

	nvtx.count++;
	if (config.steps_last && (nvtx.count < config.steps_first || nvtx.count > config.steps_last))
		return;
	if (!config.steps_last || nvtx.count == config.steps_first) {
		if (sink && !range_start_locked(ev->timestamp, why))
			return;
		if (!sink) {
			if (finished)
				return;
			nvtx.pending_open = ev->timestamp;
		}
	}
	nvtx.open = 1;
	nvtx.tid = ev->tid;
	nvtx.domain = ev->domain;
	nvtx.depth = 1;
	nvtx.range_id = ev->kind == NVTX_EV_START ? ev->range_id : 0;
}

/*
 * A matching push or start opens; the same thread's pop at the same depth in that domain, or the
 * end of that range id, closes. With --steps A-B the A-th matching range opens and the end of the
 * B-th closes.
 */
static void nvtx_follow(const struct collector_nvtx_event *ev, const char *text, size_t len)
{
	if (nvtx.open) {
		if (ev->kind == NVTX_EV_END && nvtx.range_id && ev->range_id == nvtx.range_id)
			nvtx.open = 0;
		else if (!nvtx.range_id && ev->tid == nvtx.tid && ev->domain == nvtx.domain &&
			 (ev->kind == NVTX_EV_PUSH || ev->kind == NVTX_EV_POP))
			nvtx.open = (nvtx.depth += ev->kind == NVTX_EV_PUSH ? 1 : -1) > 0;
		if (nvtx.open || !nvtx_closes())
			return;
		if (sink)
			range_stop_locked(ev->timestamp, config.steps_last ? "step end" : "nvtx range end");
		else
			nvtx.pending_open = 0;	/* opened and closed before the trace existed */
		return;
	}
	if ((ev->kind == NVTX_EV_PUSH || ev->kind == NVTX_EV_START) &&
	    nvtx_wanted_domain(ev->domain) && nvtx_wanted_text(ev, text, len))
		nvtx_track(ev);
}

void capture_nvtx_event(const struct collector_nvtx_event *ev, const char *text, size_t len)
{
	int relevant = ev->kind == NVTX_EV_DOMAIN || ev->kind == NVTX_EV_REGISTER ||
		       ev->kind == NVTX_EV_PUSH || ev->kind == NVTX_EV_POP ||
		       ev->kind == NVTX_EV_START || ev->kind == NVTX_EV_END;

	if (!relevant)
		return;
	pthread_mutex_lock(&lock);
	if (ev->kind == NVTX_EV_DOMAIN || ev->kind == NVTX_EV_REGISTER)
		nvtx_learn(ev, text, len);
	else
		nvtx_follow(ev, text, len);
	pthread_mutex_unlock(&lock);
}

static void control_path(char *path, size_t len, const char *suffix)
{
	snprintf(path, len, "%s/%ld.%s", config.control, (long)getpid(), suffix);
}

/*
 * <pid>.armed: the command line, then "starting" while CUDA has not started, so that `gpt-trace
 * start` reaches a process still importing its framework and says so. Written whole and renamed
 * into place: `gpt-trace start` never reads half of it. 0 written, -1 not (said only once CUDA
 * started: a process that never starts CUDA stays silent, as it leaves no trace).
 */
static int write_armed(int cuda_started)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 40], cmdline[1024];
	struct stat st;
	ssize_t n = 0;
	int fd, ok;

	if (mkdir(config.control, 0700) < 0 && errno != EEXIST) {
		if (cuda_started)
			inject_say("--start-later: cannot create '%s': %s; `gpt-trace start` cannot "
				   "reach this process", config.control, strerror(errno));
		return -1;
	}
	/* Another user's folder (made first in /tmp) must not take our commands. */
	if (lstat(config.control, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
		if (cuda_started)
			inject_say("--start-later: '%s' is not a folder of this user; `gpt-trace "
				   "start` cannot reach this process", config.control);
		return -1;
	}
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cmdline, sizeof(cmdline) - 16);
		close(fd);
	}
	for (ssize_t i = 0; i + 1 < n; i++)
		if (!cmdline[i])
			cmdline[i] = ' ';
	n = n > 0 ? n - 1 : 0;
	n += snprintf(cmdline + n, sizeof(cmdline) - (size_t)n, "\n%s", cuda_started ? "" : "starting\n");
	control_path(path, sizeof(path), "armed");
	control_path(tmp, sizeof(tmp), "armed.tmp");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok = fd >= 0 && write(fd, cmdline, (size_t)n) == n;
	if (fd >= 0 && close(fd) < 0)
		ok = 0;
	if (ok && rename(tmp, path) == 0)
		return 0;
	if (cuda_started)
		inject_say("--start-later: cannot write '%s': %s", path, strerror(errno));
	unlink(tmp);
	return -1;
}

static void remove_control_files(void)
{
	char path[PATH_MAX + 32];

	control_path(path, sizeof(path), "armed");
	unlink(path);
	control_path(path, sizeof(path), "cmd");
	unlink(path);
}

void capture_unannounce(void)
{
	/* Only getpid and unlink: _exit() may come from a signal handler. */
	if (announced_pid && getpid() == announced_pid && !sink) {
		unlink(announced_armed);
		unlink(announced_cmd);
	}
}

void capture_announce(void)
{
	if (!config.start_later || write_armed(0) < 0)
		return;
	control_path(announced_armed, sizeof(announced_armed), "armed");
	control_path(announced_cmd, sizeof(announced_cmd), "cmd");
	announced_pid = getpid();
	atexit(capture_unannounce);
}

static void demand(const char *command, uint64_t now);

static void set_meta_ns(const char *name, uint64_t ns)
{
	char value[32];

	snprintf(value, sizeof(value), "%llu", (unsigned long long)ns);
	collector_set_meta(sink, name, value);
}

/* The command waiting in <pid>.cmd, if any, done at now (lock held). */
static void read_command(uint64_t now)
{
	char path[PATH_MAX + 32], command[64] = "";
	ssize_t n;
	int fd;

	control_path(path, sizeof(path), "cmd");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, command, sizeof(command) - 1);
	close(fd);
	unlink(path);
	command[n > 0 ? n : 0] = '\0';
	demand(command, now);
}

/*
 * CUDA started: event kinds off until a start command, <pid>.armed says CUDA started, and a start
 * sent while the process was still starting opens its window now (or at its instant, if later).
 */
void capture_armed(void)
{
	if (!config.start_later)
		return;
	cupti_trace_pause(1);
	write_armed(1);
	pthread_mutex_lock(&lock);
	if (sink)
		read_command(gpt_clock_now());
	pthread_mutex_unlock(&lock);
}

/*
 * A command's instant, AT_NS on CLOCK_MONOTONIC, on the trace's clock. With the default clock
 * (monotonic) it is exact: every process the command reached opens at the same ns. A loaded
 * machine once put 1-2 ms between two back-to-back readings of the two clocks (the ASan build of
 * the CPU suite, 2026-11-30), which two processes then disagreed by.
 */
static uint64_t command_instant(unsigned long long at_monotonic)
{
	if (gpt_clock_source == gpt_clock_monotonic)
		return at_monotonic + (uint64_t)gpt_clock_offset;
	return at_monotonic + (gpt_clock_now() - monotonic_now());
}

/*
 * A start or stop command (lock held). A process that reads it after its instant (its tick came
 * late, or CUDA started later) acts now, and GPT_META capture_command_late_ns says by how much;
 * the --duration still ends at the instant named plus the duration, the same for every process.
 */
static void demand(const char *command, uint64_t now)
{
	unsigned long long duration = 0, at = 0;
	uint64_t named, when;

	if (!strncmp(command, "start", 5) && !demand_open && !finished) {
		sscanf(command + 5, "%llu %llu", &duration, &at);
		named = at ? command_instant(at) : now;
		when = named > now ? named : now;
		if (when > named)
			set_meta_ns("capture_command_late_ns", when - named);
		cupti_trace_pause(0);	/* records before `when` are left out by the window */
		collector_window_open(sink, when, "start command");
		demand_open = 1;
		demand_deadline = duration ? (named + duration > when ? named + duration : when) : 0;
		if (demand_deadline)
			collector_window_close(sink, demand_deadline, "duration");
	} else if (!strncmp(command, "stop", 4) && demand_open) {
		sscanf(command + 4, "%llu", &at);
		named = at ? command_instant(at) : now;
		when = named > now ? named : now;
		collector_window_close(sink, when, "stop command");
		if (when > now) {	/* the kinds go off at the next tick after it */
			if (!demand_deadline || when < demand_deadline)
				demand_deadline = when;
			return;
		}
		demand_open = 0;
		cupti_trace_pause(1);
	}
}

void capture_poll(void)
{
	uint64_t now;

	if (!config.start_later || !sink)
		return;
	pthread_mutex_lock(&lock);
	now = gpt_clock_now();
	if (demand_open && demand_deadline && now >= demand_deadline) {
		demand_open = 0;
		cupti_trace_pause(1);
	}
	read_command(now);
	pthread_mutex_unlock(&lock);
}

void capture_finish(uint64_t now)
{
	pthread_mutex_lock(&lock);
	if (sink)
		collector_window_end(sink, now, "exit");
	finished = 1;
	pthread_mutex_unlock(&lock);
	if (config.start_later)
		remove_control_files();
}

/* The writer's --max-size callback (writer thread): one line, whatever -q says. */
void capture_full(const char *path, uint64_t bytes, int64_t at)
{
	pthread_mutex_lock(&lock);
	finished = 1;
	pthread_mutex_unlock(&lock);
	inject_say("trace '%s' reached --max-size %.1f MiB (%llu bytes) at %.3f s: recording "
		   "stopped, the trace is kept up to there, the program goes on", path,
		   (double)config.max_size / (1 << 20), (unsigned long long)bytes, (double)at / 1e9);
}
