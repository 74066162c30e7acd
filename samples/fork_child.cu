/*
 * fork_child: a process tree in which some processes use CUDA and one does not. Every process that
 * uses CUDA must get a trace file of its own; the one that does not must leave none and must not
 * hang at exit (a known CUPTI hazard after fork).
 *
 * In order: the parent forks a child that uses CUDA, before the parent touches CUDA itself (CUDA
 * does not survive a fork); the parent then creates its context and runs its own kernels; then it
 * forks a child that only computes on the CPU and leaves through exit(), so the atexit handlers it
 * inherited from a traced, CUDA-initialised parent run in it; then it forks a child that execs this
 * program again with --exec-child, which uses CUDA. The parent waits for all three.
 *
 * Known answer: the result line names the pids (pid, cuda_child, plain_child, exec_child). The
 * parent launches P kernels add_one, the CUDA child C, the exec'd child X, each over E floats
 * (grid ceil(E/256), block 256) on the default stream, each followed by one synchronous readback;
 * the plain child launches none. Each CUDA process also does one memset and one synchronous readback
 * into pinned memory of E*4 bytes. Every child exits 0.
 */
#include <sys/wait.h>

#include "kernels/tiny.cuh"
#include "samples/sample.h"

const char *sample_name = "fork_child";

static const unsigned int threads = 256;

/* Launch add_one n times over elements floats and check the answer; exits 1 on any failure. */
static void run_kernels(long launches, size_t elements)
{
	size_t bytes = elements * sizeof(float);
	float *dev, *host;

	sample_init_device();
	CHECK(cudaMalloc(&dev, bytes));
	CHECK(cudaMallocHost(&host, bytes));
	CHECK(cudaMemset(dev, 0, bytes));
	for (long i = 0; i < launches; i++)
		add_one<<<sample_blocks(elements, threads), threads>>>(dev, elements);
	CHECK_LAUNCHES();
	CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < elements; i++) {
		if (host[i] != (float)launches)
			sample_fail("pid %d element %zu is %g, expected %ld", (int)getpid(), i, host[i],
				    launches);
	}
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
}

static pid_t fork_or_die(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: cannot fork: %s\n", sample_name, strerror(errno));
		exit(1);
	}
	return pid;
}

/* Wait for a child; returns 0 when it exited with status 0. */
static int reap(pid_t pid, const char *what)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "%s: cannot wait for the %s (pid %d): %s\n", sample_name, what,
				(int)pid, strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		fprintf(stderr, "%s: the %s (pid %d) exited with status %d\n", sample_name, what, (int)pid,
			WEXITSTATUS(status));
	else
		fprintf(stderr, "%s: the %s (pid %d) was killed by signal %d\n", sample_name, what,
			(int)pid, WTERMSIG(status));
	return -1;
}

int main(int argc, char **argv)
{
	long parent_kernels = 3, child_kernels = 5, exec_kernels = 7, elements = 1 << 16;
	long exec_child = 0;
	const struct sample_option opts[] = {
		{ "parent-kernels", OPT_LONG, &parent_kernels, "kernels launched by the parent" },
		{ "child-kernels", OPT_LONG, &child_kernels, "kernels launched by the forked CUDA child" },
		{ "exec-kernels", OPT_LONG, &exec_kernels, "kernels launched by the fork+exec child" },
		{ "elements", OPT_LONG, &elements, "floats each process touches" },
		{ "exec-child", OPT_FLAG, &exec_child, "internal: run as the exec'd child" },
	};
	pid_t cuda_child, plain_child, exec_child_pid;
	char count[32], size[32];
	int failed = 0;

	sample_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		     "Fork a CUDA child, a non-CUDA child and a fork+exec CUDA child; launch in each.");
	if (elements == 0)
		elements = 1;
	if (exec_child) {
		run_kernels(exec_kernels, (size_t)elements);
		return 0;
	}

	cuda_child = fork_or_die();
	if (cuda_child == 0) {
		run_kernels(child_kernels, (size_t)elements);
		exit(0);
	}

	run_kernels(parent_kernels, (size_t)elements);

	plain_child = fork_or_die();
	if (plain_child == 0) {
		volatile unsigned long sum = 0;

		for (unsigned long i = 1; i <= 1000000; i++)
			sum += i;
		exit(sum == 500000500000UL ? 0 : 1);
	}

	exec_child_pid = fork_or_die();
	if (exec_child_pid == 0) {
		snprintf(count, sizeof(count), "%ld", exec_kernels);
		snprintf(size, sizeof(size), "%ld", elements);
		execl("/proc/self/exe", sample_name, "--exec-child", "--exec-kernels", count, "--elements",
		      size, (char *)NULL);
		fprintf(stderr, "%s: cannot exec /proc/self/exe: %s\n", sample_name, strerror(errno));
		_exit(127);
	}

	failed |= reap(cuda_child, "CUDA child");
	failed |= reap(plain_child, "non-CUDA child");
	failed |= reap(exec_child_pid, "fork+exec child");
	if (failed)
		return 1;

	sample_result_begin();
	printf(" cuda_child=%d plain_child=%d exec_child=%d", (int)cuda_child, (int)plain_child,
	       (int)exec_child_pid);
	sample_result_kernel("add_one", parent_kernels, dim3(sample_blocks(elements, threads)),
			     dim3(threads));
	printf(" cuda_child_kernels=%ld exec_child_kernels=%ld memsets=1 pinned_dtoh=1 bytes=%zu",
	       child_kernels, exec_kernels, (size_t)elements * sizeof(float));
	sample_result_end();
	return 0;
}
