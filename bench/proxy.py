"""What `agentfuzz proxy` costs a client: time to first byte and total time, through the proxy
vs direct, for streamed and non-streamed answers, as ratios from one run.

    python bench/proxy.py [--requests 200] [--latency 0]

The upstream is `agentfuzz serve fixed` in its own process; the proxy (`agentfuzz proxy
--upstream …`, judging every turn as it runs) in another; the client here. Each request is sent
once direct and once through the proxy, alternating, so drift on a shared machine falls on both.
Times are medians in milliseconds; the first byte is the first chunk of the body.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx

# Run as a script (``python bench/proxy.py``): the helpers sit beside it, not in a package.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import agentfuzz_command, served

BODIES = {
    "chat": {
        "model": "m",
        "messages": [{"role": "user", "content": "Use get_weather for Paris."}],
        "tools": [
            {
                "type": "function",
                "function": {"name": "get_weather", "parameters": {"type": "object"}},
            }
        ],
    },
    "responses": {
        "model": "m",
        "input": "Use get_weather for Paris.",
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
    },
}


@contextmanager
def _proxy(upstream: str, out: str) -> Iterator[str]:
    """``agentfuzz proxy`` in front of ``upstream`` on a free port; yields its base URL."""
    command = [*agentfuzz_command(), "proxy", "--upstream", upstream, "--port", "0", "--out", out]
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    try:
        line = process.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit(f"agentfuzz proxy did not start: {line.strip()}")
        yield line.split()[2]
    finally:
        process.terminate()
        process.wait(timeout=30)


def _timed(client: httpx.Client, url: str, body: dict[str, object]) -> tuple[float, float]:
    started = time.perf_counter()
    first = None
    with client.stream("POST", url, json=body) as answer:
        for _ in answer.iter_raw():
            if first is None:
                first = time.perf_counter() - started
    total = time.perf_counter() - started
    return (first or total) * 1000, total * 1000


def measure(requests: int, latency: int) -> list[tuple[str, float, float, float, float]]:
    rows = []
    with TemporaryDirectory() as out:
        with (
            served("fixed", latency) as (upstream, _),
            _proxy(upstream, out) as through,
            httpx.Client(timeout=60) as client,
        ):
            for api, path in (("chat", "/chat/completions"), ("responses", "/responses")):
                for stream in (True, False):
                    body = BODIES[api] | {"stream": stream}
                    for _ in range(10):  # warm-up, both ways
                        _timed(client, upstream + path, body)
                        _timed(client, through + path, body)
                    direct, proxied = [], []
                    for _ in range(requests):
                        direct.append(_timed(client, upstream + path, body))
                        proxied.append(_timed(client, through + path, body))
                    mode = f"{api}/{'stream' if stream else 'no-stream'}"
                    d_first = statistics.median(f for f, _ in direct)
                    d_total = statistics.median(t for _, t in direct)
                    p_first = statistics.median(f for f, _ in proxied)
                    p_total = statistics.median(t for _, t in proxied)
                    rows.append((mode, d_first, p_first, d_total, p_total))
        judged = sum(1 for _ in Path(out).glob("*/repro.json"))
    assert judged == 0, "the proxy found something on `fixed`: the bench measures a silent run"
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="per mode and way")
    parser.add_argument("--latency", type=int, default=0, help="the server's delay, in ms")
    args = parser.parse_args(argv)
    rows = measure(args.requests, args.latency)
    print(f"proxy overhead, {args.requests} requests per mode and way, latency {args.latency} ms")
    print("| mode | first byte direct | proxied | ratio | total direct | proxied | ratio |")
    print("|---|---|---|---|---|---|---|")
    for mode, d_first, p_first, d_total, p_total in rows:
        print(
            f"| {mode} | {d_first:.2f} ms | {p_first:.2f} ms | {p_first / d_first:.2f}x "
            f"| {d_total:.2f} ms | {p_total:.2f} ms | {p_total / d_total:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
