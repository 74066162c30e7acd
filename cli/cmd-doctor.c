/*
 * gpt-trace doctor: what `gpt-trace run` would use on this machine, without running a program, and
 * whether tracing will work here. One line per fact, "ok" or the problem and its fix: the launcher
 * and libgpt_inject.so (found as `run` finds it, inject-lib.h), the CUPTI the library would load
 * and why (the library's own search, inject/cupti-search.h), the NVIDIA driver and the CUDA version
 * it supports, the GPUs visible, whether the hardware counters are allowed (`run --metrics`), and
 * the folder traces go to. The driver is dlopen'ed and called directly (cuInit, cuDeviceGetName),
 * so gpt-trace itself has no link-time CUDA dependency, as with the library.
 *
 * GPT_TRACE_NVIDIA_PROC names another folder than /proc/driver/nvidia for the driver's version and
 * params files, so that the tests can play a driver's answers on a machine without one.
 */
#define _GNU_SOURCE
#include "cli/commands.h"
#include "cli/inject-lib.h"
#include "cli/usage.h"
#include "cli/version.h"
#include "common/util.h"
#include "inject/cupti-search.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define CUDA_ERROR_NO_DEVICE 100
#define CU_ATTR_CC_MAJOR 75	/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define CU_ATTR_CC_MINOR 76
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38	/* lets a user read the counters from driver R565 on */
#define LOW_SPACE_BYTES (1ULL << 30)
#define DOCTOR_EXIT_PROBLEM 1	/* tracing will not work here */

enum verdict { V_OK, V_WARN, V_FAIL, V_SKIP };

struct doctor {
	int metrics;		/* --metrics: the hardware counters are required */
	const char *output;	/* -o: a folder or a file in it; NULL: the current directory */
	const char *proc;	/* the driver's /proc/driver/nvidia */
	unsigned cupti_cuda;	/* CUDA major version of the CUPTI found, 0 when unknown or none */
	int problems, warnings;
};

/* The driver entry points doctor calls (CUresult is an int, CUdevice an int). */
struct cuda_driver {
	int (*init)(unsigned flags);
	int (*driver_get_version)(int *version);
	int (*device_get_count)(int *count);
	int (*device_get)(int *device, int ordinal);
	int (*device_get_name)(char *name, int len, int device);
	int (*device_get_attribute)(int *value, int attribute, int device);
	int (*get_error_name)(int result, const char **name);
};

static const char usage_text[] =
	"usage: gpt-trace doctor [options]\n"
	"\n"
	"Check what 'gpt-trace run' would use here: the launcher and its library, the CUPTI the\n"
	"library would load and why, the NVIDIA driver and the CUDA version it supports, the GPUs\n"
	"visible, whether hardware counters are allowed, and the folder traces go to. Each line\n"
	"says ok, or the problem and how to fix it. No program is run.\n"
	"\n"
	"options:\n"
	"  -o, --output PATH     the folder traces would be written to, or a trace file in it\n"
	"                        (default: the current directory)\n"
	"      --metrics         also require the hardware counters ('gpt-trace run --metrics')\n"
	"  -h, --help            print this help\n"
	"\n"
	"exit status: 0 tracing will work here, 1 it will not (each problem is printed with its\n"
	"fix), 2 usage error\n";

enum { OPT_METRICS = 256 };

static const struct option long_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "metrics", no_argument, NULL, OPT_METRICS },
	{ NULL, 0, NULL, 0 },
};

