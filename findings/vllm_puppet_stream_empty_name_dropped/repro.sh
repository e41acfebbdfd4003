#!/bin/sh
# Re-send agentfuzz's minimal request for empty_turn: 2xx turn with no visible text and no tool call (nothing at all)
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:44157/v1}"
MODEL="${MODEL:-smollm2}"
# A trailing slash (http://host/v1/) would post to //chat/completions: it goes.
BASE_URL=$(printf '%s' "$BASE_URL" | sed 's:/*$::')
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: an answer with no text and no tool call (2xx turn with no visible text and no tool call (nothing at all))' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -N -X POST "$BASE_URL"/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"messages":[{"role":"user","content":""}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{}}}}],"stream":true,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"hermes\", \"script\": {\"calls\": [{\"name\": \"\", \"arguments\": {}, \"id\": null}], \"text_before\": \"\", \"text_between\": \"\", \"text_after\": \"\"}, \"v\": 1, \"text\": \"<tool_call>\\n{\\\"name\\\": \\\"\\\", \\\"arguments\\\": {}}\\n</tool_call>\"}"}}
AGENTFUZZ_JSON
echo >&2
echo '--- and right after it, the request related to it (stream):' >&2
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"messages":[{"role":"user","content":""}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{}}}}],"stream":false,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"hermes\", \"script\": {\"calls\": [{\"name\": \"\", \"arguments\": {}, \"id\": null}], \"text_before\": \"\", \"text_between\": \"\", \"text_after\": \"\"}, \"v\": 1, \"text\": \"<tool_call>\\n{\\\"name\\\": \\\"\\\", \\\"arguments\\\": {}}\\n</tool_call>\"}"}}
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
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced pending)")
AGENTFUZZ_PY
fi
