"""Record one short session per reference profile and api/stream mode as a cassette.

Each session is deterministic (the reference server at temperature 0 answers a request the
same way every time) and is chosen to show the profile's seed bug when it has one, so the
cassettes double as offline regression tests of the client pipeline and its oracles.

    python tests/replay/record_seeds.py [--out cassettes]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentfuzz import oracles
from agentfuzz.judge.session import Turn, run_session
from agentfuzz.model.history import Api, Tool
from agentfuzz.model.modes import ALL_MODES
from agentfuzz.model.plan import Plan, Policy, Step
from agentfuzz.reference import BEHAVIOURS, serve_in_thread
from agentfuzz.tape.codec import Recorded, write_cassette
from agentfuzz.wire.target import Target
from agentfuzz.wire.transport.live import LiveTransport

WEATHER = Tool(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)

# The client ID policy under which each seed bug arises from the server's own answers.
POLICY: dict[str, Policy] = {
    "exo-kimi-k2": "sanitize",
    "exo-kimi-k2-fixed": "sanitize",
    "no-tools-leak": "strip-tools",
}


def plan_for(profile: str, api: Api, stream: bool) -> Plan:
    """Three turns: the user asks for the tool, its result goes back, the user asks again.

    Each answer is appended under the profile's policy, so the call id the server minted in
    turn 1 is in the history (as it came, or rewritten) when turn 3 makes the model write a
    new call header by imitating it.
    """
    policy = POLICY.get(profile, "passthrough")
    steps = (Step(policy=policy), Step(policy=policy), Step(ask=0, policy=policy))
    return Plan(tools=(WEATHER,), steps=steps, api=api, stream=stream)


def mode_name(api: Api, stream: bool) -> str:
    return f"{api}-{'stream' if stream else 'no-stream'}"


def record(profile: str, api: Api, stream: bool, path: Path) -> Path:
    """Serve ``profile``, run its session in one mode and write the cassette at ``path``."""
    recorded: list[Recorded] = []

    def keep(turn: Turn) -> None:
        if turn.observation.exchange.status is None:
            raise RuntimeError(f"{profile} turn {turn.number}: the exchange was not recorded")
        recorded.append(Recorded(turn.observation, turn.case, turn.violations))

    with serve_in_thread(profile) as url:
        with LiveTransport(url) as probe:
            model = probe.models()[0]
        target = Target(url, model, api_key=None, timeout=30.0)
        try:
            run_session(plan_for(profile, api, stream), target.observe, oracles.check, keep)
        finally:
            target.close()
        about = {
            "target": url,
            "model": model,
            "profile": profile,
            "kind": "session",
            "api": api,
            "stream": stream,
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_cassette(path, recorded, about)


def record_all(out: Path) -> list[Path]:
    """Every profile in every mode: ``out/<profile>/<api>-<stream|no-stream>.yaml``."""
    return [
        record(profile, api, stream, out / profile / f"{mode_name(api, stream)}.yaml")
        for profile in BEHAVIOURS
        for api, stream in ALL_MODES
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[2] / "cassettes"
    )
    args = parser.parse_args(argv)
    for path in record_all(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
