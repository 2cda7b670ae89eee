"""Seeing what hooks do: display rows, live rows (`run --tui`), `replay`, and `run --explain`."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import uuid

import pytest
from conftest import (
    MAGIHOOK,
    MAGIHOOK_ARGV,
    after_event,
    bash_event,
    require_tool,
    run_cli,
    warning_lines,
    write_script,
    write_settings,
)

import magihook

GATES_ON = {"show_in_transcript": True, "show_in_activity_tree": True, "style": "content"}
# Prints one context item naming the tool and call it saw: a real injecting hook.
MEMORY = """#!/usr/bin/env python3
import json, sys
event = json.load(sys.stdin)
note = "memory for %s %s" % (event["tool"]["name"], event["tool"]["call_id"])
print(json.dumps({"context_items": [{"role": "user", "content": note}]}))
"""
DRAIN = "#!/bin/sh\ncat >/dev/null\n"
MARK = "#!/bin/sh\ncat >/dev/null\necho ran >> ran.txt\n"
ANSI = re.compile("\x1b\\[[0-9;]*m")


def hook(command, **fields):
    return dict({"label": "h", "command": command}, **fields)


def run_phase_cli(project, phase, hooks, event, *args, **settings):
    config = write_settings(project, dict({"enabled": True, phase: hooks}, **settings))
    return run_cli("run", "--phase", phase, "--config", str(config), *args, event=event,
                   cwd=project)


# --- display rows in the result -----------------------------------------------------------------

def test_show_in_tui_gives_one_row_per_state_change(project):
    write_script(project, "ok.sh", DRAIN)
    result = run_phase_cli(project, "before_tool", [hook("./ok.sh", label="audit-before"),
                                                    hook("exit 5", label="gate")],
                           bash_event(), show_in_tui=True)
    base = {"phase": "before_tool", "target_tool": "bash", "parent_activity_id": "call_1"}
    assert result.json["display"] == [
        dict(base, label="audit-before", status="running",
             activity_id="hook:call_1:before_tool:0", hook_index=0,
             text="before_tool · audit-before · bash · running"),
        dict(base, label="audit-before", status="success",
             activity_id="hook:call_1:before_tool:0", hook_index=0,
             text="before_tool · audit-before · bash · success"),
        dict(base, label="gate", status="running", activity_id="hook:call_1:before_tool:1",
             hook_index=1, text="before_tool · gate · bash · running"),
        dict(base, label="gate", status="failed", activity_id="hook:call_1:before_tool:1",
             hook_index=1, category="exit", policy="warn",
             text="before_tool · gate · bash · failed · exit · warn"),
    ]


def test_without_show_in_tui_there_are_no_rows_but_the_records_stay(project):
    result = run_phase_cli(project, "before_tool", [hook("true")], bash_event())
    assert result.json["display"] == []
    assert [e["payload"]["status"] for e in result.events("hook_lifecycle")] == [
        "started", "success"]


def test_display_gates_enable_neither_hooks_nor_injection(project):
    write_script(project, "mark.sh", MARK)
    write_script(project, "memory.py", MEMORY)
    disabled = run_phase_cli(project, "before_tool", [hook("./mark.sh")], bash_event(),
                             enabled=False, show_in_tui=True, injected_content=GATES_ON)
    assert (disabled.json["events"], disabled.json["display"]) == ([], [])
    assert not (project / "ran.txt").exists()
    not_injecting = run_phase_cli(project, "after_tool", [hook("./memory.py")], after_event(),
                                  injected_content=GATES_ON)
    assert (not_injecting.json["display"], not_injecting.json["context_items"]) == ([], [])
    assert not_injecting.events("hook_context_injection") == []


def injection_result(project, shown, content=None):
    if content is None:
        write_script(project, "memory.py", MEMORY)
    else:
        write_script(project, "memory.py", "#!/usr/bin/env python3\nimport json, sys\n"
                     "sys.stdin.read()\nprint(json.dumps({'context_items': [{'role': 'user', "
                     "'content': %r}]}))\n" % content)
    return run_phase_cli(project, "after_tool", [hook("./memory.py", label="memory-after",
                                                      provider_context_injection=True)],
                         after_event(), injected_content=shown)


def injection_row(surface, parent, **extra):
    row = {"surface": surface, "phase": "after_tool", "label": "memory-after",
           "target_tool": "bash", "status": "success", "item_count": 1, "byte_count": 22,
           "hook_index": 0, "parent_activity_id": parent,
           "text": "provider context injection · memory-after · success · 1 item · 22 bytes"}
    row.update(extra)
    return row


@pytest.mark.parametrize("transcript, tree", [(True, False), (False, True), (True, True)])
def test_injection_rows_follow_each_surface_gate(project, transcript, tree):
    result = injection_result(project, {"show_in_transcript": transcript,
                                        "show_in_activity_tree": tree})
    expected = []
    if transcript:
        expected.append(injection_row("transcript", None, content=["memory for bash call_1"]))
    if tree:
        expected.append(injection_row("activity_tree", "call_1",
                                      content=["memory for bash call_1"]))
    assert result.json["display"] == expected
    assert result.json["context_items"] == [{"role": "user",
                                             "content": "memory for bash call_1"}]


def test_metadata_style_never_shows_content(project):
    result = injection_result(project, dict(GATES_ON, style="metadata"))
    assert result.json["display"] == [injection_row("transcript", None),
                                      injection_row("activity_tree", "call_1")]
    assert "memory for" not in json.dumps(result.json["display"])


def test_content_style_truncates_to_200_characters_and_flattens_lines(project):
    long = "line one\nline two " + "x" * 400
    result = injection_result(project, dict(GATES_ON, show_in_transcript=False), content=long)
    (row,) = result.json["display"]
    assert row["content"] == ["line one line two " + "x" * 181 + "…"]
    assert len(row["content"][0]) == magihook.INJECTED_CONTENT_MAX_CHARS
    assert result.json["context_items"][0]["content"] == long


def test_a_failed_injecting_hook_shows_hook_failed(project):
    result = run_phase_cli(project, "after_tool", [hook("exit 1", label="memory-after",
                                                        provider_context_injection=True)],
                           after_event(), injected_content=dict(GATES_ON,
                                                                show_in_transcript=False))
    assert result.json["display"] == [injection_row(
        "activity_tree", "call_1", status="hook_failed", item_count=0, byte_count=0,
        text="provider context injection · memory-after · hook_failed · 0 items · 0 bytes")]


# --- live rows: run --tui -----------------------------------------------------------------------

def test_tui_draws_rows_on_stderr_and_leaves_stdout_one_json_line(project):
    write_script(project, "ok.sh", DRAIN)
    hooks = [hook("./ok.sh", label="audit-before"), hook("exit 5", label="gate")]
    live = run_phase_cli(project, "before_tool", hooks, bash_event(), "--tui", show_in_tui=True)
    assert live.stderr == (
        "bash · call_1\n"
        "  before_tool · audit-before · bash · running\n"
        "  before_tool · audit-before · bash · success\n"
        "  before_tool · gate · bash · running\n"
        "  before_tool · gate · bash · failed · exit · warn\n" + warning_lines(live.json))
    quiet = run_phase_cli(project, "before_tool", hooks, bash_event(), show_in_tui=True)
    assert quiet.stderr == warning_lines(quiet.json) != ""  # the warning, and no row
    assert len(live.stdout.splitlines()) == 1
    assert live.json["display"] == quiet.json["display"]


def test_tui_draws_injection_rows_under_their_hook(project):
    write_script(project, "memory.py", MEMORY)
    result = run_phase_cli(project, "after_tool", [hook("./memory.py", label="memory-after",
                                                        provider_context_injection=True)],
                           after_event(), "--tui", show_in_tui=True, injected_content=GATES_ON)
    assert result.stderr == (
        "bash · call_1\n"
        "  after_tool · memory-after · bash · running\n"
        "  after_tool · memory-after · bash · success\n"
        "provider context injection · memory-after · success · 1 item · 22 bytes\n"
        "  > memory for bash call_1\n"
        "    provider context injection · memory-after · success · 1 item · 22 bytes\n"
        "      > memory for bash call_1\n")


def test_tui_without_display_settings_draws_nothing(project):
    result = run_phase_cli(project, "before_tool", [hook("true")], bash_event(), "--tui")
    assert (result.returncode, result.stderr, len(result.stdout.splitlines())) == (0, "", 1)


def run_with_terminal_stderr(project, env_extra):
    """`magihook run` with a real pseudo-terminal as stderr; returns (stdout, terminal text)."""
    write_script(project, "ok.sh", DRAIN)
    config = write_settings(project, {"enabled": True, "show_in_tui": True,
                                      "before_tool": [hook("./ok.sh", label="audit")]})
    master, slave = os.openpty()
    try:
        process = subprocess.Popen(
            [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--config",
             str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave,
            cwd=project, env=dict(os.environ, **env_extra))
        os.close(slave)
        stdout, _ = process.communicate(json.dumps(bash_event()).encode(), timeout=60)
        drawn = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's last writer closed it
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(master)
    return stdout.decode(), drawn.decode().replace("\r\n", "\n")


def test_show_in_tui_draws_in_colour_when_stderr_is_a_terminal(project):
    stdout, drawn = run_with_terminal_stderr(project, {})
    assert drawn == ("\x1b[1mbash · call_1\x1b[0m\n"
                     "  \x1b[33mbefore_tool · audit · bash · running\x1b[0m\n"
                     "  \x1b[32mbefore_tool · audit · bash · success\x1b[0m\n")
    assert len(stdout.splitlines()) == 1 and json.loads(stdout)["verdict"] == "continue"


def test_no_color_keeps_terminal_rows_plain(project):
    _, drawn = run_with_terminal_stderr(project, {"NO_COLOR": "1"})
    assert drawn == ("bash · call_1\n"
                     "  before_tool · audit · bash · running\n"
                     "  before_tool · audit · bash · success\n")


# --- replay -------------------------------------------------------------------------------------

def agent_event(session, kind, **payload):
    """A line the agent itself writes into its session file (not a hook record)."""
    with open(session, "a") as handle:
        handle.write(json.dumps({"type": kind, "timestamp": "2026-05-26T00:00:00.000Z",
                                 "payload": payload}) + "\n")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A real session: an agent's own events around real hooks run through the CLI with
    --session (recorded once for the module).  (session path, settings path, display rows)."""
    return record_session(tmp_path_factory.mktemp("recorded"))


