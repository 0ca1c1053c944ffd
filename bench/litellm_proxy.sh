#!/usr/bin/env bash
# `agent --provider openai` through LiteLLM's proxy (an OpenAI-compatible API) in front of the local
# Anthropic-API test server: a read -> edit -> bash task in a scratch git repo. Not a CI test (litellm is
# heavy); run it by hand to check the provider against a real OpenAI-compatible server:
#
#   bench/litellm_proxy.sh            # creates /tmp/litellm-venv with 'litellm[proxy]' on first use
#
# Prints the agent's JSON result, the edited file and the proxy's request count; exits non-zero when
# the edit did not land or usage is zero. Stops the proxy and the fake server on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
AGENT="${AGENT:-$ROOT/.venv/bin/agent}"
VENV="${LITELLM_VENV:-/tmp/litellm-venv}"
FAKE_PORT="${FAKE_PORT:-18765}"
PROXY_PORT="${PROXY_PORT:-14000}"
WORK="$(mktemp -d /tmp/litellm-check.XXXXXX)"
MODEL=claude-sonnet-5-5

if [ ! -x "$VENV/bin/litellm" ]; then
    python3 -m venv "$VENV" && "$VENV/bin/pip" install -q 'litellm[proxy]'
fi

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

cat > "$WORK/replies.yaml" <<'EOF'
- text: "Let me read it."
  tool_calls: [{name: read_file, input: {path: app.py}}]
- tool_calls: [{name: edit_file, input: {path: app.py, old_string: "a - b", new_string: "a + b"}}]
- tool_calls: [{name: bash, input: {command: "python3 -c 'import app; print(app.add(2, 3))'"}}]
- text: "Fixed add(): it subtracted; 2 + 3 is 5 now."
EOF
cat > "$WORK/litellm.yaml" <<EOF
model_list:
  - model_name: $MODEL
    litellm_params:
      model: anthropic/$MODEL
      api_base: http://127.0.0.1:$FAKE_PORT
      api_key: test
EOF

(cd "$ROOT" && exec "$PY" -m tests.fakeapi.server --port "$FAKE_PORT" --script "$WORK/replies.yaml") \
    > "$WORK/fake.log" 2>&1 &
pids+=($!)
LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY=true LITELLM_LOCAL_MODEL_COST_MAP=True \
    "$VENV/bin/litellm" --config "$WORK/litellm.yaml" --host 127.0.0.1 --port "$PROXY_PORT" \
    > "$WORK/proxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do  # the proxy takes a while to import
    curl -sf "http://127.0.0.1:$PROXY_PORT/health/liveliness" > /dev/null 2>&1 && break
    sleep 1
done

mkdir "$WORK/repo" && cd "$WORK/repo" && git init -q
printf 'def add(a, b):\n    return a - b\n' > app.py
git add app.py && git -c user.email=t@t -c user.name=t commit -qm init

OPENAI_BASE_URL="http://127.0.0.1:$PROXY_PORT" OPENAI_API_KEY=anything \
    "$AGENT" -p "add() is wrong; fix it and check with python" --provider openai --model "$MODEL" \
    --permission-mode yolo --output-format json | tee "$WORK/result.json"
echo "--- app.py:"; cat app.py
echo "--- requests through the proxy: $(grep -c 'POST /chat/completions\|POST /v1/chat/completions' "$WORK/proxy.log" || true)"
"$PY" - "$WORK/result.json" <<'EOF'
import json, pathlib, sys
data = json.loads(pathlib.Path(sys.argv[1]).read_text())
assert not data["is_error"], data
assert "a + b" in pathlib.Path("app.py").read_text(), "the edit did not land"
assert data["usage"]["input_tokens"] > 0 and data["usage"]["output_tokens"] > 0, data["usage"]
print(f"ok: {data['num_turns']} model calls, usage {data['usage']}")
EOF
