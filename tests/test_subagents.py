"""Subagents: parallel_subagents is a normal tool; children inherit the parent's hooks through
MAGIHOOK_CONFIG, run them in their own cwd, and record to their own session file."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import MAGIHOOK_ARGV, after_event, bash_event, run_cli, write_script, write_settings

# The parent's hook (an absolute path, so it resolves from any child cwd) notes where it ran and
# what context it got, in a file of the folder it runs in.
SEEN = """#!/usr/bin/env python3
import json, os, sys
payload = json.load(sys.stdin)
with open("hook-seen.jsonl", "a") as handle:
    handle.write(json.dumps({"label": payload["hook"]["label"], "pwd": os.getcwd(),
                             "tool": payload["tool"]["name"],
                             "context": payload["context"]}) + "\\n")
"""
MEMORY = """#!/bin/sh
cat >/dev/null
echo '{"context_items": [{"role": "user", "content": "child memory"}]}'
"""


@pytest.fixture
def parent(tmp_path):
    """Folder A: the parent agent's settings, hook scripts and sessions."""
    root = tmp_path / "A"
    root.mkdir()
    seen = write_script(root, "seen.py", SEEN)
    memory = write_script(root, "memory.sh", MEMORY)
    config = write_settings(root, {
        "enabled": True,
        "before_tool": [
            {"label": "parent-audit", "command": str(seen)},
            {"label": "fan-out-gate", "command": str(seen),
             "include_tools": ["parallel_subagents"]},
        ],
        "after_tool": [
            {"label": "parent-memory", "command": str(memory),
             "provider_context_injection": True},
        ],
    })
    return root, config


def seen_in(folder):
    path = folder / "hook-seen.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def session_records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def child_context(folder, name):
    return {"cwd": str(folder), "subagent": True, "invocation_mode": "subagent",
            "session_id": name, "session_path": str(folder.parent / "A" / "sessions" /
                                                    "subagents" / (name + ".jsonl")),
            "agent_id": name, "turn_id": "turn-0", "message_id": "m-1"}


def test_parallel_subagents_is_a_normal_tool_for_parent_hooks(parent):
    root, config = parent
    session = root / "sessions" / "parent.jsonl"
    event = {"tool": {"name": "parallel_subagents", "call_id": "call_fan"},
             "request": {"tasks": [{"prompt": "a"}, {"prompt": "b"}]},
             "context": {"cwd": str(root), "session_path": str(session)}}
    before = run_cli("run", "--phase", "before_tool", "--session", str(session), event=event,
                     cwd=root, env=dict(os.environ, MAGIHOOK_CONFIG=str(config)))
    assert before.returncode == 0
    assert [(s["label"], s["tool"], s["context"]["subagent"]) for s in seen_in(root)] == [
        ("parent-audit", "parallel_subagents", False),
        ("fan-out-gate", "parallel_subagents", False)]
    after = run_cli("run", "--phase", "after_tool", "--session", str(session),
                    event=dict(event, result={"tool_name": "parallel_subagents", "success": True,
                                              "content": "2 tasks done", "metadata": {}}),
                    cwd=root, env=dict(os.environ, MAGIHOOK_CONFIG=str(config)))
    assert after.json["context_items"] == [{"role": "user", "content": "child memory"}]
    assert session_records(session) == before.json["events"] + after.json["events"]
    assert {e["payload"]["target_tool"] for e in session_records(session)} == {
        "parallel_subagents"}


def test_child_in_a_folder_with_its_own_settings_uses_the_parents(parent, tmp_path):
    root, config = parent
    child = tmp_path / "B"
    (child / ".magi-code").mkdir(parents=True)
    write_script(child, "own.sh", "#!/bin/sh\ncat >/dev/null\necho own >> own-ran.txt\n")
    write_settings(child / ".magi-code", {"enabled": True, "before_tool": [
        {"label": "child-own", "command": "./own.sh"}]})
    context = child_context(child, "child-1")
    child_session = root / "sessions" / "subagents" / "child-1.jsonl"
    env = dict(os.environ, MAGIHOOK_CONFIG=str(config))
    before = run_cli("run", "--phase", "before_tool", "--session", str(child_session),
                     event=bash_event(context=context), cwd=child, env=env)
    after = run_cli("run", "--phase", "after_tool", "--session", str(child_session),
                    event=after_event(context=context), cwd=child, env=env)
    assert (before.returncode, after.returncode) == (0, 0)
    # The parent's hook ran, in the child's folder, and saw the child's context.
    (seen,) = seen_in(child)
    assert (seen["label"], seen["pwd"]) == ("parent-audit", str(child))
    assert {key: seen["context"][key] for key in context} == context
    assert not (child / "own-ran.txt").exists()
    assert seen_in(root) == []
    # Records go to the child's file only; the child's injection stays in the child.
    assert session_records(child_session) == before.json["events"] + after.json["events"]
    assert after.json["context_items"] == [{"role": "user", "content": "child memory"}]
    assert sorted(p.name for p in (root / "sessions").iterdir()) == ["subagents"]
    # Control: without MAGIHOOK_CONFIG the child folder's own settings would win.
    env.pop("MAGIHOOK_CONFIG")
    assert run_cli("trust", cwd=child, env=env).returncode == 0  # a project file needs trust
    run_cli("run", "--phase", "before_tool", event=bash_event(context=context), cwd=child,
            env=env)
    assert (child / "own-ran.txt").read_text() == "own\n"


def test_parallel_children_each_keep_their_own_records(parent, tmp_path):
    root, config = parent
    env = dict(os.environ, MAGIHOOK_CONFIG=str(config))
    processes = []
    for index in range(4):
        folder = tmp_path / ("child-%d" % index)
        folder.mkdir()
        name = "child-%d" % index
        context = child_context(folder, name)
        event = json.dumps(bash_event(call_id="call_%s" % name, context=context)).encode()
        process = subprocess.Popen(
            [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--session",
             context["session_path"]], cwd=folder, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        processes.append((folder, name, event, process))
    for folder, name, event, process in processes:
        stdout, stderr = process.communicate(event, timeout=60)
        assert (process.returncode, stderr) == (0, b"")
        records = session_records(root / "sessions" / "subagents" / (name + ".jsonl"))
        assert records == json.loads(stdout)["events"]
        assert {e["payload"]["tool_call_id"] for e in records} == {"call_%s" % name}
        assert [(s["pwd"], s["context"]["agent_id"]) for s in seen_in(folder)] == [
            (str(folder), name)]
