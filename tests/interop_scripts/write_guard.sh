#!/usr/bin/env bash
set -euo pipefail
payload=$(cat)
path=$(printf '%s' "$payload" | jq -r '.request.path // ""')
text=$(printf '%s' "$payload" | jq -r '(.request.content // "") + (.request.input // "")')
case "$path" in *.key|*.pem|.env|*/.env) exit 10 ;; esac
if printf '%s' "$text" | grep -Eq 'sk-[A-Za-z0-9_-]{16,}'; then exit 11; fi
