-- Synchronization records without any API records (runtime API tracing off): 20 stream syncs.
-- Nobody can tell whether they drained the device: an INFO finding, nothing recoverable claimed.
INSERT INTO kernel (start, end, corr, name)
	SELECT 1010000 + 100000 * n, 1060000 + 100000 * n, 2 * n, 'step' FROM loop WHERE n < 20;
INSERT INTO sync SELECT 1005500 + 100000 * n, 1061500 + 100000 * n, 7, 2 * n + 1, 3, 0 FROM loop WHERE n < 20;
