/*
 * Drives libgpt_inject.so over the stand-in CUPTI (fake_cupti.c, named by GPT_TRACE_CUPTI_LIB) as a
 * CUDA program would: the driver's InitializeInjection, then kernel launches played through the
 * stand-in, then exit, where the library writes the trace. Prints how many API callbacks the
 * library enabled and whether it asked for module loads, so the test sees that metrics cost no
 * callback when they are off.
 *
 * Usage: fake_launch LIBRARY FAKE_CUPTI
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void (*launch)(uint32_t, const char *, int);
	unsigned (*api_callbacks)(void);
	int (*module_callback)(void);
	int (*init)(void);
	void *lib, *cupti;

	if (argc < 3)
		return 2;
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	init = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
	if (!init) {
		fprintf(stderr, "fake_launch: cannot load '%s'\n", argv[1]);
		return 2;
	}
	init();
	cupti = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	if (!cupti) {
		fprintf(stderr, "fake_launch: the library did not load '%s'\n", argv[2]);
		return 3;
	}
	*(void **)&launch = dlsym(cupti, "fake_cupti_launch");
	*(void **)&api_callbacks = dlsym(cupti, "fake_cupti_api_callbacks");
	*(void **)&module_callback = dlsym(cupti, "fake_cupti_module_callback");
	if (!launch || !api_callbacks || !module_callback)
		return 4;
	launch(11, "_Z14strided_gatherPKfPfm", 1);
	launch(12, "_Z14strided_gatherPKfPfm", 1);
	printf("api callbacks %u\nmodule callback %d\n", api_callbacks(), module_callback());
	return 0;
}
