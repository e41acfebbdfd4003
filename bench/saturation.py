"""How full agentfuzz keeps a GPU server's batch: requests in flight at --workers N.

    python bench/saturation.py [--workers 1,4,16,64,256] [--seconds 60] [--latency 500]
                               [--per-token 10] [--mode synthetic] [--stream both]

The server is ``agentfuzz serve fixed`` with a GPU server's timing: ``--latency`` ms for every
answer plus ``--per-token`` ms for each token the scripted model writes, any number of requests
at once, all of it waited with ``anyio.sleep`` (no CPU burnt). Nothing is found on ``fixed``, so
the fuzzer only fuzzes. Each N runs the whole ``agentfuzz fuzz --workers N`` command for
``--seconds``; the figures come from the steady part of it (from the first answer plus a warm-up
to the end of fuzzing), measured from both sides:

- the server's ``GET /load``: requests served per second, the mean number in flight (by
  Little's law, the throughput over the ideal N / latency is that mean over N), and the share of
  the time it held N or more;
- the client's process tree, sampled from ``/proc``: its CPU seconds per request over the same
  window, and its peak resident memory (all its processes together).

Figures, not tests: it always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import agentfuzz_command, load, machine, served

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree(root: int) -> list[int]:
    """``root`` and every process under it."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def _usage(root: int) -> tuple[float, int]:
    """CPU seconds (user + system) and resident bytes of ``root``'s process tree."""
    cpu, rss = 0.0, 0
    for pid in _tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError):
            continue
        cpu += (int(fields[11]) + int(fields[12])) / _TICK
        rss += pages * _PAGE
    return cpu, rss


@dataclass
class Sample:
    at: float
    load: dict[str, object]
    cpu: float
    rss: int
    server_cpu: float


@dataclass
class Point:
    workers: int
    requests_s: float
    ideal_s: float
    mean_in_flight: float
    share_full: float
    cpu_ms: float
    server_cpu_ms: float
    peak_rss_mb: float
    latency_ms: float
    window_s: float

    @property
    def of_ideal(self) -> float:
        return self.mean_in_flight / self.workers


def _sampling(base: str, proc: subprocess.Popen[bytes], server: int, every: float) -> list[Sample]:
    samples: list[Sample] = []
    root = base.removesuffix("/v1")
    with httpx.Client(timeout=10) as client:
        while proc.poll() is None:
            at = time.monotonic()
            doc = client.get(root + "/load").json()
            cpu, rss = _usage(proc.pid)
            samples.append(Sample(at, doc, cpu, rss, _usage(server)[0]))
            time.sleep(every)
    return samples


def _point(workers: int, samples: list[Sample], warmup: float) -> Point:
    started = next((s for s in samples if int(str(s.load["served"])) > 0), None)
    if started is None:
        raise RuntimeError(f"--workers {workers}: the server served nothing")
    window = [s for s in samples if s.at >= started.at + warmup]
    # The last samples may already see the fuzzer winding down: stop where the load fell.
    while len(window) > 2 and int(str(window[-1].load["in_flight"])) < workers // 2:
        window.pop()
    first, last = window[0], window[-1]
    dt = last.at - first.at
    served_n = int(str(last.load["served"])) - int(str(first.load["served"]))
    busy = float(str(last.load["busy_s"])) - float(str(first.load["busy_s"]))
    time_at = [float(t) for t in last.load["time_at"]]  # type: ignore[attr-defined]
    time_before = [float(t) for t in first.load["time_at"]]  # type: ignore[attr-defined]
    time_before += [0.0] * (len(time_at) - len(time_before))
    full = sum(a - b for a, b in list(zip(time_at, time_before, strict=True))[workers:])
    latency = busy / served_n if served_n else float("nan")
    return Point(
        workers=workers,
        requests_s=served_n / dt,
        ideal_s=workers / latency,
        mean_in_flight=busy / dt,
        share_full=full / dt,
        cpu_ms=1000 * (last.cpu - first.cpu) / max(1, served_n),
        server_cpu_ms=1000 * (last.server_cpu - first.server_cpu) / max(1, served_n),
        peak_rss_mb=max(s.rss for s in samples) / 2**20,
        latency_ms=1000 * latency,
        window_s=dt,
    )


def measure(workers: int, base: str, model: str, server: int, args: argparse.Namespace) -> Point:
    with tempfile.TemporaryDirectory() as tmp:
        argv = [*agentfuzz_command(), "fuzz", "--base-url", base, "--model", model]
        argv += ["--workers", str(workers), "--max-time", str(args.seconds)]
        argv += ["--max-examples", "1000000", "--quiet", "--out", f"{tmp}/out", "--seed", "1"]
        argv += ["--mode", args.mode, "--timeout", "600"]
        if args.stream != "both":
            argv += ["--stream" if args.stream == "yes" else "--no-stream"]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp)
        got: list[list[Sample]] = []
        sampler = threading.Thread(target=lambda: got.append(_sampling(base, proc, server, 0.5)))
        sampler.start()
        _, err = proc.communicate()
        sampler.join()
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"fuzz --workers {workers} exited {proc.returncode}: {err[-400:]!r}")
        return _point(workers, got[0], args.warmup)


def table(points: list[Point], args: argparse.Namespace) -> str:
    head = (
        "| N | requests/s | ideal N/latency | of ideal | share of time N in flight "
        "| client CPU/request | server CPU/request | client peak RSS | server latency |"
    )
    lines = [head, "|" + "---|" * 9]
    for p in points:
        lines.append(
            f"| {p.workers} | {p.requests_s:.1f} | {p.ideal_s:.1f} | {p.of_ideal:.2f} | "
            f"{p.share_full:.2f} | {p.cpu_ms:.1f} ms | {p.server_cpu_ms:.1f} ms | "
            f"{p.peak_rss_mb:.0f} MB | "
            f"{p.latency_ms:.0f} ms |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,4,16,64,256")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--latency", type=int, default=500)
    parser.add_argument("--per-token", type=float, default=10.0)
    parser.add_argument("--mode", default="synthetic")
    parser.add_argument("--stream", choices=["yes", "no", "both"], default="both")
    args = parser.parse_args()
    print(f"# saturation on {machine()}, load {load()}, {time.strftime('%Y-%m-%d %H:%M UTC')}")
    timing = ("--latency-per-token", str(args.per_token))
    points = []
    pids: list[int] = []
    with served("fixed", args.latency, *timing, pids=pids) as (base, model):
        for n in (int(x) for x in args.workers.split(",")):
            point = measure(n, base, model, pids[0], args)
            points.append(point)
            print(json.dumps(point.__dict__ | {"of_ideal": round(point.of_ideal, 3)}), flush=True)
    print(
        f"\nlatency {args.latency} ms + {args.per_token} ms/token, mode {args.mode}, "
        f"stream {args.stream}, {args.seconds:.0f} s per N, load after {load()}\n"
    )
    print(table(points, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
