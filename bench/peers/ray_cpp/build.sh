#!/usr/bin/env bash
# Builds the Ray C++ peer without bazel: the same source twice, as the driver executable and as
# the shared library Ray's C++ workers load (found through the code search path), against the
# headers and libray_api.so of the ray-cpp wheel. Ray's library is built with the pre-C++11
# std::string ABI, hence -D_GLIBCXX_USE_CXX11_ABI=0; C++17 is what its headers support.
# Same compiler and optimisation as the cppless side (clang++-19 -O2), so the kernels match.
#
#   bench/peers/ray_cpp/build.sh <venv python> <output dir>
# Prints nothing on success; on failure, the reason on stderr and exit status 1.
set -euo pipefail
python=$1
out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cxx=${CXX_RAY:-clang++-19}
ray_dir=$("$python" -c 'import os, ray; print(os.path.join(os.path.dirname(ray.__file__), "cpp"))' 2>/dev/null) || {
  echo "ray is not importable from $python" >&2; exit 1; }
[[ -f $ray_dir/lib/libray_api.so ]] || { echo "ray-cpp is not installed ($ray_dir/lib/libray_api.so missing)" >&2; exit 1; }
mkdir -p "$out"
src=$here/ray_bench.cc
flags=(-std=c++17 -O2 -D_GLIBCXX_USE_CXX11_ABI=0 -w -I"$ray_dir/include" -L"$ray_dir/lib" -lray_api
       -Wl,-rpath,"$ray_dir/lib" -pthread)
# Rebuild only when the source (or the kernels) changed.
stamp=$out/.stamp
if [[ -x $out/ray_bench && -f $out/lib/libray_bench.so && -f $stamp ]] &&
   [[ $(cat "$stamp") == $(cat "$src" "$here/../../apps/kernels.hpp" | sha256sum) ]]; then
  exit 0
fi
mkdir -p "$out/lib"
"$cxx" "$src" -o "$out/ray_bench" "${flags[@]}" 2>"$out/build.log" &&
"$cxx" "$src" -shared -fPIC -o "$out/lib/libray_bench.so" "${flags[@]}" 2>>"$out/build.log" || {
  echo "compiling the Ray C++ peer failed: $(grep -m1 error "$out/build.log" || tail -n1 "$out/build.log")" >&2; exit 1; }
cat "$src" "$here/../../apps/kernels.hpp" | sha256sum >"$stamp"
