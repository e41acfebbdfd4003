"""Real agent clients through `agentfuzz proxy`, in front of the reference server's profiles.

    python live/agents/run.py [--profile NAME ...]

The plain openai SDK loop and the OpenAI Agents SDK's `Runner` (both from the project's own
environment: `pip install -e '.[test]'`), over chat completions and Responses, streamed and not.
For each seed profile it runs the client that meets its bug; for each fixed profile every client.
Each line says what the client did (requests, tools run, its last words or its error) and what
the proxy caught. Exit 0 when every seed bug was caught and every fixed profile stayed silent.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_clients import CATCHES, FIXED, LOOPS, Did, Loop

from agentfuzz.reference import serve_in_thread
from agentfuzz.watch import Watch, watching


def _through(profile: str, loop: Loop, out: Path) -> tuple[Did, list[str]]:
    with serve_in_thread(profile) as upstream:
        watch = Watch(upstream, out, say=lambda _: None)
        try:
            with watching(upstream, watch) as url:
                did = loop(url)
        finally:
            watch.close()
    return did, [f"turn {c.turn}: {c.violation.signature}" for c in watch.caught]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="append", help="only these profiles")
    args = parser.parse_args(argv)
    wanted = set(args.profile or ())
    missed = 0
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        for n, (profile, client, loop, signature) in enumerate(CATCHES):
            if wanted and profile not in wanted:
                continue
            did, caught = _through(profile, loop, out / f"seed-{n}")
            hit = any(c.split(": ", 1)[1].startswith(signature) for c in caught)
            missed += not hit
            print(f"{profile}: {did.line(client)}")
            print(f"  proxy: {caught or 'nothing'} {'(as expected)' if hit else '(MISSED)'}")
        for profile in FIXED:
            if wanted and profile not in wanted:
                continue
            for name, loop in LOOPS.items():
                did, caught = _through(profile, loop, out / f"{profile}-{len(name)}")
                missed += bool(caught)
                print(f"{profile}: {did.line(name)}; proxy: {caught or 'silent'}")
    print("every seed caught, every fixed profile silent" if not missed else f"{missed} misses")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
