/*
 * Which rank of a parallel job a process is, from its launcher's environment: torchrun and
 * torch.distributed (RANK, LOCAL_RANK, WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_RANK, _LOCAL_RANK,
 * _SIZE), MPICH and other PMI launchers (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID), Slurm (SLURM_PROCID,
 * SLURM_LOCALID, SLURM_NTASKS), in that order: the first launcher whose rank variable holds a
 * number wins (torchrun under srun sets both; torchrun's is the rank of the process). The trace
 * records it in GPT_META (rank, local_rank, world_size, rank_launcher) and `-o` names files with %r.
 */
#ifndef GPT_COLLECTOR_RANK_H
#define GPT_COLLECTOR_RANK_H

struct rank_identity {
	long rank;		/* -1: not launched as one rank of a job */
	long local_rank;	/* -1: unknown */
	long world_size;	/* -1: unknown */
	const char *launcher;	/* "torchrun", "openmpi", "pmi", "slurm"; NULL when rank is -1 */
};

/* Read the identity through get (getenv, or a stand-in in tests). */
void rank_identity_read(struct rank_identity *id, const char *(*get)(const char *name));

#endif
