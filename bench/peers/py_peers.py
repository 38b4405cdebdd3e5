#!/usr/bin/env python3
"""The Python-side peers of the benchmark suite; prints one JSON line per measurement.

    py_peers.py mp      [--rounds N] [--calls N] [--repeat R]
        multiprocessing.Pool (fork, one process per core): latency of pool.apply, throughput of N
        apply_async calls submitted at once
    py_peers.py ray     [--rounds N] [--calls N] [--repeat R] [--ray-cpp DIR] [--ray-cpp-apps pi,nqueens]
                        [--pi SAMPLES] [--nqueens N,N --depth D] [--tasks 1,2,...] [--app-repeat R]
        starts a local Ray cluster (run it inside a network namespace with only loopback:
        bench/peers/run_ray.sh does), measures Ray Python tasks, then runs the Ray C++ driver
        (DIR/ray_bench, DIR/lib/libray_bench.so) against the same cluster; shuts Ray down
    py_peers.py apps    --bench-apps EXE --ray-cpp DIR --kernels LIB [--pi SAMPLES] [--nqueens N,N --depth D]
                        [--tasks 1,2,...] [--lithops-tasks 1,2,...] [--app-repeat R] [--no-ray REASON]
        pi and n-queens on bench_apps (serial, std::thread, cppless), Ray C++ and Lithops, one
        repeat of each in turn (rotating order), on one Ray cluster (inside run_ray.sh's namespace)
        with one long-lived Ray C++ driver (ray_bench --serve)
    py_peers.py lithops --kernels LIB [--rounds N] [--calls N] [--repeat R] [--pi SAMPLES]
                        [--nqueens N,N --depth D] [--tasks 1,2,...] [--app-repeat R]
        Lithops with its localhost backend (version 1 runner); the application tasks call the
        same C++ kernels as every other contender, through ctypes (LIB: libbench_kernels.so)

A peer that cannot be imported or started prints {"suite": ..., "case": ..., "unavailable": reason}
for each figure it would have given, and the command still exits 0.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

PAYLOAD = b"x" * 64


OUT = sys.stdout  # JSON lines only: main() sends everything else printed (Lithops' progress) to stderr


def emit(**fields):
    print(json.dumps(fields), file=OUT, flush=True)


def log(msg):
    print(f"py_peers: {msg}", file=sys.stderr, flush=True)


def percentiles(samples_ns):
    v = sorted(samples_ns)

    def at(q):
        return v[int(q * (len(v) - 1))]

    return dict(median_ns=round(at(0.5)), p10_ns=round(at(0.10)), p25_ns=round(at(0.25)),
                p75_ns=round(at(0.75)), p90_ns=round(at(0.90)), p99_ns=round(at(0.99)),
                samples=len(v))


def cores():
    return os.cpu_count() or 1


def reason_of(exc):
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    return text[:300]


def unavailable(suites_cases, reason):
    for suite, case in suites_cases:
        emit(suite=suite, case=case, unavailable=reason)


def measure_latency(case, call, rounds, repeat, warmup=20):
    if rounds <= 0:
        return
    for _ in range(warmup):
        call()
    for r in range(repeat):
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter_ns()
            out = call()
            samples.append(time.perf_counter_ns() - t0)
            assert len(out) == len(PAYLOAD)
        emit(suite="latency", case=case, repeat=r, **percentiles(samples))


def measure_throughput(case, submit_all, calls, repeat):
    if calls <= 0:
        return
    for r in range(repeat):
        t0 = time.perf_counter()
        results = submit_all(calls)
        s = time.perf_counter() - t0
        assert len(results) == calls
        emit(suite="throughput", case=case, repeat=r, calls=calls, calls_per_s=round(calls / s, 1))


# --- multiprocessing.Pool --------------------------------------------------------------------

def noop(x):
    return x


def run_mp(args):
    import multiprocessing as mp
    try:
        ctx = mp.get_context("fork")
        with ctx.Pool(cores()) as pool:
            pool.map(noop, [PAYLOAD] * 100)  # every worker up
            measure_latency("mp_pool", lambda: pool.apply(noop, (PAYLOAD,)), args.rounds, args.repeat)
            measure_throughput(
                "mp_pool",
                lambda n: [f.get() for f in [pool.apply_async(noop, (PAYLOAD,)) for _ in range(n)]],
                args.calls, args.repeat)
    except Exception as e:  # noqa: BLE001 - any failure makes the peer unavailable, not the suite
        traceback.print_exc()
        unavailable([("latency", "mp_pool"), ("throughput", "mp_pool")], reason_of(e))


# --- Ray (Python tasks and the C++ driver) ----------------------------------------------------

def start_ray(ray, temp):
    """A local cluster of one node, one CPU per core, on 127.0.0.1 (run_ray.sh's namespace)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    t0 = time.perf_counter()
    ray.init(num_cpus=cores(), include_dashboard=False, _node_ip_address="127.0.0.1",
             object_store_memory=256 << 20, _temp_dir=temp, log_to_driver=False, configure_logging=False)
    log(f"Ray cluster up in {time.perf_counter() - t0:.1f} s at {ray.get_runtime_context().gcs_address}")
    return ray.get_runtime_context().gcs_address


def run_ray(args):
    cases = [("latency", "ray_python"), ("throughput", "ray_python")]
    cpp_cases = [("latency", "ray_cpp"), ("throughput", "ray_cpp")]
    try:
        import ray
    except Exception as e:  # noqa: BLE001
        unavailable(cases + cpp_cases, "ray not importable: " + reason_of(e))
        for app in args.ray_cpp_apps:
            emit(suite="apps", app=app, mode="ray_cpp", unavailable="ray not importable: " + reason_of(e))
        return
    temp = tempfile.mkdtemp(prefix="cb-ray-")  # short: Ray's socket paths must fit 107 bytes
    try:
        start_ray(ray, temp)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        unavailable(cases + cpp_cases, "ray.init failed: " + reason_of(e))
        for app in args.ray_cpp_apps:
            emit(suite="apps", app=app, mode="ray_cpp", unavailable="ray.init failed: " + reason_of(e))
        shutil.rmtree(temp, ignore_errors=True)
        return
    try:
        try:
            @ray.remote
            def ray_noop(x):
                return x

            ray.get([ray_noop.remote(PAYLOAD) for _ in range(4 * cores())])  # workers up
            measure_latency("ray_python", lambda: ray.get(ray_noop.remote(PAYLOAD)), args.rounds, args.repeat)
            measure_throughput("ray_python", lambda n: ray.get([ray_noop.remote(PAYLOAD) for _ in range(n)]),
                               args.calls, args.repeat)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            unavailable(cases, reason_of(e))
        run_ray_cpp(args, ray.get_runtime_context().gcs_address, cpp_cases)
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def run_ray_cpp(args, address, cases):
    if not args.ray_cpp:
        return
    exe = os.path.join(args.ray_cpp, "ray_bench")
    if not os.access(exe, os.X_OK):
        reason = "not built"
        log_file = os.path.join(args.ray_cpp, "unavailable.txt")
        if os.path.exists(log_file):
            reason = open(log_file).read().strip() or reason
        unavailable(cases, reason)
        for app in args.ray_cpp_apps:
            emit(suite="apps", app=app, mode="ray_cpp", unavailable=reason)
        return
    cmd = [exe, "--address", address, "--code", os.path.join(args.ray_cpp, "lib"),
           "--repeat", str(args.repeat), "--latency", str(args.rounds), "--throughput", str(args.calls)]
    if "pi" in args.ray_cpp_apps and args.pi:
        cmd += ["--pi", str(args.pi)]
    if "nqueens" in args.ray_cpp_apps and args.nqueens:
        cmd += ["--nqueens", ",".join(map(str, args.nqueens)), "--depth", str(args.depth)]
    cmd += ["--tasks", args.tasks, "--app-repeat", str(args.app_repeat)]
    log("running " + " ".join(cmd))
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=args.ray_cpp_timeout)
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = f"timed out after {args.ray_cpp_timeout} s", -1
    seen = set()
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            print(line, file=OUT, flush=True)
            rec = json.loads(line)
            seen.add((rec.get("suite"), rec.get("case", rec.get("app"))))
    if rc != 0:
        reason = f"ray_bench exited {rc}: " + " ".join(err.strip().splitlines()[-2:])[:300]
        log(reason)
        for suite, case in cases:
            if (suite, case) not in seen:
                emit(suite=suite, case=case, unavailable=reason)
        for app in args.ray_cpp_apps:
            if ("apps", app) not in seen:
                emit(suite="apps", app=app, mode="ray_cpp", unavailable=reason)


