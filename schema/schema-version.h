/*
 * The versions of the trace format the collector writes (schema/schema.sql): our own, stored in
 * GPT_META as gpt_schema_version (docs/schema.md says what changed between versions), and the
 * Nsight Systems export schema whose DDL schema.sql copies, stored in META_DATA_EXPORT. A header of
 * its own so that `gpt-trace --version`, built without the collector, says the same numbers.
 */
#ifndef GPT_SCHEMA_SCHEMA_VERSION_H
#define GPT_SCHEMA_SCHEMA_VERSION_H

#define GPT_SCHEMA_VERSION "5"

#define NSYS_SCHEMA_MAJOR "3"
#define NSYS_SCHEMA_MINOR "16"
#define NSYS_SCHEMA_MICRO "1"

#endif
