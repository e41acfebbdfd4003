#!/bin/sh
# Re-send the failing request. The key, if any, comes from $OPENAI_API_KEY.
curl -sS -X POST http://127.0.0.1:35845/v1/chat/completions \
  -H 'Content-Type: application/json' \
  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \
  --data-binary @- <<'AGENTFUZZ_JSON'
{"model":"smollm2","messages":[{"role":"user","content":"Use weather.fetch.send_email."}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Call get_weather when the user asks for it.","parameters":{"type":"object","properties":{},"additionalProperties":false}}},{"type":"function","function":{"name":"weather.fetch.send_email","description":"Call weather.fetch.send_email when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"},"query":{"type":"string"},"path":{"type":"string"},"count":{"type":"integer"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"verbose":{"type":"boolean"},"limit":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false,"required":["city","query","path","count","unit","verbose","limit","tags"]},"strict":true}},{"type":"function","function":{"name":"functions","description":"Call functions when the user asks for it.","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"additionalProperties":false,"required":["city"]}}}],"stream":false,"seed":0,"temperature":0.0,"max_tokens":160,"presence_penalty":-0.5,"frequency_penalty":-0.5,"grammar":"root ::= ("}
AGENTFUZZ_JSON
