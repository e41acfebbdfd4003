"""Hypothesis's randomness made a pass's own: what one Hypothesis pass (``passes.run_pass``)
draws depends on the seed, the strategy and agentfuzz alone, whatever else the process has
loaded or however many threads run passes."""

from __future__ import annotations

import contextlib
import functools
import importlib
import pkgutil
import random
import threading
from collections.abc import Iterator
from typing import Any

from hypothesis.internal.conjecture import providers as _providers

__all__ = ["seed_alone", "thread_random"]


def thread_random() -> None:
    """Give this thread Hypothesis's per-thread Random before Hypothesis makes it.

    Made by Hypothesis on a thread's first example, it is registered for management: a full
    ``gc.collect()`` then, and from then on every example of every thread saves, seeds and
    restores the state of every registered Random. With 128 shard threads in one process
    (``--workers 256`` on two cores) that was most of the process's CPU. Unregistered, it only
    draws the seed of an unseeded run, as it would; agentfuzz draws nothing from it inside an
    example. Should Hypothesis rename it, this does nothing and the cost comes back.
    """
    from hypothesis import core

    with contextlib.suppress(AttributeError):
        if core.threadlocal._hypothesis_global_random is None:
            core.threadlocal._hypothesis_global_random = random.Random()


# Hypothesis mixes into what it draws the constants of every "local" module loaded at the time
# (an editable install's, the user's own). Which modules a process happened to import would then
# change what a seed generates: a campaign's seed would not give the same requests in the CLI and
# under pytest, after an unrelated change, or from a wheel (whose modules are not "local" at all).
# While a pass runs, the constants are those of the packages that generate requests (GENERATORS):
# the markup, field names and id shapes they hold are a fuzzing dictionary worth keeping. The rest
# of agentfuzz stays out: a report's wording or the puppet's catalogue must not move what a seed
# draws, and the reference server's planted faults must not hand the fuzzer their own triggers.
# Counted, since --workers runs passes in threads of one process.
GENERATORS = ("request", "strategies")
_LOCAL: dict[str, Any] = {"depth": 0, "saved": None}
_LOCAL_LOCK = threading.Lock()


@functools.cache
def _own_constants() -> Any:
    from hypothesis.internal.constants_ast import Constants, constants_from_module

    import agentfuzz

    found = Constants()
    for package in GENERATORS:
        root = importlib.import_module(f"{agentfuzz.__name__}.{package}")
        names = [root.__name__]
        names += [m.name for m in pkgutil.walk_packages(root.__path__, root.__name__ + ".")]
        for name in sorted(names):
            found = found | constants_from_module(importlib.import_module(name))
    return found


@contextlib.contextmanager
def seed_alone() -> Iterator[None]:
    """Generation that depends on the seed, the strategy and agentfuzz alone (see ``_LOCAL``).
    A Hypothesis without local constants (before 6.131, or one that moved them) needs nothing."""
    if not hasattr(_providers, "_get_local_constants") or not hasattr(
        _providers, "CONSTANTS_CACHE"
    ):
        yield
        return
    constants = _own_constants()
    with _LOCAL_LOCK:
        if _LOCAL["depth"] == 0:
            _LOCAL["saved"] = _providers._get_local_constants
            _providers._get_local_constants = lambda: constants
            _providers.CONSTANTS_CACHE.cache.clear()
        _LOCAL["depth"] += 1
    try:
        yield
    finally:
        with _LOCAL_LOCK:
            _LOCAL["depth"] -= 1
            if _LOCAL["depth"] == 0:
                _providers._get_local_constants = _LOCAL["saved"]
                _providers.CONSTANTS_CACHE.cache.clear()
