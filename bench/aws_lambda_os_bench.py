#!/usr/bin/env python3
"""Packages for the Lambda OS: sizes, and cold starts under the local Lambda server.

For each architecture's function build of aws_app (zig, glibc 2.34): the zip `cppless package`
writes (bytes zipped and unzipped), then ROUNDS times: a fresh local server, `cppless deploy`, and
two invocations of one function through boto3 — the first starts an execution environment (its
bootstrap: the arm64 one under qemu-aarch64-static on this x86_64 machine, as context only), the
second finds it warm. The request is an empty JSON document, which the runtime answers with a
function error at once: the time is the environment's start, not the function's work. The
server's REPORT line gives its Init Duration (start of the bootstrap to its first poll). A call
to the package's other function opens boto3's connection first, so no TLS handshake is timed.
One JSON line per measurement on stdout.

Usage: aws_lambda_os_bench.py LAMBDA_SERVER CPPLESS_CLI AWS_APP_X86_64 AWS_APP_ARM64 [ROUNDS]
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import boto3

KEY, SECRET = "AKIDBENCH", "bench-secret"


def run(args, env=None):
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def package_sizes(cli, exe, arch, out):
    path = run([cli, "package", exe, "--out", out, "--architecture", arch]).stdout.strip()
    with zipfile.ZipFile(path) as z:
        unzipped = sum(i.file_size for i in z.infolist())
        files = len(z.infolist())
    print(json.dumps({"bench": "aws_package", "architecture": arch, "zip_bytes": os.path.getsize(path),
                      "unzipped_bytes": unzipped, "files": files}), flush=True)


def cold_start(server_exe, cli, exe, arch, emulator):
    d = tempfile.mkdtemp(prefix="bench-lambda-os-")
    port_file = os.path.join(d, "port")
    ca = os.path.join(d, "ca.pem")
    args = [server_exe, "--port", "0", "--port-file", port_file, "--tls", ca, "--key", f"{KEY}:{SECRET}",
            "--work-dir", os.path.join(d, "work")]
    if emulator:
        args += ["--env", f"CPPLESS_BOOTSTRAP_EMULATOR={emulator}"]
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    try:
        while not os.path.exists(port_file):
            time.sleep(0.01)
        with open(port_file) as f:
            endpoint = f"https://127.0.0.1:{int(f.read())}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                   AWS_REGION="us-east-1", AWS_CA_BUNDLE=ca, AWS_CONFIG_FILE="/nonexistent",
                   AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
                   CPPLESS_LAMBDA_ROLE="arn:aws:iam::123456789012:role/bench")
        out = run([cli, "deploy", exe, "--architecture", arch], env).stdout
        other, name = [l.split()[1] for l in out.splitlines() if l.startswith("created")][:2]
        lam = boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=KEY,
                           aws_secret_access_key=SECRET, verify=ca)
        # The other function first: the client's connection (TLS) is open before the measured calls.
        lam.invoke(FunctionName=other, Payload=b"{}")
        times, inits = [], []
        for _ in range(2):
            t0 = time.perf_counter()
            r = lam.invoke(FunctionName=name, Payload=b"{}", LogType="Tail")
            times.append(time.perf_counter() - t0)
            if r.get("FunctionError") != "Unhandled":
                raise SystemExit(f"unexpected answer: {r}")
            log = base64.b64decode(r.get("LogResult", "")).decode(errors="replace")
            m = re.search(r"Init Duration: ([0-9.]+) ms", log)
            inits.append(float(m.group(1)) if m else None)
        print(json.dumps({"bench": "aws_cold_start", "architecture": arch, "emulated": bool(emulator),
                          "cold_ms": round(times[0] * 1000, 2), "warm_ms": round(times[1] * 1000, 2),
                          "init_ms": inits[0]}), flush=True)
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(d, ignore_errors=True)


def main():
    server_exe, cli, x86, arm = sys.argv[1:5]
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    qemu = shutil.which("qemu-aarch64-static")
    out = tempfile.mkdtemp(prefix="bench-packages-")
    try:
        package_sizes(cli, x86, "x86_64", out)
        package_sizes(cli, arm, "arm64", out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    for _ in range(rounds):
        cold_start(server_exe, cli, x86, "x86_64", None)
        if qemu:
            cold_start(server_exe, cli, arm, "arm64", f"{qemu} -L /usr/aarch64-linux-gnu")


if __name__ == "__main__":
    main()
