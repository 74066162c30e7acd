/*
 * copies: the same host<->device copies from pageable memory (malloc) and from pinned memory
 * (cudaMallocHost). Pageable copies go through a driver staging buffer and run at a fraction of the
 * pinned bandwidth, and cannot overlap with anything: what the pageable-memcpy rule must flag, with
 * the pinned copies in the same trace as its bandwidth yardstick.
 *
 * Known answer: one cudaMemset of the device buffer (value 0); K HtoD and K DtoH cudaMemcpy of B
 * bytes from and to pageable memory (srcKind resp. dstKind 0); then K HtoD and K DtoH
 * cudaMemcpyAsync of B bytes from and to pinned memory (srcKind resp. dstKind 1) on one stream,
 * followed by one stream synchronize. No kernels. The data makes the round trip intact.
 */
#include "samples/sample.h"

const char *sample_name = "copies";

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed);
}

static void expect_same(const unsigned char *a, const unsigned char *b, size_t n, const char *what)
{
	if (memcmp(a, b, n) != 0)
		sample_fail("%s copies changed the data", what);
}

int main(int argc, char **argv)
{
	long bytes = 4 << 20, copies = 10;
	const struct sample_option opts[] = {
		{ "bytes", OPT_LONG, &bytes, "bytes per copy" },
		{ "copies", OPT_LONG, &copies, "copies per direction and memory kind" },
	};
	unsigned char *pageable_src, *pageable_dst, *pinned_src, *pinned_dst, *dev;
	cudaStream_t stream;
	long long t0, t1, t2;
	size_t n;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Copy a buffer host->device and back K times from pageable and from pinned memory.");
	if (bytes == 0)
		bytes = 1;
	n = (size_t)bytes;
	sample_init_device();

	pageable_src = (unsigned char *)malloc(n);
	pageable_dst = (unsigned char *)malloc(n);
	if (!pageable_src || !pageable_dst) {
		fprintf(stderr, "%s: cannot allocate %zu bytes of host memory\n", sample_name, n);
		return 1;
	}
	CHECK(cudaMallocHost(&pinned_src, n));
	CHECK(cudaMallocHost(&pinned_dst, n));
	CHECK(cudaMalloc(&dev, n));
	CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	fill(pageable_src, n, 1);
	fill(pinned_src, n, 2);
	CHECK(cudaMemset(dev, 0, n));

	t0 = sample_now_ns();
	for (long i = 0; i < copies; i++)
		CHECK(cudaMemcpy(dev, pageable_src, n, cudaMemcpyHostToDevice));
	for (long i = 0; i < copies; i++)
		CHECK(cudaMemcpy(pageable_dst, dev, n, cudaMemcpyDeviceToHost));
	t1 = sample_now_ns();
	for (long i = 0; i < copies; i++)
		CHECK(cudaMemcpyAsync(dev, pinned_src, n, cudaMemcpyHostToDevice, stream));
	for (long i = 0; i < copies; i++)
		CHECK(cudaMemcpyAsync(pinned_dst, dev, n, cudaMemcpyDeviceToHost, stream));
	CHECK(cudaStreamSynchronize(stream));
	t2 = sample_now_ns();

	if (copies > 0) {
		expect_same(pageable_src, pageable_dst, n, "pageable");
		expect_same(pinned_src, pinned_dst, n, "pinned");
	}

	sample_result_begin();
	printf(" bytes=%zu pageable_htod=%ld pageable_dtoh=%ld pinned_htod=%ld pinned_dtoh=%ld"
	       " memsets=1 stream_syncs=1 pageable_gbps=%.2f pinned_gbps=%.2f",
	       n, copies, copies, copies, copies,
	       t1 > t0 ? 2.0 * copies * n / (t1 - t0) : 0.0, t2 > t1 ? 2.0 * copies * n / (t2 - t1) : 0.0);
	sample_result_end();

	CHECK(cudaStreamDestroy(stream));
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(pinned_src));
	CHECK(cudaFreeHost(pinned_dst));
	free(pageable_src);
	free(pageable_dst);
	return 0;
}