# --- Lithops localhost ----------------------------------------------------------------------

def lithops_noop(x):
    return x


def lithops_pi(lib, n, seed):
    import ctypes
    k = ctypes.CDLL(lib)
    k.bench_pi.restype = ctypes.c_double
    k.bench_pi.argtypes = [ctypes.c_long, ctypes.c_uint]
    return k.bench_pi(n, seed)


def lithops_queens(lib, n, depth, prefixes):
    import ctypes
    k = ctypes.CDLL(lib)
    k.bench_queens.restype = ctypes.c_long
    k.bench_queens.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_size_t]
    arr = (ctypes.c_int * len(prefixes))(*prefixes)
    return k.bench_queens(n, depth, arr, len(prefixes) // depth)


def queens_prefixes(n, depth):
    out = []

    def walk(row, cols, d1, d2, current):
        if row == depth:
            out.extend(current)
            return
        for c in range(n):
            bit = 1 << c
            if (cols | d1 | d2) & bit:
                continue
            walk(row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1, current + [c])

    walk(0, 0, 0, 0, [])
    return out


T = 300  # seconds any one Lithops job may take before the peer is reported unavailable

KNOWN_QUEENS = {13: 73712, 14: 365596, 15: 2279184, 12: 14200, 11: 2680, 10: 724}


def run_lithops(args):
    cases = [("latency", "lithops"), ("throughput", "lithops")]
    apps = (["pi"] if args.pi else []) + (["nqueens"] if args.nqueens else [])
    # Lithops keeps its storage, runner and logs under the temp dir, read when it is imported:
    # give it a private one first.
    # (Its cleaner process may write there after this script ended: run.sh passes a --work
    # directory under the build tree and empties it at the start of each run.)
    if args.work:
        os.makedirs(args.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cb-lithops-", dir=args.work or None)
    os.environ["TMPDIR"] = work
    tempfile.tempdir = None
    try:
        import lithops
    except Exception as e:  # noqa: BLE001
        reason = "lithops not importable: " + reason_of(e)
        unavailable(cases, reason)
        for app in apps:
            emit(suite="apps", app=app, mode="lithops", unavailable=reason)
        shutil.rmtree(work, ignore_errors=True)
        return
    config = os.path.join(work, "lithops.yaml")
    with open(config, "w") as f:
        f.write("lithops:\n  backend: localhost\n  storage: localhost\n  log_level: WARNING\n"
                f"localhost:\n  version: 1\n  worker_processes: {cores()}\n  runtime: {sys.executable}\n")
    try:
        fe = lithops.FunctionExecutor(config_file=config)
        fe.get_result([fe.call_async(lithops_noop, PAYLOAD)], timeout=T)  # runtime metadata, runner installed
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        reason = "lithops localhost did not start: " + reason_of(e)
        unavailable(cases, reason)
        for app in apps:
            emit(suite="apps", app=app, mode="lithops", unavailable=reason)
        shutil.rmtree(work, ignore_errors=True)
        return
    try:
        try:
            # get_result of one future returns its value (a list of one is unwrapped too)
            measure_latency("lithops", lambda: fe.get_result(fe.call_async(lithops_noop, PAYLOAD), timeout=T),
                            args.rounds, args.repeat, warmup=1)
            measure_throughput("lithops", lambda n: fe.get_result(fe.map(lithops_noop, [PAYLOAD] * n), timeout=T),
                               args.calls, args.repeat)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            unavailable(cases, reason_of(e))
        tasks = [int(t) for t in args.tasks.split(",") if t]
        # The serial baseline, measured here between the Lithops runs (same kernels via ctypes)
        # so that Lithops' speedups divide times taken under the same machine load.
        serial = dict(suite="apps", mode="serial", by="lithops", tasks=1)
        if args.pi:
            try:
                for r in range(args.app_repeat):
                    t0 = time.perf_counter()
                    pi = lithops_pi(args.kernels, args.pi, 0)
                    emit(app="pi", size=args.pi, repeat=r, seconds=round(time.perf_counter() - t0, 6),
                         correct=abs(pi - 3.14159265) < 0.01, **serial)
                    for t in tasks:
                        per = args.pi // t
                        t0 = time.perf_counter()
                        res = fe.get_result(fe.map(lithops_pi, [(args.kernels, per, i) for i in range(t)]), timeout=T)
                        s = time.perf_counter() - t0
                        emit(suite="apps", app="pi", mode="lithops", by="lithops", size=args.pi, tasks=t, repeat=r,
                             seconds=round(s, 6), correct=abs(sum(res) / t - 3.14159265) < 0.01)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                emit(suite="apps", app="pi", mode="lithops", unavailable=reason_of(e))
        for n in args.nqueens:
            try:
                all_prefixes = queens_prefixes(n, args.depth)
                count = len(all_prefixes) // args.depth
                for r in range(args.app_repeat):
                    t0 = time.perf_counter()
                    total = lithops_queens(args.kernels, n, args.depth, all_prefixes)
                    emit(app="nqueens", size=n, repeat=r, seconds=round(time.perf_counter() - t0, 6),
                         correct=total == KNOWN_QUEENS.get(n), **serial)
                    for t in tasks:
                        t0 = time.perf_counter()
                        shares = []
                        for i in range(t):
                            mine = []
                            for p in range(i, count, t):
                                mine.extend(all_prefixes[p * args.depth:(p + 1) * args.depth])
                            shares.append((args.kernels, n, args.depth, mine))
                        res = fe.get_result(fe.map(lithops_queens, shares), timeout=T)
                        s = time.perf_counter() - t0
                        emit(suite="apps", app="nqueens", mode="lithops", by="lithops", size=n, tasks=t, repeat=r,
                             seconds=round(s, 6), correct=sum(res) == KNOWN_QUEENS.get(n))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                emit(suite="apps", app="nqueens", mode="lithops", size=n, unavailable=reason_of(e))
    finally:
        try:
            fe.clean(clean_cloudobjects=True)
        except Exception:  # noqa: BLE001
            pass
        shutil.rmtree(work, ignore_errors=True)


# --- applications, all contenders interleaved ------------------------------------------------

def run_json(cmd, timeout, repeat):
    """Runs one harness; returns (its JSON records with "repeat" set, None or a failure reason)."""
    log("running " + " ".join(cmd))
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        out, err, rc = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = f"timed out after {timeout} s", -1
    except OSError as e:
        return [], reason_of(e)
    recs = []
    for line in out.splitlines():
        if line.strip().startswith("{"):
            rec = json.loads(line)
            if "seconds" in rec:
                rec["repeat"] = repeat
            recs.append(rec)
    if rc != 0:
        return recs, f"{os.path.basename(cmd[0])} exited {rc}: " + " ".join(err.strip().splitlines()[-2:])[:300]
    return recs, None


class ServedDriver:
    """ray_bench --serve: one long-lived Ray driver across all rounds, as a Ray user keeps one."""

    def __init__(self, cmd):
        log("starting " + " ".join(cmd))
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     text=True, bufsize=1)

    def run(self, line, repeat, timeout):
        import threading
        timer = threading.Timer(timeout, self.proc.kill)
        timer.start()
        recs = []
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            for out in self.proc.stdout:
                if not out.strip().startswith("{"):
                    continue
                rec = json.loads(out)
                if rec.get("done"):
                    return recs, None
                if "seconds" in rec:
                    rec["repeat"] = repeat
                recs.append(rec)
        except (OSError, ValueError) as e:
            return recs, reason_of(e)
        finally:
            timer.cancel()
        self.err.seek(0)
        tail = " ".join(self.err.read().strip().splitlines()[-2:])[:300]
        return recs, f"ray_bench ended (exit {self.proc.poll()}): {tail}"

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except Exception:  # noqa: BLE001
            self.proc.kill()


def run_apps(args):
    """Pi and n-queens on every contender, interleaved: each round runs one repeat of each workload
    on bench_apps (serial, std::thread, cppless), Ray C++ and Lithops, in an order that rotates
    from round to round, so that the machine's load (shared, and it drifts) falls alike on all."""
    tasks = args.tasks
    workloads = []
    if args.pi:
        workloads.append(("pi", args.pi, ["pi", "--samples", str(args.pi)], f"pi {args.pi}",
                          ["--pi", str(args.pi)]))
    for n in args.nqueens:
        q = ["--nqueens", str(n), "--depth", str(args.depth)]
        workloads.append(("nqueens", n, ["nqueens", "--n", str(n), "--depth", str(args.depth)],
                          f"nqueens {n} {args.depth}", q))
    down = {}  # contender -> reason it is unavailable

    def give_up(who, mode_list, reason):
        if who in down:
            return
        down[who] = reason
        for app, size, *_ in workloads:
            for mode in mode_list:
                emit(suite="apps", app=app, size=size, mode=mode, unavailable=reason)

    if not os.access(args.bench_apps, os.X_OK):
        give_up("bench_apps", ["serial", "threads", "cppless"], f"{args.bench_apps} not built")
    ray_mod, temp, address, driver = None, None, None, None
    if args.no_ray:
        give_up("ray_cpp", ["ray_cpp"], args.no_ray)
    elif not (args.ray_cpp and os.access(os.path.join(args.ray_cpp, "ray_bench"), os.X_OK)):
        why = "not built"
        note = os.path.join(args.ray_cpp or ".", "unavailable.txt")
        if os.path.exists(note):
            why = open(note).read().strip() or why
        give_up("ray_cpp", ["ray_cpp"], why)
    else:
        try:
            import ray as ray_mod
            temp = tempfile.mkdtemp(prefix="cb-ray-")
            address = start_ray(ray_mod, temp)
            driver = ServedDriver([os.path.join(args.ray_cpp, "ray_bench"), "--address", address, "--code",
                                   os.path.join(args.ray_cpp, "lib"), "--tasks", tasks, "--serve", "yes"])
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            give_up("ray_cpp", ["ray_cpp"], "Ray did not start: " + reason_of(e))
    if not args.kernels or not os.path.exists(args.kernels):
        give_up("lithops", ["lithops"], "kernel library not built")
    try:
        contenders = ["bench_apps", "ray_cpp", "lithops"]
        for r in range(args.app_repeat):
            for app, size, apps_args, ray_args, lithops_args in workloads:
                k = r % len(contenders)
                for who in contenders[k:] + contenders[:k]:
                    if who in down:
                        continue
                    if who == "bench_apps":
                        cmd = [args.bench_apps] + apps_args + ["--tasks", tasks, "--repeat", "1"]
                        modes = ["serial", "threads", "cppless"]
                    elif who == "ray_cpp":
                        recs, failure = driver.run(f"{ray_args} {r}", r, args.round_timeout)
                        for rec in recs:
                            emit(**rec)
                        if failure:
                            give_up(who, ["ray_cpp"], failure)
                        continue
                    else:
                        cmd = [sys.executable, os.path.abspath(__file__), "lithops", "--work", args.work,
                               "--kernels", args.kernels, "--rounds", "0", "--calls", "0", "--app-repeat", "1",
                               "--tasks", args.lithops_tasks or tasks] + lithops_args
                        modes = ["lithops"]
                    recs, failure = run_json(cmd, args.round_timeout, r)
                    for rec in recs:
                        if "unavailable" in rec:
                            give_up(who, modes, rec["unavailable"])
                        else:
                            emit(**rec)
                    if failure:
                        give_up(who, modes, failure)
    finally:
        if driver is not None:
            driver.close()
        if ray_mod is not None and ray_mod.is_initialized():
            ray_mod.shutdown()
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("peer", choices=["mp", "ray", "lithops", "apps"])
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--calls", type=int, default=10000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--ray-cpp", default="")
    p.add_argument("--ray-cpp-timeout", type=int, default=1200)
    p.add_argument("--ray-cpp-apps", default="", help="apps the Ray C++ driver is asked for (pi,nqueens)")
    p.add_argument("--kernels", default="")
    p.add_argument("--work", default="", help="where Lithops keeps its files (default: the temp dir)")
    p.add_argument("--pi", type=int, default=0)
    p.add_argument("--nqueens", default="")
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--tasks", default="1,2,4,8,16,32,64,128,256")
    p.add_argument("--app-repeat", type=int, default=3)
    p.add_argument("--bench-apps", default="", help="apps: the bench_apps executable")
    p.add_argument("--lithops-tasks", default="", help="apps: Lithops' task counts (default: --tasks)")
    p.add_argument("--no-ray", default="", help="apps: the reason Ray cannot run (no Ray C++ then)")
    p.add_argument("--round-timeout", type=int, default=900)
    args = p.parse_args()
    sys.stdout = sys.stderr
    args.ray_cpp = os.path.abspath(args.ray_cpp) if args.ray_cpp else ""
    args.kernels = os.path.abspath(args.kernels) if args.kernels else ""
    args.ray_cpp_apps = [a for a in args.ray_cpp_apps.split(",") if a]
    args.nqueens = [int(n) for n in args.nqueens.split(",") if n]
    args.bench_apps = os.path.abspath(args.bench_apps) if args.bench_apps else ""
    args.work = os.path.abspath(args.work) if args.work else ""
    {"mp": run_mp, "ray": run_ray, "lithops": run_lithops, "apps": run_apps}[args.peer](args)


if __name__ == "__main__":
    main()
