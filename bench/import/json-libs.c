/*
 * How fast three Debian C JSON libraries read a Kineto trace, and how much memory they hold: yajl
 * (libyajl-dev, streaming callbacks), json-c (libjson-c-dev, tree) and cJSON (libcjson-dev, tree).
 * Each reads the whole file and counts the events of traceEvents; yajl in 256 KiB chunks, the
 * two tree parsers from the text in memory (what they need). Used once to choose the importer's
 * parser (docs/import.md); not part of the build.
 *
 * cc -O2 -o json-libs json-libs.c -lyajl -ljson-c -lcjson && ./json-libs TRACE.json
 */
#include <cjson/cJSON.h>
#include <json-c/json.h>
#include <yajl/yajl_parse.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(*len + 1);
	if (fread(buf, 1, *len, f) != *len)
		exit(1);
	buf[*len] = 0;
	fclose(f);
	return buf;
}

struct count { int depth; long events; };

static int y_start_map(void *ctx) { struct count *c = ctx; if (++c->depth == 3) c->events++; return 1; }
static int y_end_map(void *ctx) { ((struct count *)ctx)->depth--; return 1; }
static int y_start_array(void *ctx) { ((struct count *)ctx)->depth++; return 1; }
static int y_end_array(void *ctx) { ((struct count *)ctx)->depth--; return 1; }
static int y_scalar(void *ctx) { (void)ctx; return 1; }
static int y_string(void *ctx, const unsigned char *s, size_t n) { (void)ctx; (void)s; (void)n; return 1; }
static int y_number(void *ctx, const char *s, size_t n) { (void)ctx; (void)s; (void)n; return 1; }
static int y_bool(void *ctx, int b) { (void)ctx; (void)b; return 1; }

static long run_yajl(const char *path, int validate)
{
	static const yajl_callbacks cb = { y_scalar, y_bool, NULL, NULL, y_number, y_string, y_start_map, y_string,
					   y_end_map, y_start_array, y_end_array };
	struct count c = { 0, 0 };
	yajl_handle h = yajl_alloc(&cb, NULL, &c);
	static unsigned char buf[256 << 10];
	FILE *f = fopen(path, "rb");
	size_t n;

	yajl_config(h, yajl_dont_validate_strings, !validate);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (yajl_parse(h, buf, n) != yajl_status_ok)
			return -1;
	if (yajl_complete_parse(h) != yajl_status_ok)
		return -1;
	yajl_free(h);
	fclose(f);
	return c.events;
}

static long run_jsonc(const char *path)
{
	size_t len;
	char *text = slurp(path, &len);
	struct json_tokener *tok = json_tokener_new_ex(64);
	struct json_object *root = json_tokener_parse_ex(tok, text, (int)len), *ev;
	long n = -1;

	if (root && json_object_object_get_ex(root, "traceEvents", &ev))
		n = (long)json_object_array_length(ev);
	json_object_put(root);
	json_tokener_free(tok);
	free(text);
	return n;
}

static long run_cjson(const char *path)
{
	size_t len;
	char *text = slurp(path, &len);
	cJSON *root = cJSON_ParseWithLength(text, len);
	long n = -1;

	if (root)
		n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "traceEvents"));
	cJSON_Delete(root);
	free(text);
	return n;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "yajl (validating UTF-8)", "yajl (no UTF-8 check)", "json-c", "cJSON" };
	size_t len;
	FILE *f = fopen(argv[1], "rb");

	if (argc < 2 || !f)
		return 2;
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fclose(f);
	for (int which = 0; which < 4; which++) {
		pid_t pid = fork();

		if (pid == 0) {
			double t0 = now();
			long n = which == 0 ? run_yajl(argv[1], 1) : which == 1 ? run_yajl(argv[1], 0) :
				 which == 2 ? run_jsonc(argv[1]) : run_cjson(argv[1]);
			double dt = now() - t0;
			struct rusage ru;

			getrusage(RUSAGE_SELF, &ru);
			printf("%-24s %8ld events  %7.2f s  %7.1f MB/s  peak RSS %7.1f MB\n", names[which], n, dt,
			       len / dt / 1e6, ru.ru_maxrss / 1024.0);
			exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	return 0;
}
