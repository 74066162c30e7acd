-- The small-kernels-fires loop captured in a CUDA graph: one cudaGraphLaunch issues the 200 tiny
-- kernels (graphNodeId set, one correlation id). Their launch cost is amortised by the graph, so
-- they are not small kernels: no finding.
INSERT INTO StringIds VALUES (20, 'cudaGraphLaunch_v10000');
INSERT INTO api VALUES (1000000, 1010000, 1, 20, NULL);
INSERT INTO kernel (start, end, corr, name, graph_node)
	SELECT 1012000 + 3000 * n, 1014000 + 3000 * n, 1, 'tiny_kernel', 1 + n FROM loop WHERE n < 200;
