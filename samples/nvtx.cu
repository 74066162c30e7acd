/*
 * nvtx: NVTX annotations of every kind around kernels with known counts, through the header-only
 * NVTX3 API (it finds the tool through NVTX_INJECTION64_PATH, set by gpt-trace run).
 *
 * Known answer, on the main thread:
 *   - a mark "start_mark";
 *   - a start/end range "all_steps" around I steps;
 *   - per step, a push/pop range "step" with two nested push/pop ranges "forward" and "backward",
 *     each around K launches of add_one (the default domain);
 *   - then, in the domain "gpt_samples" (created with nvtxDomainCreateA), one push/pop range whose
 *     message is the registered string "registered_range" (nvtxDomainRegisterStringA), with colour
 *     0xFF76B900 and category 7, around D launches of add_one.
 * add_one runs over E floats (grid ceil(E/256), block 256) on the default stream: 2*I*K + D
 * launches in all; one memset before and one synchronous readback into pinned memory at the end.
 */
#include <nvtx3/nvToolsExt.h>

#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "nvtx";

#define DOMAIN_NAME "gpt_samples"
#define REGISTERED_TEXT "registered_range"
#define RANGE_COLOR 0xFF76B900u
#define RANGE_CATEGORY 7

static const unsigned int threads = 256;

static void launch(float *dev, size_t n, long launches)
{
	for (long i = 0; i < launches; i++)
		add_one<<<sample_blocks(n, threads), threads>>>(dev, n);
	CHECK_LAUNCHES();
}

int main(int argc, char **argv)
{
	long steps = 3, per_range = 4, domain_launches = 5, elements = 1 << 16;
	const struct sample_option opts[] = {
		{ "steps", OPT_LONG, &steps, "step ranges, each with a forward and a backward range" },
		{ "per-range", OPT_LONG, &per_range, "launches inside each forward and backward range" },
		{ "domain-launches", OPT_LONG, &domain_launches, "launches inside the domain range" },
		{ "elements", OPT_LONG, &elements, "floats the kernel touches" },
	};
	nvtxEventAttributes_t attr;
	nvtxDomainHandle_t domain;
	nvtxStringHandle_t registered;
	nvtxRangeId_t all_steps;
	long total;
	float *dev, *host;
	size_t n, bytes;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Launch kernels inside nested NVTX push/pop, start/end and domain ranges.");
	if (elements == 0)
		elements = 1;
	n = (size_t)elements;
	bytes = n * sizeof(float);
	total = 2 * steps * per_range + domain_launches;
	sample_init_device();
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	CHECK(cudaMemset(dev, 0, bytes));

	nvtxMarkA("start_mark");
	all_steps = nvtxRangeStartA("all_steps");
	for (long s = 0; s < steps; s++) {
		nvtxRangePushA("step");
		nvtxRangePushA("forward");
		launch(dev, n, per_range);
		nvtxRangePop();
		nvtxRangePushA("backward");
		launch(dev, n, per_range);
		nvtxRangePop();
		nvtxRangePop();
	}
	nvtxRangeEnd(all_steps);

	domain = nvtxDomainCreateA(DOMAIN_NAME);
	registered = nvtxDomainRegisterStringA(domain, REGISTERED_TEXT);
	memset(&attr, 0, sizeof(attr));
	attr.version = NVTX_VERSION;
	attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	attr.category = RANGE_CATEGORY;
	attr.colorType = NVTX_COLOR_ARGB;
	attr.color = RANGE_COLOR;
	attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	attr.message.registered = registered;
	nvtxDomainRangePushEx(domain, &attr);
	launch(dev, n, domain_launches);
	nvtxDomainRangePop(domain);

	CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++) {
		if (host[i] != (float)total)
			sample_fail("element %zu is %g, expected %ld", i, host[i], total);
	}
	nvtxDomainDestroy(domain);

	sample_result_begin();
	sample_result_kernel("add_one", total, dim3(sample_blocks(n, threads)), dim3(threads));
	printf(" steps=%ld per_range=%ld domain_launches=%ld domain=%s registered=%s color=0x%08X"
	       " category=%d memsets=1 pinned_dtoh=1 bytes=%zu",
	       steps, per_range, domain_launches, DOMAIN_NAME, REGISTERED_TEXT, RANGE_COLOR,
	       RANGE_CATEGORY, bytes);
	sample_result_end();

	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
	return 0;
}
