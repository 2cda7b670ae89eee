"""Hooks that give `args` instead of `command`: PROGRAM run directly, with no shell, no login
profile and no preflight, in a session of its own, with the caps, timeouts and failure
categories of every hook; and what settings, validate, doctor, --explain and import say of them.
Every hook is a real process."""

from __future__ import annotations

import json
import os
import sys

import pytest
from conftest import (
    RECORD_PGID,
    after_event,
    assert_group_gone,
    bash_event,
    run_cli,
    terminal,
    write_script,
    write_settings,
)

# Writes its argv and the bytes it read on stdin to argv.json in its cwd.
ARGV_PROBE = """#!%s
import json, os, sys
data = sys.stdin.buffer.read()
with open("argv.json", "w") as out:
    json.dump({"argv": sys.argv[1:], "stdin": json.loads(data).get("schema"),
               "pgid_is_pid": os.getpgid(0) == os.getpid(), "sid_is_pid": os.getsid(0) == os.getpid()}, out)
""" % sys.executable


def args_hook(args, **fields):
    return dict({"label": "h", "args": args, "payload": "full"}, **fields)


def run_args(project, hook, event=None, env=None, phase="before_tool"):
    config = write_settings(project, {"enabled": True, phase: [hook]})
    event = event if event is not None else (bash_event() if phase == "before_tool" else after_event())
    return run_cli("run", "--phase", phase, "--config", str(config), event=event, cwd=project, env=env)


def probe(project):
    return str(write_script(project, "probe.py", ARGV_PROBE))


# --- running --------------------------------------------------------------------------------------

def test_args_reach_the_program_verbatim_with_the_payload_in_a_session_of_its_own(project):
    program = probe(project)
    # What a shell would expand, split or refuse, and what preflight rejects ($, `, .., ~): all
    # plain arguments here.
    args = [program, "$HOME", "`id`", "a b", "", "../x", "~", "*", "it's"]
    result = run_args(project, args_hook(args))
    assert result.returncode == 0, result.stderr
    assert terminal(result) == ("success", None, None)
    assert json.loads((project / "argv.json").read_text()) == {
        "argv": args[1:], "stdin": "magi-code.tool_hook", "pgid_is_pid": True, "sid_is_pid": True}


def test_a_program_named_without_a_slash_is_looked_up_on_path(project, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    write_script(folder, "my-probe", ARGV_PROBE)
    env = dict(os.environ, PATH="%s:%s" % (folder, os.environ["PATH"]))
    result = run_args(project, args_hook(["my-probe", "one"]), env=env)
    assert terminal(result) == ("success", None, None)
    assert json.loads((project / "argv.json").read_text())["argv"] == ["one"]


def test_no_login_profile_runs_for_an_args_hook(project, isolated_env):
    # The same program through `command` runs bash -l, which reads the profile.
    (isolated_env / ".bash_profile").write_text("touch %s\n" % (project / "profile-ran"))
    program = probe(project)
    result = run_args(project, args_hook([program]))
    assert terminal(result) == ("success", None, None)
    assert not (project / "profile-ran").exists()
    shell = run_args(project, {"label": "h", "command": program, "payload": "full"})
    assert terminal(shell) == ("success", None, None)
    assert (project / "profile-ran").exists()


@pytest.mark.parametrize("path_value,where", [
    ("/nonexistent-dir", "not on PATH"),
    (".:/nonexistent-dir", "only in the cwd, a relative PATH entry"),
    ("", "on an empty PATH entry (the cwd)"),
])
def test_a_program_not_found_on_path_is_a_runner_failure_that_blocks(project, path_value, where):
    write_script(project, "only-here", ARGV_PROBE)
    env = dict(os.environ, PATH=path_value)
    result = run_args(project, args_hook(["only-here"], failure_policy="block"), env=env)
    assert result.returncode == 3, where
    assert result.json["verdict"] == "block"
    assert terminal(result) == ("failed", "runner", "hook could not start: program not found on PATH")
    assert not (project / "argv.json").exists()


@pytest.mark.parametrize("make,errno_name", [
    (lambda project: None, "ENOENT"),
    (lambda project: (project / "prog").write_text("#!/bin/sh\n"), "EACCES"),
    (lambda project: (project / "prog").mkdir(), "EACCES"),
])
def test_an_absolute_program_that_cannot_be_executed_is_a_runner_failure(project, make, errno_name):
    make(project)
    result = run_args(project, args_hook([str(project / "prog")], failure_policy="warn"))
    assert (result.returncode, result.json["verdict"]) == (0, "continue")
    assert terminal(result) == ("failed", "runner", "hook could not start: program unavailable (%s)"
                                % errno_name)


def test_a_program_in_another_cwd_than_magihooks_starts_alike(project, tmp_path):
    # Not magihook's own cwd: the hook is started by subprocess, not posix_spawn.
    program = probe(project)
    config = write_settings(project, {"enabled": True, "before_tool": [args_hook([program, "x"])]})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config),
                     event=bash_event(context={"cwd": str(project)}), cwd=tmp_path)
    assert terminal(result) == ("success", None, None)
    assert json.loads((project / "argv.json").read_text())["argv"] == ["x"]
    missing = write_settings(project, {"enabled": True, "before_tool": [
        args_hook([str(project / "gone")], failure_policy="warn")]}, name="gone.json")
    result = run_cli("run", "--phase", "before_tool", "--config", str(missing),
                     event=bash_event(context={"cwd": str(project)}), cwd=tmp_path)
    assert terminal(result) == ("failed", "runner", "hook could not start: program unavailable (ENOENT)")


