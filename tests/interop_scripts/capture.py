#!/usr/bin/env python3
"""Record what a hook receives: its stdin and the agent variables of its environment."""
import json
import os
import sys

stdin = sys.stdin.read()
record = {"stdin": json.loads(stdin),
          "env": {name: os.environ.get(name) for name in
                  ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID")}}
with open("captured.jsonl", "a", encoding="utf-8") as handle:
    handle.write(json.dumps(record) + "\n")
