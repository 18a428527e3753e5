#!/usr/bin/env bash
# Installs the Debian 12 packages runlab needs to build, test and benchmark,
# and only those that are missing, so a second run costs nothing.
# Uses sudo when not run as root; prints what it installs.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang libclang-rt-14-dev valgrind
  # libraries runlab links
  libzstd-dev liblz4-dev libdeflate-dev zlib1g-dev libssl-dev libjson-c-dev
  libfyaml-dev libsqlite3-dev libcairo2-dev libexpat1-dev libcmocka-dev
  # Cyclone DDS (the lab's middleware) with idlc, which compiles idl/, and ddsperf for the benchmark
  cyclonedds-dev cyclonedds-tools
  # the sqlite3 CLI: bench tests compare databases with it
  sqlite3
  # fonts the figures are drawn with; chromium screenshots HTML reports in the tests
  fonts-dejavu-core chromium
  # python3 runs OMPL's log parser and the example planner in a second language
  python3
  # node runs the TypeScript reference MCAP reader and message decoders in the tests
  nodejs npm
  # the run-loader benchmark (bench/bench_runs.c) compares against pandas.read_csv
  python3-pandas python3-yaml
  # the Python package (python/, docs/python.md): its C extension, numpy arrays, setup.py
  python3-dev python3-numpy python3-setuptools
  # the recorder tests validate every manifest against docs/record-manifest.schema.json
  python3-jsonschema
  # the installed completion is tested with bash-completion's helpers; lintian checks the
  # Debian packages of `make deb` (tests/cli/test_install_deb.sh)
  bash-completion lintian
  # a single-node Slurm that tests/cli/test_bench_slurm.sh starts itself (bench --slurm)
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  # node and npm may come from elsewhere than Debian (nodesource's nodejs bundles npm,
  # and Debian's npm then cannot be installed beside it): a working command is enough.
  if [ "$p" = nodejs ] && command -v node >/dev/null 2>&1; then continue; fi
  if [ "$p" = npm ] && command -v npm >/dev/null 2>&1; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The reference TypeScript MCAP reader and message decoders, for the interoperability
# tests (tests/cli/test_mcap_ts_reader.sh, test_msgdef_ts_reference.sh). Outside the
# repository. The tests need them: without them they fail and say what is missing.
node_dir="${RUNLAB_NODE_PREFIX:-$HOME/.cache/runlab}"
node_pkgs=(@mcap/core @foxglove/wasm-zstd @foxglove/wasm-lz4 @foxglove/rosmsg
           @foxglove/rosmsg2-serialization @foxglove/omgidl-parser
           @foxglove/omgidl-serialization @foxglove/cdr)
node_require=$(printf 'require("%s");' "${node_pkgs[@]}")
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
   ! NODE_PATH="$node_dir/node_modules" node -e "$node_require" 2>/dev/null; then
  echo "install-deps: installing ${node_pkgs[*]} into $node_dir (for the interoperability tests)"
  mkdir -p "$node_dir"
  npm install --silent --no-audit --no-fund --prefix "$node_dir" "${node_pkgs[@]}" >/dev/null 2>&1 ||
    echo "install-deps: npm install failed; the interoperability tests will fail until it succeeds" >&2
fi