def record_session(project):
    write_script(project, "ok.sh", DRAIN)
    write_script(project, "memory.py", MEMORY)
    hooks = {
        "enabled": True, "show_in_tui": True,
        "injected_content": GATES_ON,
        "before_tool": [hook("./ok.sh", label="audit-before"),
                        hook("exit 7", label="gate", include_tools=["bash"]),
                        hook("./ok.sh", label="writes-only", include_tools=["write"])],
        "after_tool": [hook("./memory.py", label="memory-after", provider_context_injection=True),
                       hook("exit 3", label="notify", failure_policy="ignore")],
        "after_assistant": [hook("./memory.py", label="memory-assistant",
                                 provider_context_injection=True)],
    }
    config = write_settings(project, hooks)
    session = project / "sessions" / "s1.jsonl"
    display = []

    def run(phase, event):
        result = run_cli("run", "--phase", phase, "--config", str(config), "--session",
                         str(session), event=event, cwd=project)
        assert result.returncode == 0, result.stderr
        display.extend(result.json["display"])

    run("before_tool", bash_event())  # creates the file and its folder
    agent_event(session, "tool_call", name="bash", call_id="call_1")
    agent_event(session, "tool_result", call_id="call_1", success=True)
    run("after_tool", after_event())
    run("before_tool", {"tool": {"name": "write", "call_id": "call_2"},
                        "request": {"path": "a.txt", "content": "hi"}})
    agent_event(session, "assistant_output", text="done")
    run("after_assistant", {"text": "done", "context": {"turn_id": "turn-1"}})
    with open(session, "ab") as handle:
        handle.write(b'{"type": "hook_lifecycle", "payl\n\n')  # a torn line, a blank line
    return session, config, display


