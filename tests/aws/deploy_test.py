"""`cppless deploy` end to end.

- against the local Lambda server: deploy aws_app (one function per entry, each with its own
  memory/timeout/storage), run it as the host, redeploy (all unchanged), list, remove;
- against moto's server mode: the same control-plane calls, checked with boto3 (runtime,
  architecture, memory, timeout, ephemeral storage, environment, code hash), and a deployment
  whose package goes through an S3 bucket (moto's S3).

Usage: deploy_test.py LAMBDA_SERVER CPPLESS_CLI AWS_APP
"""
import base64
import hashlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.credentials

SERVER = CLI = APP = None
KEY, SECRET = "AKIDDEPLOY", "deploy-secret"
ROLE = "arn:aws:iam::123456789012:role/cppless-test"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, env, check=True):
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def client_env(endpoint, ca=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
               AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent", CPPLESS_LAMBDA_ROLE=ROLE)
    if ca:
        env["AWS_CA_BUNDLE"] = ca
    return env


class LocalServerDeploy(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="deploy-")
        port_file = os.path.join(self.dir, "port")
        self.ca = os.path.join(self.dir, "ca.pem")
        self.server = subprocess.Popen([SERVER, "--port", "0", "--port-file", port_file, "--tls", self.ca,
                                        "--key", f"{KEY}:{SECRET}", "--work-dir", os.path.join(self.dir, "work")],
                                       stdout=subprocess.DEVNULL)
        while not os.path.exists(port_file):
            time.sleep(0.01)
        with open(port_file) as f:
            self.port = int(f.read())
        self.env = client_env(f"https://127.0.0.1:{self.port}", self.ca)

    def tearDown(self):
        self.server.terminate()
        self.server.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_deploy_run_redeploy_list_remove(self):
        out = run([CLI, "deploy", APP, "--no-os-check"], self.env).stdout.split("\n")
        created = [l.split()[1] for l in out if l.startswith("created")]
        self.assertEqual(len(created), 2, out)
        self.assertTrue(all(n.startswith("aws_app-") for n in created))
        result = run([APP, "6"], self.env)
        self.assertIn("same as local", result.stdout)
        self.assertIn("352 solutions", result.stdout)
        again = run([CLI, "deploy", APP, "--no-os-check"], self.env).stdout
        self.assertEqual(again.count("unchanged"), 2, again)
        listed = run([CLI, "functions", "list", "--prefix", "aws_app"], self.env).stdout
        for name in created:
            self.assertIn(name, listed)
        lam = boto3.client("lambda", endpoint_url=f"https://127.0.0.1:{self.port}", region_name="us-east-1",
                           aws_access_key_id=KEY, aws_secret_access_key=SECRET, verify=self.ca)
        configs = {c["MemorySize"]: c for c in (lam.get_function_configuration(FunctionName=n) for n in created)}
        self.assertEqual(configs[2048]["Timeout"], 20)
        self.assertEqual(configs[256]["EphemeralStorage"]["Size"], 1024)
        self.assertEqual(configs[256]["Timeout"], 900)
        removed = run([CLI, "functions", "remove", "--prefix", "aws_app"], self.env).stdout
        self.assertEqual(removed.count("removed"), 2)
        self.assertEqual(run([CLI, "functions", "list"], self.env).stdout.strip(), "")
        # The host now meets missing functions: a clear error naming the fix, non-zero exit.
        gone = run([APP, "2"], self.env, check=False)
        self.assertNotEqual(gone.returncode, 0)
        self.assertIn("cppless deploy", gone.stderr)


class DeployWaitsUntilActive(unittest.TestCase):
    """A scripted control plane whose functions stay Pending (or end Failed) for a while, as
    Lambda's do after CreateFunction: deploy waits for State Active, and reports Failed with AWS's
    reason instead of reporting success."""

    def serve(self, states):
        polls = {}

        class Plane(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, doc):
                body = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                name = self.path.split("/")[3]
                if name not in polls:
                    return self.answer(404, {"Type": "User", "message": "Function not found"})
                polls[name] += 1
                state = states[min(polls[name] - 1, len(states) - 1)]
                self.answer(200, dict(FunctionName=name, **state))

            def do_POST(self):
                doc = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                polls[doc["FunctionName"]] = 0
                self.answer(201, {"FunctionName": doc["FunctionName"], "State": "Pending"})

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Plane)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        return f"http://127.0.0.1:{server.server_address[1]}", polls

    def test_waits_for_active(self):
        pending = {"State": "Pending", "LastUpdateStatus": "InProgress"}
        endpoint, polls = self.serve([pending, pending, pending, {"State": "Active", "LastUpdateStatus": "Successful"}])
        out = run([CLI, "deploy", APP, "--no-os-check"], client_env(endpoint))
        self.assertEqual(out.stdout.count("created"), 2, out.stdout)
        self.assertEqual(sorted(polls.values()), [4, 4])  # polled until Active, not a poll more

    def test_reports_failed_with_the_reason(self):
        endpoint, _ = self.serve([{"State": "Pending"}, {"State": "Failed", "StateReasonCode": "InvalidImage",
                                                        "StateReason": "bootstrap is not executable"}])
        r = run([CLI, "deploy", APP, "--no-os-check"], client_env(endpoint), check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("failed to become active (InvalidImage: bootstrap is not executable)", r.stderr)

    def test_wait_is_bounded(self):
        endpoint, _ = self.serve([{"State": "Pending", "LastUpdateStatus": "InProgress"}])
        r = run([CLI, "deploy", APP, "--no-os-check", "--wait", "1"], client_env(endpoint), check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is still Pending (last update InProgress) after 1 s", r.stderr)


class MotoDeploy(unittest.TestCase):
    def setUp(self):
        self.port = free_port()
        moto = os.path.join(os.path.dirname(sys.executable), "moto_server")
        self.moto = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(self.port)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.endpoint = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1)
                break
            except Exception:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        kw = dict(endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id=KEY,
                  aws_secret_access_key=SECRET)
        self.iam = boto3.client("iam", **kw)
        self.lam = boto3.client("lambda", **kw)
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                         "Principal": {"Service": "lambda.amazonaws.com"}}]}
        self.role = self.iam.create_role(RoleName="cppless-test", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
        self.env = client_env(self.endpoint)
        self.env["CPPLESS_LAMBDA_ROLE"] = self.role

    def tearDown(self):
        self.moto.terminate()
        self.moto.wait(10)

    def test_control_plane(self):
        out = run([CLI, "deploy", APP, "--no-os-check"], self.env).stdout
        names = [l.split()[1] for l in out.split("\n") if l.startswith("created")]
        self.assertEqual(len(names), 2, out)
        for name in names:
            c = self.lam.get_function(FunctionName=name)["Configuration"]
            self.assertEqual(c["Runtime"], "provided.al2023")
            self.assertEqual(c["Handler"], "bootstrap")
            self.assertEqual(c["Role"], self.role)
            self.assertIn(c["Architectures"][0], ("x86_64", "arm64"))
            self.assertIn(c["MemorySize"], (2048, 256))
            self.assertIn("CPPLESS_FUNCTION_ID", c["Environment"]["Variables"])
            if c["MemorySize"] == 2048:
                self.assertEqual(c["Timeout"], 20)
            else:
                self.assertEqual(c["EphemeralStorage"]["Size"], 1024)
        again = run([CLI, "deploy", APP, "--no-os-check"], self.env).stdout
        self.assertEqual(again.count("unchanged"), 2, again)
        self.assertEqual(sorted(l.split()[0] for l in run([CLI, "functions", "list"], self.env).stdout.splitlines()),
                         sorted(names))
        run([CLI, "functions", "remove", *names], self.env)
        self.assertEqual(self.lam.list_functions()["Functions"], [])

    def test_publish_points_an_alias_at_a_new_version(self):
        out = run([CLI, "deploy", APP, "--no-os-check", "--publish", "live"], self.env).stdout
        names = [l.split()[1] for l in out.splitlines() if l.startswith("created")]
        self.assertEqual(len(names), 2, out)
        self.assertEqual(out.count("as live"), 2, out)
        for name in names:
            alias = self.lam.get_alias(FunctionName=name, Name="live")
            self.assertEqual(alias["FunctionVersion"], "1")
            versions = [v["Version"] for v in self.lam.list_versions_by_function(FunctionName=name)["Versions"]]
            self.assertIn("1", versions)

    def test_package_through_s3(self):
        s3 = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id=KEY,
                          aws_secret_access_key=SECRET)
        # A bucket that does not exist: S3's own error, nothing created.
        missing = run([CLI, "deploy", APP, "--no-os-check", "--s3-bucket", "no-such-bucket"], self.env, check=False)
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn("NoSuchBucket", missing.stderr)
        self.assertEqual(self.lam.list_functions()["Functions"], [])

        s3.create_bucket(Bucket="cppless-packages")
        env = dict(self.env, CPPLESS_DEPLOY_BUCKET="cppless-packages")
        out = run([CLI, "deploy", APP, "--no-os-check"], env)
        names = [l.split()[1] for l in out.stdout.split("\n") if l.startswith("created")]
        self.assertEqual(len(names), 2, out.stdout)
        self.assertEqual(out.stderr.count("uploaded"), 1, out.stderr)  # one package for every function
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket="cppless-packages")["Contents"]]
        self.assertEqual(len(keys), 1)
        self.assertTrue(keys[0].startswith("cppless/aws_app/") and keys[0].endswith(".zip"), keys)
        package = s3.get_object(Bucket="cppless-packages", Key=keys[0])["Body"].read()
        digest = base64.b64encode(hashlib.sha256(package).digest()).decode()
        self.assertEqual(keys[0], f"cppless/aws_app/{hashlib.sha256(package).hexdigest()}.zip")
        for name in names:
            self.assertEqual(self.lam.get_function(FunctionName=name)["Configuration"]["CodeSha256"], digest)
        # Same build again: nothing to upload, nothing to change.
        again = run([CLI, "deploy", APP, "--no-os-check", "--s3-bucket", "cppless-packages"], self.env)
        self.assertEqual(again.stdout.count("unchanged"), 2, again.stdout)
        self.assertNotIn("uploaded", again.stderr)

    def test_s3_put_is_signed_as_botocore_signs(self):
        """The PutObject cppless sends, caught by a local HTTP server, carries the signature that
        botocore's S3 signer computes for the same request (same time, same signed headers)."""
        seen = []

        class Capture(http.server.BaseHTTPRequestHandler):
            def do_HEAD(self):
                seen.append(("HEAD", self.path, dict(self.headers), b""))
                self.send_response(404)
                self.end_headers()

            def do_PUT(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                seen.append(("PUT", self.path, dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Capture)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            env = dict(self.env, AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{server.server_port}")
            # Lambda (moto) has no such bucket, so the deployment fails after the upload: only
            # the upload matters here.
            run([CLI, "deploy", APP, "--no-os-check", "--s3-bucket", "signed-bucket"], env, check=False)
        finally:
            server.shutdown()
        puts = [r for r in seen if r[0] == "PUT"]
        self.assertEqual(len(puts), 1, seen)
        _, path, headers, body = puts[0]
        self.assertTrue(path.startswith("/signed-bucket/cppless/aws_app/"), path)
        self.assertEqual(headers["x-amz-content-sha256"], hashlib.sha256(body).hexdigest())
        auth = headers["Authorization"]
        signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
        self.assertIn("x-amz-content-sha256", signed)
        self.assertNotIn("expect", signed)  # libcurl < 8.3 signs an "Expect:" it removes
        self.assertIn("/us-east-1/s3/aws4_request", auth)
        lower = {k.lower(): v for k, v in headers.items()}
        req = botocore.awsrequest.AWSRequest(method="PUT", url=f"http://127.0.0.1:{server.server_port}{path}",
                                             data=body, headers={h: lower[h] for h in signed})
        req.context["timestamp"] = lower["x-amz-date"]
        signer = botocore.auth.S3SigV4Auth(botocore.credentials.Credentials(KEY, SECRET), "s3", "us-east-1")
        canonical = signer.canonical_request(req)
        expected = signer.signature(signer.string_to_sign(req, canonical), req)
        self.assertEqual(auth.split("Signature=")[1], expected)


if __name__ == "__main__":
    SERVER, CLI, APP = sys.argv[1:4]
    del sys.argv[1:4]
    unittest.main(verbosity=2)
