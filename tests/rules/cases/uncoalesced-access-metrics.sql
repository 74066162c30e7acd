-- Hardware counters per launch, in the GPT_KERNEL_METRICS table that gpt-trace run --metrics
-- writes (inject/metrics.c); the test creates the kernel_metrics view over it with rule-run -x,
-- standing in for the loader. 1024 requests per direction and kernel:
--   coalesced_copy  100 us  loads 4/request, stores 4/request, ideal 4: not flagged
--   strided_gather  200 us  loads 32/request (ideal 4: 87.5% excess), stores 4: loads flagged;
--                           recoverable 200000 x 28672 / 36864 = 155555 ns
--   transpose       150 us  loads 4, stores 32/request (ideal 4): stores flagged, 116666 ns
--   double_copy     120 us  loads and stores 8/request, no ideal counts: against the default
--                           assumed 16 (128-bit accesses) not flagged, which is right for a
--                           64-bit copy; with assumed_sectors=4 (32-bit accesses) both 50%
--                           excess and flagged, 60000 ns: the false positive the default avoids
CREATE TABLE GPT_KERNEL_METRICS (correlationId INTEGER NOT NULL, deviceId INTEGER,
	contextId INTEGER, kernelName TEXT, shortName TEXT, source TEXT, gldSectors INTEGER,
	gldRequests INTEGER, gstSectors INTEGER, gstRequests INTEGER, gldSectorsIdeal INTEGER,
	gstSectorsIdeal INTEGER, idealSource TEXT, durationNs INTEGER, replayDurationNs INTEGER,
	passes INTEGER);
INSERT INTO api VALUES (1000000, 1004000, 1, 1, NULL), (1005000, 1009000, 2, 1, NULL),
	(1010000, 1014000, 3, 1, NULL), (1015000, 1019000, 4, 1, NULL);
INSERT INTO kernel (start, end, corr, name) VALUES (1020000, 1120000, 1, 'coalesced_copy'),
	(1120000, 1320000, 2, 'strided_gather'), (1320000, 1470000, 3, 'transpose'),
	(1470000, 1590000, 4, 'double_copy');
INSERT INTO GPT_KERNEL_METRICS (correlationId, deviceId, contextId, gldSectors, gldRequests,
	gstSectors, gstRequests, gldSectorsIdeal, gstSectorsIdeal) VALUES
	(1, 0, 1, 4096, 1024, 4096, 1024, 4096, 4096),
	(2, 0, 1, 32768, 1024, 4096, 1024, 4096, 4096),
	(3, 0, 1, 4096, 1024, 32768, 1024, 4096, 4096),
	(4, 0, 1, 8192, 1024, 8192, 1024, NULL, NULL);
-- Per source line (GPT_SOURCE_METRICS, from the SASS Metrics API on -lineinfo builds): the gather's
-- two lines and the transpose's store line; the test's source_metrics view stands in for the loader.
CREATE TABLE GPT_SOURCE_METRICS (kernelName TEXT, shortName TEXT, file TEXT, line INTEGER,
	gldSectors INTEGER, gldSectorsIdeal INTEGER, gldRequests INTEGER, gstSectors INTEGER,
	gstSectorsIdeal INTEGER, gstRequests INTEGER, launches INTEGER);
INSERT INTO GPT_SOURCE_METRICS VALUES
	('_Z14strided_gatherv', 'strided_gather', '/src/access.cu', 42, 24576, 3072, 768, 0, 0, 0, 1),
	('_Z14strided_gatherv', 'strided_gather', '/src/access.cu', 43, 8192, 1024, 256, 4096, 4096, 1024, 1),
	('_Z9transposev', 'transpose', '/src/access.cu', 57, 4096, 4096, 1024, 32768, 4096, 1024, 1);
