-- No API records (a trace recorded without runtime API tracing): 150 kernels of 3 us, 4 us apart.
-- Small against the 5 us max_duration_us, which is also the assumed launch cost:
--   recoverable: 149 gaps x min(4000, 5000) = 596000 ns
INSERT INTO kernel (start, end, corr, name)
	SELECT 1000000 + 7000 * n, 1003000 + 7000 * n, n, 'tiny_kernel' FROM loop WHERE n < 150;
