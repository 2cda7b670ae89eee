#!/usr/bin/env python3
"""Spec "Python command examples": append phase and tool name to a local JSONL file."""
import json
import pathlib
import sys

payload = json.load(sys.stdin)
pathlib.Path(".magi-hooks").mkdir(exist_ok=True)
with open(".magi-hooks/python-hooks.jsonl", "a", encoding="utf-8") as handle:
    handle.write(json.dumps({"phase": payload["phase"], "tool": payload["tool"]["name"]}) + "\n")
