-- The well-written variant: the host queues five 50 us kernels ahead (launch calls of 4 us every
-- 5 us), they run back to back 1 us apart, and the host synchronizes once at the end.
INSERT INTO api SELECT 1000000 + 5000 * n, 1004000 + 5000 * n, n, 1, NULL FROM loop WHERE n < 5;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1010000 + 51000 * n, 1060000 + 51000 * n, n, 'work' FROM loop WHERE n < 5;
INSERT INTO api VALUES (1030000, 1266000, 5, 2, NULL);
