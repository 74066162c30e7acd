/*
 * gpt-trace run: run a program with libgpt_inject.so injected into every process of its tree, and
 * summarize the traces once it ends.
 *
 * The launcher configures the library only through the environment (docs/launcher-env.md):
 * LD_PRELOAD (our library first, then what the variable held), CUDA_INJECTION64_PATH,
 * NVTX_INJECTION64_PATH and GPT_TRACE_*. Everything it can check before the program starts (the
 * options, the library, the output directory) fails with exit status 2 and the program not run,
 * since a failed traced run is cheaper to redo than a long run that wrote nothing. After that the
 * launcher is transparent: the program's status is the launcher's status (run-child.h), and tracing
 * problems are only reported.
 */
#include "common/interval.h"
#include "cli/commands.h"
#include "cli/inject-lib.h"
#include "cli/run-child.h"
#include "cli/run-session.h"
#include "cli/run-summary.h"
#include "cli/usage.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_OUTPUT "gpt-trace-%h-%p.sqlite"
#define MAX_COMMIT_MS 3600000UL

/* The capture window (docs/run.md); 0 / NULL: not given. */
struct capture_options {
	unsigned long long delay_ns, duration_ns, max_size;
	const char *range;		/* "none", "cudaProfilerApi", "nvtx" */
	const char *nvtx;		/* --nvtx-capture RANGE[@DOMAIN] */
	const char *steps;		/* --steps A-B */
	int start_later;		/* --start-later: armed until `gpt-trace start` */
	const char *range_end;		/* "none", "stop", "repeat", "repeat:N" */
};

struct run_options {
	const char *output;	/* pattern as given, NULL: DEFAULT_OUTPUT */
	int force;
	const char *api;
	const char *metrics;	/* NULL: off */
	const char *gpu_metrics;	/* GPT_TRACE_GPU_METRICS: an interval, or NULL (off) */
	unsigned long commit_ms;
	int quiet;
	struct capture_options capture;
};

static const char usage_text[] =
	"usage: gpt-trace run [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM with libgpt_inject.so injected. Each process of its tree that uses CUDA\n"
	"writes its own SQLite trace; the others write none. PROGRAM's arguments, input, output,\n"
	"environment, working directory and exit status are left as they are; a summary of each\n"
	"trace goes to stderr when PROGRAM ends.\n"
	"\n"
	"options:\n"
	"  -o, --output PATTERN  trace file of each process: %p pid, %h short host name, %r rank\n"
	"                        in a parallel job (the pid when none), %% '%'\n"
	"                        (default: gpt-trace-%h-%p.sqlite in the current directory)\n"
	"  -f, --force           overwrite existing trace files (default: add .1, .2, ...)\n"
	"      --api WHICH       CUDA API calls recorded: default (launch, copy, set, sync,\n"
	"                        event, stream and graph calls), all, or none\n"
	"      --metrics[=SPEC]  collect kernel hardware metrics; SPEC as GPT_TRACE_METRICS\n"
	"                        (docs/metrics.md), e.g. kernel=*gemm*,first=3; alone: all\n"
	"      --gpu-metrics[=INTERVAL]  sample SM, tensor-pipe, DRAM, PCIe (and NVLink)\n"
	"                        activity of every GPU used (CUPTI PM sampling,\n"
	"                        docs/gpu-metrics.md);\n"
	"                        INTERVAL a time (100us) or a frequency (10khz, the default);\n"
	"                        from 200us (=1khz) on an H100/H200: nsys's whole metric set\n"
	"      --no-gpu-metrics  do not sample GPU metrics (the default)\n"
	"      --commit-ms N     commit the trace every N ms (default 1000): a killed\n"
	"                        program loses at most about that much\n"
	"  -q, --quiet           print only problems (failed traces, dropped records)\n"
	"\n"
	"what to record, as Nsight Systems' options (docs/run.md; the program is never ended):\n"
	"  -y, --delay S         record nothing in the first S seconds after launch\n"
	"  -d, --duration S      record at most S seconds (after the delay, or per range)\n"
	"  -c, --capture-range R none (default); cudaProfilerApi: record between\n"
	"                        cudaProfilerStart and cudaProfilerStop (torch.cuda.profiler);\n"
	"                        nvtx: record within the NVTX range given by -p\n"
	"  -p, --nvtx-capture RANGE[@DOMAIN]  the NVTX range of -c nvtx (DOMAIN: none the\n"
	"                        default domain, * any; RANGE may end in *)\n"
	"      --steps A-B       record from the start of the A-th step to the end of the B-th:\n"
	"                        NVTX ranges named by -p (default ProfilerStep#*), from 1\n"
	"      --capture-range-end E  stop (default: the first range only), repeat[:N]\n"
	"                        (every range, or the first N), none (until the end)\n"
	"      --start-later     start armed, recording nothing (CUDA activity off) until\n"
	"                        'gpt-trace start [PID|all]'; 'gpt-trace stop' stops again\n"
	"      --max-size SIZE   stop recording when a trace reaches SIZE bytes (K, M, G\n"
	"                        suffixes, powers of 1024); the trace is kept up to there\n"
	"  -h, --help            print this help\n"
	"\n"
	"SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to gpt-trace go to PROGRAM.\n"
	"exit status: PROGRAM's (if a signal killed PROGRAM, gpt-trace ends by the same signal);\n"
	"2 usage or setup error (PROGRAM not run), 126 PROGRAM not executable, 127 not found\n";

