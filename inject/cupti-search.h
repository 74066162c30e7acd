/*
 * Where libgpt_inject.so looks for CUPTI, in order, once it has found none already loaded in the
 * program (PyTorch links its own) and none at GPT_TRACE_CUPTI_LIB. One table for the library
 * (inject/cupti.c) and for `gpt-trace doctor`, which reports the same search, so the two cannot
 * disagree. A place with a NULL path is libcupti beside the libcudart the program has loaded (pip
 * wheels); only the program can know it.
 */
#ifndef GPT_INJECT_CUPTI_SEARCH_H
#define GPT_INJECT_CUPTI_SEARCH_H

/* The CUPTI directory of the toolkit gpt-trace was built with (set by CMake). */
#ifndef GPT_CUPTI_BUILD_DIR
#define GPT_CUPTI_BUILD_DIR "/usr/local/cuda/lib64"
#endif

#define GPT_CUPTI_SONAME "libcupti.so.13"

struct cupti_place {
	const char *path;	/* for dlopen; NULL: beside the program's libcudart */
	const char *why;	/* in the user's words, for doctor */
};

static const struct cupti_place cupti_places[] = {
	{ GPT_CUPTI_SONAME, "the dynamic linker's path (LD_LIBRARY_PATH, ldconfig)" },
	{ NULL, "beside the program's libcudart (pip wheels)" },
	{ GPT_CUPTI_BUILD_DIR "/" GPT_CUPTI_SONAME, "the CUDA toolkit gpt-trace was built with" },
	{ "/usr/local/cuda/extras/CUPTI/lib64/" GPT_CUPTI_SONAME, "the CUDA toolkit in /usr/local/cuda" },
	{ "libcupti.so", "the dynamic linker's path, any version" },
};

#endif
