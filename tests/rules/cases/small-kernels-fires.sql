-- A launch-bound loop: 200 launches of a 2 us kernel, each launch call taking 4 us, issued back to
-- back every 5 us. Each kernel starts 3 us into its launch call, so the device idles 3 us before
-- every kernel but the first. Then one 500 us kernel that is not small.
--   launch cost: median of the 199 repeated launches = 4000 ns (the first launch is left out)
--   small: tiny (median 2000 < 4000), 200 launches >= min_launches 100
--   recoverable: 199 gaps x min(3000, 4000) = 597000 ns
--   span 1000000..2503000 = 1503000 ns: 39.7% -> critical
INSERT INTO api SELECT 1000000 + 5000 * n, 1004000 + 5000 * n, n, 1, NULL FROM loop WHERE n < 200;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1003000 + 5000 * n, 1005000 + 5000 * n, n, 'tiny_kernel' FROM loop WHERE n < 200;
INSERT INTO api VALUES (2000000, 2004000, 200, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (2003000, 2503000, 200, 'big_kernel');