enum {
	OPT_API = 256,
	OPT_METRICS,
	OPT_COMMIT_MS,
	OPT_CAPTURE_RANGE_END,
	OPT_MAX_SIZE,
	OPT_STEPS,
	OPT_START_LATER,
	OPT_GPU_METRICS,
	OPT_NO_GPU_METRICS,
};

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "force", no_argument, NULL, 'f' },
	{ "api", required_argument, NULL, OPT_API },
	{ "metrics", optional_argument, NULL, OPT_METRICS },
	{ "commit-ms", required_argument, NULL, OPT_COMMIT_MS },
	{ "gpu-metrics", optional_argument, NULL, OPT_GPU_METRICS },
	{ "no-gpu-metrics", no_argument, NULL, OPT_NO_GPU_METRICS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "delay", required_argument, NULL, 'y' },
	{ "duration", required_argument, NULL, 'd' },
	{ "capture-range", required_argument, NULL, 'c' },
	{ "capture-range-end", required_argument, NULL, OPT_CAPTURE_RANGE_END },
	{ "nvtx-capture", required_argument, NULL, 'p' },
	{ "steps", required_argument, NULL, OPT_STEPS },
	{ "start-later", no_argument, NULL, OPT_START_LATER },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	char message[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	pr_err("run: %s; see 'gpt-trace run --help'", message);
	return GPT_EXIT_USAGE;
}

static int is_api_choice(const char *api)
{
	return !strcmp(api, "default") || !strcmp(api, "all") || !strcmp(api, "none");
}

/* 0 for anything but a plain number of milliseconds in range. */
static unsigned long parse_commit_ms(const char *text)
{
	unsigned long ms;
	char *end;

	if (text[0] < '0' || text[0] > '9')
		return 0;
	errno = 0;
	ms = strtoul(text, &end, 10);
	if (errno || *end || ms > MAX_COMMIT_MS)
		return 0;
	return ms;
}

/* Seconds ("2", "0.5") as ns; 0 with *ok 0 for anything else. */
static unsigned long long parse_seconds(const char *text, int *ok)
{
	double seconds;
	char *end;

	*ok = 0;
	if ((text[0] < '0' || text[0] > '9') && text[0] != '.')
		return 0;
	errno = 0;
	seconds = strtod(text, &end);
	if (errno || *end || seconds < 0 || seconds > 1e9)
		return 0;
	*ok = 1;
	return (unsigned long long)(seconds * 1e9 + 0.5);
}

/* Bytes, with an optional K, M or G (KB, MB, GB; powers of 1024); 0 for anything else. */
static unsigned long long parse_size(const char *text)
{
	unsigned long long n, unit = 1;
	char *end;

	if (text[0] < '0' || text[0] > '9')
		return 0;
	errno = 0;
	n = strtoull(text, &end, 10);
	if (errno)
		return 0;
	switch (*end) {
	case 'k': case 'K': unit = 1ull << 10; end++; break;
	case 'm': case 'M': unit = 1ull << 20; end++; break;
	case 'g': case 'G': unit = 1ull << 30; end++; break;
	}
	if (unit > 1 && (*end == 'B' || *end == 'b'))
		end++;
	if (*end || n > (1ull << 50) / unit)
		return 0;
	return n * unit;
}

