#!/usr/bin/env python3
"""A Claude Code PreToolUse file guard answering with JSON (hookSpecificOutput), exit 0."""
import json
import sys

data = json.load(sys.stdin)
path = data.get("tool_input", {}).get("file_path", "")


def decide(decision, reason, **extra):
    output = {"hookEventName": "PreToolUse", "permissionDecision": decision,
              "permissionDecisionReason": reason}
    output.update(extra)
    print(json.dumps({"hookSpecificOutput": output}))


if path.endswith(".env"):
    decide("deny", "Writing .env files is not allowed (reason-marker-7f3a)")
elif "/deploy/" in path:
    decide("ask", "Deployment files need a human review (reason-marker-7f3a)")
elif path.endswith(".md"):
    decide("allow", "Docs are fine", updatedInput={"file_path": path, "content": "rewritten"})
elif path.endswith(".pem"):
    print(json.dumps({"decision": "block", "reason": "No private keys (reason-marker-7f3a)"}))
sys.exit(0)
