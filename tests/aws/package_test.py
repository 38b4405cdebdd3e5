"""Packages as they run on Lambda (provided.al2023: glibc 2.34, GCC 11's C++ runtime).

- the host build (Debian 12: glibc 2.36, GLIBCXX_3.4.30) is refused by `cppless package`, with
  the file and the symbol that need more than the Lambda OS has;
- the function builds of aws_app (zig, x86_64 and arm64) are packaged: a bootstrap and the
  executable, every ELF file needing at most GLIBC_2.34 (checked again here with readelf) and no
  libstdc++; an executable is refused for the other architecture;
- each package is deployed to the local Lambda server, which unpacks it and starts its
  bootstrap (the arm64 one under qemu-aarch64-static, through CPPLESS_BOOTSTRAP_EMULATOR, as this
  machine has no binfmt_misc), and the host build of aws_app calls the functions end to end;
  the deployed code is byte for byte the zip `cppless package` wrote.

Usage: package_test.py LAMBDA_SERVER CPPLESS_CLI AWS_APP AWS_APP_X86_64 AWS_APP_ARM64
"""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

import boto3

SERVER = CLI = APP = X86 = ARM = None
KEY, SECRET = "AKIDPACKAGE", "package-secret"
ROLE = "arn:aws:iam::123456789012:role/cppless-test"
QEMU = shutil.which("qemu-aarch64-static")
ARM_SYSROOT = "/usr/aarch64-linux-gnu"


def run(args, env=None, check=True, timeout=240):
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def glibc_needs(data, tmp):
    """Version needs of an ELF file, by binutils' readelf (independent of cppless' own reader)."""
    path = os.path.join(tmp, "elf")
    with open(path, "wb") as f:
        f.write(data)
    out = run(["readelf", "-V", "-W", path]).stdout
    return set(re.findall(r"Name: ((?:GLIBC|GLIBCXX|CXXABI|GCC)_[0-9.]+)", out))


def version_tuple(v):
    return tuple(int(x) for x in v.split("_", 1)[1].split("."))


class Packages(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="package-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def package(self, exe, arch, check=True):
        return run([CLI, "package", exe, "--out", self.dir, "--architecture", arch], check=check)

    def test_host_build_is_refused_naming_file_and_symbol(self):
        r = run([CLI, "package", APP, "--out", self.dir], check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("would not start on provided.al2023", r.stderr)
        # e.g. "bin/aws_app needs GLIBCXX_3.4.30 (symbol _ZNSt18condition_variable...), from libstdc++.so.6"
        self.assertRegex(r.stderr, r"(bin/aws_app|lib/\S+) needs (GLIBC|GLIBCXX|GCC)_[0-9.]+ \(symbol \S+\)")
        self.assertFalse(os.listdir(self.dir), "nothing written")

    def test_function_builds_fit_the_lambda_os(self):
        for exe, arch in ((X86, "x86_64"), (ARM, "arm64")):
            with self.subTest(arch=arch):
                path = self.package(exe, arch).stdout.strip()
                self.assertEqual(os.path.basename(path), f"aws_app-{arch}.zip")
                with zipfile.ZipFile(path) as z:
                    self.assertEqual(z.namelist(), ["bootstrap", "bin/aws_app"])  # libc++ is linked in
                    binary = z.read("bin/aws_app")
                    self.assertEqual(binary[18], 62 if arch == "x86_64" else 183)  # e_machine
                    needs = glibc_needs(binary, self.dir)
                self.assertTrue(needs, "a dynamically linked program needs some glibc version")
                for v in needs:
                    self.assertTrue(v.startswith("GLIBC_"), f"{arch}: needs {v} (a C++ runtime of the system)")
                    self.assertLessEqual(version_tuple(v), (2, 34), f"{arch}: needs {v}")
        # The same functions as the host build (libstdc++) under libc++: ids and fingerprints agree.
        def entries(exe):
            manifest = json.loads(run([CLI, "manifest", exe, "--compact"]).stdout)
            return sorted((e["id"], e["hash"], e["fingerprint"]) for e in manifest["entry_points"])
        self.assertEqual(entries(X86), entries(APP))
        self.assertEqual(len(entries(APP)), 2)
        # An executable is refused for the other architecture.
        wrong = self.package(X86, "arm64", check=False)
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("built for x86_64, not arm64", wrong.stderr)


class RunOnLocalLambda(unittest.TestCase):
    """Each package deployed to the local server and called by the host build."""

    def start_server(self, emulator=None):
        port_file = os.path.join(self.dir, "port")
        self.ca = os.path.join(self.dir, "ca.pem")
        args = [SERVER, "--port", "0", "--port-file", port_file, "--tls", self.ca, "--key", f"{KEY}:{SECRET}",
                "--work-dir", os.path.join(self.dir, "work")]
        if emulator:
            args += ["--env", f"CPPLESS_BOOTSTRAP_EMULATOR={emulator}"]
        self.server = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        deadline = time.time() + 20
        while not os.path.exists(port_file):
            self.assertLess(time.time(), deadline, "lambda_server did not start")
            time.sleep(0.01)
        with open(port_file) as f:
            port = int(f.read())
        self.endpoint = f"https://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ENDPOINT_URL=self.endpoint, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                   AWS_REGION="us-east-1", AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
                   CPPLESS_LAMBDA_ROLE=ROLE, AWS_CA_BUNDLE=self.ca)
        return env

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="package-run-")
        self.server = None

    def tearDown(self):
        if self.server:
            self.server.terminate()
            self.server.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def deploy_and_call(self, exe, arch, emulator=None):
        env = self.start_server(emulator)
        package = run([CLI, "package", exe, "--out", self.dir, "--architecture", arch]).stdout.strip()
        out = run([CLI, "deploy", exe, "--architecture", arch, "--prefix", "aws_app"], env).stdout
        names = [l.split()[1] for l in out.splitlines() if l.startswith("created")]
        self.assertEqual(len(names), 2, out)
        lam = boto3.client("lambda", endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id=KEY,
                           aws_secret_access_key=SECRET, verify=self.ca)
        with open(package, "rb") as f:
            digest = base64.b64encode(hashlib.sha256(f.read()).digest()).decode()
        for name in names:
            config = lam.get_function_configuration(FunctionName=name)
            self.assertEqual(config["CodeSha256"], digest, "deploy uploads exactly the zip package wrote")
        # The host build calls the functions the package serves (same ids across the builds).
        result = run([APP, "4"], env)
        self.assertIn("same as local", result.stdout)
        self.assertIn("352 solutions", result.stdout)
        self.assertRegex(result.stdout, r"13 calls, [1-9][0-9]* cold")

    def test_x86_64_package_natively(self):
        self.deploy_and_call(X86, "x86_64")

    def test_arm64_package_under_qemu(self):
        self.assertTrue(QEMU, "needs qemu-aarch64-static (scripts/setup.sh installs qemu-user-static)")
        self.assertTrue(os.path.isdir(ARM_SYSROOT), "needs libc6-arm64-cross (scripts/setup.sh)")
        self.deploy_and_call(ARM, "arm64", emulator=f"{QEMU} -L {ARM_SYSROOT}")


if __name__ == "__main__":
    SERVER, CLI, APP, X86, ARM = sys.argv[1:6]
    del sys.argv[1:6]
    unittest.main(verbosity=2)
