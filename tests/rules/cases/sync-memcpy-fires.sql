-- A loop that reads a result back with cudaMemcpy after every kernel: 12 iterations 200 us apart;
-- launch call 0..4, kernel 10..110, cudaMemcpy DtoH of 4096 B into pinned memory 5..125 with the
-- copy at 112..120. The next kernel starts at 210: after each of the first 11 copies the device
-- idles 90 us, the host having been blocked in cudaMemcpy when it ran dry: 990000 ns recoverable.
INSERT INTO api SELECT 1000000 + 200000 * n, 1004000 + 200000 * n, 2 * n, 1, NULL FROM loop WHERE n < 12;
INSERT INTO kernel (start, end, corr, name)
	SELECT 1010000 + 200000 * n, 1110000 + 200000 * n, 2 * n, 'step' FROM loop WHERE n < 12;
INSERT INTO api SELECT 1005000 + 200000 * n, 1125000 + 200000 * n, 2 * n + 1, 4, NULL FROM loop WHERE n < 12;
INSERT INTO copy SELECT 1112000 + 200000 * n, 1120000 + 200000 * n, 7, 2 * n + 1, 4096, 2, 2, 1, 0
	FROM loop WHERE n < 12;
