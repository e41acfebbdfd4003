#!/bin/sh
# Re-send agentfuzz's minimal request for wire_schema: ChatCompletionChunk rejects choices.*.logprobs.content.*.top_logprobs: Input should be a valid list (in 4 payloads)
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:60371/v1}"
MODEL="${MODEL:-vllm/kimi-k2-reference}"
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: a body or event the OpenAI schema does not allow (ChatCompletionChunk rejects choices.*.logprobs.content.*.top_logprobs: Input should be a valid list (in 4 payloads))' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -N -X POST "$BASE_URL"/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"messages":[{"role":"user","content":"Please use the tools you have to answer."},{"role":"assistant","content":null,"tool_calls":[{"id":"functions.get_time:0","type":"function","function":{"name":"get_time","arguments":"{}"}}]},{"role":"tool","tool_call_id":"functions.get_time:0","content":"{\"status\": \"ok\"}"}],"tools":[{"type":"function","function":{"name":"get_time","description":"Call get_time when the user asks for it.","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"number"}},"additionalProperties":false,"required":["query"]}}}],"stream":true,"logprobs":true}
AGENTFUZZ_JSON
echo >&2
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle

oracle = 'wire_schema'
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {oracle}: {found[0].message}")
else:
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced pending)")
AGENTFUZZ_PY
fi
