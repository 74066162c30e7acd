/*
 * The timeline of a multi-rank job (gpt-trace export of several ranks): Chrome Trace Event JSON,
 * one process per rank ("rank 3 (nodeA, pid 4003)", in rank order) with a track per GPU stream
 * (kernels, copies, sets) and one for the host's NVTX push/pop ranges, every rank's times moved
 * onto the job's common clock (analyzer/ranks/job.h's clock correction), and each collective's
 * kernels linked rank to rank by flow arrows (rank 0's kernel to rank 1's, to rank 2's...), so the
 * late rank's short kernel and the others' long ones line up. First, a process of its own holds the
 * job's critical path across ranks (analyzer/ranks/job-path.h). The ranks' traces are read one at
 * a time.
 */
#ifndef GPT_EXPORT_RANKS_EXPORT_H
#define GPT_EXPORT_RANKS_EXPORT_H

#include "analyzer/ranks/job.h"

#include <stddef.h>

/* summaries[i] is the summary of job rank i's trace (job->ranks[i]), used for its collectives.
   Returns 0, or a negative error with one line in err. */
int export_ranks_write(const struct job_report *job, const char *const *summaries, const char *path, int gzip,
		       char *err, size_t errlen);

#endif
