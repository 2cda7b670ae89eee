"""Hostile hook output and the Python API: nothing hangs, nothing leaks, nothing is left behind.
(How the runner ends hostile hooks is in test_runner.py; hostile input events are in
test_input.py; a hostile caller of the command, signals and odd descriptors, in test_cli.py.)

Every hook here is a real process and every case pins its exact outcome.  "Nothing left behind"
is checked after each case: each hostile script first writes its process group id to pgid.txt,
and the group must have no live member once magihook returns; magihook runs with TMPDIR set to a
fresh folder, which must be empty again (most cases send a > 1 MiB full payload, so a payload_ref
file is really made and has to be removed); open descriptors are counted in-process.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from conftest import (
    SPILLED,
    WENT_ON,
    after_event,
    assert_group_gone,
    bash_event,
    hostile,
    run_cli,
    run_hook,
    terminal,
    write_script,
    write_settings,
)
from conftest import full_hook as hook

import magihook

# --- 1. hostile hook output ---------------------------------------------------------------------

GARBAGE = r"printf '\xff\xfe\x00\x1b[31mred\x1b]0;title\x07\x9b2J\r\n'"


def assert_clean_output(result):
    """One JSON line, and not one raw control byte, NUL or invalid UTF-8 anywhere."""
    raw = (result.stdout + result.stderr).encode("utf-8")
    assert result.stdout.count("\n") == 1
    assert [byte for byte in raw if byte < 0x20 and byte != 0x0A] == []
    assert "\ufffd" not in result.stdout + result.stderr


def test_hook_printing_invalid_utf8_nul_and_escapes(project, tmpdir_env):
    command = hostile(project, "%s\n%s >&2\nexit 5\n" % (GARBAGE, GARBAGE))
    result, _ = run_hook(project, tmpdir_env, hook(command))
    assert terminal(result) == ("failed", "exit", "hook exited with status 5")
    assert result.json["warnings"] == [
        "hook h (before_tool #0, bash) failed: exit: hook exited with status 5" + WENT_ON]
    assert_clean_output(result)
    assert_group_gone(project)


def test_injecting_hook_printing_garbage_injects_nothing(project, tmpdir_env):
    command = hostile(project, GARBAGE + "\n")
    result, _ = run_hook(project, tmpdir_env, hook(command, provider_context_injection=True),
                         phase="after_tool")
    audit = result.events("hook_context_injection")[0]["payload"]
    assert (terminal(result), audit["status"], result.json["context_items"]) == (
        ("success", None, None), "invalid_json", [])
    assert_clean_output(result)


def test_injected_escapes_are_json_escaped_and_scrubbed_from_display(project, tmpdir_env):
    item = {"context_items": [{"role": "user", "content": "a\u001b[31mb\u0000c\u0007d"}]}
    command = hostile(project, "cat >/dev/null\nprintf '%%s' '%s'\n" % json.dumps(item))
    config = write_settings(project, {
        "enabled": True, "injected_content": {"show_in_transcript": True},
        "after_tool": [hook(command, provider_context_injection=True)]})
    result = run_cli("run", "--phase", "after_tool", "--config", str(config),
                     event=after_event(content=SPILLED), cwd=project, env=tmpdir_env)
    # The provider gets the item exactly (the spec's contract); the terminal row gets no escapes.
    assert result.json["context_items"] == item["context_items"]
    assert result.json["display"][0]["content"] == ["abcd"]
    assert_clean_output(result)


# --- 2. nothing left behind in the Python API ---------------------------------------------------

def open_descriptors():
    return sorted(os.listdir("/proc/self/fd"))


def children_of_this_process():
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me:
                found.append(entry)
    return found


def test_api_leaves_no_descriptor_temp_file_or_child(project, tmp_path, monkeypatch):
    fresh = tmp_path / "api-tmp"
    fresh.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(fresh))  # where payload_ref folders are made
    write_script(project, "bg.sh", "#!/bin/bash\nsleep 1000 &\nexit 0\n")
    write_script(project, "garbage.sh", "#!/bin/bash\n%s\n%s >&2\n" % (GARBAGE, GARBAGE))
    write_script(project, "inject.sh", "#!/bin/bash\ncat >/dev/null\n"
                 "echo '{\"context_items\": [{\"role\": \"user\", \"content\": \"m\"}]}'\n")
    commands = ["true", "exit 3", "kill -KILL 0", "./bg.sh", "./garbage.sh", "./inject.sh",
                "head -c 1000000 /dev/zero", "./missing.sh", "cd /"]
    settings = magihook.settings_from_document({"hooks": {
        "enabled": True, "show_in_tui": True,
        "injected_content": {"show_in_transcript": True, "show_in_activity_tree": True},
        "after_tool": [{"command": c, "payload": "full", "provider_context_injection": True}
                       for c in commands],
        "before_tool": [{"command": "sleep 1000", "timeout_seconds": 1, "payload": "full"}]}})
    session = project / "sessions" / "s.jsonl"
    before = open_descriptors(), children_of_this_process()
    for index in range(8):
        event = after_event(content=SPILLED if index % 2 else "small")
        event["context"] = {"cwd": str(project if index % 4 else project / "missing")}
        result = magihook.run_phase(settings, "after_tool", event, session_path=str(session))
        assert result["verdict"] == "continue"
    blocked = magihook.run_phase(settings, "before_tool", bash_event(SPILLED), cwd=str(project))
    assert blocked["events"][1]["payload"]["category"] == "timeout"
    assert (open_descriptors(), children_of_this_process()) == before
    assert os.listdir(fresh) == []
