/*
 * The CUDA driver's functions, from the driver the program has loaded: looked up rather than linked,
 * so that libgpt_inject.so needs no libcuda at link time (it is only ever loaded into CUDA programs).
 */
#ifndef GPT_INJECT_DRIVER_H
#define GPT_INJECT_DRIVER_H

/* The driver's function called name, or NULL where no driver is loaded or it has none. */
void *driver_function(const char *name);

#endif
