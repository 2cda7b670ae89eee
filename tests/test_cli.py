"""Section 18 (CLI): main() called from a host program, what an internal error prints, and the
command under a hostile caller (signals, a vanished reader, closed or non-blocking descriptors)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
from conftest import (
    MAGIHOOK,
    MAGIHOOK_ARGV,
    PROMPT,
    ROOT,
    SPILLED,
    after_event,
    assert_group_gone,
    bash_event,
    default_signals,
    hostile,
    run_cli,
    write_settings,
)
from conftest import full_hook as hook

import magihook

# --- main() from a host -------------------------------------------------------------------------
# A host program that calls magihook.main(argv) keeps its descriptors 0-2 and its sys streams as
# they were: only console_main (the `magihook` command) makes them blocking or points a dead one
# at /dev/null (tests/test_hostile.py pins that the command still does).

HOST = r"""
import json, os, sys
import magihook

report, event, stdout_state, argv = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
# stdin: a pipe that already holds the whole event (and its EOF), so that a non-blocking read
# cannot come too early.
read_end, write_end = os.pipe()
with open(event, "rb") as source:
    os.write(write_end, source.read())
os.close(write_end)
os.dup2(read_end, 0)
os.close(read_end)
if stdout_state == "dead":  # a reader that went away: a write fails with EPIPE
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.dup2(write_end, 1)
    os.close(write_end)
for fd in (0, 1, 2):
    os.set_blocking(fd, False)


def state():
    fds = {}
    for fd in (0, 1, 2):
        st = os.fstat(fd)
        fds[fd] = [os.get_blocking(fd), st.st_dev, st.st_ino, st.st_mode, st.st_rdev]
    return fds


streams = (sys.stdin, sys.stdout, sys.stderr, sys.stdin.buffer, sys.stdout.buffer,
           sys.stderr.buffer)
before = state()
code = magihook.main(argv)
after = state()
same_streams = [a is b for a, b in zip(streams, (sys.stdin, sys.stdout, sys.stderr,
                                                 sys.stdin.buffer, sys.stdout.buffer,
                                                 sys.stderr.buffer))]
with open(report, "w") as out:
    json.dump({"code": code, "before": before, "after": after, "same_streams": same_streams}, out)
os._exit(0)  # a dead stdout's buffered bytes are the host's own business, not this test's
"""


def run_host(tmp_path, project, argv, stdout_state):
    event = tmp_path / "event.json"
    event.write_text(json.dumps(bash_event(phase="before_tool")) + "\n")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", HOST, str(report), str(event), stdout_state, json.dumps(argv)],
        stdin=subprocess.DEVNULL, capture_output=True, cwd=project, timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    return done, json.loads(report.read_text())


@pytest.mark.parametrize("stdout_state", ["live", "dead"])
@pytest.mark.parametrize("mode", [["--phase", "before_tool"], ["--stream"]])
def test_main_from_a_host_leaves_its_descriptors_and_streams(tmp_path, project, mode,
                                                             stdout_state):
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "h", "command": "cat >/dev/null"}]})
    done, report = run_host(tmp_path, project, ["run", *mode, "--config", str(config)],
                            stdout_state)
    assert report["code"] == 0
    assert [flags[0] for flags in report["before"].values()] == [False, False, False]
    assert report["after"] == report["before"]
    assert report["same_streams"] == [True] * 6
    if stdout_state == "live":
        assert json.loads(done.stdout)["verdict"] == "continue"


EMPTY_NON_BLOCKING_STDIN = r"""
import os, sys
import magihook

read_end, write_end = os.pipe()  # the writer is still there, and has written nothing yet
os.dup2(read_end, 0)
os.set_blocking(0, False)
code = magihook.main(["run", "--phase", "before_tool"])
sys.stderr.flush()
os._exit(code)
"""


def test_a_hosts_non_blocking_stdin_with_no_event_yet_is_a_read_error(project):
    # main() leaves the host's non-blocking stdin as it is: a read finds nothing (EAGAIN), which
    # is a bad input (exit 2), not an internal error.
    done = subprocess.run([sys.executable, "-c", EMPTY_NON_BLOCKING_STDIN], capture_output=True,
                          cwd=project, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert (done.returncode, done.stdout, done.stderr) == (
        2, b"", b"magihook: cannot read the input event (EAGAIN)\n")


# --- internal errors ----------------------------------------------------------------------------
# An internal error is a bug, so one is injected here (a magihook function replaced by a broken
# one) into a real magihook process; MAGIHOOK_DEBUG=1 adds its traceback to the one short line.

BROKEN = r"""
import sys, magihook

def broken(*args, **kwargs):
    raise ZeroDivisionError("a bug")

