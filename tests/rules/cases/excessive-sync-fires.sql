-- A loop that synchronizes after every launch: 20 iterations 100 us apart; launch call 0..4,
-- kernel 10..60, cudaStreamSynchronize 5..62 (CUPTI stream-sync record alongside). The next
-- kernel starts at 110, so after each of the first 19 syncs the device idles 50 us with the host
-- having been blocked in the sync when it ran dry: 19 drains, 950000 ns recoverable; 20 calls
-- blocked the host 57 us each (1.14 ms). Span 0..1960 us: 48% -> critical.
INSERT INTO api SELECT 1000000 + 100000 * n, 1004000 + 100000 * n, 2 * n, 1, NULL FROM loop WHERE n < 20;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1010000 + 100000 * n, 1060000 + 100000 * n, 2 * n, 'step' FROM loop WHERE n < 20;
INSERT INTO api SELECT 1005000 + 100000 * n, 1062000 + 100000 * n, 2 * n + 1, 3, NULL FROM loop WHERE n < 20;
INSERT INTO sync SELECT 1005500 + 100000 * n, 1061500 + 100000 * n, 7, 2 * n + 1, 3, 0 FROM loop WHERE n < 20;
