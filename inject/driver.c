/* Driver functions looked up in the loaded driver (driver.h). */
#define _GNU_SOURCE
#include "inject/driver.h"

#include <dlfcn.h>
#include <stddef.h>

void *driver_function(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);
	void *driver;

	if (f)
		return f;
	/* The runtime loads libcuda with RTLD_LOCAL: ask for that copy by name. */
	driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!driver)
		return NULL;
	/* The reference NOLOAD took is kept: the function is called up to the process's exit. */
	return dlsym(driver, name);
}
