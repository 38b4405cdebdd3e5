#!/usr/bin/env bash
# Installs every system dependency of cppless from Debian's packages (idempotent: installs only
# what is missing). Run by `make demo`, `make test` and `make bench`; needs root or sudo.
set -euo pipefail

packages=(
  clang-19 libclang-rt-19-dev lld-19 cmake ninja-build make pkg-config
  libcereal-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhiredis-dev redis-server libcurl4-openssl-dev libzip-dev libnghttp2-dev libssl-dev
  python3 python3-venv python3-pip
  qemu-user-static libc6-arm64-cross
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
