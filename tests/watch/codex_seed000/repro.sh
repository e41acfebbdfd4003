#!/bin/sh
# Re-send agentfuzz's minimal request for empty_turn: 2xx turn with no visible text and no tool call (nothing at all)
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:42997/v1}"
MODEL="${MODEL:-kimi-k2-reference}"
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: an answer with no text and no tool call (2xx turn with no visible text and no tool call (nothing at all))' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -N -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"message","role":"user","content":"Please use the tools you have to answer."},{"type":"function_call","call_id":"call_0","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"call_0","output":"{\"status\": \"ok\"}"},{"type":"message","role":"user","content":"Please use the tools you have to answer."}],"tools":[{"type":"function","name":"exec_command","description":"Runs a command in a PTY, returning output or a session ID for ongoing interaction.","parameters":{"type":"object","properties":{"cmd":{"type":"string","description":"Shell command to execute."},"justification":{"type":"string","description":"User-facing approval question for `require_escalated`; omit otherwise."},"login":{"type":"boolean","description":"Request login-shell startup. Omit to inherit."},"max_output_tokens":{"type":"number","description":"Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy."},"prefix_rule":{"type":"array","description":"Reusable approval prefix for `cmd`, only with `sandbox_permissions: \"require_escalated\"`; for example [\"git\", \"pull\"].","items":{"type":"string"}},"sandbox_permissions":{"type":"string","description":"Per-command sandbox override. Defaults to `use_default`; use `require_escalated` for unsandboxed execution.","enum":["use_default","require_escalated"]},"shell":{"type":"string","description":"Shell binary to launch. Defaults to the user's default shell."},"tty":{"type":"boolean","description":"True allocates a PTY for the command; false or omitted uses plain pipes."},"workdir":{"type":"string","description":"Working directory for the command. Defaults to the turn cwd."},"yield_time_ms":{"type":"number","description":"Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms."}},"required":["cmd"],"additionalProperties":false},"strict":false}],"stream":true}
AGENTFUZZ_JSON
echo >&2
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle

oracle = 'empty_turn'
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {oracle}: {found[0].message}")
else:
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced 10/10)")
AGENTFUZZ_PY
fi
