/*
 * The source-line metrics of inject/metrics (metrics-cupti.h): CUPTI's SASS Metrics API, with lazy
 * patching, for the ideal sector counts per instruction, and CUPTI's SASS-to-source correlation for
 * their source lines. Once per kernel: configured per device, enabled around the launch, flushed
 * after the patched kernel has finished.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inject/metrics-cupti.h"

/*
 * What Nsight Compute's UncoalescedGlobalAccess rule compares: memory_l2_theoretical_sectors_global
 * and its _ideal twin, per instruction. GH100 has no load/store split of the sector metrics, so the
 * instruction counts say which instructions are loads and which are stores.
 */
const char *const metrics_sass_names[NR_SASS] = {
    [SASS_SECTORS] = "smsp__sass_sectors_mem_global",
    [SASS_SECTORS_IDEAL] = "smsp__sass_sectors_mem_global_ideal",
    [SASS_INST_LD] = "smsp__sass_inst_executed_op_global_ld",
    [SASS_INST_ST] = "smsp__sass_inst_executed_op_global_st",
};

int metrics_sass_setup(struct metrics_session *s, struct metrics_context *c)
{
	const char *what = "source-line metrics";
	CUpti_SassMetrics_Config config[NR_SASS];
	CUpti_SassMetricsSetConfig_Params set = {.structSize =
						     CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
	const char *chip;
	CUptiResult r;
	int i;

	if (c->sass_state == CTX_READY)
		return 0;
	if (c->sass_state == CTX_FAILED)
		return -1;
	c->sass_state = CTX_FAILED;
	if (c->device_id >= METRICS_MAX_DEVICES || s->sass_device[c->device_id] < 0)
		return -1;
	if (s->sass_device[c->device_id] > 0)
		goto out_ready;
	s->sass_device[c->device_id] = -1;
	if (metrics_profiler_init(s, c, what) < 0)
		return -1;
	if (metrics_device_supported(s, c, CUPTI_PROFILER_SASS_METRICS, what) < 0)
		return -1;
	chip = metrics_chip_name(s, c, what);
	if (!chip)
		return -1;
	for (i = 0; i < NR_SASS; i++) {
		CUpti_SassMetrics_GetProperties_Params prop = {
		    .structSize = CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};

		prop.pChipName = chip;
		prop.pMetricName = metrics_sass_names[i];
		r = metrics_cupti.SassMetricsGetProperties(&prop);
		if (r != CUPTI_SUCCESS) {
			metrics_report(s,
				       "no %s on device %u: SASS metric '%s' is not available on "
				       "chip %s (%s)",
				       what, c->device_id, metrics_sass_names[i], chip,
				       metrics_cupti_reason(r));
			return -1;
		}
		s->sass_ids[i] = prop.metric.metricId;
		config[i].metricId = prop.metric.metricId;
		config[i].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
	}
	s->sass_ids_known = true;
	set.numOfMetricConfig = NR_SASS;
	set.pConfigs = config;
	set.deviceIndex = c->device_id;
	r = metrics_cupti.SassMetricsSetConfig(&set);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, what, "cuptiSassMetricsSetConfig", r);
		return -1;
	}
	s->sass_device[c->device_id] = 1;
out_ready:
	c->sass_state = CTX_READY;
	return 0;
}

