#!/usr/bin/env bash
# Builds the cppless runtime and a small program with GCC and runs it on local workers: the
# core must not depend on Clang-only features (closures are byte-copied there).
set -euo pipefail
gxx=$1 root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objs=()
for src in "$root"/src/core/*.cpp "$root"/src/local/*.cpp; do
  obj="$work/$(basename "$src").o"
  "$gxx" -std=c++20 -O1 -Wall -Wextra -Werror -I"$root/include" -I"$root/src" -c "$src" -o "$obj" &
  objs+=("$obj")
  if (( ${#objs[@]} % 2 == 0 )); then wait; fi
done
wait
"$gxx" -std=c++20 -O1 -Wall -Wextra -Werror -I"$root/include" "$root/tests/portability/gcc_trivially_copyable.cpp" \
  "${objs[@]}" -Wl,--wrap=main -pthread -o "$work/app"
"$work/app"
