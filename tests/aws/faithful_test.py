"""The local Lambda server against AWS's own client software.

- boto3's lambda client (botocore's SigV4 signer, HTTP/1.1 over TLS) invokes a function, reads
  its payload, its function error and its log tail;
- AWS's Python runtime interface client (awslambdaric) runs as a function's bootstrap and serves
  invocations through the server's Runtime API;
- the server's SigV4 check accepts what botocore signs (paths, query strings, bodies) and refuses
  a tampered request.

Usage: faithful_test.py LAMBDA_SERVER   (exit 0: all passed)
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request
import ssl

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.credentials
from botocore.config import Config

SERVER = None
KEY, SECRET = "AKIDFAITHFUL", "faithful-secret"

HANDLER = '''
import os
calls = 0
def echo(event, context):
    global calls
    calls += 1
    print("echo called", calls)
    return {"echo": event, "calls": calls, "request_id": context.aws_request_id,
            "remaining_ms": context.get_remaining_time_in_millis()}
def fail(event, context):
    raise ValueError("bad input: " + str(event.get("x")))
'''


class Server:
    def __init__(self, functions):
        self.dir = tempfile.mkdtemp(prefix="faithful-")
        port_file = os.path.join(self.dir, "port")
        self.ca = os.path.join(self.dir, "ca.pem")
        args = [SERVER, "--port", "0", "--port-file", port_file, "--tls", self.ca, "--key", f"{KEY}:{SECRET}",
                "--work-dir", os.path.join(self.dir, "work")]
        for f in functions:
            args += ["--function", f]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        deadline = time.time() + 10
        while not os.path.exists(port_file):
            if time.time() > deadline:
                raise RuntimeError("lambda_server did not start")
            time.sleep(0.01)
        with open(port_file) as f:
            self.port = int(f.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)

    def client(self):
        return boto3.client("lambda", endpoint_url=f"https://127.0.0.1:{self.port}", region_name="us-east-1",
                            aws_access_key_id=KEY, aws_secret_access_key=SECRET, verify=self.ca,
                            config=Config(retries={"max_attempts": 1}))


def python_function(directory, handler):
    """A function whose bootstrap is awslambdaric serving handler.py."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "handler.py"), "w") as f:
        f.write(HANDLER)
    bootstrap = os.path.join(directory, "bootstrap")
    with open(bootstrap, "w") as f:
        f.write(f"#!/bin/sh\nexport PYTHONPATH={directory}\nexec {sys.executable} -m awslambdaric {handler}\n")
    os.chmod(bootstrap, 0o755)
    return bootstrap


