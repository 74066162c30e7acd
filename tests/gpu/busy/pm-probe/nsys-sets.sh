#!/bin/bash
# Issue 39: does CUPTI's PM sampler take, in one pass on this GPU, the set Nsight Systems samples on
# GH100 (its GpuMetrics/gh100.config: GR Active, SM Issue, the warps in flight, the clocks, DRAM and
# PCIe throughput), and that set with the counts gpt-trace's readers need (cycles, bytes) and its
# per-precision tensor metric? Each set in a process of its own (a refused configuration is not
# trusted to leave CUPTI whole); per set the pass count or the refusal, and each column's mean and
# peak over pm_probe's workload.
# usage: nsys-sets.sh OUT  (builds pm_probe with nvcc, writes OUT/pm-nsys-sets.txt)
set -u
OUT=${1:?usage: nsys-sets.sh OUT}
. "$(dirname "$0")/lib.sh"
L=$OUT/pm-nsys-sets.txt
build_probe "$L"
NSYS="gpc__cycles_elapsed.avg.per_second,sys__cycles_elapsed.avg.per_second,gr__cycles_active.sum.pct_of_peak_sustained_elapsed"
NSYS="$NSYS,sm__cycles_active.$P,sm__inst_executed_realtime.$P,sm__pipe_tensor_cycles_active_realtime.$P"
NSYS="$NSYS,tpc__warps_active_shader_vtg_realtime.$P,tpc__warps_active_shader_ps_realtime.$P"
NSYS="$NSYS,TPC.$T.tpc__warps_active_shader_cs_realtime.$P,tpc__warps_inactive_sm_active_realtime.$P"
NSYS="$NSYS,dram__read_throughput.$P,dram__write_throughput.$P"
PCIE_PCT="PCI.$T.pcie__read_bytes.$P,PCI.$T.pcie__write_bytes.$P"
COUNTS="sm__cycles_elapsed.sum,TPC.$T.sm__cycles_active.sum,dram__bytes_read.sum,dram__bytes_write.sum,TPC.$T.sm__pipe_tensor_cycles_active_realtime.sum"
PCIE_B="PCI.$T.pcie__read_bytes.sum,PCI.$T.pcie__write_bytes.sum"
HMMA="TPC.$T.sm__pipe_tensor_op_hmma_cycles_active_realtime.$P"
CS="TPC.$T.tpc__warps_active_shader_cs_realtime.$P,tpc__warps_inactive_sm_active_realtime.$P"
CUR="$COUNTS,TPC.$T.sm__pipe_tensor_cycles_active_realtime.$P,$HMMA,$PCIE_B,$PCIE_PCT"
{
	echo "# $(date -u +%F' '%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	for set in "nsys $NSYS,$PCIE_PCT" "nsys+counts $NSYS,$PCIE_PCT,$COUNTS,$PCIE_B" \
		"nsys+counts+hmma $NSYS,$PCIE_PCT,$COUNTS,$PCIE_B,$HMMA" "nsys+hmma $NSYS,$PCIE_PCT,$HMMA" \
		"cur+issue $CUR,sm__inst_executed_realtime.$P" "cur+gr $CUR,gr__cycles_active.sum.pct_of_peak_sustained_elapsed" \
		"cur+warps $CUR,$CS" "cur+clocks $CUR,gpc__cycles_elapsed.avg.per_second,sys__cycles_elapsed.avg.per_second" \
		"cur+issue+gr+warps+clocks $CUR,sm__inst_executed_realtime.$P,gr__cycles_active.sum.pct_of_peak_sustained_elapsed,$CS,gpc__cycles_elapsed.avg.per_second,sys__cycles_elapsed.avg.per_second"; do
		run_set "${set%% *}" "${set#* }"
	done
} >"$L" 2>&1
cat "$L"
