/*
 * Loads libgpt_inject.so the way the CUDA driver does (dlopen, then InitializeInjection) in a
 * process where CUDA cannot initialise (no driver on the CI machine): tracing must not start, the
 * program must go on, and the library must say why in exactly one line.
 *
 * Usage: call_injection LIBRARY
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *lib;
	int (*init)(void);

	if (argc < 2)
		return 2;
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	init = (int (*)(void))dlsym(lib, "InitializeInjection");
	if (!init || !dlsym(lib, "InitializeInjectionNvtx2"))
		return 3;
	printf("InitializeInjection returned %d\n", init());
	printf("again %d\n", init());	/* idempotent */
	return 0;
}
