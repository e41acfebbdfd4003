"""How often each finding bundle's fault shows on the live vLLM target: the rates in FINDINGS.md.

`python live/vllm/rates.py BUNDLE... [--base-url URL] [-n 10] [--parallel 4]` re-sends each
bundle's minimal request n times one after another, then n times with `--parallel` requests in
flight at once (batched on the server: on this CPU build greedy outputs then differ slightly),
and counts the answers where the bundle's own signature fires. Without `--base-url` it starts
the server from the cache (see serve.py) and stops it at the end; with `--puppet PARSER`, the
puppet server of that parser instead (puppet_check.py: the processor, the tiny puppet model),
for bundles a puppet campaign wrote. Run it with the interpreter agentfuzz is installed in.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serve import DEFAULT_CACHE, MODEL_NAME, ServerError, running  # noqa: E402


def _fires(bundle: Path, base_url: str) -> bool:
    from agentfuzz.tape.replay import resend_bundle

    signature = json.loads((bundle / "repro.json").read_text())["signature"]
    return any(v.signature == signature for v in resend_bundle(bundle, base_url, MODEL_NAME))


def _rate(bundle: Path, base_url: str, n: int, parallel: int) -> int:
    if parallel <= 1:
        return sum(_fires(bundle, base_url) for _ in range(n))
    with ThreadPoolExecutor(parallel) as pool:
        return sum(pool.map(lambda _: _fires(bundle, base_url), range(n)))


@contextmanager
def _server(base_url: str | None, cache: Path, puppet: str | None) -> Iterator[str]:
    if puppet is not None and base_url is None:
        from puppet_check import puppet_server, server_options

        options = argparse.ArgumentParser()
        server_options(options)
        args = options.parse_args(["--cache", str(cache)])
        args.logs = cache
        with puppet_server(args, puppet, cache / f"rates-puppet-{puppet}.log") as url:
            yield url
        return
    with nullcontext(base_url) if base_url else running(cache) as url:
        yield url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundles", nargs="+", type=Path)
    parser.add_argument("--base-url")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("-n", type=int, default=10)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--puppet", metavar="PARSER", help="start the puppet server of PARSER")
    args = parser.parse_args(argv)
    missing = [b for b in args.bundles if not (b / "repro.json").is_file()]
    if missing:
        print(f"rates: not a bundle (no repro.json): {missing[0]}", file=sys.stderr)
        return 2
    try:
        with _server(args.base_url, args.cache, args.puppet) as url:
            print(f"| bundle | alone | {args.parallel} in flight |")
            print("| --- | --- | --- |")
            for bundle in args.bundles:
                alone = _rate(bundle, url, args.n, 1)
                batched = _rate(bundle, url, args.n, args.parallel)
                print(f"| {bundle.name} | {alone}/{args.n} | {batched}/{args.n} |", flush=True)
    except ServerError as exc:
        print(f"rates: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