static int is_range_end(const char *text)
{
	char *end;

	if (!strcmp(text, "none") || !strcmp(text, "stop") || !strcmp(text, "repeat"))
		return 1;
	if (strncmp(text, "repeat:", 7) || text[7] < '1' || text[7] > '9')
		return 0;
	errno = 0;
	return strtoul(text + 7, &end, 10) < 1000000 && !errno && !*end;
}

/* "A-B" with 1 <= A <= B. */
static int is_steps(const char *text)
{
	unsigned long a, b;
	char *end;

	if (text[0] < '1' || text[0] > '9')
		return 0;
	errno = 0;
	a = strtoul(text, &end, 10);
	if (*end != '-' || end[1] < '1' || end[1] > '9')
		return 0;
	b = strtoul(end + 1, &end, 10);
	return !errno && !*end && a <= b && b < 100000000;
}

/* One capture option (docs/run.md): 0, -1 not one of them, or GPT_EXIT_USAGE after printing why. */
static int parse_capture_option(int c, const char *arg, struct capture_options *capture)
{
	int ok;

	switch (c) {
	case 'y':
	case 'd':
		*(c == 'y' ? &capture->delay_ns : &capture->duration_ns) = parse_seconds(arg, &ok);
		if (!ok || (c == 'd' && !capture->duration_ns))
			return usage_error("invalid --%s '%s': expected %s seconds",
					   c == 'y' ? "delay" : "duration", arg,
					   c == 'y' ? "a number of" : "a positive number of");
		return 0;
	case 'c':
		if (strcmp(arg, "none") && strcmp(arg, "cudaProfilerApi") && strcmp(arg, "nvtx"))
			return usage_error("invalid --capture-range '%s': use none, cudaProfilerApi or "
					   "nvtx", arg);
		capture->range = arg;
		return 0;
	case OPT_START_LATER:
		capture->start_later = 1;
		return 0;
	case OPT_STEPS:
		if (!is_steps(arg))
			return usage_error("invalid --steps '%s': expected A-B with 1 <= A <= B", arg);
		capture->steps = arg;
		return 0;
	case 'p':
		if (!*arg || *arg == '@')
			return usage_error("invalid --nvtx-capture '%s': expected RANGE[@DOMAIN]", arg);
		capture->nvtx = arg;
		return 0;
	case OPT_CAPTURE_RANGE_END:
		if (!strcmp(arg, "stop-shutdown") || !strncmp(arg, "repeat-shutdown", 15))
			return usage_error("--capture-range-end=%s: gpt-trace never ends the program; "
					   "use stop or repeat[:N]", arg);
		if (!is_range_end(arg))
			return usage_error("invalid --capture-range-end '%s': use none, stop or "
					   "repeat[:N]", arg);
		capture->range_end = arg;
		return 0;
	case OPT_MAX_SIZE:
		capture->max_size = parse_size(arg);
		if (!capture->max_size)
			return usage_error("invalid --max-size '%s': expected a size such as 500M or 2G",
					   arg);
		return 0;
	}
	return -1;
}

/* One option into opts (a struct run_options): 0, or GPT_EXIT_USAGE after printing why. */
static int run_option(void *data, int c, const char *arg)
{
	struct run_options *opts = data;
	int ret = parse_capture_option(c, arg, &opts->capture);

	if (ret >= 0)
		return ret;
	switch (c) {
	case 'o':
		opts->output = arg;
		break;
	case 'f':
		opts->force = 1;
		break;
	case 'q':
		opts->quiet = 1;
		break;
	case OPT_API:
		if (!is_api_choice(arg))
			return usage_error("invalid --api '%s': use default, all or none", arg);
		opts->api = arg;
		break;
	case OPT_METRICS:
		/* "1": every kernel, in the library's spec (docs/metrics.md). */
		opts->metrics = arg ? arg : "1";
		break;
	case OPT_GPU_METRICS: {
		uint64_t ns;
		char why[160];

		if (gpu_metrics_interval_parse(arg ? arg : "on", &ns, why, sizeof(why)) < 0)
			return usage_error("%s", why);
		opts->gpu_metrics = ns ? (arg ? arg : "on") : NULL;
		break;
	}
	case OPT_NO_GPU_METRICS:
		opts->gpu_metrics = NULL;
		break;
	case OPT_COMMIT_MS:
		opts->commit_ms = parse_commit_ms(arg);
		if (!opts->commit_ms)
			return usage_error("invalid --commit-ms '%s': expected 1 to %lu ms", arg,
					   MAX_COMMIT_MS);
		break;
	}
	return 0;
}

