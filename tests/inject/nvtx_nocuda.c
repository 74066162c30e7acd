/*
 * NVTX without CUDA: ranges and marks through the nvtx3 headers, with NVTX_INJECTION64_PATH naming
 * libgpt_inject.so. The library records them in memory, but since CUDA never starts, no trace file
 * is written and nothing is printed.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

int main(void)
{
	for (int i = 0; i < 1000; i++) {
		nvtxRangePushA("step");
		nvtxMarkA("tick");
		nvtxRangePop();
	}
	puts("nvtx ok");
	return 0;
}
