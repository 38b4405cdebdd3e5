#!/usr/bin/env bash
# Installs the Python side of the AWS backend's tests and benchmark into a virtual environment
# (default build/venv, or $CPPLESS_VENV): boto3 (the reference client), moto[server] (control
# plane of deployments) and awslambdaric (AWS's own runtime client, proves the local Lambda
# server speaks the real Runtime API), and ziglang (the compiler of the Lambda function build:
# glibc 2.34 for x86_64 and arm64, see cmake/CpplessFunctionBuild.cmake). Idempotent: a venv that already has them is left alone.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CPPLESS_VENV:-$root/build/venv}"
python="${PYTHON:-python3}"
packages=(boto3 "moto[server]" awslambdaric ziglang)

if [[ -x "$venv/bin/python" ]] &&
   "$venv/bin/python" -c 'import boto3, moto, awslambdaric, flask, ziglang' >/dev/null 2>&1; then
  exit 0
fi

echo "setup-python: installing ${packages[*]} into $venv"
if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
  # Debian's python3 needs python3-venv for ensurepip; fall back to a venv without pip.
  "$python" -m venv --without-pip "$venv"
fi
"$venv/bin/python" -m pip --version >/dev/null 2>&1 || "$python" -m pip --python "$venv/bin/python" --version >/dev/null
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${packages[@]}"
echo "setup-python: done"
