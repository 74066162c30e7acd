-- Two host threads: thread 102 sits in cudaDeviceSynchronize (100..300 us) while the device runs
-- dry at 110, but the kernel after the gap is launched by thread 101, which was not blocked: the
-- 90 us gap (110..200) is host-wait, not sync-wait. Recoverable 90000 ns; active 300 us.
INSERT INTO api VALUES (1000000, 1005000, 1, 1, 101);
INSERT INTO kernel (start, end, corr, name) VALUES (1010000, 1110000, 1, 'k1');
INSERT INTO api VALUES (1100000, 1300000, 2, 2, 102);
INSERT INTO api VALUES (1190000, 1195000, 3, 1, 101);
INSERT INTO kernel (start, end, corr, name) VALUES (1200000, 1310000, 3, 'k2');
