#!/bin/sh
# Re-send agentfuzz's minimal request for puppet_cut: reported complete (tool_calls) under a token budget, yet call 0 named 'get', written 'get_weather'
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:44899/v1}"
MODEL="${MODEL:-smollm2}"
# A trailing slash (http://host/v1/) would post to //chat/completions: it goes.
BASE_URL=$(printf '%s' "$BASE_URL" | sed 's:/*$::')
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: finish_reason / status against what the script wrote, and calls the script never holds (reported complete (tool_calls) under a token budget, yet call 0 named '"'"'get'"'"', written '"'"'get_weather'"'"')' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"messages":[{"role":"user","content":"Please use the tools you have to answer."}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{}}}}],"stream":false,"max_tokens":9,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"qwen3_coder\", \"script\": {\"calls\": [{\"name\": \"get_weather\", \"arguments\": {}, \"id\": null}], \"text_before\": \"Sure.\", \"text_between\": \"\", \"text_after\": \"\"}, \"v\": 1, \"text\": \"Sure.\\n<tool_call>\\n<function=get_weather>\\n</function>\\n</tool_call>\"}"}}
AGENTFUZZ_JSON
echo >&2
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle
oracle = 'puppet_cut'
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {oracle}: {found[0].message}")
else:
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced 10/10)")
AGENTFUZZ_PY
fi
