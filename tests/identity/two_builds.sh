#!/usr/bin/env bash
# Builds examples/nqueens twice, from copies of the sources in two unrelated directories (and
# once more without the prefix map, as a build outside CMake would), and checks that the
# manifests (ids, hashes, fingerprints) are identical.
set -euo pipefail
cxx=$1 root=$2 lib=$3 cli=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build() {  # build <dir> <use prefix map: yes/no>
  local dir=$1
  mkdir -p "$dir/examples"
  cp -r "$root/examples/nqueens" "$root/examples/common" "$dir/examples/"
  local map=()
  [[ $2 == yes ]] && map=("-ffile-prefix-map=$dir/=")
  (cd "$dir" && "$cxx" -std=c++20 -O0 "${map[@]}" -I"$root/include" "$dir/examples/nqueens/main.cpp" "$lib" \
     -Wl,--wrap=main -pthread -o "$dir/app")
  "$cli" manifest --compact "$dir/app"
}

a=$(build "$work/first/checkout" yes)
b=$(build "$work/second/somewhere/else/entirely" yes)
c=$(build "$work/third" no)
if [[ "$a" != "$b" ]]; then
  echo "manifests differ between two directories:"; echo "$a"; echo "$b"; exit 1
fi
grep -q '"function_name":"(lambda at examples/nqueens/main.cpp' <<<"$a" || { echo "unexpected names: $a"; exit 1; }
# Without the prefix map only the file name remains: hashes differ from the mapped build, but
# two unmapped builds in different directories still agree.
d=$(build "$work/fourth/deeper" no)
if [[ "$c" != "$d" ]]; then
  echo "unmapped manifests differ:"; echo "$c"; echo "$d"; exit 1
fi
echo "identical manifests from 4 builds in 4 directories"
