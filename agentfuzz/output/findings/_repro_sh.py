"""``repro.sh``: a bundle's failing request as ``curl``, then each request related to it, sent
to ``$BASE_URL`` with ``$MODEL``; it says what to look for, and with agentfuzz installed whether
the oracle fired again."""

from __future__ import annotations

import json
import shlex
from typing import Any

from agentfuzz.output.findings._repro import Repro, related_requests
from agentfuzz.output.reports.bundle import look_for


def _endpoint(url: str, base_url: str | None) -> tuple[str, str]:
    """The base URL and the path after it (``/chat/completions``) of a posted URL."""
    if base_url and url.startswith(base_url.rstrip("/") + "/"):
        base = base_url.rstrip("/")
        return base, url[len(base) :]
    for path in ("/chat/completions", "/responses"):
        if url.endswith(path):
            return url[: -len(path)], path
    head, _, tail = url.rpartition("/")
    return head, "/" + tail


_CHECK = """\
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle
oracle = {oracle}
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {{oracle}}: {{found[0].message}}")
else:
    print(f"not fired: {{oracle}} (fixed, or a flaky fault: it reproduced {reproduced})")
AGENTFUZZ_PY
fi
"""


def repro_sh(repro: Repro) -> str:
    """``repro.sh``: the request as curl, to ``$BASE_URL`` with ``$MODEL`` (defaults: where it
    was found), then each request related to it; it says what to look for, and with agentfuzz
    installed whether it fired."""
    target = repro.target or {}
    base, path = _endpoint(repro.url, target.get("base_url"))
    request = repro.request
    model = request.get("model") if isinstance(request, dict) else None
    v = repro.violation
    lines = [
        "#!/bin/sh",
        f"# Re-send agentfuzz's minimal request for {v.oracle}: {_one_line(v.message)}",
        "# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.",
        f'BASE_URL="${{BASE_URL:-{_sh_default(base)}}}"',
        f'MODEL="${{MODEL:-{_sh_default(str(model or ""))}}}"',
        "# A trailing slash (http://host/v1/) would post to //chat/completions: it goes.",
        "BASE_URL=$(printf '%s' \"$BASE_URL\" | sed 's:/*$::')",
        'HERE=$(cd "$(dirname "$0")" && pwd)',
        f"echo {shlex.quote('look for: ' + look_for(v.oracle, v.message))} >&2",
        "model=$(printf '%s' \"$MODEL\" | sed 's/[\\\\\"]/\\\\&/g')",
        *_post(path, request, repro.case.stream),
    ]
    for entry in related_requests(repro.observation):
        _, other_path = _endpoint(entry["url"], target.get("base_url"))
        lines.append(f"echo {shlex.quote(_related_line(entry['relation']))} >&2")
        lines += _post(other_path, entry["request"], entry["stream"])
    check = _CHECK.format(oracle=repr(v.oracle), reproduced=repro.reproduced)
    return "\n".join(lines) + "\n" + check


def _related_line(relation: str) -> str:
    return f"--- and right after it, the request related to it ({relation}):"


def _post(path: str, request: dict[str, Any] | str, stream: bool) -> list[str]:
    """The lines of ``repro.sh`` that post ``request`` to ``$BASE_URL`` + ``path`` (with
    ``$MODEL`` in place of its model, when it has one)."""
    flags = "-sS -N" if stream else "-sS"
    command = (
        f'curl {flags} -X POST "$BASE_URL"{shlex.quote(path)} \\\n'
        "  -H 'Content-Type: application/json' \\\n"
        '  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \\\n'
        "  --data-binary @-"
    )
    if isinstance(request, str) or "model" not in request:
        # A malformed body (or one without a model), byte for byte: $MODEL cannot apply.
        text = request if isinstance(request, str) else _json(request)
        return [f"printf %s {shlex.quote(text)} | {command}", "echo >&2"]
    rest = {k: val for k, val in request.items() if k != "model"}
    opening = 'printf \'{"model":"%s"' + ("," if rest else "") + '\' "$model"'
    return [
        f"{{ {opening}; cat <<'AGENTFUZZ_JSON'; }} | {command}",
        _json(rest)[1:] if rest else "}",
        "AGENTFUZZ_JSON",
        "echo >&2",
    ]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _sh_default(value: str) -> str:
    """``value`` safe inside ``"${VAR:-…}"``."""
    return "".join("\\" + ch if ch in '"$`\\}' else ch for ch in value)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]
