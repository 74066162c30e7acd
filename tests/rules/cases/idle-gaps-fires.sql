-- One gap of each cause on device 0 (times below in us after 1 ms; host thread 101):
--   k1 10..110                      launched at 0..5
--   k2 160..260   gap 50 host-wait: launched at 150..155, after the device went idle at 110
--   k3 310..410   gap 50 sync-wait: at 260 the host was in cudaDeviceSynchronize 170..262
--   k4 450..550   gap 40 other:     launched at 320..325, long before the idle at 410 (stream 8)
--   k5 553..600   gap 3: below min_gap_us 5, not counted
--   k6 645..700   gap 45 host-wait: the host was still inside its launch call 590..640 at 600
-- host-wait 95 us (2), sync-wait 50 us (1), other 40 us (1); recoverable 145000 ns;
-- active 690 us (idle 26.8%); span 700 us (recoverable 20.7%) -> critical.
INSERT INTO api VALUES (1000000, 1005000, 1, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1010000, 1110000, 1, 'k1');
INSERT INTO api VALUES (1150000, 1155000, 2, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1160000, 1260000, 2, 'k2');
INSERT INTO api VALUES (1170000, 1262000, 3, 2, NULL);
INSERT INTO api VALUES (1300000, 1305000, 4, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1310000, 1410000, 4, 'k3');
INSERT INTO api VALUES (1320000, 1325000, 5, 1, NULL);
INSERT INTO kernel (start, end, stream, corr, name) VALUES (1450000, 1550000, 8, 5, 'k4');
INSERT INTO api VALUES (1330000, 1335000, 6, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1553000, 1600000, 6, 'k5');
INSERT INTO api VALUES (1590000, 1640000, 7, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1645000, 1700000, 7, 'k6');
