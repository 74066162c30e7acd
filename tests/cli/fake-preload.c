/* An empty library for the launcher tests: something a user already had in LD_PRELOAD. */
int fake_preload_marker(void);

int fake_preload_marker(void)
{
	return 0;
}
