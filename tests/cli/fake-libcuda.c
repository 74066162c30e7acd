/*
 * A stand-in for the NVIDIA driver's libcuda.so.1, for `gpt-trace doctor` on a machine without a
 * GPU (tests/cli/doctor.sh puts its folder on LD_LIBRARY_PATH). Only what doctor calls, answering
 * as the environment says:
 *   FAKE_CUDA_VERSION   what cuDriverGetVersion reports (default 13000, CUDA 13.0)
 *   FAKE_CUDA_GPUS      how many GPUs there are (default 1); 0: cuInit fails with NO_DEVICE
 *   CUDA_VISIBLE_DEVICES set and empty hides them all, as the real driver does
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100

int cuInit(unsigned flags);
int cuDriverGetVersion(int *version);
int cuDeviceGetCount(int *count);
int cuDeviceGet(int *device, int ordinal);
int cuDeviceGetName(char *name, int len, int device);
int cuDeviceGetAttribute(int *value, int attribute, int device);
int cuGetErrorName(int result, const char **name);

static int initialized;

static int env_int(const char *name, int fallback)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : fallback;
}

static int gpus(void)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");

	if (visible && !*visible)
		return 0;
	return env_int("FAKE_CUDA_GPUS", 1);
}

int cuInit(unsigned flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!gpus())
		return CUDA_ERROR_NO_DEVICE;
	initialized = 1;
	return CUDA_SUCCESS;
}

int cuDriverGetVersion(int *version)
{
	*version = env_int("FAKE_CUDA_VERSION", 13000);
	return CUDA_SUCCESS;
}

int cuDeviceGetCount(int *count)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*count = gpus();
	return CUDA_SUCCESS;
}

int cuDeviceGet(int *device, int ordinal)
{
	if (!initialized || ordinal < 0 || ordinal >= gpus())
		return CUDA_ERROR_INVALID_VALUE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

int cuDeviceGetName(char *name, int len, int device)
{
	snprintf(name, (size_t)len, "Fake GPU %d", device);
	return CUDA_SUCCESS;
}

int cuDeviceGetAttribute(int *value, int attribute, int device)
{
	(void)device;
	*value = attribute == 75 ? 9 : 0;	/* compute capability 9.0 */
	return CUDA_SUCCESS;
}

int cuGetErrorName(int result, const char **name)
{
	*name = result == CUDA_ERROR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
	return CUDA_SUCCESS;
}