/* One line: verdict, what, detail; then the fix, indented under the detail. */
static void say(struct doctor *d, enum verdict v, const char *what, const char *fix,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void say(struct doctor *d, enum verdict v, const char *what, const char *fix,
		const char *fmt, ...)
{
	static const char *const words[] = { "ok", "WARN", "FAIL", "--" };
	va_list ap;

	printf("%-4s  %-9s ", words[v], what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (fix)
		printf("%16sfix: %s\n", "", fix);
	d->problems += v == V_FAIL;
	d->warnings += v == V_WARN;
}

static void check_launcher(struct doctor *d)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		snprintf(exe, sizeof(exe), "(cannot read /proc/self/exe: %s)", strerror(errno));
	else
		exe[n] = '\0';
	say(d, V_OK, "launcher", NULL, "%s, version %s", exe, gpt_trace_version());
}

static void check_library(struct doctor *d)
{
	static const char *const origins[] = {
		[INJECT_LIB_ENV] = "from GPT_TRACE_INJECT_LIB",
		[INJECT_LIB_BESIDE] = "beside the launcher: a build tree",
		[INJECT_LIB_INSTALLED] = "../lib/gpt-trace/ from the launcher: an installation",
	};
	const char *env = getenv("GPT_TRACE_INJECT_LIB");
	char problem[PATH_MAX * 2 + 160];
	enum inject_lib_origin origin;
	char *lib = inject_lib_find(&origin, problem, sizeof(problem));

	if (!lib) {
		say(d, V_FAIL, "library",
		    env && *env ? "unset GPT_TRACE_INJECT_LIB, or point it at libgpt_inject.so"
				: "reinstall gpt-trace (its package, or 'cmake --install'); the library "
				  "must stay in lib/gpt-trace/ beside the bin/ of gpt-trace",
		    "%s", problem);
		return;
	}
	say(d, V_OK, "library", NULL, "%s (%s)", lib, origins[origin]);
	free(lib);
}

/* dlopen a CUPTI; its real path in real, or why it failed in real. */
static void *cupti_load_at(const char *path, char *real, size_t len)
{
	struct link_map *map = NULL;
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(real, len, "%s", dlerror());
		return NULL;
	}
	if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
		snprintf(real, len, "%s", map->l_name);
	else
		snprintf(real, len, "%s", path);
	return lib;
}

static void say_cupti(struct doctor *d, void *lib, const char *real, const char *why)
{
	int (*get_version)(uint32_t *) = (int (*)(uint32_t *))dlsym(lib, "cuptiGetVersion");
	uint32_t version = 0;

	if (!get_version || get_version(&version) != 0) {
		say(d, V_FAIL, "CUPTI", "install the CUPTI of CUDA 13 (the toolkit's, or pip's "
		    "nvidia-cuda-cupti), or set GPT_TRACE_CUPTI_LIB to its libcupti.so.13",
		    "%s (from %s) is not a usable CUPTI: cuptiGetVersion %s", real, why,
		    get_version ? "failed" : "is missing");
		return;
	}
	/* From CUDA 13 on, the API version spells the CUDA version: 130001 is CUDA 13. */
	d->cupti_cuda = version >= 100000 ? version / 10000 : 0;
	say(d, V_OK, "CUPTI", NULL, "%s, API version %u, from %s", real, (unsigned)version, why);
	printf("%16sa program that has loaded its own CUPTI (PyTorch) is traced with that one\n", "");
}

static void check_cupti(struct doctor *d)
{
	const char *env = getenv("GPT_TRACE_CUPTI_LIB");
	char real[PATH_MAX + 256], searched[1024] = "";
	void *lib = NULL;

	if (env && *env) {
		lib = cupti_load_at(env, real, sizeof(real));
		if (lib) {
			say_cupti(d, lib, real, "GPT_TRACE_CUPTI_LIB");
			return;
		}
		say(d, V_WARN, "CUPTI", "unset GPT_TRACE_CUPTI_LIB, or point it at a libcupti.so.13",
		    "GPT_TRACE_CUPTI_LIB does not load (%s): the library searches on", real);
	}
	for (size_t i = 0; i < sizeof(cupti_places) / sizeof(cupti_places[0]); i++) {
		if (!cupti_places[i].path)
			continue;
		lib = cupti_load_at(cupti_places[i].path, real, sizeof(real));
		if (lib) {
			say_cupti(d, lib, real, cupti_places[i].why);
			return;
		}
		snprintf(searched + strlen(searched), sizeof(searched) - strlen(searched), "%s%s",
			 *searched ? ", " : "", cupti_places[i].path);
	}
	say(d, V_FAIL, "CUPTI", "install the CUDA 13 toolkit's CUPTI (cuda-cupti-13-0), or pip's "
	    "nvidia-cuda-cupti and set GPT_TRACE_CUPTI_LIB to its libcupti.so.13; a program that "
	    "loads its own CUPTI (PyTorch) is traced with that one anyway",
	    "no CUPTI found (tried %s)", searched);
}

