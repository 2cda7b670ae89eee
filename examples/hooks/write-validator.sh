#!/usr/bin/env bash
# Spec "Trusted full-payload write validator", extended to edits.
# Configure with payload: "full", failure_policy: "block", include_tools: ["write", "hash_edit"].
# A hash_edit's patch (request.input: Codex apply_patch, Claude Code Edit/MultiEdit, Gemini
# replace) is checked like a write: every file its header lines name, and every added (+) line.
set -euo pipefail
payload=$(cat)
paths=$(printf '%s' "$payload" | jq -r '
  .request.path // empty,
  (.request.input | strings | split("\n")[]
   | capture("^\\*\\*\\* (?:(?:Add|Update|Delete) File|Move to): (?<p>.*)$").p
   | sub("^\\s+"; "") | sub("\\s+$"; ""))')
content=$(printf '%s' "$payload" | jq -r '
  .request.content // empty,
  (.request.input | strings | split("\n")[] | select(startswith("+")) | .[1:])')
while IFS= read -r path; do
case "$path" in
*.pem|*.key|.env|*/.env)
printf 'refusing write to secret-like path\n' >&2
exit 10
;;
esac
done <<<"$paths"
if printf '%s' "$content" | grep -Eq 'sk-[A-Za-z0-9_-]{16,}|Authorization: Bearer '; then
printf 'refusing credential-like content\n' >&2
exit 11
fi
