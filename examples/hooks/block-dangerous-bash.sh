#!/usr/bin/env bash
# Spec "Before gate for dangerous bash commands".
# Configure with payload: "full", failure_policy: "block", include_tools: ["bash"].
set -euo pipefail
payload=$(cat)
command=$(printf '%s' "$payload" | jq -r '.request.command // ""')
case "$command" in
*"git push --force"*|*"rm -rf"*|*"curl "*"| sh"*)
printf 'blocked dangerous command pattern\n' >&2
exit 42
;;
esac
