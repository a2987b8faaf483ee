#!/usr/bin/env bash
# Installs what Fugue needs from Debian 12's packages (only what is missing), then builds it in Release
# into build/. Safe to run again: it installs nothing twice and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd
          libboost-dev nlohmann-json3-dev libspdlog-dev libcli11-dev libstb-dev libgtest-dev
          python3-numpy  # NumPy: the independent oracle of the complex tests
          python3-scipy  # SciPy's cdist: the independent oracle of the pairwise plugin's tests
          liblapacke-dev libblas-dev  # LAPACK's and BLAS's C interfaces: the oracles of the linalg plugin's tests
          libclblast-dev  # CLBlast: the batched GEMM a CPU or GPU OpenCL user has, a peer in scripts/pocl_linalg.sh
          libviennacl-dev  # ViennaCL's sparse formats on the same OpenCL device, the peer in scripts/pocl_sparse.sh
          zlib1g-dev  # zlib: the deflated members of SciPy's .npz files (the sparse plugin)
          libopenmpi-dev openmpi-bin  # Open MPI: fugue run --mpi, a program split over mpirun's ranks
          clang libclang-rt-14-dev)  # scripts/fuzz.sh: clang and libFuzzer (a Recommends of clang, so named)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
