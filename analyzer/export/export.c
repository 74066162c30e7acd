/*
 * gpt-trace export's entry point (export.h): the writer of the format asked for, from a table, handed
 * the output file; the timeline walk feeds it; the file is committed when both succeeded.
 */
#include "analyzer/export/export.h"
#include "analyzer/export/file.h"
#include "analyzer/export/timeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct export_writer {
	enum export_format format;
	struct timeline_sink *(*sink_new)(struct export_file *file);
} writers[] = {
	{ EXPORT_PERFETTO, perfetto_sink_new },
	{ EXPORT_CHROME, chrome_sink_new },
};

/* The writer of format; Perfetto, the default, for any other. */
static const struct export_writer *writer_for(enum export_format format)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
		if (writers[i].format == format)
			return &writers[i];
	}
	return &writers[0];
}

int export_write(struct trace *trace, const struct export_options *opts, const char *path, char *err,
		 size_t errlen)
{
	struct export_file *file;
	struct timeline_sink *sink;
	int ret;

	err[0] = '\0';
	ret = export_file_open(&file, path, opts->gzip, err, errlen);
	if (ret < 0)
		return ret;
	sink = writer_for(opts->format)->sink_new(file);
	if (!sink) {
		ret = -ENOMEM;
		goto out_abort;
	}
	ret = timeline_walk(trace, opts->findings, opts->path, opts->npath, sink, err, errlen);
	sink->ops->free(sink);
	if (ret < 0)
		goto out_abort;
	return export_file_commit(file, err, errlen);

out_abort:
	/* The walker leaves err empty when the failure was the writer's (a full disk, say). */
	if (!err[0])
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-ret));
	export_file_abort(file);
	return ret;
}

char *export_default_path(const char *trace_path, const struct export_options *opts)
{
	static const char *const strip[] = { ".sqlite", ".sqlite3", ".db", ".nsys-rep" };
	const char *ext = opts->format == EXPORT_CHROME ? ".json" : ".perfetto-trace";
	size_t base = strlen(trace_path);
	char *out;

	for (size_t i = 0; i < sizeof(strip) / sizeof(strip[0]); i++) {
		size_t n = strlen(strip[i]);

		if (base > n && !strcmp(trace_path + base - n, strip[i])) {
			base -= n;
			break;
		}
	}
	out = malloc(base + strlen(ext) + sizeof(".gz"));
	if (!out)
		return NULL;
	memcpy(out, trace_path, base);
	strcpy(out + base, ext);
	if (opts->gzip)
		strcat(out, ".gz");
	return out;
}

enum export_format export_format_parse(const char *name)
{
	if (!strcmp(name, "perfetto"))
		return EXPORT_PERFETTO;
	if (!strcmp(name, "chrome") || !strcmp(name, "json"))
		return EXPORT_CHROME;
	return 0;
}
