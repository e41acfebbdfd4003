#!/bin/sh
# Re-send agentfuzz's minimal request for stream_divergence: streamed and non-streamed answers to the same request differ (shape): stream gave text, non-stream gave nothing
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:46417/v1}"
MODEL="${MODEL:-smollm2}"
# A trailing slash (http://host/v1/) would post to //chat/completions: it goes.
BASE_URL=$(printf '%s' "$BASE_URL" | sed 's:/*$::')
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: the two answers side by side, streamed and not: the kind of turn, the call names or arguments, the visible text, or whether the token limit cut it (streamed and non-streamed answers to the same request differ (shape): stream gave text, non-stream gave nothing)' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"messages":[{"role":"user","content":"Use ns.tool."}],"tools":[{"type":"function","function":{"name":"ns.tool","description":"Call ns.tool when the user asks for it.","parameters":{"type":"object","properties":{"dotted.key":{"type":"integer"},"path":{"type":"object"},"class":{"type":"string"},"with space":{"type":"string"}}}}}],"stream":false,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"deepseek_v3\", \"script\": {\"calls\": [{\"name\": \"ns.tool\", \"arguments\": {\"dotted.key\": -189194, \"path\": {\"<｜tool▁calls▁begin｜>\": {\"<｜tool▁calls▁begin｜>\": {}}}, \"class\": \"\", \"with space\": \"\\\\n\"}, \"id\": null}], \"text_before\": \"\\n\\n\", \"text_between\": \"\", \"text_after\": \"\", \"unclosed\": true}, \"v\": 1, \"text\": \"\\n\\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>ns.tool\\n```json\\n{\\\"dotted.key\\\": -189194, \\\"path\\\": {\\\"<｜tool▁calls▁begin｜>\\\": {\\\"<｜tool▁calls▁begin｜>\\\": {}}}, \\\"class\\\": \\\"\\\", \\\"with space\\\": \\\"\\\\\\\\n\\\"}\\n```<｜tool▁call▁end｜>\"}"},"stop":"<｜tool▁call▁begin｜>"}
AGENTFUZZ_JSON
echo >&2
echo '--- and right after it, the request related to it (stream):' >&2
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -N -X POST "$BASE_URL"/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"messages":[{"role":"user","content":"Use ns.tool."}],"tools":[{"type":"function","function":{"name":"ns.tool","description":"Call ns.tool when the user asks for it.","parameters":{"type":"object","properties":{"dotted.key":{"type":"integer"},"path":{"type":"object"},"class":{"type":"string"},"with space":{"type":"string"}}}}}],"stream":true,"vllm_xargs":{"agentfuzz_puppet":"{\"format\": \"deepseek_v3\", \"script\": {\"calls\": [{\"name\": \"ns.tool\", \"arguments\": {\"dotted.key\": -189194, \"path\": {\"<｜tool▁calls▁begin｜>\": {\"<｜tool▁calls▁begin｜>\": {}}}, \"class\": \"\", \"with space\": \"\\\\n\"}, \"id\": null}], \"text_before\": \"\\n\\n\", \"text_between\": \"\", \"text_after\": \"\", \"unclosed\": true}, \"v\": 1, \"text\": \"\\n\\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>ns.tool\\n```json\\n{\\\"dotted.key\\\": -189194, \\\"path\\\": {\\\"<｜tool▁calls▁begin｜>\\\": {\\\"<｜tool▁calls▁begin｜>\\\": {}}}, \\\"class\\\": \\\"\\\", \\\"with space\\\": \\\"\\\\\\\\n\\\"}\\n```<｜tool▁call▁end｜>\"}"},"stop":"<｜tool▁call▁begin｜>"}
AGENTFUZZ_JSON
echo >&2
if python3 -c 'from agentfuzz import resend_bundle' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle
oracle = 'stream_divergence'
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {oracle}: {found[0].message}")
else:
    print(f"not fired: {oracle} (fixed, or a flaky fault: it reproduced pending)")
AGENTFUZZ_PY
fi
