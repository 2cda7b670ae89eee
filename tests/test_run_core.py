"""`magihook run` end to end: settings, matching, payload, preflight, policies, result.

The runner's own outcomes are in test_runner.py, bad input events in test_input.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import (
    EXAMPLES,
    MAGIHOOK,
    ROOT,
    WENT_ON,
    after_event,
    bash_event,
    require_tool,
    run_cli,
    write_script,
    write_settings,
)

import magihook

LIFECYCLE_KEYS = ["phase", "label", "target_tool", "status", "policy", "category", "target_ran",
                  "tool_call_id", "activity_id", "hook_index", "elapsed_ms", "message",
                  "settings_file"]


def hook(command, **fields):
    return dict({"label": "h", "command": command}, **fields)


def run_before(project, hooks, event=None, **settings):
    config = write_settings(project, dict({"enabled": True, "before_tool": hooks}, **settings))
    return run_cli("run", "--phase", "before_tool", "--config", str(config),
                   event=event or bash_event(), cwd=project)


def run_after(project, hooks, event=None, **settings):
    config = write_settings(project, dict({"enabled": True, "after_tool": hooks}, **settings))
    return run_cli("run", "--phase", "after_tool", "--config", str(config),
                   event=event or after_event(), cwd=project)


# --- package and entry points -------------------------------------------------------------------

def test_version_is_the_same_through_every_entry_point():
    expected = "magihook %s\n" % magihook.__version__
    assert run_cli("--version").stdout == expected
    module = subprocess.run([sys.executable, "-m", "magihook", "--version"], cwd=ROOT,
                            capture_output=True, text=True)
    assert module.stdout == expected
    script = shutil.which("magihook")
    if script is None:
        pytest.skip("console script not installed (pip install -e .)")
    installed = subprocess.run([script, "--version"], capture_output=True, text=True)
    assert installed.stdout == expected


@pytest.mark.parametrize("phase, code", [("after_tool", 0), ("bogus", 2)])
def test_the_command_exits_with_main_s_code_and_without_teardown(project, phase, code):
    """console_main (the console script, -m and the file) ends with os._exit once main() has
    returned: everything it writes is out, exit handlers do not run."""
    event = after_event(content="z" * 300_000)  # a result far bigger than a pipe's buffer
    probe = ("import atexit, sys; sys.path.insert(0, %r); import magihook; "
             "atexit.register(print, 'teardown ran'); "
             "sys.argv = ['magihook', 'run', '--phase', %r]; magihook.console_main()"
             % (str(ROOT), phase))
    done = subprocess.run([sys.executable, "-c", probe], input=json.dumps(event).encode(),
                          capture_output=True, cwd=project, timeout=60)
    assert done.returncode == code
    if code == 0:
        assert (json.loads(done.stdout)["tool_result"], done.stderr) == (event["result"], b"")
    else:
        assert (done.stdout, done.stderr) == (b"", b"magihook: unknown phase 'bogus': expected "
                                              b"one of before_tool, after_tool, after_assistant, "
                                              b"after_reasoning (see magihook --help)\n")


def test_the_console_script_is_console_main():
    declared = re.search(r'^magihook = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert declared is not None and declared.group(1) == "magihook:console_main"


def test_python_dash_m_and_file_give_identical_results(project):
    write_script(project, "ok.sh", "#!/bin/sh\ncat >/dev/null\n")
    config = write_settings(project, {"enabled": True, "before_tool": [hook("./ok.sh")]})
    event = json.dumps(bash_event()).encode()
    outputs = []
    for argv in ([sys.executable, str(MAGIHOOK)], [sys.executable, "-m", "magihook"]):
        done = subprocess.run(argv + ["run", "--phase", "before_tool", "--config", str(config)],
                              input=event, capture_output=True, cwd=project,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        result = json.loads(done.stdout)
        outputs.append((done.returncode, result["verdict"], [e["payload"]["status"]
                                                               for e in result["events"]]))
    assert outputs[0] == outputs[1] == (0, "continue", ["started", "success"])


def test_usage_errors_are_one_line_exit_2():
    result = run_cli("run")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "magihook: run needs --phase PHASE (see magihook --help)\n"
    result = run_cli("run", "--phase", "during_tool")
    assert result.returncode == 2
    assert result.stderr.startswith("magihook: unknown phase 'during_tool': expected one of ")
    assert run_cli("frobnicate").returncode == 2
    assert run_cli("run", "--phase").stderr == (
        "magihook: --phase needs a value (see magihook --help)\n")


# --- settings discovery -------------------------------------------------------------------------

MARK = "#!/bin/sh\ncat >/dev/null\necho {} >> ran.txt\n"


def discovery_hooks(project, tag):
    write_script(project, "mark-%s.sh" % tag, MARK.format(tag))
    return {"enabled": True, "before_tool": [hook("./mark-%s.sh" % tag)]}


def ran(project):
    path = project / "ran.txt"
    return path.read_text().split() if path.exists() else []


def test_discovery_order_explicit_file_alone_else_home_then_project(project, isolated_env):
    """An explicit file (--config over $MAGIHOOK_CONFIG) is the one file; without one the home
    file's hooks run, then the nearest project file's (.json over .toml) (issue 26: layered)."""
    (project / ".magi-code").mkdir()
    (isolated_env / ".magi-code").mkdir()
    write_settings(isolated_env / ".magi-code", discovery_hooks(project, "home"))
    run_cli("run", "--phase", "before_tool", event=bash_event(), cwd=project)
    write_settings(project / ".magi-code", discovery_hooks(project, "toml"), "ignored.json")
    (project / ".magi-code" / "settings.toml").write_text(
        '[hooks]\nenabled = true\n[[hooks.before_tool]]\ncommand = "./mark-toml.sh"\n')
    assert run_cli("trust", cwd=project).returncode == 0  # project files run once trusted
    run_cli("run", "--phase", "before_tool", event=bash_event(), cwd=project)
    write_settings(project / ".magi-code", discovery_hooks(project, "local"))
    assert run_cli("trust", cwd=project).returncode == 0
    run_cli("run", "--phase", "before_tool", event=bash_event(), cwd=project)
    env_file = write_settings(project, discovery_hooks(project, "env"), "env.json")
    run_cli("run", "--phase", "before_tool", event=bash_event(), cwd=project,
            env=dict(os.environ, MAGIHOOK_CONFIG=str(env_file)))
    flag_file = write_settings(project, discovery_hooks(project, "flag"), "flag.json")
    run_cli("run", "--phase", "before_tool", "--config", str(flag_file), event=bash_event(),
            cwd=project, env=dict(os.environ, MAGIHOOK_CONFIG=str(env_file)))
    assert ran(project) == ["home", "home", "toml", "home", "local", "env", "flag"]


def test_no_settings_file_is_inert(project):
    result = run_cli("run", "--phase", "before_tool", event=bash_event(), cwd=project)
    assert result.returncode == 0
    assert result.json == {
        "schema": "magihook.result", "schema_version": 1, "phase": "before_tool",
        "tool": {"name": "bash", "call_id": "call_1"}, "verdict": "continue",
        "tool_result": None, "context_items": [], "events": [], "warnings": [], "display": [],
    }


def test_missing_explicit_settings_file_is_exit_2(project):
    for args, env in ((["--config", "nope.json"], None),
                      ([], dict(os.environ, MAGIHOOK_CONFIG="nope.json"))):
        result = run_cli("run", "--phase", "before_tool", *args, event=bash_event(),
                         cwd=project, env=env)
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr == "magihook: nope.json: settings file not found\n"


def test_other_top_level_keys_are_ignored_and_no_hooks_key_is_inert(project):
    config = project / "s.json"
    config.write_text(json.dumps({"model": "x", "theme": {"dark": True}}))
    result = run_cli("run", "--phase", "before_tool", "--config", str(config),
                     event=bash_event(), cwd=project)
    assert (result.returncode, result.json["events"]) == (0, [])


def test_disabled_hooks_start_no_process(project):
    write_script(project, "mark.sh", MARK.format("x"))
    result = run_before(project, [hook("./mark.sh")], enabled=False)
    assert (result.returncode, result.json["events"], ran(project)) == (0, [], [])


def test_defaults_fill_every_hook():
    settings = magihook.settings_from_document({"hooks": {"before_tool": [{"command": "x",
                                                                          "label": ""}]}})
    hook_def = settings.before_tool[0]
    assert (hook_def.label, hook_def.payload, hook_def.failure_policy, hook_def.timeout_seconds,
            hook_def.stdout_max_bytes, hook_def.stderr_max_bytes,
            hook_def.provider_context_injection, hook_def.provider_context_max_bytes) == (
        "hook", "redacted", "warn", 5, 8192, 8192, False, 4096)
    assert settings.enabled is False and settings.absolute_paths is True


# --- matching -----------------------------------------------------------------------------------

def test_filters_order_and_shell_alias(project):
    for tag in "abcd":
        write_script(project, "%s.sh" % tag, MARK.format(tag))
    hooks = [hook("./a.sh"), hook("./b.sh", include_tools=["write"]),
             hook("./c.sh", include_tools=["bash", "write"], exclude_tools=["bash"]),
             hook("./d.sh", include_tools=["shell"])]
    event = {"tool": {"name": "shell", "call_id": "c"}, "request": {"command": "ls"}}
    result = run_before(project, hooks, event)
    assert ran(project) == ["a", "d"]
    assert result.json["tool"] == {"name": "bash", "call_id": "c"}
    assert [e["payload"]["hook_index"] for e in result.events()] == [0, 0, 3, 3]


def test_tool_outside_builtin_list_is_not_wrapped(project):
    write_script(project, "a.sh", MARK.format("a"))
    event = {"tool": {"name": "mcp_fetch", "call_id": "c"}, "request": {}}
    result = run_before(project, [hook("./a.sh")], event)
    assert (result.returncode, result.json["verdict"], result.json["events"], ran(project)) == (
        0, "continue", [], [])
    assert result.json["tool"] == {"name": "mcp_fetch", "call_id": "c"}


# --- payload ------------------------------------------------------------------------------------

CAPTURE = "#!/bin/sh\ncat > payload.json\n"


def captured(project):
    return json.loads((project / "payload.json").read_text())


def test_redacted_before_payload_is_the_spec_envelope(project):
    write_script(project, "cap.sh", CAPTURE)
    event = bash_event("rm -rf /", context={"session_id": "s1", "invocation_mode": "shell",
                                            "turn_id": "turn-0", "message_id": "m-1"})
    run_before(project, [hook("./cap.sh", label="audit-before")], event)
    payload = captured(project)
    assert list(payload) == ["schema", "schema_version", "phase", "hook", "tool", "context",
                             "affected_paths", "payload", "payload_ref", "cwd", "payload_mode",
                             "request"]
    assert payload["hook"] == {"label": "audit-before", "index": 0, "failure_policy": "warn",
                               "payload_mode": "redacted"}
    context = dict(payload["context"])
    stamp = context.pop("timestamp")
    assert stamp.endswith("Z") and stamp[:4].isdigit()
    assert context == {"cwd": str(project), "session_id": "s1", "session_path": None,
                       "provider_id": None, "model_id": None, "agent_id": None,
                       "invocation_mode": "shell", "turn_id": "turn-0", "message_id": "m-1",
                       "subagent": False}
    redacted = {"command": {"redacted": True, "kind": "command", "bytes": 8}, "timeout": 30}
    assert payload["payload"] == {"inline": True, "status": "inline",
                                  "data": {"request": redacted}}
    assert payload["request"] == redacted
    assert (payload["payload_ref"], payload["cwd"], payload["payload_mode"]) == (
        None, str(project), "redacted")


def test_redacted_after_payload_summarizes_content_and_output(project):
    write_script(project, "cap.sh", CAPTURE)
    event = {"tool": {"name": "write", "call_id": "call_def456"},
             "request": {"path": "notes.txt", "content": "hello from the tool\n"},
             "result": {"tool_name": "write", "success": True, "content": "secret output",
                        "metadata": {"path": "notes.txt", "stdout": "abc"}}}
    run_after(project, [hook("./cap.sh")], event)
    payload = captured(project)
    assert payload["affected_paths"] == [
        {"path": "notes.txt", "kind": "write_target", "source": "request.path"}]
    assert payload["request"] == {"path": "notes.txt", "content": {
        "redacted": True, "kind": "content", "bytes": 20}}
    assert payload["result"] == {"tool_name": "write", "success": True,
                                 "content": "<redacted:tool-output>",
                                 "metadata": {"path": "notes.txt", "stdout": {
                                     "redacted": True, "kind": "output", "bytes": 3}}}
    assert payload["payload"]["data"] == {"request": payload["request"],
                                          "result": payload["result"]}


def test_full_payload_is_the_original_request_and_result(project):
    write_script(project, "cap.sh", CAPTURE)
    event = after_event("hash_edit", {"path": "a.txt", "input": "@@ -1 +1 @@\n-a\n+b\n"},
                        content="applied")
    run_after(project, [hook("./cap.sh", payload="full")], event)
    payload = captured(project)
    assert payload["request"] == event["request"]
    assert payload["result"] == event["result"]
    assert payload["payload_mode"] == "full"
    assert payload["affected_paths"] == [
        {"path": "a.txt", "kind": "write_target", "source": "request.path"}]


@pytest.mark.parametrize("path, kept", [
    ("src/a.txt", True), ("../x", False), ("a/../../x", False), ("/etc/passwd", False),
    ("", False), ("x" * 5000, False),
])
def test_affected_paths_keep_only_contained_paths(project, path, kept):
    write_script(project, "cap.sh", CAPTURE)
    run_before(project, [hook("./cap.sh")], {"tool": {"name": "read", "call_id": "c"},
                                            "request": {"path": path}})
    expected = [{"path": path, "kind": "read_target", "source": "request.path"}] if kept else []
    assert captured(project)["affected_paths"] == expected


# --- preflight ----------------------------------------------------------------------------------

@pytest.mark.parametrize("command, reason", [
    ('echo "$PWD"', "command contains '$'"),
    ("~/hooks/audit.sh", "command contains '~'"),
    ("echo `id`", "command contains '`'"),
    ("./scripts/{audit,notify}.sh", "command contains '{'"),
    ("./scripts/x}.sh", "command contains '}'"),
    ("cd scripts && ./hook.sh", "command uses cd"),
    ("true&&cd /", "command uses cd"),
    ("../hooks/audit.sh", "command has a '..' path component"),
    ("./a/../b.sh", "command has a '..' path component"),
    ("   ", "command is empty"),
    ("c''d /tmp && ./x.sh", "command uses cd"),
    ("c\\d scripts; ./ok.sh", "command uses cd"),
    ("\"cd\" x", "command uses cd"),
    (".''./outside.sh", "command has a '..' path component"),
    (".\\./x/hook.sh", "command has a '..' path component"),
    ("PYTHONPATH=x:../lib python3 s.py", "command has a '..' path component"),
    ("echo 'unbalanced", "command has an unbalanced quote"),
    ("c\\\nd .. ; pwd", "command spans lines"),
    ("true\nc\\d x", "command spans lines"),
    ("cat .?/x", "command has a glob that can match '..'"),
    ("cat .[.]/x", "command has a glob that can match '..'"),
    ("cat .*/x", "command has a glob that can match '..'"),
    ("grep -f../pat x", "command has a '..' path component"),
    ("curl -d@../x", "command has a '..' path component"),
])
def test_preflight_rejections_are_runner_failures(project, command, reason):
    result = run_before(project, [hook(command)])
    failed = result.events("hook_lifecycle")[1]["payload"]
    assert (failed["status"], failed["category"], failed["message"]) == (
        "failed", "runner", "command rejected by preflight: " + reason)


def test_absolute_paths_follow_tools_bash_setting(project):
    write_script(project, "ok.sh", "#!/bin/sh\ncat >/dev/null\n")
    command = str(project / "ok.sh")
    allowed = run_before(project, [hook(command)])
    assert allowed.events("hook_lifecycle")[1]["payload"]["status"] == "success"
    config = write_settings(project, {"enabled": True, "before_tool": [hook(command)]},
                            tools={"bash": {"absolute_paths": False}})
    rejected = run_cli("run", "--phase", "before_tool", "--config", str(config),
                       event=bash_event(), cwd=project)
    assert rejected.events("hook_lifecycle")[1]["payload"]["message"] == (
        "command rejected by preflight: command has an absolute path and "
        "tools.bash.absolute_paths is false")


def test_preflight_allows_the_spec_safe_examples():
    for command in ("./scripts/magi-hooks/audit-jsonl.sh", "scripts/magi-hooks/after-log.sh",
                    "python3 scripts/magi-hooks/audit.py", "/usr/bin/env true",
                    "./a.sh 'two words' \"x\\\"y\"", "./hook.sh # it's fine", "ls ./*.sh",
                    "./a.sh .git/x --out=.hidden/y"):
        assert magihook.preflight_rejection(command, True) is None


def test_quoted_absolute_paths_are_seen_when_disallowed():
    for command in ("\\/bin/true", "'/bin/true'", "x=/etc/passwd ./a.sh", "./a.sh --in=/etc/x",
                    "cat -f/etc/passwd"):
        assert magihook.preflight_rejection(command, False) == (
            "command has an absolute path and tools.bash.absolute_paths is false"), command


# --- failure policies ---------------------------------------------------------------------------

def test_ignore_continues_silently(project):
    result = run_before(project, [hook("exit 1", failure_policy="ignore")])
    assert (result.returncode, result.json["verdict"], result.json["warnings"]) == (
        0, "continue", [])
    assert [e["type"] for e in result.events()] == ["hook_lifecycle", "hook_lifecycle"]


def test_warn_continues_with_warning_and_diagnostic(project):
    result = run_before(project, [hook("exit 1", label="gate")])
    assert (result.returncode, result.json["verdict"]) == (0, "continue")
    assert result.json["warnings"] == [
        "hook gate (before_tool #0, bash) failed: exit: hook exited with status 1" + WENT_ON]
    diagnostic = result.events("hook_diagnostic")
    assert len(diagnostic) == 1
    assert list(diagnostic[0]["payload"]) == LIFECYCLE_KEYS
    assert diagnostic[0]["payload"]["policy"] == "warn"


def test_block_returns_sanitized_result_and_stops_later_hooks(project):
    write_script(project, "later.sh", MARK.format("later"))
    result = run_before(project, [
        hook("echo SECRET-OUTPUT; echo SECRET-ERR >&2; exit 42", label="secret-label",
             failure_policy="block"),
        hook("./later.sh")])
    assert result.returncode == 3
    assert result.json["verdict"] == "block"
    assert result.json["tool_result"] == {
        "tool_name": "bash", "call_id": "call_1", "success": False, "blocked": True,
        "content": "This tool call was blocked by local hook policy."}
    assert ran(project) == []
    assert "SECRET" not in result.stdout + result.stderr
    assert result.json["context_items"] == []


def test_fail_stops_the_turn(project):
    write_script(project, "later.sh", MARK.format("later"))
    result = run_before(project, [hook("exit 1", failure_policy="fail"), hook("./later.sh")])
    assert (result.returncode, result.json["verdict"], result.json["tool_result"]) == (
        4, "fail", None)
    assert ran(project) == []


def test_after_tool_fail_keeps_the_original_result(project):
    event = after_event(content="the real output")
    result = run_after(project, [hook("exit 1", failure_policy="fail")], event)
    assert (result.returncode, result.json["verdict"]) == (4, "fail")
    assert result.json["tool_result"] == event["result"]


def test_lifecycle_records_are_exactly_the_allowlist(project):
    result = run_after(project, [hook("true", label="ok")])
    started, done = result.events("hook_lifecycle")
    for record in (started, done):
        assert list(record) == ["type", "timestamp", "payload"]
        assert list(record["payload"]) == LIFECYCLE_KEYS
    assert done["payload"]["status"] == "success"
    assert done["payload"]["target_ran"] is True
    assert done["payload"]["category"] is None
    assert isinstance(done["payload"]["elapsed_ms"], int)


def test_nothing_sensitive_reaches_events_warnings_or_errors(project):
    command = "printf 'hook-stdout-XYZ'; printf 'hook-stderr-XYZ' >&2; exit 9"
    event = bash_event("secret-command-ABC --token tok-QQQ",
                       context={"session_path": "/tmp/s.jsonl"})
    for policy in ("warn", "block", "fail"):
        result = run_before(project, [hook(command, failure_policy=policy)], event)
        text = json.dumps(result.json["events"]) + json.dumps(result.json["warnings"])
        text += result.stderr
        for secret in ("XYZ", "ABC", "QQQ", "printf"):
            assert secret not in text


# --- examples from the spec, unchanged ----------------------------------------------------------

@pytest.fixture
def examples(tmp_path):
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns(".magi-hooks"))
    return target


def run_example(examples, phase, event_file):
    return run_cli("run", "--phase", phase, "--config", "settings.json",
                   stdin=(examples / "events" / event_file).read_bytes(), cwd=examples)


def test_spec_scripts_work_against_the_real_envelope(examples):
    require_tool("jq", "the spec's scripts use jq")
    blocked = run_example(examples, "before_tool", "before-bash-rm.json")
    assert (blocked.returncode, blocked.json["verdict"]) == (3, "block")
    assert blocked.json["tool_result"]["blocked"] is True
    allowed = run_example(examples, "before_tool", "before-bash.json")
    assert (allowed.returncode, allowed.json["verdict"], allowed.json["warnings"]) == (
        0, "continue", [])
    assert run_example(examples, "before_tool", "before-write-secret-path.json").returncode == 3
    secret = json.loads((examples / "events" / "before-write.json").read_text())
    secret["request"]["content"] = "token = sk-" + "a1B2c3D4e5F6g7H8i9J0" + "\n"
    result = run_cli("run", "--phase", "before_tool", "--config", "settings.json",
                     event=secret, cwd=examples)
    assert result.json["verdict"] == "block"
    assert run_example(examples, "before_tool", "before-write.json").returncode == 0
    assert run_example(examples, "before_tool", "before-hash_edit.json").returncode == 0
    assert run_example(examples, "before_tool", "before-read.json").returncode == 0
    after = run_example(examples, "after_tool", "after-bash.json")
    assert (after.returncode, after.json["warnings"]) == (0, [])
    assert after.json["context_items"] == [
        {"role": "user", "content": "Relevant bounded memory for next provider call "
                                    "(after bash)."}]
    log = (examples / ".magi-hooks" / "after.log").read_text()
    assert log.rstrip().endswith("tool=bash success=true")
    audit = (examples / ".magi-hooks" / "python-hooks.jsonl").read_text().splitlines()
    assert json.loads(audit[-1]) == {"phase": "after_tool", "tool": "bash"}
    records = (examples / ".magi-hooks" / "tool-hooks.jsonl").read_text().split()
    assert json.loads(records[0])["schema"] == "magi-code.tool_hook"
    for name in ("after-read.json", "after-write.json", "after-hash_edit.json"):
        assert run_example(examples, "after_tool", name).returncode == 0
    for phase, name in (("after_assistant", "after-assistant.json"),
                        ("after_reasoning", "after-reasoning.json")):
        message = run_example(examples, phase, name)
        assert message.json["context_items"][0]["content"].endswith(
            "(after %s)." % phase.split("_")[1])


