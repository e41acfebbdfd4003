#!/bin/sh
# Re-send agentfuzz's minimal request for relation: chained onto its stored answer the request costs 138 prompt tokens, the same conversation sent whole 145: the stored context is not the conversation that answer closed
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:44639/v1}"
MODEL="${MODEL:-kimi-k2-reference}"
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: chained onto its stored answer the request costs 138 prompt tokens, the same conversation sent whole 145: the stored context is not the conversation that answer' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"function_call_output","call_id":"functions.get_weather:0","output":"{\"ok\": true, \"tool\": \"get_weather\", \"turn\": 1}"}],"tools":[{"type":"function","name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false},"strict":false}],"stream":false,"previous_response_id":"resp_bGl0ZWxsbTpjdXN0b21fbGxtX3Byb3ZpZGVyOm9wZW5haTttb2RlbF9pZDo0ZDc5Y2E2OTkwY2UwYTRkNWVhZThhNzAzZWMzYWM1NmMwNmJjNzRjZTIzODdjOWNlZWIxNWZhODkyODIyNGQyO3Jlc3BvbnNlX2lkOmNoYXRjbXBsLWJjZTI2Y2M3ODg2OTMyYmYzMjkyYTQ4MDg0YmE1YThl"}
AGENTFUZZ_JSON
echo >&2
echo '--- and right after it, the request related to it (chain):' >&2
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"message","role":"user","content":"Use get_weather."},{"type":"function_call","id":"fc_functions.get_weather:0","call_id":"functions.get_weather:0","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"functions.get_weather:0","output":"{\"ok\": true, \"tool\": \"get_weather\", \"turn\": 1}"}],"tools":[{"type":"function","name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false},"strict":false}],"stream":false}
AGENTFUZZ_JSON
echo >&2
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle

oracle = 'relation'
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {oracle}: {found[0].message}")
else:
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced 10/10)")
AGENTFUZZ_PY
fi
