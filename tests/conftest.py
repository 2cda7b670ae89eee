"""Shared fixtures: real hook scripts in tmp_path, the real CLI in a real subprocess.

Which file tests which section of magihook.py (its docstring lists the 18):

     1. Helpers                                where they are used
     2. Constants and defaults                 test_run_core (defaults), test_settings_schema
     3. Errors                                 each section's file (an error is tested where raised)
     4. Settings: schema and validation        test_settings_schema, test_settings_hostile
     5. Settings: loading                      test_settings_cli, test_run_core (discovery)
     6. Input events                           test_input
     7. Matching                               test_run_core (matching)
     8. Preflight                              test_preflight, test_run_core (preflight)
     9. Credential redaction                   test_redaction, test_redaction_rules, test_redaction_precision,
                                               test_redaction_syntax
    10. Payload                                test_payload, test_run_core (payload)
    11. Process runner                         test_runner, test_args (hooks that give args)
    12. Injection                              test_injection
    13. Records and sessions                   test_sessions, test_records
    14. Display                                test_display
    15. Pipeline (the Python API)              test_api, test_run_core (failure policies),
                                               test_subagents, test_redact_output
    16. Interop (other agents' protocols)      test_interop, test_interop_codex, test_interop_gemini,
                                               test_interop_copilot, test_interop_qwen
    17. Checks: doctor, init and test          test_firsthour
    18. CLI                                    test_cli, test_stream

Cross-cutting: test_hostile (hostile hook output, nothing left behind by the API), test_signals
(signal bursts at each step), test_reliability (bounds, sweeps), test_properties (generated
events), test_hot_path (start-up imports), test_docs and test_firsthour (the documents and the
first hour), tests/e2e (the real agents, MAGIHOOK_E2E=1).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MAGIHOOK = ROOT / "magihook.py"
sys.path.insert(0, str(ROOT))

import magihook  # noqa: E402

# The CLI as `adapt AGENT --print-settings` starts it: this interpreter importing the worktree's
# magihook.py, from cached bytecode (the first child writes it), as users' agents do.  Running
# the file as a script would compile it again in every one of the suite's children.
MAGIHOOK_ARGV = magihook.launch_argv()

# The real agents (tests/e2e) run only when asked: MAGIHOOK_E2E=1 (.ci/run sets it after the unit suite).
collect_ignore = [] if os.environ.get("MAGIHOOK_E2E") else ["e2e"]


class CliResult:
    def __init__(self, completed: subprocess.CompletedProcess) -> None:
        self.returncode = completed.returncode
        self.stdout = completed.stdout.decode("utf-8", "replace")
        self.stderr = completed.stderr.decode("utf-8", "replace")

    @property
    def json(self) -> Dict[str, Any]:
        lines = self.stdout.splitlines()
        assert len(lines) == 1, self.stdout
        return json.loads(lines[0])

    def events(self, kind: Optional[str] = None) -> list:
        return [e for e in self.json["events"] if kind is None or e["type"] == kind]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No user settings leak in: HOME is empty, MAGIHOOK_CONFIG and each agent's home variable
    ($CODEX_HOME, which moves the agent's user settings: doctor reads them there) unset."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for variable in ["MAGIHOOK_CONFIG", "NO_COLOR"] + [agent.home_folder[0] for agent in magihook.AGENTS.values()]:
        monkeypatch.delenv(variable, raising=False)
    return home


@pytest.fixture
def tmpdir_env(tmp_path):
    """magihook's environment with TMPDIR on a fresh folder that must be empty afterwards."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    yield dict(os.environ, TMPDIR=str(folder))
    assert sorted(os.listdir(folder)) == []


@pytest.fixture
def project(tmp_path):
    """A project folder to run hooks in."""
    path = tmp_path / "project"
    path.mkdir()
    return path


def write_script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def write_settings(folder: Path, hooks: Dict[str, Any], name: str = "settings.json",
                   **top: Any) -> Path:
    path = folder / name
    document = {"hooks": hooks}
    document.update(top)
    path.write_text(json.dumps(document))
    return path


def run_cli(*args: str, event: Any = None, stdin: Optional[bytes] = None, cwd: Any = None,
            env: Optional[Dict[str, str]] = None, timeout: float = 60) -> CliResult:
    if stdin is None and event is not None:
        stdin = json.dumps(event).encode()
    completed = subprocess.run(
        [*MAGIHOOK_ARGV, *args], input=stdin if stdin is not None else b"",
        capture_output=True, cwd=cwd, env=env, timeout=timeout,
    )
    return CliResult(completed)