PINNED_TREE = """\
bash · call_1
  before_tool · audit-before · bash · success
  before_tool · gate · bash · failed · exit · warn
  after_tool · memory-after · bash · success
    provider context injection · memory-after · success · 1 item · 22 bytes
      > memory for bash call_1
  after_tool · notify · bash · failed · exit · ignore
provider context injection · memory-after · success · 1 item · 22 bytes
  > memory for bash call_1
write · call_2
  before_tool · audit-before · write · success
  before_tool · writes-only · write · success
assistant · assistant-turn-1
  after_assistant · memory-assistant · assistant · success
    provider context injection · memory-assistant · success · 1 item · 37 bytes
      > memory for assistant assistant-turn-1
provider context injection · memory-assistant · success · 1 item · 37 bytes
  > memory for assistant assistant-turn-1
19 hook records; skipped 3 other events and 1 corrupt line
"""


def test_replay_draws_the_recorded_session_as_a_pinned_tree(project, recorded):
    session, config, _ = recorded
    result = run_cli("replay", str(session), "--config", str(config), cwd=project)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == PINNED_TREE


def test_replay_json_rows_are_the_rows_run_printed(project, recorded):
    session, config, display = recorded
    result = run_cli("replay", str(session), "--json", "--config", str(config), cwd=project)
    assert result.returncode == 0
    document = result.json
    assert document["rows"] == display
    assert len(display) == 18
    assert {key: document[key] for key in document if key != "rows"} == {
        "schema": "magihook.replay", "schema_version": 1, "hook_records": 19,
        "skipped": {"other_events": 3, "corrupt_lines": 1}}


