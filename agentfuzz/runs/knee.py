"""``--workers auto``: how many requests in flight a server takes before its throughput flattens.

A GPU server batches the requests it has in flight: its throughput grows with them until the
batch is full, then stays flat while each answer only waits longer. The knee of that curve is
the number of workers worth running. ``probe`` measures it before a campaign: from one request
in flight, doubling while throughput still grows by ``GROW``, then narrowing between the last
two levels; the knee is the fewest in flight that give ``SHARE`` of the best throughput seen.

Each level is a closed loop: that many threads, each sending its next request the moment the
last one is answered, for a window of a few answers' time. The requests are short chat requests,
each with a text of its own, so no prefix cache answers one from another's work. A level runs
until its window is over and every thread has ``ROUNDS`` answers, all ``n`` in flight the whole
time; answers that come after it stops are not counted. Its throughput is the sum of its threads'
rates, each read from its first answer to its last: leaving out the wait for the first answer
leaves out the queue's filling, so a server answering in whole batches reads its serving rate
exactly, and so does one with far more requests queued than it serves in the window.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from agentfuzz.errors import ProbeFailed
from agentfuzz.wire.target import Target

__all__ = ["GROW", "SHARE", "Curve", "ProbeFailed", "find_knee", "probe"]

# A level counts as still growing when it gives this much more than half its number did.
GROW = 1.10
# The knee: the fewest in flight that reach this share of the best throughput measured.
SHARE = 0.90
# Each thread's answers in a level, at least: its rate is read over all but the first.
ROUNDS = 3
# A narrowed range stops once its ends are this close.
_CLOSE = 1.25


@dataclass
class Curve:
    """What a probe measured: requests per second by number in flight, and the knee."""

    points: dict[int, float] = field(default_factory=dict)
    knee: int = 1

    def lines(self) -> list[str]:
        best = max(self.points.values(), default=0.0)
        out = [f"  {n:>4} in flight: {x:8.1f} requests/s" for n, x in sorted(self.points.items())]
        share = self.points.get(self.knee, 0.0) / best if best else 0.0
        out.append(f"  knee: {self.knee} in flight ({share:.0%} of the best, {best:.1f}/s)")
        return out


def find_knee(measure: Callable[[int], float], top: int) -> Curve:
    """The knee of ``measure`` (requests/s at n in flight), for n from 1 to ``top``."""
    curve = Curve()
    n = 1
    while True:
        curve.points[n] = measure(n)
        if n >= top or (n > 1 and curve.points[n] < GROW * curve.points[n // 2]):
            break
        n = min(2 * n, top)
    best = max(curve.points.values())
    hi = min(k for k, x in curve.points.items() if x >= SHARE * best)
    lo = max((k for k, x in curve.points.items() if k < hi), default=hi)
    while hi - lo > 1 and hi > _CLOSE * lo:
        mid = (lo + hi) // 2
        curve.points[mid] = measure(mid)
        best = max(best, curve.points[mid])
        if curve.points[mid] >= SHARE * best:
            hi = mid
        else:
            lo = mid
    curve.knee = hi
    return curve


def probe(
    base_url: str,
    model: str,
    *,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    top: int = 256,
    min_window: float = 2.0,
) -> Curve:
    """Measure ``base_url``'s throughput curve and its knee (``ProbeFailed`` when its
    requests are not answered)."""
    nonce = itertools.count()
    targets: list[Target] = []

    def target(k: int) -> Target:
        while len(targets) <= k:
            made = Target(base_url, model, api_key, timeout, headers=headers, recording=False)
            targets.append(made)
        return targets[k]

    def ask(k: int) -> float:
        """One request on target ``k``; its seconds, or ``ProbeFailed``."""
        body = {
            "model": model,
            "messages": [{"role": "user", "content": f"Say hello to visitor {next(nonce)}."}],
            "max_tokens": 64,
        }
        started = time.perf_counter()
        obs = target(k).resend("/chat/completions", body, False)
        status = obs.exchange.status
        if obs.exchange.failure or status is None or status >= 400:
            why = obs.exchange.failure or f"answered {status}"
            raise ProbeFailed(f"a probe request to {base_url} failed: {why}"[:300])
        return time.perf_counter() - started

    try:
        one = min(ask(0) for _ in range(3))
        window = max(min_window, 4 * one)
        return find_knee(lambda n: _level(n, window, ask), top)
    finally:
        for made in targets:
            made.close()


def _level(n: int, window: float, ask: Callable[[int], float]) -> float:
    """Requests/s with ``n`` in flight for at least ``window`` seconds."""
    answered: list[list[float]] = [[] for _ in range(n)]  # by thread, seconds from the start
    failed: list[BaseException] = []
    stop = threading.Event()
    lock = threading.Lock()
    full = [0]  # threads with ROUNDS answers
    started = time.perf_counter()

    def loop(k: int) -> None:
        mine = answered[k]
        try:
            while not stop.is_set():
                ask(k)
                now = time.perf_counter() - started
                if stop.is_set():
                    return  # the load fell once it stopped: this answer did not see n
                mine.append(now)
                with lock:
                    full[0] += len(mine) == ROUNDS
                    if now >= window and full[0] == n:
                        stop.set()
        except ProbeFailed as exc:
            failed.append(exc)
            stop.set()

    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise failed[0]
    return rate(answered)


def rate(answered: list[list[float]]) -> float:
    """Requests/s of a closed loop from when each thread's answers came: each thread's answers
    after its first over the time from its first to its last, summed."""
    return sum((len(t) - 1) / (t[-1] - t[0]) for t in answered if len(t) > 1 and t[-1] > t[0])
