/*
 * libFuzzer harness over the content of a trace rather than its bytes: the input is SQL, run on a
 * fresh database that already holds our schema (schema/schema.sql), or, when the input starts
 * with "-- nsys", an empty one (the input creates nsys-like tables itself: any subset, any
 * columns). The database is then analyzed as in fuzz-trace.c. Byte-level mutation of a SQLite file
 * mostly trips SQLite's corruption checks; here every input is a well-formed database, so the
 * fuzzer spends its time on odd rows: negative or overlapping times, NULLs, missing tables,
 * dangling ids, huge values.
 *
 * Building is bounded (a VM-step budget, 1 MB values, no ATTACH) so that an input cannot make a
 * database too big to analyze within the fuzzer's time limit.
 */
#include "fuzz/analyze.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPT_FUZZ_SCHEMA
#error "GPT_FUZZ_SCHEMA: the path of schema/schema.sql"
#endif

#define NSYS_MARKER "-- nsys"
#define BUILD_STEPS 2000000	/* progress-handler ticks of 1000 VM steps */

static char *read_schema(void)
{
	static char *schema;
	FILE *f;
	long n;

	if (schema)
		return schema;
	f = fopen(GPT_FUZZ_SCHEMA, "rb");
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(GPT_FUZZ_SCHEMA);
		abort();
	}
	schema = malloc((size_t)n + 1);
	if (!schema || fread(schema, 1, (size_t)n, f) != (size_t)n)
		abort();
	schema[n] = '\0';
	fclose(f);
	return schema;
}

static int budget(void *arg)
{
	long *left = arg;

	return --*left < 0;
}

static int deny_attach(void *arg, int action, const char *a, const char *b, const char *c, const char *d)
{
	(void)arg, (void)a, (void)b, (void)c, (void)d;
	return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

static int build(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	long left = BUILD_STEPS / 1000;
	int rc;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		goto fail;
	/* a scratch file: durability buys nothing and costs a third of the executions */
	sqlite3_exec(db, "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY", NULL, NULL, NULL);
	if (strncmp(sql, NSYS_MARKER, strlen(NSYS_MARKER)) &&
	    sqlite3_exec(db, read_schema(), NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
	sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
	sqlite3_progress_handler(db, 1000, budget, &left);
	sqlite3_set_authorizer(db, deny_attach, NULL);
	/* statements up to the first error count: what follows is the fuzzer's to fix */
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	rc = sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
fail:
	sqlite3_close(db);
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[4096];
	char *sql;

	if (!path[0])
		snprintf(path, sizeof(path), "%s/input.sqlite", fuzz_workdir());
	sql = malloc(size + 1);
	if (!sql)
		return 0;
	memcpy(sql, data, size);
	sql[size] = '\0';
	fuzz_remove_db(path);
	if (build(path, sql) == 0)
		fuzz_analyze(path, fuzz_workdir(), fuzz_variant(data, size));
	fuzz_remove_db(path);
	free(sql);
	return 0;
}
