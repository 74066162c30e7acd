/*
 * Kernel short names, as nsys's shortName column holds them: the function's own identifier.
 */
#ifndef GPT_COMMON_KERNEL_NAME_H
#define GPT_COMMON_KERNEL_NAME_H

#include <stddef.h>

/*
 * The short name inside a demangled (or plain) name: the function's own identifier without return
 * type, scope, template arguments and parameters, e.g. "vectorized_elementwise_kernel" for
 * "void at::native::vectorized_elementwise_kernel<(int)4, ...>(int, T2, T3)". Returns a pointer into
 * name and its length in *len.
 */
const char *name_short(const char *name, size_t *len);

#endif
