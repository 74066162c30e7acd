/*
 * The sampling interval of `gpt-trace run --gpu-metrics[=INTERVAL]` and GPT_TRACE_GPU_METRICS, read
 * alike by the launcher (to refuse a bad one before the program runs) and by the injected library
 * (which links nothing of common/, hence a header).
 */
#ifndef GPT_COMMON_INTERVAL_H
#define GPT_COMMON_INTERVAL_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The default: 10 kHz, nsys's default GPU metrics frequency. */
#define GPU_METRICS_DEFAULT_INTERVAL_NS 100000ull
#define GPU_METRICS_MIN_INTERVAL_NS 10000ull
#define GPU_METRICS_MAX_INTERVAL_NS 1000000000ull

/*
 * An interval ("100us", "1ms", "250000ns", a plain number of ns) or a frequency ("10khz",
 * "1000hz"), 10 us to 1 s; "1", "on" or "yes" mean the default; NULL, "", "0", "off" and "no" give
 * 0 (off). Returns 0 with *interval_ns set, or -1 with one line in err.
 */
static inline int gpu_metrics_interval_parse(const char *spec, uint64_t *interval_ns, char *err,
					     size_t errlen)
{
	static const struct {
		const char *suffix;
		double ns;	/* per unit; negative: a frequency, ns = -value / number */
	} units[] = { { "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		      { "hz", -1e9 }, { "khz", -1e6 } };
	double v;
	char *end;

	*interval_ns = 0;
	if (!spec || !*spec || !strcmp(spec, "0") || !strcasecmp(spec, "off") ||
	    !strcasecmp(spec, "no"))
		return 0;
	if (!strcmp(spec, "1") || !strcasecmp(spec, "on") || !strcasecmp(spec, "yes")) {
		*interval_ns = GPU_METRICS_DEFAULT_INTERVAL_NS;
		return 0;
	}
	errno = 0;
	v = strtod(spec, &end);
	if (errno || end == spec || !(v > 0))
		goto out_bad;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suffix))
			continue;
		v = units[i].ns > 0 ? v * units[i].ns : -units[i].ns / v;
		if (v < GPU_METRICS_MIN_INTERVAL_NS || v > GPU_METRICS_MAX_INTERVAL_NS) {
			snprintf(err, errlen, "GPU metrics interval '%s' out of range: 10us to 1s "
				 "(100khz to 1hz)", spec);
			return -1;
		}
		*interval_ns = (uint64_t)llround(v);
		return 0;
	}
out_bad:
	snprintf(err, errlen, "bad GPU metrics interval '%s': give a time (100us, 1ms) or a "
		 "frequency (10khz)", spec);
	return -1;
}

#endif