def test_replay_shows_lifecycle_rows_without_any_display_setting(project, recorded):
    session, _, _ = recorded
    result = run_cli("replay", str(session), cwd=project)  # no settings file: every gate off
    expected = [line for line in PINNED_TREE.splitlines() if "provider context" not in line
                and "> memory" not in line]
    assert result.stdout.splitlines() == expected


def test_replay_metadata_style_shows_no_content(project, recorded):
    session, _, _ = recorded
    config = write_settings(project, {"injected_content": dict(GATES_ON, style="metadata")},
                            "metadata.json")
    result = run_cli("replay", str(session), "--config", str(config), cwd=project)
    expected = [line for line in PINNED_TREE.splitlines() if "> memory" not in line]
    assert result.stdout.splitlines() == expected


def test_replay_runs_no_hook(project, recorded):
    session, _, _ = recorded
    write_script(project, "mark.sh", MARK)
    config = write_settings(project, {"enabled": True, "show_in_tui": True,
                                      "before_tool": [hook("./mark.sh")]}, "mark.json")
    assert run_cli("replay", str(session), "--config", str(config), cwd=project).returncode == 0
    assert not (project / "ran.txt").exists()


def test_a_hook_without_a_terminal_record_replays_as_running(project, recorded):
    session, _, _ = recorded
    started = session.read_text().splitlines()[0]
    assert json.loads(started)["payload"]["status"] == "started"
    cut = project / "cut.jsonl"
    cut.write_text(started + "\n")
    result = run_cli("replay", str(cut), cwd=project)
    assert result.stdout == ("bash · call_1\n"
                             "  before_tool · audit-before · bash · running\n"
                             "1 hook record; skipped 0 other events and 0 corrupt lines\n")


def lifecycle_line(**changes):
    payload = {"phase": "before_tool", "label": "audit", "target_tool": "bash",
               "status": "success", "policy": "warn", "category": None, "target_ran": False,
               "tool_call_id": "c", "activity_id": "hook:c:before_tool:0", "hook_index": 0,
               "elapsed_ms": 3, "message": None}
    payload.update(changes)
    return json.dumps({"type": "hook_lifecycle", "timestamp": "t", "payload": payload})