def require_tool(name: str, why: str) -> None:
    """Fail, naming the tool, where a program the suite needs is missing: .ci/run installs jq
    and tmux, and a test that skipped without them would pass CI having checked nothing."""
    if shutil.which(name) is None:
        pytest.fail("%s is not installed (%s): install it, as .ci/run does" % (name, why))


def fresh_python(code: str) -> List[str]:
    """The lines CODE prints in a fresh interpreter started in the repository (what a first call
    compiles, builds or imports, which this process did long ago)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(ROOT))
    return done.stdout.split("\n")


# What a failed `warn` hook's warning says after its failure (magihook.failure_warning).
WENT_ON = "; the call went on without it (failure_policy warn)"


def warning_lines(result: Dict[str, Any]) -> str:
    """What `run` prints on stderr for a result: each warning on a line of its own."""
    return "".join("magihook: warning: %s\n" % (warning[len("magihook: "):] if warning.startswith(
        "magihook: ") else warning) for warning in result["warnings"])


def bash_event(command: str = "ls -la", call_id: str = "call_1", **extra: Any) -> Dict[str, Any]:
    event = {"tool": {"name": "bash", "call_id": call_id},
             "request": {"command": command, "timeout": 30}}
    event.update(extra)
    return event


def after_event(tool: str = "bash", request: Any = None, content: str = "out",
                call_id: str = "call_1", **extra: Any) -> Dict[str, Any]:
    event = {"tool": {"name": tool, "call_id": call_id},
             "request": request if request is not None else {"command": "ls"},
             "result": {"tool_name": tool, "success": True, "content": content,
                        "metadata": {}}}
    event.update(extra)
    return event


# --- hostile hooks: real processes that must leave nothing behind -------------------------------

# seconds: the "returns promptly" bound for cases whose hook timeout is longer (30 s, 60 s) or
# 1 s.  A hang detector, not a speed check: generous for a busy 2-core machine running the suite
# twice at once, and still below the 30 s a case tells apart from it.
PROMPT = 20
# Every hostile script starts by writing its process group id (field 5 of /proc/PID/stat), to
# a part file renamed into place: a reader sees no file or the whole id, never an empty one (a
# hook killed between `>` creating the file and `cut` writing it left one behind).
RECORD_PGID = "#!/bin/bash\ncut -d' ' -f5 /proc/$$/stat > pgid.txt.part\nmv pgid.txt.part pgid.txt\n"
SPILLED = "x" * (1024 * 1024 + 1)  # a full payload this big goes to a payload_ref file


def hook_def(command, **fields):
    """One hook's settings entry, labelled "h" so messages name it predictably."""
    return dict({"label": "h", "command": command}, **fields)


def full_hook(command, **fields):
    """A hook that gets the full payload: with SPILLED, a payload_ref file is really made."""
    return hook_def(command, **dict({"payload": "full"}, **fields))


def hostile(project, body, name="hostile.sh"):
    write_script(project, name, RECORD_PGID + body)
    return "./" + name


def run_hook(project, env, hook_def, event=None, phase="before_tool"):
    config = write_settings(project, {"enabled": True, phase: [hook_def]})
    if event is None:
        event = bash_event(SPILLED) if phase == "before_tool" else after_event(content=SPILLED)
    started = time.monotonic()
    result = run_cli("run", "--phase", phase, "--config", str(config), event=event, cwd=project,
                     env=env)
    return result, time.monotonic() - started


def terminal(result):
    """The hook's terminal lifecycle payload: (status, category, message)."""
    started, done = result.events("hook_lifecycle")
    assert started["payload"]["status"] == "started"
    payload = done["payload"]
    return payload["status"], payload["category"], payload["message"]


def live_members(pgid):
    """Pids of the group's processes that still run.  A killed grandchild is reparented to init,
    which may take a second or two to reap it; a zombie runs nothing, holds no pipe and is not
    magihook's child, so it does not count."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry))
    return members


def assert_group_gone(project, strict=False):
    """The hook's group has no live member (SIGKILL lands asynchronously: poll briefly).
    `strict` waits for os.killpg(pgid, 0) itself to fail, zombies reaped too."""
    pgid = int((project / "pgid.txt").read_text())
    deadline = time.monotonic() + PROMPT
    while time.monotonic() < deadline:
        if strict:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
        elif not live_members(pgid):
            return
        time.sleep(0.02)
    raise AssertionError("process group %d still has %s" % (pgid, live_members(pgid)))


def default_signals():
    """preexec_fn: the CLI starts with default dispositions even if this test run was started
    with some ignored (a background job in a script ignores SIGINT)."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
