"""Real agent clients through `agentfuzz proxy`, in front of the reference server's profiles.

    python live/agents/run.py [--profile NAME ...]
    python live/agents/run.py --upstream http://HOST:8000/v1 --model NAME --fuzz-profile vllm-cpu

The plain openai SDK loop and the OpenAI Agents SDK's `Runner` (both from the project's own
environment: `pip install -e '.[test]'`), over chat completions and Responses, streamed and not.
For each seed profile it runs the client that meets its bug; for each fixed profile every client.
Each line says what the client did (requests, tools run, its last words or its error) and what
the proxy caught. Exit 0 when every seed bug was caught and every fixed profile stayed silent.
With `--upstream` every client runs once in front of that server instead, its bundles written
under `--out`, judged under `--fuzz-profile` (what that server's model does on its own); exit 1
when the proxy caught something.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_clients import CATCHES, FIXED, LOOPS, Did, Loop

from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.watch import Watch, watching


def _through(profile: str, loop: Loop, out: Path) -> tuple[Did, list[str]]:
    with serve_in_thread(profile) as upstream:
        watch = Watch(upstream, out, say=lambda _: None)
        try:
            with watching(upstream, watch) as url:
                did = loop(url)
        finally:
            watch.close()
    return did, [f"turn {c.turn}: {c.violation.signature}" for c in watch.caught]


def _in_front_of(upstream: str, model: str, fuzz_profile: str, out: Path) -> int:
    """Every client once through the proxy in front of ``upstream``; 1 when it caught anything."""
    profile = load_profile(fuzz_profile)
    said = " ".join(["python live/agents/run.py", "--upstream", upstream, "--model", model])
    watch = Watch(
        upstream,
        out,
        found_by={"command": f"{said} --fuzz-profile {fuzz_profile}"},
        model_signatures=profile.quiet_signatures,
        markup=profile.markup,
        say=lambda line: print(f"  proxy: {line}"),
    )
    try:
        with watching(upstream, watch) as url:
            for name, loop in LOOPS.items():
                print(loop(url, model).line(name), flush=True)
    finally:
        watch.close()
    print(
        f"{watch.judged} turns judged in {len(watch.sessions.all)} sessions, "
        f"{len(watch.caught)} findings (in {out})"
    )
    return 1 if watch.caught else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="append", help="only these profiles")
    parser.add_argument("--upstream", help="a real server's base URL, with its /v1")
    parser.add_argument("--model", default="m", help="with --upstream: the model name")
    parser.add_argument("--fuzz-profile", default="default", help="with --upstream")
    parser.add_argument("--out", type=Path, default=Path("agentfuzz-out"), help="with --upstream")
    args = parser.parse_args(argv)
    if args.upstream:
        return _in_front_of(args.upstream.rstrip("/"), args.model, args.fuzz_profile, args.out)
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
