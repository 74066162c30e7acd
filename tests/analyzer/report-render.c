/*
 * Renders a fixed report header and three hand-made findings (through the findings API of
 * rules/rule.h, ranked with findings_rank) in the format named by argv[1], so that report.sh can
 * compare the renderings exactly, independent of what the real rules find.
 */
#include "analyzer/report/report.h"
#include "analyzer/analysis/owner.h"
#include "rules/rule.h"

#include <stdio.h>
#include <string.h>

static const struct rule fake_small = { .id = "small-kernels", .title = "t", .measures = "m" };
static const struct rule fake_gaps = { .id = "idle-gaps", .title = "t", .measures = "m" };
static const struct rule fake_metrics = { .id = "uncoalesced-access", .title = "t", .measures = "m" };

int main(int argc, char **argv)
{
	char *traces[] = { "run.sqlite (gpt-trace)" };
	char *commands[] = { "./train --steps \"2\" (pid 4242)" };
	char *notes[] = { "run.sqlite: CUPTI dropped 3 records; totals are underestimated" };
	struct report_device devices[] = { { 0, 0, "GPU 0 (NVIDIA H200)", 600000, 1200 } };
	struct report_header hdr = {
		.traces = traces, .ntraces = 1, .commands = commands, .ncommands = 1, .notes = notes,
		.nnotes = 1, .scope = argc > 2 ? argv[2] : NULL, .origin = 1000, .start = 1000,
		.end = 1001000, .devices = devices, .ndevices = 1, .kernels = 1000, .copies = 1,
		.api_calls = 1001,
	};
	struct report_options opt = { .nrules = 7 };
	struct findings list = { 0 };
	struct finding *f;

	if (argc < 2 || output_format_parse(argv[1], &opt.format) < 0)
		return 2;
	opt.color = argc > 3 && !strcmp(argv[3], "color");
	f = findings_add(&list, &fake_metrics, SEVERITY_INFO, 0, "Record with `--metrics`.",
			 "not checked: no hardware metrics");
	f = findings_add(&list, &fake_small, SEVERITY_WARNING, 150000, "Fuse kernels | use CUDA graphs.",
			 "device 0: 900 launches shorter than their launch");
	finding_evidence(f, "kA: 900 launches, median 1.2 us against a 4.0 us launch");
	f->start = 2000;
	f->end = 902000;
	f->device = 0;
	f->owner = OWNER_CUBLAS;
	f = findings_add(&list, &fake_gaps, SEVERITY_CRITICAL, 400000, "Launch earlier.",
			 "device 0 idle 400 us \"between\" work");
	finding_evidence(f, "gap of 300 us");
	finding_evidence(f, "gap of 100 us");
	f->device = 0;
	f->stream = 7;
	findings_rank(&list);
	report_write(stdout, &hdr, &list, &opt);
	findings_release(&list);
	return 0;
}
