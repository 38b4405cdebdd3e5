"""boto3's lambda.invoke with a thread pool against the local Lambda server: the comparator of
bench_aws. Sends the same cppless request (a no-op call) the C++ client sends.

Usage: aws_boto3_bench.py ENDPOINT CA FUNCTION ID_HASH FINGERPRINT THREADS CALLS
"""
import base64
import json
import struct
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config

endpoint, ca, name, id_hash, fingerprint, threads, calls = sys.argv[1:8]
threads, calls = int(threads), int(calls)
lam = boto3.client("lambda", endpoint_url=endpoint, verify=ca, region_name="us-east-1",
                   aws_access_key_id="AKIDBENCH", aws_secret_access_key="bench-secret",
                   config=Config(max_pool_connections=threads, retries={"max_attempts": 3}))


def body(i):
    # The archive of an empty closure and one int argument: 4 little-endian bytes.
    return json.dumps({"cppless": 1, "function": f"{int(id_hash):016x}", "fingerprint": f"{int(fingerprint):016x}",
                       "payload": base64.b64encode(struct.pack("<i", i)).decode()})


def call(i):
    t = time.perf_counter()
    r = lam.invoke(FunctionName=name, Payload=body(i))
    r["Payload"].read()
    assert "FunctionError" not in r, r
    return time.perf_counter() - t


call(0)
t0 = time.perf_counter()
with ThreadPoolExecutor(threads) as pool:
    lat = sorted(pool.map(call, range(calls)))
s = time.perf_counter() - t0
print(json.dumps({"bench": "aws", "client": "boto3", "inflight": threads, "calls": calls, "per_s": round(calls / s),
                  "p50_us": round(lat[len(lat) // 2] * 1e6), "p99_us": round(lat[len(lat) * 99 // 100] * 1e6)}))
