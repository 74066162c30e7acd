/*
 * kineto_us_to_ns(): Kineto's µs text to integer ns, exactly, on the forms real traces use and the
 * edges around them. Prints one line per failure; exits 1 on any.
 */
#include "analyzer/import/kineto-json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *text;
	int ok;
	int64_t ns;
} cases[] = {
	{ "4884494739707.581", 1, 4884494739707581 },		/* current: relative to the base */
	{ "1712195495519695.812", 1, 1712195495519695812 },	/* 19 digits: beyond a double */
	{ "1695835542514261", 1, 1695835542514261000 },	/* old: integer epoch µs */
	{ "0.000", 1, 0 },
	{ "0.0005", 1, 1 },					/* half an ns rounds up */
	{ "0.0004999", 1, 0 },
	{ "12.3456", 1, 12346 },
	{ "10.0004", 1, 10000 },
	{ "-1.5", 1, -1500 },
	{ "-0.0005", 1, -1 },
	{ "1e3", 1, 1000000 },
	{ "4.8844947397095e12", 1, 4884494739709500 },	/* Python's json writes big floats so */
	{ "1.5E-3", 1, 2 },
	{ "2.5e-4", 1, 0 },
	{ "000123.000", 1, 123000 },
	{ "9223372036854775.807", 1, INT64_MAX },
	{ "9223372036854775.808", 0, 0 },			/* one ns past int64 */
	{ "1e20", 0, 0 },
	{ "", 0, 0 },
	{ "-", 0, 0 },
	{ "abc", 0, 0 },
	{ "1.2.3", 0, 0 },
	{ "1e", 0, 0 },
	{ "12 ", 0, 0 },
};

int main(void)
{
	int failures = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ns = -42;
		int ok = kineto_us_to_ns(cases[i].text, strlen(cases[i].text), &ns) == 0;

		if (ok != cases[i].ok || (ok && ns != cases[i].ns)) {
			printf("FAIL '%s': %s %" PRId64 ", want %s %" PRId64 "\n", cases[i].text, ok ? "ok" : "refused", ns,
			       cases[i].ok ? "ok" : "refused", cases[i].ns);
			failures++;
		}
	}
	printf("%s: %zu cases\n", failures ? "FAIL" : "ok", sizeof(cases) / sizeof(cases[0]));
	return failures != 0;
}
