#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -N -X POST http://127.0.0.1:36287/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"smollm2","messages":[{"role":"user","content":[{"type":"text","text":""},{"text":"no type"}]}],"stream":true,"seed":0,"temperature":0.0,"max_tokens":160}
AGENTFUZZ_JSON
