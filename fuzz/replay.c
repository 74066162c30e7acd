/*
 * Runs a harness once over each file given (or each file in each folder given), without libFuzzer:
 * how CI replays the committed corpus under ASan/UBSan with any compiler. Exit 0 when every input
 * ran; a crash or sanitizer report ends the process as it would under libFuzzer.
 */
#include "fuzz/analyze.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	data = malloc((size_t)n + 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)n);
	free(data);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, size_t *count)
{
	struct stat st;
	struct dirent *e;
	char **names = NULL, full[4096];
	size_t n = 0;
	int ret = 0;
	DIR *dir;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return run_file(path);
	}
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(e->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		snprintf(full, sizeof(full), "%s/%s", path, names[i]);
		fprintf(stderr, "replay: %s\n", full);
		if (run_path(full, count) < 0)
			ret = -1;
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE-OR-FOLDER...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		if (run_path(argv[i], &count) < 0)
			ret = 1;
	}
	fuzz_workdir_remove();
	if (!count) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	printf("replay: %zu inputs, no crash\n", count);
	return ret;
}
