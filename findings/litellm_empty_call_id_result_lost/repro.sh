#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -N -X POST http://127.0.0.1:47707/v1/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"kimi-k2-reference","input":[{"type":"message","role":"user","content":""},{"type":"function_call","call_id":"","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"","output":""}],"tools":[{"type":"function","name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false},"strict":false}],"stream":true}
AGENTFUZZ_JSON
