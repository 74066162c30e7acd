-- The well-written variant: 200 launches that each do 20 us of work (larger batches), queued ahead
-- by a host that launches every 5 us; kernels run back to back. Kernel median 20 us > launch 4 us.
INSERT INTO api SELECT 1000000 + 5000 * n, 1004000 + 5000 * n, n, 1, NULL FROM loop WHERE n < 200;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1010000 + 20000 * n, 1030000 + 20000 * n, n, 'batched_kernel' FROM loop WHERE n < 200;
