-- An H200-like device (compute capability 9.0). Host to device: 20 pageable copies of 1 MB, each
-- 200 us on the GPU inside a 250 us cudaMemcpy, and 4 pinned copies of 10 MB at 500 us (20 GB/s,
-- the measured reference): from pinned memory 1 MB takes 50 us, so each pageable copy would save
-- 250 - 50 = 200 us: 4000000 ns. Device to host: 10 pageable copies of 4096 B, 3 us on the GPU in
-- 8 us calls, no pinned ones to measure: the reference is the 50 GB/s assumed for 9.x, 81.92 ns per
-- copy, saving 7918.08 ns each: 79180.8 ns. Recoverable 4079180 ns.
INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, computeMajor, computeMinor)
	VALUES (0, 0, 'NVIDIA H200', 132, 9, 0);
INSERT INTO api SELECT 1000000 + 300000 * n, 1250000 + 300000 * n, n, 4, NULL FROM loop WHERE n < 20;
INSERT INTO copy SELECT 1040000 + 300000 * n, 1240000 + 300000 * n, 7, n, 1000000, 1, 0, 2, 0
	FROM loop WHERE n < 20;
INSERT INTO api SELECT 8000000 + 600000 * n, 8520000 + 600000 * n, 100 + n, 4, NULL FROM loop WHERE n < 4;
INSERT INTO copy SELECT 8010000 + 600000 * n, 8510000 + 600000 * n, 7, 100 + n, 10000000, 1, 1, 2, 0
	FROM loop WHERE n < 4;
INSERT INTO api SELECT 11000000 + 10000 * n, 11008000 + 10000 * n, 200 + n, 4, NULL FROM loop WHERE n < 10;
INSERT INTO copy SELECT 11002000 + 10000 * n, 11005000 + 10000 * n, 7, 200 + n, 4096, 2, 2, 0, 0
	FROM loop WHERE n < 10;