def test_exit_status_timeout_and_output_cap_are_the_categories_of_every_hook(project):
    exited = run_args(project, args_hook(["/bin/sh", "-c", "exit 7"], failure_policy="warn"))
    assert terminal(exited)[:2] == ("failed", "exit")
    # The program forks a grandchild that holds the pipes: the timeout ends the whole group.
    write_script(project, "linger.sh", RECORD_PGID + "sleep 30 &\nsleep 30\n")
    timed = run_args(project, args_hook([str(project / "linger.sh")], timeout_seconds=1,
                                        failure_policy="warn"))
    assert terminal(timed)[:2] == ("failed", "timeout")
    assert_group_gone(project)
    flood = run_args(project, args_hook(["/usr/bin/yes"], stdout_max_bytes=1024, failure_policy="warn"))
    assert terminal(flood)[:2] == ("failed", "output-limit")


def test_claude_code_dialect_args_get_the_project_folder_as_plain_text(project):
    program = probe(project)
    result = run_args(project, args_hook([program, "${CLAUDE_PROJECT_DIR}/x y", "$CLAUDE_PROJECT_DIR"],
                                         dialect="claude-code"))
    assert terminal(result) == ("success", None, None)
    # Claude Code substitutes the ${NAME} placeholder only, as text; nothing else is expanded.
    assert json.loads((project / "argv.json").read_text())["argv"] == [
        "%s/x y" % project, "$CLAUDE_PROJECT_DIR"]


# --- settings and validate ------------------------------------------------------------------------

