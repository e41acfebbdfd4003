#!/bin/sh
# Re-send agentfuzz's minimal request for empty_turn: 2xx turn with no visible text and no tool call (nothing at all)
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:35723/v1}"
MODEL="${MODEL:-smollm2}"
# A trailing slash (http://host/v1/) would post to //chat/completions: it goes.
BASE_URL=$(printf '%s' "$BASE_URL" | sed 's:/*$::')
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: an answer with no text and no tool call (2xx turn with no visible text and no tool call (nothing at all))' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -N -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"message","role":"user","content":"Use get_weather."},{"type":"function_call","call_id":"functions_get_weather_0","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"functions_get_weather_0","output":"{\"ok\": true, \"tool\": \"get_weather\", \"turn\": 1}"}],"tools":[{"type":"function","name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":false},{"type":"function","name":"search","description":"Call search when the user asks for it.","parameters":{"type":"object","properties":{"query":{"type":"string"}}},"strict":false}],"stream":true,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"kimi_k2\", \"script\": {\"calls\": [{\"name\": \"get_weather\", \"arguments\": {}, \"id\": null}], \"text_before\": \"\", \"text_between\": \"\", \"text_after\": \"\"}, \"v\": 1, \"template\": \"<|tool_calls_section_begin|><|tool_call_begin|>{{header}}<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>\", \"pattern\": \"(?s)<\\\\|tool_call_begin\\\\|>(?P<header>(?!functions\\\\.[^<]*:\\\\d+<)[^<]*?)<\\\\|tool_call_argument_begin\\\\|>(?!.*<\\\\|tool_call_begin\\\\|>)\", \"default\": \"functions.get_weather:1\"}"}}
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
