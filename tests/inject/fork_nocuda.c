/*
 * A program that never uses CUDA and forks: children that exit through exit() (running atexit
 * handlers, the library's too), one that forks again, and one that execs /bin/true. Under the
 * injected library it must behave exactly as without it: exit status 0, nothing printed, no hang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int wait_for(pid_t child, int expected)
{
	int status;

	if (child < 0 || waitpid(child, &status, 0) != child)
		return 1;
	return !(WIFEXITED(status) && WEXITSTATUS(status) == expected);
}

int main(void)
{
	int failed = 0;
	pid_t child;

	for (int i = 0; i < 3; i++) {
		child = fork();
		if (child == 0)
			exit(i + 1);
		failed |= wait_for(child, i + 1);
	}
	child = fork();
	if (child == 0) {
		pid_t grandchild = fork();

		if (grandchild == 0)
			exit(5);
		exit(wait_for(grandchild, 5) ? 1 : 4);
	}
	failed |= wait_for(child, 4);
	child = fork();
	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	failed |= wait_for(child, 0);
	return failed;
}
