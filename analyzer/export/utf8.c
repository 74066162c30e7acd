/*
 * UTF-8 checks for the exporter's writers. Trace text is whatever the program passed (NVTX messages
 * may hold any bytes), but JSON and protobuf strings must be valid UTF-8, or readers reject the
 * whole file or show garbage; invalid bytes become U+FFFD, each on its own.
 */
#include "analyzer/export/timeline.h"

#include <stdlib.h>
#include <string.h>

size_t export_utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0;	/* overlong, or a UTF-16 surrogate */
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;	/* overlong, or beyond U+10FFFF */
		return 4;
	}
	return 0;
}

int export_utf8_valid(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;

	for (; *s; s += len) {
		if (*s < 0x80) {
			len = 1;
			continue;
		}
		len = export_utf8_len(s);
		if (!len)
			return 0;
	}
	return 1;
}

char *export_utf8_sanitize(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = 0, len;
	char *out, *p;

	for (const unsigned char *q = s; *q; q += len ? len : 1) {
		len = export_utf8_len(q);
		n += len ? len : 3;
	}
	out = malloc(n + 1);
	if (!out)
		return NULL;
	for (p = out; *s; s += len ? len : 1) {
		len = export_utf8_len(s);
		if (len) {
			memcpy(p, s, len);
			p += len;
		} else {
			memcpy(p, "\xef\xbf\xbd", 3);
			p += 3;
		}
	}
	*p = '\0';
	return out;
}