/* The first non-option is PROGRAM; what follows it belongs to PROGRAM. */
static const struct usage_command run_usage = {
	.name = "run", .prefix = USAGE_NAMED, .args = USAGE_ARGS_IN_ORDER, .help = usage_text,
	.shortopts = "o:fqy:d:c:p:", .longopts = long_options, .option = run_option,
};

/* The options that go together, and PROGRAM: 0, or GPT_EXIT_USAGE after printing why. */
static int check_options(const struct run_options *opts, int argc)
{
	if (optind >= argc)
		return usage_error("no program given: "
				   "gpt-trace run [options] -- PROGRAM [ARGS...]");
	if (opts->capture.range_end &&
	    (!opts->capture.range || !strcmp(opts->capture.range, "none")))
		return usage_error("--capture-range-end needs --capture-range=cudaProfilerApi or nvtx");
	if (opts->capture.steps && opts->capture.range && strcmp(opts->capture.range, "nvtx"))
		return usage_error("--steps counts NVTX ranges: it does not go with --capture-range=%s",
				   opts->capture.range);
	if (!opts->capture.steps &&
	    !opts->capture.nvtx != !(opts->capture.range && !strcmp(opts->capture.range, "nvtx")))
		return usage_error("--capture-range=nvtx and --nvtx-capture RANGE[@DOMAIN] go together");
	if (opts->capture.start_later &&
	    (opts->capture.range || opts->capture.steps || opts->capture.delay_ns ||
	     opts->capture.duration_ns))
		return usage_error("--start-later takes its windows from 'gpt-trace start/stop': "
				   "it does not go with --delay, --duration, --capture-range or --steps");
	if (opts->capture.steps && opts->capture.range_end)
		return usage_error("--steps records one window: --capture-range-end does not apply");
	return 0;
}

/* Check the '%' escapes of a pattern: %p, %r, %h and %% only. Returns 0 or GPT_EXIT_USAGE. */
static int check_pattern(const char *pattern)
{
	if (!*pattern)
		return usage_error("empty output pattern");
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] != 'p' && p[1] != 'r' && p[1] != 'h' && p[1] != '%')
			return usage_error("invalid output pattern '%s': use %%p (pid), %%r (rank), "
					   "%%h (host) or %%%% ('%%')", pattern);
		p++;
	}
	if (pattern[strlen(pattern) - 1] == '/')
		return usage_error("output pattern '%s' names a directory, not a file", pattern);
	return 0;
}

/* Whether a checked pattern holds %p or %r (not the "%p" inside "%%p"): a name that differs per
 * process, which only the library can expand (a process outside any job has its pid as %r). */
static int has_process_escape(const char *pattern)
{
	for (const char *p = pattern; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] == 'p' || p[1] == 'r')
			return 1;
		p++;
	}
	return 0;
}

static void short_hostname(char *buf, size_t len)
{
	if (gethostname(buf, len) < 0)
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
}

/* Expand %h and %% of a pattern the way the library will; %p stays. Returns a new string. */
static char *expand_host(const char *pattern)
{
	char host[256];
	size_t cap = strlen(pattern) * 128 + 1, len = 0;
	char *out = xmalloc(cap);

	short_hostname(host, sizeof(host));
	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'h') {
			len += snprintf(out + len, cap - len, "%s", host);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			out[len++] = '%';
			p++;
		} else {
			out[len++] = *p;
		}
	}
	out[len] = '\0';
	return out;
}

/*
 * Make the pattern absolute against our cwd, so that a process that changes directory writes where
 * the user asked, and check that the directory it names can take files. Returns the pattern to
 * pass on (owned by the caller), or NULL after printing why.
 */
