/*
 * The classes of CUDA API names (see gaps.h): what a call is from its name (launch, copy, sync,
 * allocation...), the family idle time in it belongs to, the words for both, and the classified names
 * of every trace read once from its strings, for the walk (gaps.c) and the rules that filter calls
 * in SQL.
 */
#include "analyzer/analysis/gaps.h"

#include "common/key-index.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_prefix(const char *name, const char *const *prefixes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/*
 * A HIP runtime call's CUDA twin, so that ROCm traces (PyTorch's profiler on AMD GPUs) are judged
 * as CUDA ones: hipLaunchKernel is cudaLaunchKernel, hipMemcpyWithStream a copy, hipDeviceSynchronize
 * a sync. Most names are the twin's with "hip" for "cuda"; the others are listed. Other names come
 * back as they are.
 */
static const char *cuda_twin(const char *name, char *buf, size_t len)
{
	static const struct {
		const char *hip, *cuda;
	} named[] = {
		{ "hipModuleLaunchKernel", "cuLaunchKernel" }, { "hipExtModuleLaunchKernel", "cuLaunchKernel" },
		{ "hipHccModuleLaunchKernel", "cuLaunchKernel" }, { "hipExtLaunchKernel", "cudaLaunchKernel" },
		{ "hipLaunchKernelGGL", "cudaLaunchKernel" }, { "hipExtLaunchMultiKernelMultiDevice", "cudaLaunchKernel" },
		{ "hipModuleLaunchCooperativeKernel", "cuLaunchCooperativeKernel" },
		{ "hipHostMalloc", "cudaHostAlloc" }, { "hipHostFree", "cudaFreeHost" },
		{ "hipExtMallocWithFlags", "cudaMalloc" }, { "hipCtxSynchronize", "cuCtxSynchronize" },
		{ "hipModule", "cuModule" }, { "hipMemcpyWithStream", "cudaMemcpyAsync" },
		{ "hipMemcpyHtoDAsync", "cuMemcpyHtoDAsync" }, { "hipMemcpyDtoHAsync", "cuMemcpyDtoHAsync" },
		{ "hipMemcpyDtoDAsync", "cuMemcpyDtoDAsync" }, { "hipMemcpyHtoD", "cuMemcpyHtoD" },
		{ "hipMemcpyDtoH", "cuMemcpyDtoH" }, { "hipMemcpyDtoD", "cuMemcpyDtoD" },
	};

	if (!name || strncmp(name, "hip", 3))
		return name;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		size_t n = strlen(named[i].hip);

		if (!strncmp(name, named[i].hip, n)) {
			snprintf(buf, len, "%s%s", named[i].cuda, name + n);
			return buf;
		}
	}
	snprintf(buf, len, "cuda%s", name + 3);
	return buf;
}

/* Calls that allocate, free, map or pin memory: the runtime's, the driver's, pools, pinning. */
static int allocation_call(const char *name)
{
	static const char *const prefixes[] = {
		"cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister",
		"cudaMemPool", "cuMemAlloc", "cuMemFree", "cuMemCreate", "cuMemMap", "cuMemUnmap",
		"cuMemRelease", "cuMemAddressReserve", "cuMemAddressFree", "cuMemHostAlloc",
		"cuMemHostRegister", "cuMemHostUnregister", "cuMemPool", "cuMemSetAccess",
	};

	return has_prefix(name, prefixes, sizeof(prefixes) / sizeof(prefixes[0])) &&
	       strncmp(name, "cuMemMapArray", 13) != 0;
}

static int module_call(const char *name)
{
	static const char *const parts[] = { "ModuleLoad", "LibraryLoad", "ModuleGet", "LibraryGet", "Link",
					     "FuncGet", "ModuleUnload", "LibraryUnload", "KernelGet" };

	if (strncmp(name, "cu", 2))
		return 0;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (strstr(name, parts[i]))
			return 1;
	return 0;
}

unsigned api_class_of(const char *name)
{
	static const char *const syncs[] = {
		"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"cudaThreadSynchronize", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
	};
	unsigned cls = 0;
	char twin[256];

	name = cuda_twin(name, twin, sizeof(twin));
	if (has_prefix(name, syncs, sizeof(syncs) / sizeof(syncs[0])))
		return API_SYNC;
	if (!strncmp(name, "cudaGraphLaunch", 15) || !strncmp(name, "cuGraphLaunch", 13))
		return API_LAUNCH | API_GRAPH;
	if (!strncmp(name, "cudaLaunch", 10) || !strncmp(name, "cuLaunch", 8))
		return API_LAUNCH;
	if (!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8)) {
		cls = API_COPY;
		if (!strstr(name, "Async"))
			cls |= API_BLOCKING_COPY;
		return cls;
	}
	if (!strncmp(name, "cudaMemset", 10) || !strncmp(name, "cuMemset", 8))
		return API_SET;
	if (allocation_call(name))
		return API_ALLOC;
	return 0;
}

const char *api_category(const char *name)
{
	static const struct {
		const char *part, *category;
	} table[] = {
		{ "Memcpy", "copy" }, { "Memset", "memset" }, { "Launch", "launch" },
		{ "Event", "event" }, { "Stream", "stream" }, { "Graph", "graph" },
		{ "Ctx", "context" }, { "DevicePrimaryCtx", "context" }, { "Init", "initialization" },
	};
	char twin[256];

	name = cuda_twin(name, twin, sizeof(twin));
	if (!name || (strncmp(name, "cu", 2)))
		return NULL;
	if (allocation_call(name))
		return "allocation";
	if (module_call(name))
		return "module load or JIT";
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strstr(name, table[i].part))
			return table[i].category;
	return "other";
}

