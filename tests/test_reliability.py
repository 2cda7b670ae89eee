"""Issue 15's runner side: a timeout or cap ends the hook's whole session, a SIGKILLed magihook's
payload folders are swept, a hook's timeout counts from its spawn, payload preparation stays
linear and bounded in memory.  Real hooks, real processes; CPU time and peak RSS come from
getrusage(RUSAGE_CHILDREN) of a fresh child, never the wall clock."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import MAGIHOOK, after_event, bash_event, run_cli, write_script, write_settings
from test_hostile import PROMPT, SPILLED

import magihook


@pytest.fixture
def tmpdir_env(tmp_path):
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    yield dict(os.environ, TMPDIR=str(folder))
    assert sorted(os.listdir(folder)) == []


def alive(pid):
    """Whether pid runs (a zombie, killed and waiting for its reaper, does not)."""
    try:
        state = Path("/proc", str(pid), "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def await_dead(pids):
    deadline = time.monotonic() + PROMPT
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, [pid for pid in pids if alive(pid)]
        time.sleep(0.02)


def run_hook(project, env, hook, event, phase="before_tool"):
    config = write_settings(project, {"enabled": True, phase: [hook]})
    return run_cli("run", "--phase", phase, "--config", str(config), event=event, cwd=project,
                   env=env)


def terminal(result):
    payload = result.events("hook_lifecycle")[-1]["payload"]
    return payload["status"], payload["category"], payload["message"]


# --- a timeout or a cap ends the hook's session, not only its group -----------------------------

# Job control (`set -m`) puts each background job in its own process group, and a child may call
# setpgid itself: both stay in the hook's session.
ESCAPERS = r"""#!/bin/bash
set -m
sleep 1000 &
echo $! >> pids.txt
python3 -c 'import os, time; os.setpgid(0, 0); print(os.getpid(), flush=True); time.sleep(1000)' >> pids.txt &
until [ "$(wc -l < pids.txt)" -ge 2 ]; do sleep 0.01; done
"""


@pytest.mark.parametrize("end, fields, category", [
    ("sleep 1000\n", {"timeout_seconds": 1}, "timeout"),
    ("head -c 100000 /dev/zero\nsleep 1000\n", {"stdout_max_bytes": 10}, "output-limit"),
])
def test_a_timeout_or_cap_ends_jobs_in_other_groups_of_the_session(project, tmpdir_env, end,
                                                                    fields, category):
    write_script(project, "escape.sh", ESCAPERS + end)
    result = run_hook(project, tmpdir_env, dict({"command": "./escape.sh"}, **fields),
                      bash_event())
    assert terminal(result)[:2] == ("failed", category)
    pids = [int(line) for line in (project / "pids.txt").read_text().split()]
    assert len(pids) == 2
    await_dead(pids)


def test_a_new_session_still_escapes_as_documented(project, tmpdir_env):
    write_script(project, "detach.sh", "#!/bin/bash\nsetsid bash -c 'echo $$ > pid.txt; exec "
                 "sleep 1000' < /dev/null > /dev/null 2>&1 &\nuntil [ -s pid.txt ]; do sleep 0.01;"
                 " done\nsleep 1000\n")
    result = run_hook(project, tmpdir_env, {"command": "./detach.sh", "timeout_seconds": 1},
                      bash_event())
    assert terminal(result)[:2] == ("failed", "timeout")
    pid = int((project / "pid.txt").read_text())
    try:
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)
