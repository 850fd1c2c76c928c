#!/usr/bin/env bash
# serve-quirks.sh URL MODEL: probe an OpenAI-compatible server for the
# mistakes kiln serve must not make (issue: kiln serve), one line each:
# a malformed JSON body (want 400), an unknown model (want 404),
# temperature -1 (want 400), /v1/completions logprobs (want the legacy
# completions shape: tokens/token_logprobs/top_logprobs/text_offset), and
# greedy output under load (16 identical concurrent greedy requests must
# equal the same request alone). Needs curl and jq.
set -euo pipefail
url=${1:?usage: serve-quirks.sh URL MODEL}
model=${2:?usage: serve-quirks.sh URL MODEL}
hdr=(-H 'Content-Type: application/json')
[ -n "${KILN_API_KEY:-}" ] && hdr+=(-H "Authorization: Bearer $KILN_API_KEY")
status() { curl -s -o /dev/null -w '%{http_code}' "${hdr[@]}" "$url/v1/completions" -d "$1"; }
echo "malformed JSON body:  $(status '{"model":')  (want 400)"
echo "unknown model:        $(status '{"model":"no-such-model","prompt":"a","max_tokens":2}')  (want 404)"
echo "temperature -1:       $(status "{\"model\":\"$model\",\"prompt\":\"a\",\"max_tokens\":2,\"temperature\":-1}")  (want 400)"
shape=$(curl -s "${hdr[@]}" "$url/v1/completions" -d "{\"model\":\"$model\",\"prompt\":\"Once\",\"max_tokens\":2,\"logprobs\":2,\"temperature\":0}" |
  jq -r '.choices[0].logprobs | if type != "object" then "none" elif has("token_logprobs") and has("tokens") and has("text_offset") then "completions" elif has("content") then "chat" else "other" end')
echo "completions logprobs: $shape shape  (want completions)"
req="{\"model\":\"$model\",\"prompt\":\"The meaning of life is\",\"max_tokens\":48,\"temperature\":0,\"ignore_eos\":true}"
alone=$(curl -s "${hdr[@]}" "$url/v1/completions" -d "$req" | jq -r '.choices[0].text')
tmp=$(mktemp -d)
for i in $(seq 16); do curl -s "${hdr[@]}" "$url/v1/completions" -d "$req" | jq -r '.choices[0].text' > "$tmp/$i" & done
wait
diff=0
for i in $(seq 16); do [ "$(cat "$tmp/$i")" == "$alone" ] || diff=$((diff + 1)); done
rm -rf "$tmp"
echo "greedy under load:    $diff of 16 concurrent identical requests differ from the request alone  (want 0)"
