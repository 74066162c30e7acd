/*
 * Where `gpt-trace run` finds libgpt_inject.so, the library it injects: $GPT_TRACE_INJECT_LIB, else
 * beside the gpt-trace executable (the build tree, build/bin), else ../lib/gpt-trace/ from it (an
 * installation, wherever its prefix was moved). `gpt-trace doctor` reports the same answer.
 */
#ifndef GPT_CLI_INJECT_LIB_H
#define GPT_CLI_INJECT_LIB_H

#include <stddef.h>

#define INJECT_LIB_NAME "libgpt_inject.so"

enum inject_lib_origin {
	INJECT_LIB_ENV,		/* GPT_TRACE_INJECT_LIB */
	INJECT_LIB_BESIDE,	/* beside the executable: a build tree */
	INJECT_LIB_INSTALLED,	/* ../lib/gpt-trace/ from the executable: an installation */
};

/* The absolute path of the library, which the caller frees, and where it was found (origin may be
 * NULL); NULL with the reason, a full sentence for the user, in problem. */
char *inject_lib_find(enum inject_lib_origin *origin, char *problem, size_t problem_len);

#endif