class Faithful(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="faithful-fn-")
        boot = python_function(cls.tmp, "handler.echo")
        cls.server = Server([f"echo={boot},timeout=10,concurrency=1"])
        cls.lam = cls.server.client()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_boto3_invoke_through_awslambdaric(self):
        r = self.lam.invoke(FunctionName="echo", Payload=json.dumps({"x": 1}), LogType="Tail")
        self.assertEqual(r["StatusCode"], 200)
        self.assertNotIn("FunctionError", r)
        body = json.loads(r["Payload"].read())
        self.assertEqual(body["echo"], {"x": 1})
        self.assertEqual(body["request_id"], r["ResponseMetadata"]["RequestId"])
        self.assertGreater(body["remaining_ms"], 5000)  # the deadline header, as awslambdaric read it
        log = base64.b64decode(r["LogResult"]).decode()
        self.assertIn("echo called", log)
        self.assertRegex(log, r"REPORT RequestId: \S+\tDuration: [0-9.]+ ms\tBilled Duration: \d+ ms")
        # Warm: the same environment keeps its state.
        again = json.loads(self.lam.invoke(FunctionName="echo", Payload=b"{}")["Payload"].read())
        self.assertEqual(again["calls"], body["calls"] + 1)

    def test_unknown_function_is_resource_not_found(self):
        with self.assertRaises(self.lam.exceptions.ResourceNotFoundException):
            self.lam.invoke(FunctionName="nope", Payload=b"{}")

    def test_qualifiers_as_lambda_answers_them(self):
        # Only $LATEST exists here (no versions or aliases): any other qualifier is 404, as on Lambda.
        r = self.lam.invoke(FunctionName="echo", Qualifier="$LATEST", Payload=b"{}")
        self.assertEqual(r["StatusCode"], 200)
        for call in (dict(FunctionName="echo", Qualifier="live"), dict(FunctionName="echo:7")):
            with self.assertRaises(self.lam.exceptions.ResourceNotFoundException) as ctx:
                self.lam.invoke(Payload=b"{}", **call)
            self.assertIn("function:echo:", ctx.exception.response["Error"]["Message"])

    def test_invalid_invocation_type_and_large_event_are_refused(self):
        with self.assertRaises(self.lam.exceptions.ClientError) as ctx:
            self.lam.invoke(FunctionName="echo", InvocationType="Sometimes", Payload=b"{}")
        self.assertEqual(ctx.exception.response["ResponseMetadata"]["HTTPStatusCode"], 400)
        self.assertEqual(ctx.exception.response["Error"]["Code"], "InvalidParameterValueException")
        big = json.dumps({"x": "a" * (1024 * 1024)}).encode()
        with self.assertRaises(self.lam.exceptions.ClientError) as ctx:
            self.lam.invoke(FunctionName="echo", InvocationType="Event", Payload=big)
        self.assertEqual(ctx.exception.response["ResponseMetadata"]["HTTPStatusCode"], 413)
        # The same payload synchronously is under the 6 MB limit.
        self.assertEqual(self.lam.invoke(FunctionName="echo", Payload=big)["StatusCode"], 200)

    def test_requests_lambda_refuses_are_refused(self):
        def error_of(client, **call):
            with self.assertRaises(client.exceptions.ClientError) as ctx:
                client.invoke(**call)
            return ctx.exception.response["ResponseMetadata"]["HTTPStatusCode"], ctx.exception.response["Error"]["Code"]
        # Signed for another region.
        other = boto3.client("lambda", endpoint_url=f"https://127.0.0.1:{self.server.port}", region_name="eu-west-1",
                             aws_access_key_id=KEY, aws_secret_access_key=SECRET, verify=self.server.ca)
        self.assertEqual(error_of(other, FunctionName="echo", Payload=b"{}"), (403, "InvalidSignatureException"))
        # A name Lambda's pattern does not allow, a client context that is not base64 JSON, a body that is not JSON.
        self.assertEqual(error_of(self.lam, FunctionName="echo.bad", Payload=b"{}"), (400, "ValidationException"))
        self.assertEqual(error_of(self.lam, FunctionName="echo", ClientContext="not base64 json!", Payload=b"{}"),
                         (400, "InvalidRequestContentException"))
        self.assertEqual(error_of(self.lam, FunctionName="echo", Payload=b"{not json"), (400, "InvalidRequestContentException"))
        good_context = base64.b64encode(json.dumps({"custom": {"a": 1}}).encode()).decode()
        self.assertEqual(self.lam.invoke(FunctionName="echo", ClientContext=good_context, Payload=b"{}")["StatusCode"], 200)

    def test_wrong_secret_is_refused(self):
        bad = boto3.client("lambda", endpoint_url=f"https://127.0.0.1:{self.server.port}", region_name="us-east-1",
                           aws_access_key_id=KEY, aws_secret_access_key="wrong", verify=self.server.ca)
        with self.assertRaises(bad.exceptions.ClientError) as ctx:
            bad.invoke(FunctionName="echo", Payload=b"{}")
        self.assertEqual(ctx.exception.response["Error"]["Code"], "InvalidSignatureException")

    def test_botocore_signer_agrees_with_the_server(self):
        creds = botocore.credentials.Credentials(KEY, SECRET)
        ctx = ssl.create_default_context(cafile=self.server.ca)
        base = f"https://127.0.0.1:{self.server.port}"
        cases = [("GET", "/2015-03-31/functions/?MaxItems=10&Marker=a%2Fb", b""),
                 ("GET", "/2015-03-31/functions/echo/configuration", b""),
                 ("POST", "/2015-03-31/functions/no%3Asuch/invocations", b'{"k": "v w"}')]
        for method, path, body in cases:
            req = botocore.awsrequest.AWSRequest(method=method, url=base + path, data=body,
                                                 headers={"Content-Type": "application/json", "X-Amz-Log-Type": "Tail"})
            botocore.auth.SigV4Auth(creds, "lambda", "us-east-1").add_auth(req)
            prepared = req.prepare()
            http = urllib.request.Request(prepared.url, data=body or None, method=method, headers=dict(prepared.headers))
            try:
                status = urllib.request.urlopen(http, context=ctx).status
            except urllib.error.HTTPError as e:
                status = e.code
            self.assertNotEqual(status, 403, f"{method} {path}: signature refused")
            # Tampered body or path: refused.
            http = urllib.request.Request(prepared.url + ("&x=1" if "?" in prepared.url else "?x=1"), data=body or None,
                                          method=method, headers=dict(prepared.headers))
            with self.assertRaises(urllib.error.HTTPError) as bad:
                urllib.request.urlopen(http, context=ctx)
            self.assertEqual(bad.exception.code, 403)


class FunctionErrors(unittest.TestCase):
    def test_handler_exception_is_a_function_error(self):
        tmp = tempfile.mkdtemp(prefix="faithful-fail-")
        boot = python_function(tmp, "handler.fail")
        server = Server([f"fail={boot},timeout=10"])
        try:
            r = server.client().invoke(FunctionName="fail", Payload=json.dumps({"x": 42}))
            self.assertEqual(r["FunctionError"], "Unhandled")
            err = json.loads(r["Payload"].read())
            self.assertEqual(err["errorType"], "ValueError")
            self.assertEqual(err["errorMessage"], "bad input: 42")
        finally:
            server.stop()


if __name__ == "__main__":
    SERVER = sys.argv.pop(1)
    unittest.main(verbosity=2)
