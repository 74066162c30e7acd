/*
 * Durations and byte counts with a unit (units.h): the magnitude picks the unit, the precision the
 * decimals.
 */
#include "common/units.h"

#include <inttypes.h>
#include <stdio.h>

const char *units_duration(char *buf, size_t len, int64_t ns, enum units_precision precision)
{
	static const int decimals[][3] = {
	    [UNITS_BRIEF] = {1, 2, 3}, /* us, ms, s */
	    [UNITS_FINE] = {3, 3, 3},
	};
	const int *d = decimals[precision == UNITS_FINE];
	double v = (double)ns, a = v < 0 ? -v : v;

	if (a < 1e3)
		snprintf(buf, len, "%" PRId64 " ns", ns);
	else if (a < 1e6)
		snprintf(buf, len, "%.*f us", d[0], v / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%.*f ms", d[1], v / 1e6);
	else
		snprintf(buf, len, "%.*f s", d[2], v / 1e9);
	return buf;
}

const char *units_bytes(char *buf, size_t len, double bytes, enum units_precision precision)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	size_t u = 0;

	if (precision == UNITS_FINE) {
		while (bytes >= 1000.0 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
			bytes /= 1000.0;
			u++;
		}
		snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", bytes, unit[u]);
	} else if (bytes < 1e3) {
		snprintf(buf, len, "%.0f B", bytes);
	} else if (bytes < 1e6) {
		snprintf(buf, len, "%.1f KB", bytes / 1e3);
	} else if (bytes < 1e9) {
		snprintf(buf, len, "%.1f MB", bytes / 1e6);
	} else {
		snprintf(buf, len, "%.2f GB", bytes / 1e9);
	}
	return buf;
}