static char *resolve_output(const char *pattern)
{
	char cwd[PATH_MAX];
	char *absolute, *expanded, *slash;
	size_t len;
	struct stat st;
	int err = 0;

	if (check_pattern(pattern))
		return NULL;

	if (pattern[0] == '/') {
		absolute = xstrdup(pattern);
	} else {
		if (!getcwd(cwd, sizeof(cwd))) {
			pr_err("cannot resolve output '%s': cannot get the current directory: %s",
			       pattern, strerror(errno));
			return NULL;
		}
		/* The cwd itself may hold '%', which the library must not read as an escape. */
		len = 2 * strlen(cwd) + strlen(pattern) + 2;
		absolute = xmalloc(len);
		len = 0;
		for (const char *p = cwd; *p; p++) {
			if (*p == '%')
				absolute[len++] = '%';
			absolute[len++] = *p;
		}
		if (len == 0 || absolute[len - 1] != '/')
			absolute[len++] = '/';
		strcpy(absolute + len, pattern);
	}

	/* A directory that contains %p or %r differs per process; the library reports it if it is bad. */
	slash = strrchr(absolute, '/');
	*slash = '\0';
	if (has_process_escape(absolute)) {
		*slash = '/';
		return absolute;
	}
	expanded = expand_host(*absolute ? absolute : "/");
	*slash = '/';
	if (stat(expanded, &st) < 0)
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	else if (access(expanded, W_OK | X_OK) < 0)
		err = errno;
	if (err) {
		pr_err("cannot write traces to '%s': %s", expanded, strerror(err));
		free(expanded);
		free(absolute);
		return NULL;
	}
	free(expanded);

	if (!has_process_escape(absolute)) {
		expanded = expand_host(absolute);
		if (!stat(expanded, &st) && S_ISDIR(st.st_mode)) {
			pr_err("cannot write traces to '%s': it is a directory; give a file name "
			       "such as '%s/trace-%%p.sqlite'", expanded, expanded);
			free(expanded);
			free(absolute);
			return NULL;
		}
		free(expanded);
	}
	return absolute;
}

static int set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0) {
		pr_err("cannot set %s: %s", name, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * LD_PRELOAD gets our library in front of what it already held (the user's own preloads still
 * load); a second `gpt-trace run` inside a traced program does not add it twice.
 */
static int set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t lib_len = strlen(lib);
	char *value;
	int ret;

	/* ld.so splits LD_PRELOAD at ':' and ' ': such a path cannot be preloaded. */
	if (strpbrk(lib, ": ")) {
		pr_warn("'%s' holds ':' or ' ' and cannot go into LD_PRELOAD; only programs that "
			"load the CUDA driver through CUDA_INJECTION64_PATH are traced", lib);
		return 0;
	}
	if (!old || !*old)
		return set_env("LD_PRELOAD", lib);
	if (!strncmp(old, lib, lib_len) && (old[lib_len] == '\0' || old[lib_len] == ':' ||
					   old[lib_len] == ' '))
		return 0;
	value = xmalloc(lib_len + strlen(old) + 2);
	sprintf(value, "%s:%s", lib, old);
	ret = set_env("LD_PRELOAD", value);
	free(value);
	return ret;
}

/* A capture variable: set when its option was given, else removed (the user's own does not count). */
static int set_capture_env(const char *name, unsigned long long value, const char *text)
{
	char number[32];

	if (!value && !text) {
		unsetenv(name);
		return 0;
	}
	if (!text) {
		snprintf(number, sizeof(number), "%llu", value);
		text = number;
	}
	return set_env(name, text);
}

/* The capture window's variables (inject/capture.c), and the launch time --delay counts from. */
static int set_capture_environment(const struct capture_options *capture)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return set_capture_env("GPT_TRACE_DELAY_NS", capture->delay_ns, NULL) < 0 ||
	       set_capture_env("GPT_TRACE_DURATION_NS", capture->duration_ns, NULL) < 0 ||
	       set_capture_env("GPT_TRACE_MAX_SIZE", capture->max_size, NULL) < 0 ||
	       set_capture_env("GPT_TRACE_CAPTURE_RANGE", 0, capture->range) < 0 ||
	       set_capture_env("GPT_TRACE_CAPTURE_RANGE_END", 0, capture->range_end) < 0 ||
	       set_capture_env("GPT_TRACE_NVTX_CAPTURE", 0, capture->nvtx) < 0 ||
	       set_capture_env("GPT_TRACE_STEPS", 0, capture->steps) < 0 ||
	       set_capture_env("GPT_TRACE_START_LATER", 0, capture->start_later ? "1" : NULL) < 0 ||
	       set_capture_env("GPT_TRACE_LAUNCH_NS",
			       (unsigned long long)now.tv_sec * 1000000000ull +
				       (unsigned long long)now.tv_nsec, NULL) < 0
		       ? -1 : 0;
}

