"""Build the live llama.cpp (CPU) target if needed, start it, run one agentfuzz campaign, stop it.

`python live/llamacpp/campaign.py [--out DIR] [--max-time S] [--workers N] ...` exits with
agentfuzz's own code (0 nothing found, 1 findings; findings are what this is for, not a failure)
unless `--findings-ok` turns 1 into 0; any other code means agentfuzz or the target broke. With
`--skip-offline`, a machine that cannot reach the package index skips (exit 0) with one line.
Only chat completions are fuzzed: llama-cpp-python's server has no `/v1/responses` (404).
Run it with the interpreter agentfuzz is installed in.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from _kit import campaign_main  # noqa: E402
from serve import CHAT_FORMAT, DEFAULT_CACHE, MODEL_NAME, running  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    # One fuzz profile for both chat formats: what the server claims (its request schema's
    # knobs) is the same, and neither format's own markers are special tokens of SmolLM2.
    return campaign_main("live-llamacpp", HERE, running, MODEL_NAME, default_cache=DEFAULT_CACHE,
                         profile="llamacpp", max_examples=40, workers=2, timeout=120,
                         extra=("--api", "chat"), argv=argv, mode=CHAT_FORMAT)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