/* The kernel module's version: the first word like 580.95.05 on the NVRM line of the driver's
 * version file ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release ..."). */
static void driver_module_version(const struct doctor *d, char *out, size_t len)
{
	char path[PATH_MAX], line[512], *word, *save = NULL;
	unsigned major, minor;
	FILE *f;

	snprintf(out, len, "version unknown");
	snprintf(path, sizeof(path), "%s/version", d->proc);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && !strncmp(line, "NVRM", 4)) {
		for (word = strtok_r(line, " \t\n", &save); word; word = strtok_r(NULL, " \t\n", &save)) {
			if (sscanf(word, "%u.%u", &major, &minor) == 2) {
				snprintf(out, len, "%s", word);
				break;
			}
		}
	}
	fclose(f);
}

static int driver_load(struct cuda_driver *cu, void *lib)
{
#define SYM(field, name) (*(void **)&cu->field = dlsym(lib, name))
	SYM(init, "cuInit");
	SYM(driver_get_version, "cuDriverGetVersion");
	SYM(device_get_count, "cuDeviceGetCount");
	SYM(device_get, "cuDeviceGet");
	SYM(device_get_name, "cuDeviceGetName");
	SYM(device_get_attribute, "cuDeviceGetAttribute");
	SYM(get_error_name, "cuGetErrorName");
#undef SYM
	return cu->init && cu->driver_get_version && cu->device_get_count && cu->device_get &&
	       cu->device_get_name && cu->device_get_attribute ? 0 : -1;
}

/* Returns 0 when the driver can be asked about GPUs. */
static int check_driver(struct doctor *d, struct cuda_driver *cu)
{
	char module[64], fix[160];
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	unsigned needed = d->cupti_cuda ? d->cupti_cuda : 13;
	int version = 0;

	if (!lib) {
		say(d, V_FAIL, "driver", "install the NVIDIA driver; in a container, start it with "
		    "the NVIDIA Container Toolkit (docker run --gpus all)",
		    "no NVIDIA driver: %s", dlerror());
		return -1;
	}
	if (driver_load(cu, lib) < 0) {
		say(d, V_FAIL, "driver", "reinstall the NVIDIA driver",
		    "libcuda.so.1 lacks cuInit, cuDriverGetVersion or cuDeviceGetName");
		return -1;
	}
	driver_module_version(d, module, sizeof(module));
	cu->driver_get_version(&version);
	if (version / 1000 < (int)needed) {
		snprintf(fix, sizeof(fix), "update the NVIDIA driver to one for CUDA %u or newer "
			 "(R580 or newer for CUDA 13)", needed);
		say(d, V_FAIL, "driver", fix, "%s supports CUDA %d.%d, older than the CUPTI (CUDA %u)",
		    module, version / 1000, version % 1000 / 10, needed);
		return -1;
	}
	say(d, V_OK, "driver", NULL, "%s, supports CUDA %d.%d", module, version / 1000,
	    version % 1000 / 10);
	return 0;
}

static void say_no_gpu(struct doctor *d, const char *reason)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");

	if (visible)
		say(d, V_FAIL, "GPUs", "unset CUDA_VISIBLE_DEVICES, or list a GPU in it (nvidia-smi -L)",
		    "none visible (%s; CUDA_VISIBLE_DEVICES='%s')", reason, visible);
	else
		say(d, V_FAIL, "GPUs", "check 'nvidia-smi'; in a container, start it with --gpus all",
		    "none visible (%s)", reason);
}

