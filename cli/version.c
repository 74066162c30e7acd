/*
 * The version line (version.h). GPT_TRACE_GIT comes from gpt-trace-git.h, which cli/version.cmake
 * rewrites at build time when `git describe` changes; the schema versions are the collector's own
 * constants (schema/schema-version.h), so the line cannot drift from what `run` writes.
 */
#include "cli/version.h"
#include "schema/schema-version.h"

#include "gpt-trace-git.h"

#ifndef GPT_TRACE_VERSION
#define GPT_TRACE_VERSION "unknown"
#endif

#define SCHEMAS "trace schema " GPT_SCHEMA_VERSION " (nsys export " NSYS_SCHEMA_MAJOR "." \
	NSYS_SCHEMA_MINOR "." NSYS_SCHEMA_MICRO ")"

const char *gpt_trace_version(void)
{
	if (GPT_TRACE_GIT[0])
		return GPT_TRACE_VERSION " (git " GPT_TRACE_GIT "), " SCHEMAS;
	return GPT_TRACE_VERSION ", " SCHEMAS;
}
