/*
 * Kernel names: CUPTI reports the mangled name of a C++ kernel (the plain name of an extern "C" one);
 * nsys stores three names per kernel, mangled, demangled and short (the bare function name). We
 * demangle with the C++ runtime's __cxa_demangle, looked up at run time (dlsym, then libstdc++.so.6),
 * so the library itself needs no C++ runtime; a program without one gets mangled names only.
 *
 * Note: nsys demangles with NVIDIA's cu++filt, whose spelling differs from GNU's for some constructs
 * ("(anonymous namespace)" vs "<unnamed>", "{lambda(int)#1}" vs "[lambda(int) (instance 1)]",
 * "4" vs "(int)4" in template arguments). Short names agree.
 */
#ifndef GPT_COLLECTOR_NAMES_H
#define GPT_COLLECTOR_NAMES_H

#include "common/kernel-name.h"

#include <stddef.h>

/* The demangled name (malloc'ed, caller frees), or NULL if name is not a mangled C++ name. */
char *name_demangle(const char *name);

#endif