/* Returns how many GPUs the driver sees. */
static int check_gpus(struct doctor *d, const struct cuda_driver *cu)
{
	char name[256], what[32];
	const char *error = NULL;
	int ret = cu->init(0), count = 0, device, major, minor;

	if (ret == CUDA_ERROR_NO_DEVICE || (!ret && (cu->device_get_count(&count) || !count))) {
		say_no_gpu(d, ret ? "cuInit: CUDA_ERROR_NO_DEVICE" : "cuDeviceGetCount: 0");
		return 0;
	}
	if (ret) {
		if (!cu->get_error_name || cu->get_error_name(ret, &error) || !error)
			error = "unknown error";
		say(d, V_FAIL, "GPUs", "check 'nvidia-smi' and the driver's messages in 'dmesg'",
		    "cuInit failed: %s (%d)", error, ret);
		return 0;
	}
	for (int i = 0; i < count; i++) {
		snprintf(what, sizeof(what), "GPU %d", i);
		major = minor = 0;
		if (cu->device_get(&device, i) || cu->device_get_name(name, sizeof(name), device))
			snprintf(name, sizeof(name), "(name unknown)");
		cu->device_get_attribute(&major, CU_ATTR_CC_MAJOR, device);
		cu->device_get_attribute(&minor, CU_ATTR_CC_MINOR, device);
		say(d, V_OK, what, NULL, "%s (sm_%d%d)", name, major, minor);
	}
	return count;
}

/* "root", "CAP_SYS_ADMIN" or "CAP_PERFMON" when this process may read restricted counters. */
static const char *profiling_privilege(void)
{
	char line[256];
	unsigned long long caps = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			found = 1;
			break;
		}
	if (f)
		fclose(f);
	if (!found)
		return geteuid() == 0 ? "root" : NULL;
	if (caps & (1ULL << CAP_SYS_ADMIN_BIT))
		return geteuid() == 0 ? "root" : "CAP_SYS_ADMIN";
	if (caps & (1ULL << CAP_PERFMON_BIT))
		return "CAP_PERFMON";
	return NULL;
}

/* RmProfilingAdminOnly from the driver's params file: 0, 1, or -1 when it cannot be read. */
static int profiling_admin_only(const char *path)
{
	char line[256];
	int value = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RmProfilingAdminOnly: %d", &value) == 1)
			break;
	if (f)
		fclose(f);
	return value == 0 || value == 1 ? value : -1;
}

static void check_counters(struct doctor *d)
{
	enum verdict missing = d->metrics ? V_FAIL : V_WARN;
	char path[PATH_MAX];
	const char *who;
	int admin_only;

	snprintf(path, sizeof(path), "%s/params", d->proc);
	admin_only = profiling_admin_only(path);
	if (admin_only < 0) {
		say(d, V_WARN, "counters", NULL, "unknown: no RmProfilingAdminOnly in %s; "
		    "'gpt-trace run --metrics' will say", path);
		return;
	}
	if (!admin_only) {
		say(d, V_OK, "counters", NULL, "allowed for every user (RmProfilingAdminOnly: 0 in %s)",
		    path);
		return;
	}
	who = profiling_privilege();
	if (who) {
		say(d, V_OK, "counters", NULL, "restricted to administrators, and this process is one "
		    "(%s; RmProfilingAdminOnly: 1 in %s)", who, path);
		return;
	}
	say(d, missing, "counters", "run as root (or with CAP_PERFMON from driver R565 on), or have "
	    "an administrator set 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in a file "
	    "under /etc/modprobe.d/ and reload the nvidia module (or reboot)",
	    "restricted to administrators (RmProfilingAdminOnly: 1 in %s): 'run --metrics' gets no "
	    "hardware metrics", path);
}