@pytest.mark.parametrize("line", [
    "not json",
    "[1, 2]",
    '{"payload": {}}',
    '{"type": 7}',
    '{"type": "hook_lifecycle", "payload": "x"}',
    lifecycle_line(status="exploded"),
    lifecycle_line(status="failed"),  # a failure without a category
    lifecycle_line(hook_index=True),
    lifecycle_line(label=None),
    json.dumps({"type": "hook_context_injection", "payload": {"phase": "after_tool"}}),
    json.dumps({"type": "provider_context_item", "payload": {"content": 3}}),
])
def test_corrupt_lines_are_skipped_and_counted(project, line):
    session = project / "s.jsonl"
    session.write_text(lifecycle_line() + "\n" + line + "\n")
    result = run_cli("replay", str(session), "--json", cwd=project)
    assert result.returncode == 0
    assert (result.json["hook_records"], result.json["skipped"]) == (
        1, {"other_events": 0, "corrupt_lines": 1})


def test_invalid_utf8_line_is_corrupt_and_other_types_need_only_a_type(project):
    session = project / "s.jsonl"
    session.write_bytes(b"\xff\xfe\n" + b'{"type": "tool_call", "payload": "anything"}\n'
                        + b'{"type": "reasoning_summary"}\n')
    result = run_cli("replay", str(session), cwd=project)
    assert (result.returncode, result.stdout) == (
        0, "0 hook records; skipped 2 other events and 1 corrupt line\n")


def test_replay_keeps_control_characters_off_the_terminal(project):
    session = project / "s.jsonl"
    session.write_text(lifecycle_line(label="evil\x1b]0;title\x07\x1b[2J") + "\n")
    result = run_cli("replay", str(session), cwd=project)
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert result.stdout.splitlines()[1] == (
        "  before_tool · evil · bash · success")


