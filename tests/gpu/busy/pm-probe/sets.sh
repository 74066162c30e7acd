#!/bin/bash
# Which PCIe and NVLink metrics CUPTI's PM sampler takes beside gpt-trace's seven (issue 23), each set
# in a process of its own (a refused configuration is not trusted to leave CUPTI whole). Per set: the
# pass count or CUPTI's refusal, and for each PCIe/NVLink column its total and peak over the run
# (columns.py),
# which moves 4 GiB each way over PCIe (pinned 512 MiB copies) and, where device 1 is a peer of
# device 0, 4 GiB each way between them. From anywhere, on the device:
# usage: sets.sh OUT  (builds pm_probe with nvcc, writes OUT/pm-sets.txt; about 2 minutes)
set -u
OUT=${1:?usage: sets.sh OUT}
. "$(dirname "$0")/lib.sh"
L=$OUT/pm-sets.txt
build_probe "$L"
D4="sm__cycles_elapsed.sum,TPC.$T.sm__cycles_active.sum,dram__bytes_read.sum,dram__bytes_write.sum"
D7="$D4,TPC.$T.sm__pipe_tensor_cycles_active_realtime.sum,TPC.$T.sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed,TPC.$T.sm__pipe_tensor_op_hmma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"
PCIE="PCI.$T.pcie__read_bytes.sum,PCI.$T.pcie__write_bytes.sum"
PCIE_PLAIN="pcie__read_bytes.sum,pcie__write_bytes.sum"
PCIE_PCT="PCI.$T.pcie__read_bytes.avg.pct_of_peak_sustained_elapsed,PCI.$T.pcie__write_bytes.avg.pct_of_peak_sustained_elapsed"
NVL="nvlrx__bytes.sum,nvltx__bytes.sum"
NVL_USER="NVLRX.$T.nvlrx__bytes_packet_request_data_user.sum,NVLTX.$T.nvltx__bytes_packet_request_data_user.sum,NVLRX.$T.nvlrx__bytes_packet_response_data_user.sum,NVLTX.$T.nvltx__bytes_packet_response_data_user.sum"
{
	echo "# $(date -u +%F' '%T) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	for set in "d7+pcie $D7,$PCIE" "d7+pcie-plain $D7,$PCIE_PLAIN" "d7+pcie+pct $D7,$PCIE,$PCIE_PCT" \
		"d4+pcie $D4,$PCIE" "pcie-only sm__cycles_elapsed.sum,$PCIE" "d7+nvl $D7,$NVL" \
		"d7+nvl-user $D7,$NVL_USER" "d7+pcie+nvl-user $D7,$PCIE,$NVL_USER" \
		"tier2 $D7,$PCIE,$PCIE_PCT,$NVL" "nvl-only sm__cycles_elapsed.sum,$NVL" \
		"nvl-user-only sm__cycles_elapsed.sum,$NVL_USER"; do
		run_set "${set%% *}" "${set#* }" pcie nvl
	done
} >"$L" 2>&1
cat "$L"
