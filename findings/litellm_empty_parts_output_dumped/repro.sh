#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -X POST http://127.0.0.1:56691/v1/responses \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"kimi-k2-reference","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":""}]},{"type":"function_call","call_id":"call_0","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"call_0","output":[{"type":"input_text","text":""}]}],"tools":[{"type":"function","name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"additionalProperties":false},"strict":false}],"stream":false}
AGENTFUZZ_JSON
