#!/bin/sh
# Re-send agentfuzz's minimal request for puppet_truth: 0 call(s) returned for the 1 written
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:37849/v1}"
MODEL="${MODEL:-smollm2}"
# A trailing slash (http://host/v1/) would post to //chat/completions: it goes.
BASE_URL=$(printf '%s' "$BASE_URL" | sed 's:/*$::')
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: the script the request carries (vllm_xargs) beside the calls and text returned (0 call(s) returned for the 1 written)' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -N -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"message","role":"user","content":"Please use the tools you have to answer."}],"tools":[{"type":"function","name":"search","description":"Call search when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"boolean"}}},"strict":false}],"stream":true,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"hunyuan_a13b\", \"script\": {\"calls\": [{\"name\": \"search\", \"arguments\": {\"city\": true}, \"id\": null}], \"text_before\": \"Sure.\\n \", \"text_between\": \"\", \"text_after\": \"\"}, \"v\": 1, \"text\": \"Sure.\\n \\n<tool_calls>[{\\\"name\\\": \\\"search\\\", \\\"arguments\\\": {\\\"city\\\": true}}]</tool_calls>\"}"}}
AGENTFUZZ_JSON
echo >&2
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle
oracle = 'puppet_truth'
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {oracle}: {found[0].message}")
else:
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced 10/10)")
AGENTFUZZ_PY
fi
