/*
 * Quantities as people read them: durations and byte counts with a unit chosen by magnitude, in a
 * caller's buffer (returned, for use inside printf arguments). One formatter per quantity, at two
 * precisions: brief for evidence lines and messages ("12.3 us", "4.56 ms", "225.1 MB"), fine for
 * tables and values compared side by side ("12.345 us", "4.560 ms", "225.13 MB").
 */
#ifndef GPT_COMMON_UNITS_H
#define GPT_COMMON_UNITS_H

#include <stddef.h>
#include <stdint.h>

enum units_precision {
	UNITS_BRIEF, /* durations: 1 decimal in us, 2 in ms, 3 in s; bytes: 1 decimal in KB and MB,
			2 in GB */
	UNITS_FINE,  /* durations: 3 decimals in us, ms and s; bytes: 2 decimals from KB to TB */
};

/* "850 ns" below a microsecond (whole nanoseconds), then us, ms, s; the unit picked by |ns|, the
 * sign kept ("-12.3 us"). */
const char *units_duration(char *buf, size_t len, int64_t ns, enum units_precision precision);
/* Decimal units (bandwidths are quoted in GB/s): "512 B", "2.0 KB", "225.1 MB", "1.50 GB". */
const char *units_bytes(char *buf, size_t len, double bytes, enum units_precision precision);

#endif
