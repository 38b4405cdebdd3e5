#!/usr/bin/env bash
# Runs a Python test with the venv of scripts/setup-python.sh; exit 77 (ctest: skipped) without it.
venv="$1"; shift
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import boto3, awslambdaric' 2>/dev/null; then
  echo "skipped: no Python venv with boto3/awslambdaric at $venv (run scripts/setup-python.sh)"
  exit 77
fi
exec "$venv/bin/python" "$@"
