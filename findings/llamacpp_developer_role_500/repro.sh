#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -X POST http://127.0.0.1:55679/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"smollm2","messages":[{"role":"developer","content":""},{"role":"user","content":""}],"stream":false}
AGENTFUZZ_JSON