/* The folder of -o (the folder itself, or the one a file name is in), "." by default. */
static char *output_folder(const char *output)
{
	struct stat st;
	const char *slash;

	if (!output)
		return xstrdup(".");
	if (!stat(output, &st) && S_ISDIR(st.st_mode))
		return xstrdup(output);
	slash = strrchr(output, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == output)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(slash - output), output);
}

static void check_output(struct doctor *d)
{
	char *folder = output_folder(d->output), *probe = xasprintf("%s/.gpt-trace-doctor-XXXXXX", folder);
	char *shown = realpath(folder, NULL);
	struct statvfs vfs;
	double gib;
	int fd = mkstemp(probe);

	if (fd < 0) {
		say(d, V_FAIL, "output", "run in a folder you can write to, or give 'gpt-trace run -o "
		    "DIR/trace-%p.sqlite' one", "cannot write to '%s': %s", shown ? shown : folder,
		    strerror(errno));
		goto out;
	}
	close(fd);
	unlink(probe);
	if (statvfs(folder, &vfs) < 0) {
		say(d, V_OK, "output", NULL, "%s: writable", shown ? shown : folder);
		goto out;
	}
	gib = (double)vfs.f_bavail * vfs.f_frsize / (1ULL << 30);
	if ((unsigned long long)vfs.f_bavail * vfs.f_frsize < LOW_SPACE_BYTES)
		say(d, V_WARN, "output", "free some space, or write traces elsewhere (run -o): a trace "
		    "takes about 100 bytes per kernel launch", "%s: writable, only %.2f GiB free",
		    shown ? shown : folder, gib);
	else
		say(d, V_OK, "output", NULL, "%s: writable, %.1f GiB free", shown ? shown : folder, gib);
out:
	free(shown);
	free(probe);
	free(folder);
}

/* One option into d (a struct doctor): 0. */
static int doctor_option(void *data, int c, const char *arg)
{
	struct doctor *d = data;

	if (c == 'o')
		d->output = arg;
	else if (c == OPT_METRICS)
		d->metrics = 1;
	return 0;
}

static const struct usage_command doctor_usage = {
	.name = "doctor", .prefix = USAGE_NAMED, .args = USAGE_ARGS_IN_ORDER, .help = usage_text,
	.shortopts = "o:", .longopts = long_options, .option = doctor_option,
};

/* The options, and no argument: 0, 1 for --help (printed), or -1 after printing why. */
static int parse_options(int argc, char **argv, struct doctor *d)
{
	int ret = usage_parse(&doctor_usage, d, argc, argv);

	if (!ret && optind < argc) {
		pr_err("doctor: unexpected argument '%s'; see 'gpt-trace doctor --help'", argv[optind]);
		return -1;
	}
	return ret;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { .proc = getenv("GPT_TRACE_NVIDIA_PROC") };
	struct cuda_driver cu = { NULL };
	int ret = parse_options(argc, argv, &d);

	if (ret)
		return usage_status(ret);
	if (!d.proc || !*d.proc)
		d.proc = "/proc/driver/nvidia";

	check_launcher(&d);
	check_library(&d);
	check_cupti(&d);
	if (check_driver(&d, &cu) < 0) {
		say(&d, V_SKIP, "GPUs", NULL, "not checked: no usable driver");
		say(&d, V_SKIP, "counters", NULL, "not checked: no usable driver");
	} else if (check_gpus(&d, &cu) == 0) {
		say(&d, V_SKIP, "counters", NULL, "not checked: no GPU visible");
	} else {
		check_counters(&d);
	}
	check_output(&d);

	if (d.problems)
		printf("\ntracing will not work here: %d problem%s above, each with its fix\n",
		       d.problems, d.problems == 1 ? "" : "s");
	else
		printf("\ntracing will work here%s\n", d.warnings ? " (see the warnings above)" : "");
	fflush(stdout);
	return d.problems ? DOCTOR_EXIT_PROBLEM : GPT_EXIT_OK;
}
