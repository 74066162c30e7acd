#!/usr/bin/env bash
# Installs what gpt-trace needs to build and test on Debian 12 (the CUDA toolkit is expected at
# /usr/local/cuda already; without it only the analyzer is built). Installs nothing that is present.
set -euo pipefail
# chromium: tests/analyzer/html.sh opens the HTML report in it, headless
# openmpi-bin, libopenmpi-dev: tests/ranks/mpi.sh runs 'gpt-trace summarize' under mpirun
# libyajl-dev: gpt-trace import parses the PyTorch profiler's JSON with yajl (docs/import.md says why)
# dpkg-dev: dpkg-shlibdeps, with which 'cpack -G DEB' writes the package's Depends (docs/install.md)
pkgs=(cmake make gcc g++ pkg-config sqlite3 libsqlite3-dev zlib1g-dev libyajl-dev libprotobuf-c-dev
      protobuf-c-compiler python3 nodejs npm chromium openmpi-bin libopenmpi-dev dpkg-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# node may come from outside Debian's packages (the image's own); then nodejs/npm are not needed.
if command -v node >/dev/null && command -v npm >/dev/null; then
	missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
	echo "installing: ${missing[*]}"
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
