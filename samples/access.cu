/*
 * access: global-memory access patterns, for the uncoalesced-access rule and its comparison with
 * Nsight Compute. coalesced_copy reads and writes consecutive floats (4 sectors per request, the
 * ideal); strided_gather reads floats 33 apart (32 sectors per request, 12.5% of each sector used);
 * transpose_naive reads rows and writes columns (loads ideal, stores 32 sectors per request);
 * transpose_tiled is the same transpose through shared memory (both ideal). --kernel picks one, by
 * default all four run, one after the other.
 *
 * Known answer: each selected kernel launched R times on the default stream; coalesced_copy and
 * strided_gather over E floats with grid ceil(E/256), block 256; the transposes over a ROWS x COLS
 * matrix with grid (COLS/32, ROWS/32), block (32, 8). One synchronous HtoD copy of the input from
 * pinned memory; per selected kernel one memset of the output and one synchronous readback into
 * pinned memory, checked on the host.
 */
#include "kernels/access.cuh"
#include "samples/sample.h"

const char *sample_name = "access";

struct pattern {
	const char *name;	/* the kernel's name, and what --kernel accepts without its suffix */
	const char *option;
	dim3 grid, block;
};

static float value_at(size_t i)
{
	/* Exact in a float, and different for neighbours, so a misplaced element is caught. */
	return (float)(i & 0xffffff);
}

static void expect_value(const float *out, size_t i, float want, const char *kernel)
{
	if (out[i] != want)
		sample_fail("%s: element %zu is %g, expected %g", kernel, i, out[i], want);
}

int main(int argc, char **argv)
{
	long iters = 10, elements = 1 << 24, rows = 4096, cols = 4096;
	const char *which = "all";
	const struct sample_option opts[] = {
		{ "kernel", OPT_STRING, &which, "coalesced, strided, transpose, tiled or all" },
		{ "iters", OPT_LONG, &iters, "launches of each selected kernel" },
		{ "elements", OPT_LONG, &elements, "floats copied by coalesced_copy and strided_gather" },
		{ "rows", OPT_LONG, &rows, "matrix rows of the transposes (multiple of 32)" },
		{ "cols", OPT_LONG, &cols, "matrix columns of the transposes (multiple of 32)" },
	};
	const unsigned int threads = 256;
	struct pattern patterns[] = {
		{ "coalesced_copy", "coalesced", dim3(), dim3(threads) },
		{ "strided_gather", "strided", dim3(), dim3(threads) },
		{ "transpose_naive", "transpose", dim3(), dim3(TILE_DIM, TILE_ROWS) },
		{ "transpose_tiled", "tiled", dim3(), dim3(TILE_DIM, TILE_ROWS) },
	};
	const size_t npatterns = sizeof(patterns) / sizeof(patterns[0]);
	bool selected[sizeof(patterns) / sizeof(patterns[0])];
	size_t n, cells, biggest;
	float *in, *out, *host_in, *host_out;
	long memsets = 0, readbacks = 0;
	bool any = false;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Run coalesced, strided and transpose-style kernels R times each.");
	if (elements == 0 || rows == 0 || cols == 0 || rows % TILE_DIM || cols % TILE_DIM) {
		fprintf(stderr, "%s: --elements must be positive, --rows and --cols positive multiples of %d\n",
			sample_name, TILE_DIM);
		return 2;
	}
	for (size_t p = 0; p < npatterns; p++) {
		selected[p] = !strcmp(which, "all") || !strcmp(which, patterns[p].option) ||
			      !strcmp(which, patterns[p].name);
		any |= selected[p];
	}
	if (!any) {
		fprintf(stderr, "%s: unknown --kernel '%s': coalesced, strided, transpose, tiled or all\n",
			sample_name, which);
		return 2;
	}
	n = (size_t)elements;
	cells = (size_t)rows * (size_t)cols;
	biggest = n > cells ? n : cells;
	patterns[0].grid = patterns[1].grid = dim3(sample_blocks(n, threads));
	patterns[2].grid = patterns[3].grid = dim3((unsigned int)(cols / TILE_DIM),
						   (unsigned int)(rows / TILE_DIM));
	sample_init_device();

	CHECK(cudaMalloc(&in, biggest * sizeof(float)));
	CHECK(cudaMalloc(&out, biggest * sizeof(float)));
	CHECK(cudaMallocHost(&host_in, biggest * sizeof(float)));
	CHECK(cudaMallocHost(&host_out, biggest * sizeof(float)));
	for (size_t i = 0; i < biggest; i++)
		host_in[i] = value_at(i);
	CHECK(cudaMemcpy(in, host_in, biggest * sizeof(float), cudaMemcpyHostToDevice));

	for (size_t p = 0; p < npatterns; p++) {
		const struct pattern *pat = &patterns[p];

		if (!selected[p])
			continue;
		CHECK(cudaMemset(out, 0, biggest * sizeof(float)));
		memsets++;
		for (long it = 0; it < iters; it++) {
			if (p == 0)
				coalesced_copy<<<pat->grid, pat->block>>>(in, out, n);
			else if (p == 1)
				strided_gather<<<pat->grid, pat->block>>>(in, out, n);
			else if (p == 2)
				transpose_naive<<<pat->grid, pat->block>>>(in, out, (int)rows, (int)cols);
			else
				transpose_tiled<<<pat->grid, pat->block>>>(in, out, (int)rows, (int)cols);
		}
		CHECK_LAUNCHES();
		if (iters == 0)
			continue;
		CHECK(cudaMemcpy(host_out, out, biggest * sizeof(float), cudaMemcpyDeviceToHost));
		readbacks++;
		if (p == 0) {
			for (size_t i = 0; i < n; i++)
				expect_value(host_out, i, value_at(i), pat->name);
		} else if (p == 1) {
			for (size_t i = 0; i < n; i++)
				expect_value(host_out, i, value_at((i * GATHER_STRIDE) % n), pat->name);
		} else {
			/* Tile by tile, so that neither side walks memory with a large stride. */
			for (size_t r0 = 0; r0 < (size_t)rows; r0 += TILE_DIM)
				for (size_t c0 = 0; c0 < (size_t)cols; c0 += TILE_DIM)
					for (size_t r = r0; r < r0 + TILE_DIM; r++)
						for (size_t c = c0; c < c0 + TILE_DIM; c++)
							expect_value(host_out, c * rows + r, value_at(r * cols + c),
								     pat->name);
		}
	}

	sample_result_begin();
	for (size_t p = 0; p < npatterns; p++) {
		if (selected[p])
			sample_result_kernel(patterns[p].name, iters, patterns[p].grid, patterns[p].block);
	}
	printf(" elements=%zu rows=%ld cols=%ld pinned_htod=1 pinned_dtoh=%ld bytes=%zu memsets=%ld", n, rows,
	       cols, readbacks, biggest * sizeof(float), memsets);
	sample_result_end();

	CHECK(cudaFree(in));
	CHECK(cudaFree(out));
	CHECK(cudaFreeHost(host_in));
	CHECK(cudaFreeHost(host_out));
	return 0;
}
