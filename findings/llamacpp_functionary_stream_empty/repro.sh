#!/bin/sh
# Re-send agentfuzz's minimal request for error: no_terminal: the stream ended without its terminal event: stream with no events (status 200)
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:39875/v1}"
MODEL="${MODEL:-smollm2}"
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: a 5xx status, an error event, or a stream that ends early (no_terminal: the stream ended without its terminal event: stream with no events (status 200))' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -N -X POST "$BASE_URL"/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"messages":[{"role":"user","content":"Use get_weather."}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false}}}],"stream":true,"seed":0,"temperature":0.0,"max_tokens":160}
AGENTFUZZ_JSON
echo >&2
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle

oracle = 'error'
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {oracle}: {found[0].message}")
else:
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced pending)")
AGENTFUZZ_PY
fi
