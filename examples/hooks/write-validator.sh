#!/usr/bin/env bash
# Spec "Trusted full-payload write validator".
# Configure with payload: "full", failure_policy: "block", include_tools: ["write"].
set -euo pipefail
payload=$(cat)
path=$(printf '%s' "$payload" | jq -r '.request.path // ""')
content=$(printf '%s' "$payload" | jq -r '.request.content // ""')
case "$path" in
*.pem|*.key|.env|*/.env)
printf 'refusing write to secret-like path\n' >&2
exit 10
;;
esac
if printf '%s' "$content" | grep -Eq 'sk-[A-Za-z0-9_-]{16,}|Authorization: Bearer '; then
printf 'refusing credential-like content\n' >&2
exit 11
fi
