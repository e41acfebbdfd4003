"""Build the live vLLM (CPU) target if needed, start it, run one agentfuzz campaign, stop it.

`python live/vllm/campaign.py [--parser NAME] [--out DIR] [--max-time S] [--workers N] ...` exits
with agentfuzz's own code (0 nothing found, 1 findings; findings are what this is for, not a
failure) unless `--findings-ok` turns 1 into 0; any other code means agentfuzz or the target broke.
With `--skip-offline`, a machine that cannot reach the package index skips (exit 0) with one line.
`--parser` serves one of vLLM's tool parsers (serve.PARSERS) with its own chat template; the fuzz
profile is then `vllm-cpu` with that parser's markup (see `profile`).
Run it with the interpreter agentfuzz is installed in.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from _kit import campaign_main  # noqa: E402
from serve import DEFAULT_CACHE, MARKUP, MODEL_NAME, PARSER, PARSERS, STORE, running  # noqa: E402

STOCK = HERE.parent.parent / "strategies" / "vllm-cpu.toml"


def main(argv: list[str] | None = None) -> int:
    return campaign_main("live-vllm", HERE, running, MODEL_NAME, default_cache=DEFAULT_CACHE,
                         profile=profile, max_examples=15, workers=4, timeout=300,
                         argv=argv, mode=(PARSER, STORE))  # fmt: skip


def _named(parser: str, store: str) -> str:
    return f"vllm-cpu-{parser}" + ("-store" if store == "on" else "")


def profile_text(parser: str, stock: str, store: str = "off") -> str:
    """`stock` (the text of vllm-cpu.toml) for `parser`: its `name` and `markup` lines replaced,
    and with the store on, `chain` added to its one-line `relations`; every other line kept."""
    tokens = ", ".join(json.dumps(token, ensure_ascii=False) for token in MARKUP[parser])
    markup = f"markup = [{tokens}]"
    stored = " with its Responses store on" if store == "on" else ""
    head = (
        f"# Written by live/vllm/campaign.py for vLLM's {parser} tool parser{stored}:\n"
        f"# strategies/vllm-cpu.toml with its name and markup (what {parser} can leak) replaced"
        + (", and the chain relation on" if store == "on" else "")
        + ".\n"
    )
    name = f'name = "{_named(parser, store)}"'
    text, names = re.subn(r"(?m)^name = .*$", name, stock, count=1)
    text, markups = re.subn(r"(?m)^markup = \[[^\n]*\]$", lambda _: markup, text, count=1)
    if names != 1 or markups != 1:
        raise SystemExit(f"campaign.py: {STOCK} has no one-line `name` and `markup` to replace")
    if store == "on":
        text, chains = re.subn(r"(?m)^(relations = \[[^\n]*)\]$", r'\1, "chain"]', text, count=1)
        if chains != 1:
            raise SystemExit(f"campaign.py: {STOCK} has no one-line `relations` to add to")
    return head + text


def profile(parser: str, store: str = "off", folder: Path = DEFAULT_CACHE / "profiles") -> str:
    """The fuzz profile for a tool parser and store mode: the stock `vllm-cpu` for the default
    parser with the store off; otherwise a copy written to `folder/<name>.toml` whose markup is
    that parser's (the tokens and tags its format can leak differ), with the `chain` relation
    when the store is on, and whose path is returned."""
    if parser == PARSERS[0] and store == "off":
        return "vllm-cpu"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_named(parser, store)}.toml"
    path.write_text(profile_text(parser, STOCK.read_text(), store))
    return str(path)


if __name__ == "__main__":
    sys.exit(main())
