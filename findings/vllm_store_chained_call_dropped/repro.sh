#!/bin/sh
# Re-send agentfuzz's minimal request for relation: chained onto its stored answer the request costs 23 prompt tokens, the same conversation sent whole 80: the stored context is not the conversation that answer closed
# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.
BASE_URL="${BASE_URL:-http://127.0.0.1:18124/v1}"
MODEL="${MODEL:-smollm2}"
HERE=$(cd "$(dirname "$0")" && pwd)
echo 'look for: chained onto its stored answer the request costs 23 prompt tokens, the same conversation sent whole 80: the stored context is not the conversation that answer c' >&2
model=$(printf '%s' "$MODEL" | sed 's/[\\"]/\\&/g')
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"message","role":"user","content":"Please use the tools you have to answer."}],"stream":false,"temperature":0.0,"max_output_tokens":160,"previous_response_id":"resp_91bb1e8b7a6a6d1c"}
AGENTFUZZ_JSON
echo >&2
echo '--- and right after it, the request related to it (chain):' >&2
{ printf '{"model":"%s",' "$model"; cat <<'AGENTFUZZ_JSON'; } | curl -sS -X POST "$BASE_URL"/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @-
"input":[{"type":"message","role":"user","content":"Thanks. What else can you tell me?"},{"type":"function_call","id":"fc_84e40da131601952","call_id":"chatcmpl-tool-b37cdee9d9405fef","name":"files__send_email","arguments":"{\"email_id\": \"email_id_to_send_email_to_email_address\"}","namespace":"crm"},{"type":"message","role":"user","content":"Please use the tools you have to answer."}],"stream":false,"temperature":0.0,"max_output_tokens":160}
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
