/*
 * owner-names: prints the kernel owner of each name read from standard input, one per line, as
 * "<owner id>\t<name>" (tests/rules/owners.sh runs it on every fixture's kernel names).
 */
#include "analyzer/analysis/owner.h"

#include <stdio.h>
#include <string.h>

/* Names that no committed trace holds, with their owners. */
static const struct {
	const char *name;
	enum kernel_owner owner;
} known[] = {
	{ "triton_poi_fused_add_gelu_mul_0", OWNER_INDUCTOR },
	{ "triton_red_fused_sum_1", OWNER_INDUCTOR },
	{ "_attn_fwd", OWNER_PROGRAM },	/* a hand-written Triton kernel has no mark */
	{ "triton_matmul_kernel", OWNER_TRITON },
	{ "void cub::CUB_200200_900_NS::DeviceRadixSortOnesweepKernel<int>(int*)", OWNER_CCCL },
	{ "void thrust::cuda_cub::core::_kernel_agent<int>(int)", OWNER_CCCL },
	{ "void regular_fft<256u, EPT<16u>>(unsigned int)", OWNER_CUFFT },
	{ "void cusparse::csrmv_v3_kernel<int>(int)", OWNER_CUSPARSE },
	{ "cupy_add", OWNER_CUPY },
	{ "void at::cuda::philox::unpack_cudnn(at::PhiloxCudaState, long*, long*)", OWNER_ATEN },
	{ "void cutlass::device_kernel<MyGemm>(MyGemm::Params)", OWNER_CUTLASS },
	{ "ampere_sgemm_128x64_nn", OWNER_CUBLAS },
	{ "my_fusion_kernel", OWNER_PROGRAM },
	{ "loop_fusion_12", OWNER_XLA },
	{ "", OWNER_PROGRAM },
};

static int self_test(void)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		enum kernel_owner got = kernel_owner(known[i].name);

		if (got != known[i].owner) {
			printf("FAIL: '%s' is %s, expected %s\n", known[i].name, kernel_owner_id(got),
			       kernel_owner_id(known[i].owner));
			failed++;
		}
	}
	printf("%zu passed, %d failed\n", sizeof(known) / sizeof(known[0]) - (size_t)failed, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	char line[65536];

	if (argc > 1 && !strcmp(argv[1], "--self-test"))
		return self_test();

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		printf("%s\t%s\n", kernel_owner_id(kernel_owner(line)), line);
	}
	return ferror(stdin) ? 2 : 0;
}
