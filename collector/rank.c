/*
 * Rank identity from the launchers' environment variables (see rank.h).
 */
#include "collector/rank.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative decimal number, or -1. */
static long number(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v < 0 ? -1 : v;
}

static int set(const char *s)
{
	return s && *s;
}

/* The launcher's job id, or the one of the scheduler or PMIx server around it. */
static void job_read(struct rank_identity *id, const char *(*get)(const char *name))
{
	const char *run = get("TORCHELASTIC_RUN_ID"), *addr = get("MASTER_ADDR"), *port = get("MASTER_PORT");
	const char *slurm = get("SLURM_JOB_ID"), *step = get("SLURM_STEP_ID"), *pmix = get("PMIX_NAMESPACE");

	id->job[0] = '\0';
	if (id->launcher && !strcmp(id->launcher, "torchrun")) {
		if (set(run) && strcmp(run, "none"))
			snprintf(id->job, sizeof(id->job), "torchrun:%s", run);
		else if (set(addr) && set(port))
			snprintf(id->job, sizeof(id->job), "torchrun:%s:%s", addr, port);
	}
	if (!id->job[0] && set(slurm))
		snprintf(id->job, sizeof(id->job), "slurm:%s%s%s", slurm, set(step) ? "." : "", set(step) ? step : "");
	if (!id->job[0] && set(pmix))
		snprintf(id->job, sizeof(id->job), "pmix:%s", pmix);
}

void rank_identity_read(struct rank_identity *id, const char *(*get)(const char *name))
{
	static const struct {
		const char *launcher, *rank, *local_rank, *size;
	} launchers[] = {
		{ "torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE" },
		{ "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE" },
		{ "slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS" },
	};

	*id = (struct rank_identity){ .rank = -1, .local_rank = -1, .world_size = -1 };
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		long rank = number(get(launchers[i].rank));

		if (rank < 0)
			continue;
		id->rank = rank;
		id->local_rank = number(get(launchers[i].local_rank));
		id->world_size = number(get(launchers[i].size));
		id->launcher = launchers[i].launcher;
		job_read(id, get);
		return;
	}
	id->job[0] = '\0';
}
