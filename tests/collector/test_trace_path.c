/*
 * Trace names: GPT_TRACE_OUTPUT pattern expansion (%p, %h, %r, %%) and creation without overwriting
 * (".1", ".2" before the extension; force truncates); the rank identity %r and GPT_META come from.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/rank.h"
#include "collector/trace-path.h"
#include "tests/collector/check.h"

static void test_expand(void)
{
	char out[64];

	CHECK_EQ_INT(trace_path_expand("gpt-trace-%h-%p.sqlite", 1234, "node7", -1, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "gpt-trace-node7-1234.sqlite");
	CHECK_EQ_INT(trace_path_expand("/a/100%%-%p%x", 5, "h", -1, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "/a/100%-5%x");
	CHECK_EQ_INT(trace_path_expand("trailing%", 5, "h", -1, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "trailing%");
	CHECK_EQ_INT(trace_path_expand("%p%p%p%p%p", 123456789, "h", -1, out, 20), -ENAMETOOLONG);
	/* %r: the rank, or the pid for a process that is no rank of a job. */
	CHECK_EQ_INT(trace_path_expand("rank-%r.sqlite", 77, "h", 3, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "rank-3.sqlite");
	CHECK_EQ_INT(trace_path_expand("rank-%r.sqlite", 77, "h", -1, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, "rank-77.sqlite");
}

/* A stand-in environment for rank_identity_read(): NAME=VALUE pairs. */
static const char *const *fake_env;

static const char *fake_get(const char *name)
{
	size_t n = strlen(name);

	for (const char *const *e = fake_env; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static void test_rank(void)
{
	static const char *const none[] = { "HOME=/root", NULL };
	static const char *const torchrun[] = { "RANK=5", "LOCAL_RANK=1", "WORLD_SIZE=8", "SLURM_PROCID=0",
						"TORCHELASTIC_RUN_ID=f00d", "SLURM_JOB_ID=77", NULL };
	static const char *const torchrun_none[] = { "RANK=1", "TORCHELASTIC_RUN_ID=none", "MASTER_ADDR=node7",
						     "MASTER_PORT=29500", NULL };
	static const char *const openmpi[] = { "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_LOCAL_RANK=0",
					       "OMPI_COMM_WORLD_SIZE=4", "PMIX_NAMESPACE=prterun-vm-123@1", NULL };
	static const char *const pmi[] = { "PMI_RANK=9", "PMI_SIZE=16", NULL };
	static const char *const slurm[] = { "RANK=x", "SLURM_PROCID=12", "SLURM_LOCALID=3", "SLURM_NTASKS=64",
					     "SLURM_JOB_ID=4242", "SLURM_STEP_ID=0", NULL };
	struct rank_identity id;

	fake_env = none;
	rank_identity_read(&id, fake_get);
	CHECK(id.rank == -1 && id.local_rank == -1 && id.world_size == -1 && !id.launcher && !id.job[0]);
	/* torchrun under srun: torchrun's RANK is the process's. */
	fake_env = torchrun;
	rank_identity_read(&id, fake_get);
	CHECK(id.rank == 5 && id.local_rank == 1 && id.world_size == 8 && !strcmp(id.launcher, "torchrun"));
	CHECK(!strcmp(id.job, "torchrun:f00d"));
	/* no rendezvous id: the master's address and port */
	fake_env = torchrun_none;
	rank_identity_read(&id, fake_get);
	CHECK(!strcmp(id.job, "torchrun:node7:29500"));
	fake_env = openmpi;
	rank_identity_read(&id, fake_get);
	CHECK(id.rank == 2 && id.local_rank == 0 && id.world_size == 4 && !strcmp(id.launcher, "openmpi"));
	CHECK(!strcmp(id.job, "pmix:prterun-vm-123@1"));
	fake_env = pmi;
	rank_identity_read(&id, fake_get);
	CHECK(id.rank == 9 && id.local_rank == -1 && id.world_size == 16 && !strcmp(id.launcher, "pmi"));
	CHECK(!id.job[0]);
	/* A RANK that is no number is no rank: the next launcher's counts. */
	fake_env = slurm;
	rank_identity_read(&id, fake_get);
	CHECK(id.rank == 12 && id.local_rank == 3 && id.world_size == 64 && !strcmp(id.launcher, "slurm"));
	CHECK(!strcmp(id.job, "slurm:4242.0"));
}

static void test_create(const char *dir)
{
	char path[600], actual[700], expected[700];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/t.sqlite", dir);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	CHECK_EQ_STR(actual, path);
	fd = open(path, O_WRONLY);
	CHECK(write(fd, "data", 4) == 4);
	close(fd);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	snprintf(expected, sizeof(expected), "%s/t.1.sqlite", dir);
	CHECK_EQ_STR(actual, expected);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	snprintf(expected, sizeof(expected), "%s/t.2.sqlite", dir);
	CHECK_EQ_STR(actual, expected);
	/* The original is untouched. */
	CHECK(stat(path, &st) == 0 && st.st_size == 4);
	/* force: the same name, emptied. */
	CHECK_EQ_INT(trace_path_create(path, 1, actual, sizeof(actual)), 0);
	CHECK_EQ_STR(actual, path);
	CHECK(stat(path, &st) == 0 && st.st_size == 0);
	/* No extension: the number goes at the end. */
	snprintf(path, sizeof(path), "%s/noext", dir);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), 0);
	snprintf(expected, sizeof(expected), "%s/noext.1", dir);
	CHECK_EQ_STR(actual, expected);
	snprintf(path, sizeof(path), "%s/missing/t.sqlite", dir);
	CHECK_EQ_INT(trace_path_create(path, 0, actual, sizeof(actual)), -ENOENT);
}

int main(void)
{
	const char *dir = check_tmpdir();

	test_expand();
	test_rank();
	test_create(dir);
	check_rmtree(dir);
	return check_exit("test_trace_path");
}
