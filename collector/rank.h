/*
 * Which rank of a parallel job a process is, from its launcher's environment: torchrun and
 * torch.distributed (RANK, LOCAL_RANK, WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_RANK, _LOCAL_RANK,
 * _SIZE), MPICH and other PMI launchers (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID), Slurm (SLURM_PROCID,
 * SLURM_LOCALID, SLURM_NTASKS), in that order: the first launcher whose rank variable holds a
 * number wins (torchrun under srun sets both; torchrun's is the rank of the process). The trace
 * records it in GPT_META (rank, local_rank, world_size, rank_launcher) and `-o` names files with %r.
 *
 * The job id tells the traces of one job from those of another when they are reported together
 * (GPT_META job_id): torchrun's TORCHELASTIC_RUN_ID (its rendezvous id; a fresh uuid with
 * --standalone, "none" when not given, then MASTER_ADDR:MASTER_PORT), Slurm's SLURM_JOB_ID and
 * SLURM_STEP_ID, PMIx's namespace (PMIX_NAMESPACE: Open MPI 4 and later, and other PMIx launchers).
 */
#ifndef GPT_COLLECTOR_RANK_H
#define GPT_COLLECTOR_RANK_H

struct rank_identity {
	long rank;		/* -1: not launched as one rank of a job */
	long local_rank;	/* -1: unknown */
	long world_size;	/* -1: unknown */
	const char *launcher;	/* "torchrun", "openmpi", "pmi", "slurm"; NULL when rank is -1 */
	char job[128];		/* the job id; "" when the launcher gives none */
};

/* Read the identity through get (getenv, or a stand-in in tests). */
void rank_identity_read(struct rank_identity *id, const char *(*get)(const char *name));

#endif
