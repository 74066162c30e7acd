/*
 * libFuzzer harness: the input bytes are a trace file. They are written to a file and opened as
 * gpt-trace opens a trace, then everything the analyzer commands do runs on it (fuzz/analyze.c).
 * Most mutations of a SQLite file are caught by SQLite's own corruption checks; the seeds are small
 * (512-byte pages) so that mutations land in the rows more often. fuzz-sql.c fuzzes the content.
 */
#include "fuzz/analyze.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[4096];

	if (!path[0])
		snprintf(path, sizeof(path), "%s/input.sqlite", fuzz_workdir());
	fuzz_remove_db(path);
	if (fuzz_write_file(path, data, size) == 0)
		fuzz_analyze(path, fuzz_workdir(), fuzz_variant(data, size));
	fuzz_remove_db(path);
	return 0;
}