static int set_environment(const struct run_options *opts, const char *lib, const char *output,
			   const char *session_dir)
{
	char commit_ms[32];

	snprintf(commit_ms, sizeof(commit_ms), "%lu", opts->commit_ms);
	if (set_preload(lib) < 0 ||
	    set_env("CUDA_INJECTION64_PATH", lib) < 0 ||
	    set_env("NVTX_INJECTION64_PATH", lib) < 0 ||
	    set_env("GPT_TRACE_OUTPUT", output) < 0 ||
	    set_env("GPT_TRACE_FORCE", opts->force ? "1" : "0") < 0 ||
	    set_env("GPT_TRACE_SESSION", session_dir) < 0 ||
	    set_env("GPT_TRACE_API", opts->api) < 0 ||
	    set_env("GPT_TRACE_COMMIT_MS", commit_ms) < 0 ||
	    set_env("GPT_TRACE_QUIET", opts->quiet ? "1" : "0") < 0 ||
	    set_capture_environment(&opts->capture) < 0)
		return -1;
	/* Only the options decide; a value left in the user's environment does not. */
	if (opts->gpu_metrics ? set_env("GPT_TRACE_GPU_METRICS", opts->gpu_metrics) < 0
			      : unsetenv("GPT_TRACE_GPU_METRICS") < 0)
		return -1;
	if (opts->metrics)
		return set_env("GPT_TRACE_METRICS", opts->metrics);
	unsetenv("GPT_TRACE_METRICS");
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_options opts = { .api = "default", .commit_ms = 1000 };
	struct run_session session = { NULL };
	struct run_child child;
	char *lib = NULL, *output = NULL, problem[PATH_MAX * 2 + 160];
	char **program, **lines = NULL;
	size_t nlines = 0;
	int exec_failed, ret;

	ret = usage_parse(&run_usage, &opts, argc, argv);
	if (!ret && check_options(&opts, argc))
		ret = -1;
	if (ret)
		return usage_status(ret);
	program = argv + optind;

	ret = GPT_EXIT_USAGE;
	lib = inject_lib_find(NULL, problem, sizeof(problem));
	if (!lib) {
		pr_err("%s", problem);
		goto out;
	}
	output = resolve_output(opts.output ? opts.output : DEFAULT_OUTPUT);
	if (!output)
		goto out;
	if (run_session_create(&session) < 0)
		goto out;
	if (set_environment(&opts, lib, output, session.dir) < 0)
		goto out;

	ret = run_child_start(&child, program, &exec_failed);
	if (ret < 0) {
		if (exec_failed) {
			pr_err("cannot run '%s': %s", program[0], strerror(-ret));
			/* As a shell says: 127 not found, 126 found but not executable. */
			ret = ret == -ENOENT ? 127 : 126;
		} else {
			pr_err("cannot start '%s': %s", program[0], strerror(-ret));
			ret = GPT_EXIT_USAGE;
		}
		goto out;
	}
	ret = run_child_wait(&child);
	if (ret < 0) {
		pr_err("cannot wait for '%s': %s", program[0], strerror(-ret));
		ret = GPT_EXIT_USAGE;
		goto out;
	}

	/*
	 * The summary must not change our status: if stderr is a pipe whose reader has gone
	 * (`gpt-trace run prog 2>&1 | head -1`), lose the lines rather than die of SIGPIPE.
	 */
	signal(SIGPIPE, SIG_IGN);
	run_session_read(&session, &lines, &nlines);
	run_session_remove(&session);
	run_summary_print(lines, nlines, opts.quiet, child.pid, child.status);
	run_session_free_lines(lines);
	free(output);
	free(lib);
	run_exit_like(child.status);

out:
	run_session_remove(&session);
	free(output);
	free(lib);
	return ret;
}
