"""Middleman mode runs: ``agentfuzz fuzz`` through a planted proxy to the reference backend."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from agentfuzz.cli import cli

from .planted_proxy import free_port, planted_proxy


@dataclass(frozen=True)
class ProxyRun:
    """What one proxy-mode run left: its exit code, output and the bundles' signatures."""

    code: int
    output: str
    out: Path

    @property
    def signatures(self) -> set[str]:
        docs = (json.loads(p.read_text()) for p in self.out.glob("*/repro.json"))
        return {doc["signature"] for doc in docs}


def fuzz_through(fault: str, out: Path, *args: str, backend: str = "fixed") -> ProxyRun:
    """``agentfuzz fuzz`` against the planted proxy with ``fault``, its backend started by
    agentfuzz (``--backend``) on the port the proxy forwards to."""
    port = free_port()
    with planted_proxy(port, fault) as url:
        result = CliRunner().invoke(
            cli,
            [
                "fuzz", "--quiet", "--seed", "11", "--base-url", url, "--backend", backend,
                "--backend-port", str(port), "--out", str(out), *args,
            ],
        )  # fmt: skip
    assert "Traceback" not in result.output, result.output
    return ProxyRun(result.exit_code, result.output, out)
