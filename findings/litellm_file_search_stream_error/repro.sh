#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -N -X POST http://127.0.0.1:43155/v1/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"kimi-k2-reference","input":[{"type":"message","role":"user","content":""}],"tools":[{"type":"file_search","vector_store_ids":["vs_agentfuzz"]}],"stream":true}
AGENTFUZZ_JSON
