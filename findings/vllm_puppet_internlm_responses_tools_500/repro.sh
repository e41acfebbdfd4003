#!/bin/sh
# Re-send agentfuzz's minimal request for error: http_status: the server answered with an error status: 500: {"error":{"message":"'FunctionTool' object has no attribute 'function'","type":"InternalServerError","param":null,…
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:54709/v1}"
MODEL="${MODEL:-smollm2}"
# A trailing slash (http://host/v1/) would post to //chat/completions: it goes.
BASE_URL=$(printf '%s' "$BASE_URL" | sed 's:/*$::')
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: a 5xx status, an error event, or a stream that ends early (http_status: the server answered with an error status: 500: {"error":{"message":"'"'"'FunctionTool'"'"' object has no attribute '"'"'function'"'"'","type":"InternalServerError")' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"message","role":"user","content":"Please use the tools you have to answer."}],"tools":[{"type":"function","name":"search","description":"Call search when the user asks for it.","parameters":{"type":"object","properties":{}},"strict":false}],"stream":false,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"internlm\", \"script\": {\"calls\": [{\"name\": \"search\", \"arguments\": {}, \"id\": null}], \"text_before\": \"\", \"text_between\": \"\", \"text_after\": \"\"}, \"v\": 1, \"text\": \"<|action_start|><|plugin|>\\n{\\\"name\\\": \\\"search\\\", \\\"parameters\\\": {}}<|action_end|>\"}"}}
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
