/*
 * What `gpt-trace --version` and `gpt-trace doctor` say about this build: the release, the git commit
 * it was built from (when built from a git checkout) and the trace schema versions it writes.
 */
#ifndef GPT_CLI_VERSION_H
#define GPT_CLI_VERSION_H

/* "0.1.0 (git e22cb44), trace schema 2 (nsys export 3.16.1)"; "0.1.0, trace schema ..." from a tarball. */
const char *gpt_trace_version(void);

#endif