@pytest.mark.parametrize("args,where,message", [
    (["./hook.sh"], "args[0]", "must be an absolute path or a name found on PATH, not a relative path"),
    (["bin/hook"], "args[0]", "must be an absolute path or a name found on PATH, not a relative path"),
    ([""], "args[0]", "must not be empty (the program to run)"),
    (["/bin/echo", "a\x00b"], "args", "an argument holds a NUL character, which no program can be given"),
    ([], "args", "must not be empty"),
])
def test_validate_names_the_hook_whose_args_cannot_run(project, args, where, message):
    config = write_settings(project, {"enabled": True, "after_tool": [{"label": "ok", "command": "true"},
                                                                      {"args": args}]})
    result = run_cli("validate", "--config", str(config), cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "magihook: %s: $.hooks.after_tool[1].%s: %s\n" % (config, where, message)
    ran = run_args(project, {"args": args})  # run refuses it too: no hook runs
    assert ran.returncode == 2


def test_validate_accepts_a_dialect_program_under_the_project_folder(project):
    config = write_settings(project, {"enabled": True, "before_tool": [
        args_hook(["${CLAUDE_PROJECT_DIR}/.claude/hooks/x.sh"], dialect="claude-code")]})
    result = run_cli("validate", "--config", str(config), cwd=project)
    assert (result.returncode, result.stderr) == (0, "")


def test_command_and_args_together_or_neither_is_an_error_naming_the_hook(project):
    both = write_settings(project, {"before_tool": [{"command": "true", "args": ["true"]}]})
    result = run_cli("validate", "--config", str(both), cwd=project)
    assert result.stderr == ("magihook: %s: $.hooks.before_tool[0]: gives both command and args: give "
                             "one (args runs a program with no shell)\n" % both)
    neither = write_settings(project, {"before_tool": [{"label": "x"}]}, name="neither.json")
    result = run_cli("validate", "--config", str(neither), cwd=project)
    assert result.stderr == ("magihook: %s: $.hooks.before_tool[0]: missing command or args: give a "
                             "shell command, or args: [PROGRAM, ARG...]\n" % neither)


def test_config_shows_args_not_command(project):
    config = write_settings(project, {"enabled": True, "before_tool": [{"args": ["/bin/true", "x"]}]})
    result = run_cli("config", "--config", str(config), cwd=project)
    [hook] = json.loads(result.stdout)["hooks"]["before_tool"]
    assert (hook["args"], "command" in hook) == (["/bin/true", "x"], False)


# --- explain and doctor ---------------------------------------------------------------------------

def test_explain_says_an_args_hook_has_no_preflight(project):
    config = write_settings(project, {"enabled": True, "before_tool": [
        args_hook(["/bin/cat", "$x"], label="gate")]})
    result = run_cli("run", "--phase", "before_tool", "--explain", "--config", str(config),
                     event=bash_event(), cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("before_tool[0] gate: matched")
    assert lines[start + 1] == "  preflight: none: args run a program with no shell"
    assert lines[start + 2].startswith("  stdin: full payload, inline, ")


def test_doctor_finds_an_args_program_missing_or_off_path(project, tmp_path):
    write_script(project, "not-exec.sh", "#!/bin/sh\n").chmod(0o644)
    config = write_settings(project, {"enabled": True, "before_tool": [
        args_hook(["no-such-program-xyz"], label="a"),
        args_hook([str(project / "gone.sh")], label="b"),
        args_hook([str(project / "not-exec.sh")], label="c"),
        args_hook(["python3", "missing.py"], label="d"),
        args_hook(["/bin/cat"], label="ok")]})
    result = run_cli("doctor", "--config", str(config), cwd=project)
    assert result.returncode == 3, result.stderr
    found = [line for line in result.stdout.splitlines() if line.startswith("finding:")]
    assert found == [
        "finding: hook a (before_tool #0): runs no-such-program-xyz, which is not on your PATH (an "
        "args hook gets the agent's PATH, with no login shell)",
        "finding: hook b (before_tool #1): runs %s, which does not exist in %s (hooks run in the "
        "agent's cwd)" % (project / "gone.sh", project),
        "finding: hook c (before_tool #2): runs %s, which is not executable (chmod +x it)"
        % (project / "not-exec.sh"),
        "finding: hook d (before_tool #3): runs missing.py, which does not exist in %s (hooks run "
        "in the agent's cwd)" % project]


# --- import claude-code ---------------------------------------------------------------------------

def test_import_claude_code_carries_the_exec_form_over_as_args(project, tmp_path):
    claude = tmp_path / "claude.json"
    claude.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "python3", "args": ["${CLAUDE_PROJECT_DIR}/h.py", "it's $x"]},
        {"type": "command", "command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/h.js"]},
        {"type": "command", "command": "./rel.sh", "args": []},
        {"type": "command", "command": "true", "args": "not-a-list"},
    ]}]}}))
    result = run_cli("import", "claude-code", str(claude), cwd=project)
    assert result.returncode == 0, result.stderr
    hooks = json.loads(result.stdout)["hooks"]["before_tool"]
    assert [hook.get("args") for hook in hooks] == [
        ["python3", "${CLAUDE_PROJECT_DIR}/h.py", "it's $x"]]
    assert "command" not in hooks[0] and hooks[0]["dialect"] == "claude-code"
    report = result.stderr
    assert ("$.hooks.PreToolUse[0].hooks[1].args[0]: uses ${CLAUDE_PLUGIN_ROOT}; not carried over "
            "(pass --plugin-root DIR, the plugin's folder)") in report
    assert ("$.hooks.PreToolUse[0].hooks[2].command: not an absolute path or a name found on PATH; "
            "not carried over") in report
    assert "$.hooks.PreToolUse[0].hooks[3].args: expected an array of strings; not carried over" in report
    (tmp_path / "plug").mkdir()
    plugin = run_cli("import", "claude-code", str(claude), "--plugin-root", str(tmp_path / "plug"),
                     cwd=project)
    hooks = json.loads(plugin.stdout)["hooks"]["before_tool"]
    assert hooks[1]["args"] == ["node", "%s/h.js" % (tmp_path / "plug")]
    # What the import wrote is valid settings, and runs: the imported args hook is an args hook.
    settings = project / "imported.json"
    settings.write_text(plugin.stdout)
    assert run_cli("validate", "--config", str(settings), cwd=project).returncode == 0


def test_doctor_does_not_blame_the_login_profile_for_an_args_hook(project, isolated_env):
    # The profile greets on stdout, which would spoil an injecting command hook's JSON: an args
    # hook starts no bash, so it is not named, and a noisy profile with only args hooks is fine.
    (isolated_env / ".bash_profile").write_text("echo welcome back\n")
    config = write_settings(project, {"enabled": True, "after_tool": [
        {"label": "mem", "args": ["/bin/true"], "provider_context_injection": True}]})
    quiet = run_cli("doctor", "--config", str(config), cwd=project)
    assert (quiet.returncode, [line for line in quiet.stdout.splitlines() if line.startswith("finding:")]) == (0, [])
    config = write_settings(project, {"enabled": True, "after_tool": [
        {"label": "mem", "args": ["/bin/true"], "provider_context_injection": True},
        {"label": "mem2", "command": "true", "provider_context_injection": True}]}, name="both.json")
    both = run_cli("doctor", "--config", str(config), cwd=project)
    assert [line for line in both.stdout.splitlines() if line.startswith("finding:")] == [
        "finding: bash: the login profile writes 13 bytes to stdout, in front of the JSON of hook mem2 "
        "(after_tool #1); make the profile quiet when it is not interactive"]