int metrics_sass_start(struct metrics_session *s, struct metrics_context *c)
{
	CUpti_SassMetricsEnable_Params p = {.structSize =
						CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
	CUptiResult r;

	p.ctx = c->ctx;
	/* Lazy: only the function launched inside the enable/disable pair is patched. */
	p.enableLazyPatching = 1;
	r = metrics_cupti.SassMetricsEnable(&p);
	if (r != CUPTI_SUCCESS) {
		metrics_context_failed(s, c, "source-line metrics", "cuptiSassMetricsEnable", r);
		c->sass_state = CTX_FAILED;
		return -1;
	}
	return 0;
}

/* file:line of one SASS offset; *file is malloc'd (NULL when unknown). */
static void sass_source(struct metrics_session *s, const CUpti_SassMetrics_Data *d, char **file,
			uint32_t *line)
{
	CUpti_GetSassToSourceCorrelationParams p = {.size =
							CUpti_GetSassToSourceCorrelationParamsSize};
	struct metrics_cubin *cubin;
	CUptiResult r;

	*file = NULL;
	*line = 0;
	cubin = metrics_cubin_find(s, d->cubinCrc);
	if (!cubin)
		return;
	p.cubin = cubin->data;
	p.cubinSize = cubin->size;
	p.functionName = d->functionName;
	p.pcOffset = d->pcOffset;
	r = metrics_cupti.GetSassToSourceCorrelation(&p);
	if (r != CUPTI_SUCCESS || !p.fileName) {
		free(p.fileName);
		free(p.dirName);
		return;
	}
	*line = p.lineNumber;
	if (p.fileName[0] != '/' && p.dirName && p.dirName[0]) {
		size_t len = strlen(p.dirName) + strlen(p.fileName) + 2;

		*file = malloc(len);
		if (*file)
			snprintf(*file, len, "%s/%s", p.dirName, p.fileName);
		free(p.fileName);
	} else {
		*file = p.fileName;
	}
	free(p.dirName);
}

static void sass_add(struct metrics_access *a, const uint64_t v[NR_SASS])
{
	if (v[SASS_INST_LD]) {
		a->ld_sectors += v[SASS_SECTORS];
		a->ld_ideal += v[SASS_SECTORS_IDEAL];
		a->ld_inst += v[SASS_INST_LD];
	} else if (v[SASS_INST_ST]) {
		a->st_sectors += v[SASS_SECTORS];
		a->st_ideal += v[SASS_SECTORS_IDEAL];
		a->st_inst += v[SASS_INST_ST];
	}
}

/* Record order for grouping: one instruction is one (cubin, function, offset). */
static int record_cmp(const void *a, const void *b)
{
	const CUpti_SassMetrics_Data *x = *(const CUpti_SassMetrics_Data *const *)a;
	const CUpti_SassMetrics_Data *y = *(const CUpti_SassMetrics_Data *const *)b;

	if (x->cubinCrc != y->cubinCrc)
		return x->cubinCrc < y->cubinCrc ? -1 : 1;
	if (x->functionIndex != y->functionIndex)
		return x->functionIndex < y->functionIndex ? -1 : 1;
	if (x->pcOffset != y->pcOffset)
		return x->pcOffset < y->pcOffset ? -1 : 1;
	return 0;
}

/* One instruction's metrics, summed into the launch's row and the kernel's source line. */
static void sass_instruction(struct metrics_session *s, struct metrics_kernel *k,
			     struct metrics_row *row, const CUpti_SassMetrics_Data *d,
			     const uint64_t v[NR_SASS], bool *resolved)
{
	struct metrics_line *line;
	uint32_t lineno;
	char *file;

	if (!v[SASS_INST_LD] && !v[SASS_INST_ST])
		return;
	if (d->functionName && strcmp(d->functionName, k->name))
		metrics_debug(s, "SASS record of %s while %s ran", d->functionName, k->name);
	sass_add(&row->sass, v);
	sass_source(s, d, &file, &lineno);
	if (file)
		*resolved = true;
	else
		s->sass_unresolved++;
	line = metrics_kernel_line(k, file, lineno);
	free(file);
	if (line)
		sass_add(&line->access, v);
}

/*
 * Sum the flushed records into the kernel, its lines and the launch's row. CUPTI gives one record
 * per instruction and metric (coalesced_copy: 6 records = 2 sector metrics x 2 instructions + one
 * load and one store count), so the records are grouped by instruction first.
 */
static void sass_collect(struct metrics_session *s, struct metrics_kernel *k,
			 struct metrics_row *row, const CUpti_SassMetrics_Data *data,
			 size_t nr_records, size_t nr_instances)
{
	const CUpti_SassMetrics_Data **order;
	bool resolved = false;
	uint64_t v[NR_SASS];
	size_t i, j;
	int m;

	order = malloc(nr_records * sizeof(*order));
	if (!order)
		return;
	for (i = 0; i < nr_records; i++)
		order[i] = &data[i];
	qsort(order, nr_records, sizeof(*order), record_cmp);
	for (i = 0; i < nr_records; i++) {
		const CUpti_SassMetrics_Data *d = order[i];

		if (i == 0 || record_cmp(&order[i - 1], &order[i]))
			memset(v, 0, sizeof(v));
		for (j = 0; j < nr_instances; j++)
			for (m = 0; m < NR_SASS; m++)
				if (d->pInstanceValues[j].metricId == s->sass_ids[m])
					v[m] += d->pInstanceValues[j].value;
		if (i + 1 == nr_records || record_cmp(&order[i], &order[i + 1]))
			sass_instruction(s, k, row, d, v, &resolved);
	}
	free(order);
	if (resolved)
		s->source_kernels++;
}

int metrics_sass_stop(struct metrics_session *s, struct metrics_context *c,
		      struct metrics_kernel *k, struct metrics_row *row)
{
	CUpti_SassMetricsGetDataProperties_Params props = {
	    .structSize = CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
	CUpti_SassMetricsFlushData_Params flush = {
	    .structSize = CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
	CUpti_SassMetricsDisable_Params disable = {.structSize =
						       CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
	CUpti_SassMetrics_InstanceValue *values = NULL;
	CUpti_SassMetrics_Data *data = NULL;
	const char *call = NULL;
	CUptiResult r, failed = CUPTI_SUCCESS;
	size_t n = 0, i;
	CUresult cr;
	int ret = -1;

	/* The patched kernel must have finished before its counts can be read. */
	cr = metrics_context_synchronize();
	if (cr != CUDA_SUCCESS)
		metrics_debug(s, "cuCtxSynchronize: %d", cr);
	if (s->sass_synced)
		s->sass_synced(c->ctx);
	props.ctx = c->ctx;
	r = metrics_cupti.SassMetricsGetDataProperties(&props);
	if (r != CUPTI_SUCCESS) {
		call = "cuptiSassMetricsGetDataProperties";
		failed = r;
		goto out_disable;
	}
	n = props.numOfPatchedInstructionRecords;
	metrics_debug(s, "%s: %zu SASS records, %zu instances", k->name, n, props.numOfInstances);
	if (n && props.numOfInstances) {
		data = calloc(n, sizeof(*data));
		values = calloc(n * props.numOfInstances, sizeof(*values));
		if (!data || !values) {
			metrics_report(s, "no source-line metrics: %s", strerror(ENOMEM));
			goto out_disable;
		}
		for (i = 0; i < n; i++) {
			data[i].structSize = sizeof(data[i]);
			data[i].pInstanceValues = &values[i * props.numOfInstances];
		}
		flush.ctx = c->ctx;
		flush.numOfPatchedInstructionRecords = n;
		flush.numOfInstances = props.numOfInstances;
		flush.pMetricsData = data;
		r = metrics_cupti.SassMetricsFlushData(&flush);
		if (r != CUPTI_SUCCESS) {
			call = "cuptiSassMetricsFlushData";
			failed = r;
			goto out_disable;
		}
		sass_collect(s, k, row, data, n, props.numOfInstances);
		/*
		 * Patched global memory instructions that all counted zero: measured on the H200
		 * with CUPTI's kernel activity tracing on, where the same launch's kernel record
		 * also came back with corrupt timestamps. Better no source lines than wrong ones.
		 */
		if (!row->sass.ld_inst && !row->sass.st_inst) {
			metrics_report(s,
				       "no source-line metrics on device %u: the SASS "
				       "instrumentation of %s counted nothing (seen beside kernel "
				       "activity tracing); source lines are off for this context",
				       c->device_id, k->short_name);
			c->sass_state = CTX_FAILED;
			goto out_disable;
		}
	}
	row->has_sass = true;
	k->sass = row->sass;
	k->sass_done = true;
	s->sass_kernels++;
	ret = 0;

out_disable:
	disable.ctx = c->ctx;
	r = metrics_cupti.SassMetricsDisable(&disable);
	if (r != CUPTI_SUCCESS && !call) {
		call = "cuptiSassMetricsDisable";
		failed = r;
	}
	if (disable.numOfDroppedRecords)
		metrics_debug(s, "%zu SASS records dropped", disable.numOfDroppedRecords);
	if (call) {
		metrics_context_failed(s, c, "source-line metrics", call, failed);
		c->sass_state = CTX_FAILED;
		ret = -1;
	}
	if (data)
		for (i = 0; i < n; i++)
			free((void *)data[i].functionName);
	free(data);
	free(values);
	return ret;
}

/* Undo cuptiSassMetricsSetConfig on every device it was done for. */
void metrics_sass_unset(struct metrics_session *s)
{
	uint32_t dev;

	for (dev = 0; dev < METRICS_MAX_DEVICES; dev++) {
		CUpti_SassMetricsUnsetConfig_Params p = {
		    .structSize = CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};

		if (s->sass_device[dev] <= 0)
			continue;
		p.deviceIndex = dev;
		metrics_cupti.SassMetricsUnsetConfig(&p);
		s->sass_device[dev] = 0;
	}
}

uint64_t metrics_cubin_crc(const void *cubin, size_t size)
{
	CUpti_GetCubinCrcParams p = {.size = CUpti_GetCubinCrcParamsSize};

	p.cubin = cubin;
	p.cubinSize = size;
	if (metrics_cupti.GetCubinCrc(&p) != CUPTI_SUCCESS)
		return 0;
	return p.cubinCrc;
}
