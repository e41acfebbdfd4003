#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -X POST http://127.0.0.1:39741/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"smollm2","messages":[{"role":"user","content":""}],"tools":[{"type":"function","function":{"name":"get\"weather","description":"Call get\"weather when the user asks for it.","parameters":{"type":"object","properties":{"mode":{"type":"string","enum":["a\"b","c\\d","é"]},"fixed":{"const":"x"},"level":{"type":"integer","default":3}},"additionalProperties":false,"required":["mode","fixed"]}}}],"tool_choice":"required","stream":false,"seed":0,"temperature":0.0,"max_tokens":160}
AGENTFUZZ_JSON