@pytest.mark.parametrize("target, message", [
    ("missing.jsonl", "missing.jsonl: session file not found"),
    ("folder", "folder: session path is a directory"),
])
def test_replay_of_an_unreadable_file_is_exit_2(project, target, message):
    (project / "folder").mkdir()
    result = run_cli("replay", target, cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: %s\n" % message)


def test_replay_usage_errors(project):
    assert run_cli("replay", cwd=project).stderr == (
        "magihook: replay takes 1 argument (see magihook --help)\n")
    bad = run_cli("replay", "s.jsonl", "--config", "nope.json", cwd=project)
    assert (bad.returncode, bad.stderr) == (2, "magihook: nope.json: settings file not found\n")


def test_replay_colour_on_a_real_terminal_and_none_through_a_pipe_or_with_no_color(recorded):
    require_tool("tmux", "the replay test draws on a real terminal")
    session, config, _ = recorded
    replay = "%s %s replay %s --config %s" % tuple(
        shlex.quote(str(part)) for part in (sys.executable, MAGIHOOK, session, config))
    script = "%s; echo ==PIPE==; %s | cat; echo ==NO_COLOR==; NO_COLOR=1 %s; echo ==DONE==; " \
             "sleep 60" % (replay, replay, replay)
    screen = tmux_screen(script, "==DONE==")
    on_tty, rest = screen.split("==PIPE==\n")
    piped, no_color = rest.split("==NO_COLOR==\n")
    no_color = no_color.split("==DONE==")[0]
    assert "\x1b[1mbash · call_1" in on_tty
    assert "  \x1b[32mbefore_tool · audit-before · bash · success" in on_tty
    assert "  \x1b[31mbefore_tool · gate · bash · failed · exit · warn" in on_tty
    assert ANSI.sub("", on_tty) == PINNED_TREE
    assert "\x1b" not in piped and "\x1b" not in no_color
    assert ANSI.sub("", piped) == piped == PINNED_TREE
    assert no_color == PINNED_TREE


def tmux_screen(command, done_marker):
    """Run `command` in a fresh tmux server's 200x100 window; the pane with its escapes."""
    tmux = ["tmux", "-L", "magihook-test-%s" % uuid.uuid4().hex, "-f", "/dev/null"]
    subprocess.run(tmux + ["new-session", "-d", "-x", "200", "-y", "100", "-s", "replay",
                           command], check=True, timeout=30)
    try:
        deadline = time.monotonic() + 30
        while True:
            screen = subprocess.run(tmux + ["capture-pane", "-p", "-e", "-t", "replay"],
                                    capture_output=True, text=True, timeout=30).stdout
            if done_marker in screen or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    finally:
        subprocess.run(tmux + ["kill-server"], timeout=30)
    assert done_marker in screen, screen
    # tmux closes each line's colour at the start of the next one: move it back.
    return re.sub("\n((?:\x1b\\[[0-9;]*m)+)", lambda m: m.group(1) + "\n", screen)


# --- run --explain ------------------------------------------------------------------------------

def explain(project, phase, hooks, event, *args, **settings):
    config = write_settings(project, dict({"enabled": True, phase: hooks}, **settings))
    return run_cli("run", "--phase", phase, "--config", str(config), "--explain", *args,
                   event=event, cwd=project)


def payload_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def without_timestamp(payload):
    return dict(payload, context=dict(payload["context"], timestamp=None))


def test_explain_tells_matches_reasons_preflight_and_the_exact_stdin(project):
    write_script(project, "capture.sh", "#!/bin/sh\ncat > payload.json\n")
    write_script(project, "mark.sh", MARK)
    hooks = [hook("./capture.sh", label="audit"),
             hook("./mark.sh", label="writes", include_tools=["write"]),
             hook("./mark.sh", label="no-bash", exclude_tools=["shell"]),
             hook('echo "$PWD"', label="inline", failure_policy="block")]
    result = explain(project, "before_tool", hooks, bash_event())
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    stdin = lines[6]
    assert lines[:6] + lines[7:] == [
        "settings: %s (found by --config)" % (project / "settings.json"),
        "hooks.enabled: true",
        "event: before_tool · bash · call_1",
        "before_tool[0] audit: matched",
        "  preflight: passes",
        "  stdin: redacted payload, inline, %d bytes:" % len(stdin.encode()),
        "before_tool[1] writes: not matched: not in include_tools",
        "before_tool[2] no-bash: not matched: in exclude_tools",
        "before_tool[3] inline: matched",
        "  preflight: rejected: command contains '$'; the hook would fail with category runner "
        "under policy block, and no process would start",
        "nothing was run",
    ]
    assert not (project / "payload.json").exists() and not (project / "ran.txt").exists()
    run_phase_cli(project, "before_tool", hooks[:1], bash_event())
    received = json.loads((project / "payload.json").read_text())
    assert without_timestamp(json.loads(stdin)) == without_timestamp(received)


def test_explain_payload_of_an_after_hook_is_what_it_receives_in_full_mode(project):
    write_script(project, "capture.sh", "#!/bin/sh\ncat > payload.json\n")
    hooks = [hook("./capture.sh", payload="full")]
    event = after_event(content="the output")
    (shown,) = payload_lines(explain(project, "after_tool", hooks, event).stdout)
    run_phase_cli(project, "after_tool", hooks, event)
    received = json.loads((project / "payload.json").read_text())
    assert without_timestamp(shown) == without_timestamp(received)
    assert shown["result"]["content"] == "the output"


def test_explain_when_hooks_are_disabled_or_the_tool_is_not_wrapped(project):
    disabled = explain(project, "before_tool", [hook("true", label="a")], bash_event(),
                       enabled=False)
    assert disabled.stdout.splitlines()[1:] == [
        "hooks.enabled: false", "event: before_tool · bash · call_1",
        "before_tool[0] a: not matched: hooks.enabled is false", "nothing was run"]
    foreign = explain(project, "before_tool", [hook("true", label="a")],
                      {"tool": {"name": "mcp_fetch"}, "request": {}})
    assert foreign.stdout.splitlines()[2:] == [
        "event: before_tool · mcp_fetch · no call id",
        "before_tool[0] a: not matched: mcp_fetch is not a built-in tool, so magihook does not "
        "wrap it", "nothing was run"]


def test_explain_without_settings_or_hooks(project):
    result = run_cli("run", "--phase", "after_tool", "--explain", event=after_event(),
                     cwd=project)
    assert (result.returncode, result.stdout) == (0, (
        "settings: none found, so hooks are inert\nhooks.enabled: false\n"
        "event: after_tool · bash · call_1\nno after_tool hooks are configured\n"
        "nothing was run\n"))


def test_explain_says_filters_do_not_apply_to_message_phases(project):
    result = explain(project, "after_reasoning", [hook("true", label="r", include_tools=["read"])],
                     {"text": "thinking"})
    lines = result.stdout.splitlines()
    assert lines[2:4] == ["event: after_reasoning · reasoning · reasoning-turn-0",
                          "after_reasoning[0] r: matched (include_tools/exclude_tools do not "
                          "apply to after_reasoning)"]
    assert payload_lines(result.stdout)[0]["request"] == {"text": "thinking"}


def test_explain_writes_no_payload_ref_file(project, tmp_path):
    spill_root = tmp_path / "spill"
    spill_root.mkdir()
    event = bash_event("x" * 600_000)
    result = run_cli("run", "--phase", "before_tool", "--config", str(write_settings(
        project, {"enabled": True, "before_tool": [hook("true", payload="full")]})),
        "--explain", event=event, cwd=project, env=dict(os.environ, TMPDIR=str(spill_root)))
    assert result.stdout.splitlines()[5:7] == [
        "  stdin: would be referenced: the 600039 bytes of full request/result would go to a "
        "payload_ref file when the hook runs (--explain writes none)",
        "nothing was run"]
    assert list(spill_root.iterdir()) == []


def test_explain_shows_the_omitted_too_large_stdin(project):
    event = bash_event("x" * (magihook.PAYLOAD_REF_MAX_BYTES + 1))
    result = explain(project, "before_tool", [hook("true", payload="full")], event)
    (shown,) = payload_lines(result.stdout)
    assert shown["payload"] == {"inline": False, "status": "omitted_too_large"}
    assert shown["request"]["reason"] == "exceeds_payload_ref_max_bytes"
    assert "  stdin: full payload, omitted_too_large, " in result.stdout


@pytest.mark.parametrize("extra", ["--session=s.jsonl", "--tui"])
def test_explain_refuses_options_that_would_do_something(project, extra):
    result = explain(project, "before_tool", [hook("true")], bash_event(), extra)
    option = extra.split("=")[0]
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: --explain runs nothing, so it takes no %s (see magihook --help)\n"
        % option)
    assert not (project / "s.jsonl").exists()