magihook.matching_hooks = broken
sys.argv[1:] = %r
magihook.console_main()
"""


def run_broken(project, argv, stdin, debug):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MAGIHOOK_DEBUG", None)
    if debug:
        env["MAGIHOOK_DEBUG"] = "1"
    return subprocess.run([sys.executable, "-c", BROKEN % (argv,)], input=stdin,
                          capture_output=True, cwd=project, timeout=60, env=env)


def assert_traceback(stderr, first_line):
    lines = stderr.decode().splitlines()
    assert lines[0] == first_line
    assert lines[1] == "Traceback (most recent call last):"
    assert "in broken" in stderr.decode()
    assert lines[-1] == "ZeroDivisionError: a bug"


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_in_run_is_one_line_or_its_traceback(project, debug):
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "h", "command": "true"}]})
    done = run_broken(project, ["run", "--phase", "before_tool", "--config", str(config)],
                      json.dumps(bash_event()).encode(), debug)
    line = "magihook: internal error (ZeroDivisionError); please report it"
    assert (done.returncode, done.stdout) == (1, b"")
    if debug:
        assert_traceback(done.stderr, line)
    else:
        assert done.stderr.decode() == line + "\n"


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_in_adapt_denies_and_debug_shows_its_traceback(project, debug):
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "h", "command": "true"}]})
    event = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(project),
             "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}
    done = run_broken(project, ["adapt", "claude-code", "--config", str(config)],
                      json.dumps(event).encode(), debug)
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer["systemMessage"].startswith("magihook: internal error (ZeroDivisionError)")
    if debug:
        lines = done.stderr.decode().splitlines()
        assert lines[0] == "Traceback (most recent call last):"
        assert "in broken" in done.stderr.decode()
        assert lines[-1] == "ZeroDivisionError: a bug"
    else:
        assert done.stderr == b""


# --- the command itself: signals, a vanished reader, odd descriptors -----------------------------

def start_cli(project, env, hook_def, event, preexec_fn=default_signals):
    config = write_settings(project, {"enabled": True, "before_tool": [hook_def]})
    (project / "event.json").write_text(json.dumps(event))
    with open(project / "event.json", "rb") as stdin:
        return subprocess.Popen(
            [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--config",
             str(config)], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=project, env=env, preexec_fn=preexec_fn)


def wait_for(path):
    deadline = time.monotonic() + PROMPT
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, "the hook never started"
        time.sleep(0.01)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_during_a_hook_ends_its_group_and_removes_payload_files(project, tmpdir_env,
                                                                       signum):
    command = hostile(project, "sleep 1000 &\nsleep 1000\n")
    process = start_cli(project, tmpdir_env, hook(command, timeout_seconds=60),
                        bash_event(SPILLED))
    wait_for(project / "pgid.txt")
    assert len(os.listdir(tmpdir_env["TMPDIR"])) == 1  # the payload_ref folder exists now
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=PROMPT)
    name = signal.Signals(signum).name
    assert (process.returncode, stdout, stderr) == (
        128 + signum, b"", b"magihook: interrupted by %s; hook processes were ended\n"
        % name.encode())
    assert_group_gone(project, strict=signum == signal.SIGTERM)


def test_a_signal_the_caller_ignores_stays_ignored(project, tmpdir_env):
    # Under nohup, SIGHUP is ignored; magihook must not turn it back into an exit.
    command = hostile(project, "until [ -e go ]; do sleep 0.01; done\nexit 0\n")
    process = start_cli(project, tmpdir_env, hook(command), bash_event(SPILLED),
                        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    wait_for(project / "pgid.txt")
    process.send_signal(signal.SIGHUP)
    time.sleep(0.1)
    (project / "go").write_text("")
    stdout, stderr = process.communicate(timeout=PROMPT)
    assert (process.returncode, stderr) == (0, b"")
    assert json.loads(stdout)["events"][1]["payload"]["status"] == "success"


@pytest.mark.parametrize("args, code", [
    (["run", "--phase", "before_tool"], 0),
    (["run", "--phase", "before_tool", "--blocking"], 3),
    (["schema"], 0),
    (["--version"], 0),
    (["--help"], 0),
])
def test_a_reader_that_closes_stdout_gets_no_traceback(project, args, code):
    blocking = "--blocking" in args
    args = [arg for arg in args if arg != "--blocking"]
    if args[0] == "run":
        policy = "block" if blocking else "warn"
        config = write_settings(project, {"enabled": True, "before_tool": [
            hook("exit 1", failure_policy=policy)]})
        args += ["--config", str(config)]
    process = subprocess.Popen([*MAGIHOOK_ARGV, *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project)
    process.stdout.close()  # the reader is gone before magihook writes a byte
    _, stderr = process.communicate(json.dumps(bash_event()).encode(), timeout=60)
    # The warn hook's warning still reaches the person at the terminal, on stderr.
    warned = b"magihook: warning: hook h (before_tool #0, bash) failed: exit: hook exited with " \
             b"status 1; the call went on without it (failure_policy warn)\n"
    assert (process.returncode, stderr) == (code, warned if args[0] == "run" and not code else b"")


def test_unwritable_stdout_is_one_line_on_stderr(project):
    config = write_settings(project, {"enabled": True, "before_tool": [hook("true")]})
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--config",
             str(config)], input=json.dumps(bash_event()).encode(), stdout=full,
            stderr=subprocess.PIPE, cwd=project, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"magihook: cannot write to stdout (ENOSPC)\n")


def test_closed_stdin_is_an_empty_event(project):
    done = subprocess.run([*MAGIHOOK_ARGV, "run", "--phase", "before_tool"],
                          stdin=None, capture_output=True, cwd=project, timeout=60,
                          preexec_fn=lambda: os.close(0))
    assert (done.returncode, done.stdout, done.stderr) == (
        2, b"", b"magihook: input is empty: expected one JSON object\n")


def test_closed_stdout_and_stderr_are_no_traceback(project):
    config = write_settings(project, {"enabled": True, "before_tool": [hook("exit 1")]})
    for args, code in ((["run", "--phase", "before_tool", "--config", str(config)], 0),
                       (["run"], 2)):
        done = subprocess.run([*MAGIHOOK_ARGV, *args],
                              input=json.dumps(bash_event()).encode(), cwd=project, timeout=60,
                              preexec_fn=lambda: (os.close(1), os.close(2)))
        assert done.returncode == code


def test_non_blocking_stdin_is_waited_for(project):
    # Some callers (Node.js) hand over non-blocking pipes: the event arrives later, not never.
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    process = subprocess.Popen([*MAGIHOOK_ARGV, "run", "--phase", "before_tool"],
                               stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=project)
    os.close(read_end)
    time.sleep(0.3)
    os.write(write_end, json.dumps(bash_event()).encode())
    os.close(write_end)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr, json.loads(stdout)["verdict"]) == (0, b"", "continue")


def test_non_blocking_stdout_is_waited_on(project):
    # The result (the after_tool result echoed back) is far bigger than a pipe's buffer, and the
    # reader is slow to start: magihook must wait for it, not fail with EAGAIN.
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    event = after_event(content="z" * 300_000)
    process = subprocess.Popen([*MAGIHOOK_ARGV, "run", "--phase", "after_tool"],
                               stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE,
                               cwd=project)
    os.close(write_end)
    process.stdin.write(json.dumps(event).encode())
    process.stdin.close()
    time.sleep(0.3)
    with os.fdopen(read_end, "rb") as reader:
        stdout = reader.read()
    stderr = process.stderr.read()
    assert (process.wait(60), stderr) == (0, b"")
    assert json.loads(stdout)["tool_result"] == event["result"]


# --- the command table --------------------------------------------------------------------------
# Each command is one row of COMMANDS, from which usage, help, option parsing and dispatch come:
# a row missing a part, or naming an option its usage lines or help do not show, is caught here.

@pytest.mark.parametrize("name", list(magihook.COMMANDS))
def test_every_command_has_usage_help_options_and_a_handler(name):
    command = magihook.command_helps()[name]
    assert command.summary and command.text and command.exit_codes and callable(command.handler)
    assert command.usages and all(usage.split()[0] in (name, "COMMAND") for usage in command.usages)
    usage_words = {word.strip("[]|") for usage in command.usages for word in usage.split()}
    help_text = magihook.command_help(name)
    for option in command.options:
        assert option.name in usage_words and option.text
        assert "  %-22s %s" % (option.shown(), option.text) in help_text
    named = {word for word in usage_words if word.startswith("--")} - {"--help"}
    assert named == {option.name for option in command.options}
    assert set(command.environment) <= set(magihook.ENVIRONMENT_HELP)
    least, most = command.arguments
    assert 0 <= least <= most


def test_bare_magihook_prints_every_usage_line_of_every_command():
    result = run_cli()
    usages = [usage for command in magihook.command_helps().values() for usage in command.usages]
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "usage: %s\n" % "\n       ".join(
        ["magihook " + usage for usage in usages] + ["magihook --version"])
    assert "magihook test CASES.jsonl [--config PATH] [--strict]" in result.stderr


# --- how an agent starts magihook ---------------------------------------------------------------
# `adapt AGENT --print-settings` writes a command that imports magihook.py from its folder, so the
# agent's every call reads cached bytecode, however magihook was installed (a copied file, or
# `python -m magihook`); the console script names itself (tests/test_interop.py).

STUB = "import sys; sys.path.insert(0, %s); from magihook import console_main; console_main()"
# Imported by the command only if the agent's working folder or PYTHONPATH chose magihook's code.
TRAP = "import pathlib; pathlib.Path(%r).write_text('imported')\n"


def copied(tmp_path, name="magihook.py"):
    """magihook.py copied into a fresh folder (no __pycache__ yet), and a settings file there."""
    folder = tmp_path / "vendor it's here"
    folder.mkdir()
    path = folder / name
    path.write_bytes(MAGIHOOK.read_bytes())
    (folder / "s.json").write_text('{"hooks": {"enabled": true}}')
    return path


def printed_command(argv, cwd):
    done = subprocess.run([*argv, "adapt", "claude-code", "--print-settings", "--config", "s.json"],
                          capture_output=True, text=True, cwd=cwd, timeout=60)
    command = json.loads(done.stdout)["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    return done, command


def pyc_header_matches(pyc, source):
    """The header an import checks before it uses a cached file instead of compiling the source."""
    import importlib.util

    header = pyc.read_bytes()[:16]
    stat = source.stat()
    return header == (importlib.util.MAGIC_NUMBER + bytes(4) + int(stat.st_mtime).to_bytes(4, "little")
                      + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"))


def test_print_settings_from_a_copied_file_or_python_m_starts_it_from_cached_bytecode(tmp_path):
    path = copied(tmp_path)
    folder = path.parent
    by_file, command = printed_command([sys.executable, str(path)], path.parent)
    assert (by_file.returncode, by_file.stderr) == (0, "")
    assert command == "%s -I -c %s adapt claude-code --config %s" % (
        shlex.quote(sys.executable), shlex.quote(STUB % json.dumps(str(folder))),
        shlex.quote(str(folder / "s.json")))
    pyc = folder / "__pycache__" / ("magihook.%s.pyc" % sys.implementation.cache_tag)
    assert pyc_header_matches(pyc, path)
    by_module, same = printed_command([sys.executable, "-m", "magihook"], folder)
    assert (by_module.returncode, by_module.stderr, same) == (0, "", command)


def test_the_printed_command_reads_the_cache_and_no_code_from_the_agents_folder_or_env(tmp_path):
    path = copied(tmp_path)
    _, command = printed_command([sys.executable, str(path)], path.parent)
    pyc = path.parent / "__pycache__" / ("magihook.%s.pyc" % sys.implementation.cache_tag)
    cached = (pyc.read_bytes(), pyc.stat().st_mtime_ns)
    project, planted = tmp_path / "project", tmp_path / "planted"
    project.mkdir()
    planted.mkdir()
    for folder in (project, planted):
        for module in ("json", "re", "magihook"):
            (folder / (module + ".py")).write_text(TRAP % str(folder / (module + ".imported")))
    event = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(project),
             "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event).encode(),
                          capture_output=True, cwd=project, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(planted)))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert sorted(p.name for p in project.iterdir()) == ["json.py", "magihook.py", "re.py"]
    assert sorted(p.name for p in planted.iterdir()) == ["json.py", "magihook.py", "re.py"]
    assert (pyc.read_bytes(), pyc.stat().st_mtime_ns) == cached  # used as it was, not rewritten


def test_a_copy_whose_cache_cannot_be_written_still_prints_settings_and_says_why(tmp_path):
    path = copied(tmp_path)
    (path.parent / "__pycache__").write_text("a file where the cache folder would be")
    done, command = printed_command([sys.executable, str(path)], path.parent)
    assert done.returncode == 0
    assert command.startswith("%s -I -c " % shlex.quote(sys.executable))
    assert done.stderr == WARNING


def test_a_copy_named_as_no_module_is_started_as_a_script_and_says_why(tmp_path):
    path = copied(tmp_path, "magihook-1.py")
    done, command = printed_command([sys.executable, str(path)], path.parent)
    assert done.returncode == 0
    assert command == "%s %s adapt claude-code --config %s" % (
        shlex.quote(sys.executable), shlex.quote(str(path)), shlex.quote(str(path.parent / "s.json")))
    assert done.stderr == WARNING
    assert not (path.parent / "__pycache__").exists()


WARNING = ("magihook: warning: cannot cache magihook.py's bytecode (its folder must hold a writable "
           "__pycache__ and its name be a module name), so every call compiles the whole file: see "
           "\"Copying magihook.py\" in docs/usage.md\n")