enum idle_family api_family(const char *name)
{
	unsigned cls;
	char twin[256];

	if (!name)
		return FAMILY_OTHER;
	name = cuda_twin(name, twin, sizeof(twin));
	if (module_call(name))
		return FAMILY_MODULE;
	cls = api_class_of(name);
	if (cls & API_ALLOC)
		return FAMILY_ALLOCATION;
	if (cls & API_BLOCKS)
		return FAMILY_SYNC;
	if (cls & (API_COPY | API_SET))
		return FAMILY_COPY;
	if (cls & API_LAUNCH)
		return FAMILY_LAUNCH;
	return FAMILY_OTHER;
}

enum idle_family idle_family_of(enum idle_kind kind, const char *detail)
{
	switch (kind) {
	case IDLE_SYNC:
		return FAMILY_SYNC;
	case IDLE_CUDA:
		return api_family(detail);
	case IDLE_RANGE:
	case IDLE_HOST:
		return FAMILY_HOST;
	case IDLE_LAUNCH:
	case IDLE_QUEUED:
		return FAMILY_LAUNCH;
	case IDLE_PROFILER:
		return FAMILY_PROFILER;
	default:
		return FAMILY_OTHER;
	}
}

const char *idle_family_name(enum idle_family family)
{
	static const char *const names[IDLE_NFAMILIES] = {
		[FAMILY_ALLOCATION] = "allocation", [FAMILY_MODULE] = "module load and JIT",
		[FAMILY_COPY] = "copies", [FAMILY_SYNC] = "synchronization", [FAMILY_LAUNCH] = "launch",
		[FAMILY_HOST] = "host code", [FAMILY_OTHER] = "other CUDA calls",
		[FAMILY_PROFILER] = "the profiler's own work",
	};

	return (unsigned)family < IDLE_NFAMILIES ? names[family] : "other CUDA calls";
}

const char *idle_kind_name(enum idle_kind kind)
{
	static const char *const names[IDLE_NKINDS] = {
		[IDLE_SYNC] = "sync", [IDLE_CUDA] = "cuda-call", [IDLE_RANGE] = "nvtx-range",
		[IDLE_HOST] = "host", [IDLE_LAUNCH] = "launch", [IDLE_QUEUED] = "queued",
		[IDLE_UNKNOWN] = "unknown", [IDLE_PROFILER] = "profiler",
	};

	return (unsigned)kind < IDLE_NKINDS ? names[kind] : "unknown";
}

int api_names_load(const struct analysis_context *ctx, struct api_names *names, char *err,
		   size_t errlen)
{
	/* Every CUDA API name starts with "cu", every HIP one with "hip"; kernel names and the rest are
	 * skipped in SQL. Names of every class are kept (class 0 too): gap attribution names the calls
	 * a thread was in. */
	static const char sql[] = "SELECT traceId, id, value FROM strings WHERE value LIKE 'cu%' OR value LIKE 'hip%'";
	sqlite3_stmt *st;
	int ret, rc;

	memset(names, 0, sizeof(*names));
	ret = analysis_prepare(ctx, sql, &st, err, errlen);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[KEY_INDEX_WORDS] = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1) };
		const char *name = analysis_column_text(st, 2);
		unsigned cls = api_class_of(name);
		int created;
		size_t i;

		i = key_index_get(&names->index, key, &created);
		if (!created)
			continue;
		names->keys = xrealloc(names->keys, (i + 1) * sizeof(*names->keys));
		names->keys[i][0] = key[0];
		names->keys[i][1] = key[1];
		names->classes = xrealloc(names->classes, (i + 1) * sizeof(*names->classes));
		names->names = xrealloc(names->names, (i + 1) * sizeof(*names->names));
		names->classes[i] = cls;
		names->names[i] = xstrdup(name);
		names->n = i + 1;
	}
	if (rc != SQLITE_DONE)
		ret = analysis_step_error(ctx, err, errlen);
	sqlite3_finalize(st);
	if (ret < 0)
		api_names_release(names);
	return ret;
}

unsigned api_names_class(const struct api_names *names, int64_t trace_id, int64_t name_id)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, name_id };
	size_t i = key_index_find(&names->index, key);

	return i == SIZE_MAX ? 0 : names->classes[i];
}

const char *api_names_name(const struct api_names *names, int64_t trace_id, int64_t name_id)
{
	int64_t key[KEY_INDEX_WORDS] = { trace_id, name_id };
	size_t i = key_index_find(&names->index, key);

	return i == SIZE_MAX ? "?" : names->names[i];
}

char *api_names_sql(const struct api_names *names, unsigned mask)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	int first = 1;

	/* Few names qualify (tens), so a literal list is the cheapest filter for SQLite. */
	for (size_t i = 0; i < names->n; i++) {
		if (!(names->classes[i] & mask))
			continue;
		sqlite3_str_appendf(s, "%s(traceId = %lld AND nameId = %lld)", first ? "" : " OR ",
				    (long long)names->keys[i][0], (long long)names->keys[i][1]);
		first = 0;
	}
	if (first)
		sqlite3_str_appendall(s, "0");
	return sqlite3_str_finish(s);
}

void api_names_release(struct api_names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->names[i]);
	free(names->names);
	free(names->classes);
	free(names->keys);
	key_index_release(&names->index);
	memset(names, 0, sizeof(*names));
}