def test_explain_of_a_bad_event_is_exit_2(project):
    result = run_cli("run", "--phase", "before_tool", "--explain", stdin=b"[]", cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: $: input must be a JSON object, got an array\n")


def test_explain_tells_a_context_too_large_for_any_stdin(project):
    event = bash_event(context={"agent_id": "a" * 1_100_000})
    result = explain(project, "before_tool", [hook("true")], event)
    assert result.stdout.splitlines()[5:] == [
        "  stdin: the hook would fail with category stdin: hook payload is larger than 1048576 "
        "bytes even after summaries",
        "nothing was run"]
    ran = run_phase_cli(project, "before_tool", [hook("true")], event)
    assert ran.events("hook_lifecycle")[1]["payload"]["message"] == (
        "hook payload is larger than 1048576 bytes even after summaries")


def test_injection_row_counts_are_singular_and_plural():
    shown = magihook.InjectedContentDisplay(show_in_transcript=True, style="metadata")
    audit = {"phase": "after_tool", "label": "m", "target_tool": "bash", "status": "success",
             "item_count": 1, "byte_count": 1, "hook_index": 0}
    assert magihook.injection_rows(audit, ["x"], shown, None)[0]["text"] == (
        "provider context injection · m · success · 1 item · 1 byte")
    audit.update(item_count=2, byte_count=42)
    assert magihook.injection_rows(audit, ["x", "y"], shown, None)[0]["text"] == (
        "provider context injection · m · success · 2 items · 42 bytes")
