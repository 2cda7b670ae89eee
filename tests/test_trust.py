"""Issue 26, items 1-4: layered settings (the home file's hooks always run, first), trust that
follows no link, a home that is really home, init and import that write through no link,
imported Claude Code guards that fail closed, and a payload sweep that removes a folder only
when its owner is proven gone.

Every hook is a real process, every trust record a real file in the test's HOME (conftest's
isolated_env), every lock a real flock held by a real process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, MAGIHOOK, PROMPT, after_event, bash_event, run_cli, write_script

import magihook

GUARD = EXAMPLES / "hooks" / "block-dangerous-bash.sh"
MARK = "#!/bin/sh\ncat >/dev/null\necho {tag} >> {log}\n"


def settings_file(folder: Path, hooks: dict, **top) -> Path:
    (folder / ".magi-code").mkdir(parents=True, exist_ok=True)
    path = folder / ".magi-code" / "settings.json"
    path.write_text(json.dumps(dict({"hooks": hooks}, **top)))
    return path


def guard_hook(**fields) -> dict:
    """The user's guard: blocks `rm -rf`."""
    return dict({"label": "guard", "command": str(GUARD), "payload": "full",
                 "failure_policy": "block", "include_tools": ["bash"]}, **fields)


def mark_hook(folder: Path, log: Path, tag: str, **fields) -> dict:
    """A hook that appends TAG to LOG."""
    script = write_script(folder, "mark-%s.sh" % tag, MARK.format(tag=tag, log=log))
    return dict({"label": "mark-" + tag, "command": str(script)}, **fields)


def marks(log: Path) -> list:
    return log.read_text().split() if log.exists() else []


def run_at(cwd: Path, event: dict, phase: str = "before_tool", *extra: str, env=None):
    return run_cli("run", "--phase", phase, *extra, event=dict(event, context={"cwd": str(cwd)}),
                   cwd=cwd, env=env)


def trust(project: Path) -> None:
    result = run_cli("trust", str(project))
    assert result.returncode == 0, result.stderr


@pytest.fixture
def home(isolated_env):
    return isolated_env


# --- 1. layered settings --------------------------------------------------------------------------

@pytest.mark.parametrize("project_document", [
    {}, {"hooks": {"enabled": False}}, {"hooks": {"enabled": True, "after_tool": []}},
    {"hooks": {"enabled": True, "failure_policy": "ignore", "timeout_seconds": 1,
               "stderr_max_bytes": 1}},
], ids=["empty", "disabled", "read-only-hooks", "weaker-globals"])
@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
def test_no_project_file_switches_the_home_guard_off(home, project, project_document, trusted):
    settings_file(home, {"enabled": True, "before_tool": [guard_hook()]})
    (project / ".magi-code").mkdir()
    (project / ".magi-code" / "settings.json").write_text(json.dumps(project_document))
    if trusted:
        trust(project)
    result = run_at(project, bash_event("rm -rf /"))
    assert (result.returncode, result.json["verdict"]) == (3, "block")
    assert [event["payload"]["label"] for event in result.events("hook_lifecycle")] == [
        "guard", "guard"]


def test_home_hooks_run_first_then_the_project_s_each_with_its_own_file_s_values(
        home, project, tmp_path):
    log = tmp_path / "log"
    # The home file's global failure_policy is block; the project's is ignore: each hook takes
    # its own file's, so the home hook's failure blocks and the project's is ignored.
    failing = write_script(home, "fail.sh", "#!/bin/sh\ncat >/dev/null\necho home >> %s\nexit 1\n"
                           % log)
    settings_file(home, {"enabled": True, "failure_policy": "block",
                         "before_tool": [{"label": "home-fails", "command": str(failing)}]})
    settings_file(project, {"enabled": True, "failure_policy": "ignore",
                            "before_tool": [mark_hook(project, log, "project")]})
    trust(project)
    result = run_at(project, bash_event("ls"))
    assert (result.json["verdict"], marks(log)) == ("block", ["home"])
    settings_file(home, {"enabled": True, "failure_policy": "warn",
                         "before_tool": [mark_hook(home, log, "home2")]})
    result = run_at(project, bash_event("ls"))
    assert (result.json["verdict"], marks(log)) == ("continue", ["home", "home2", "project"])
    # Each has its own index (home first), so records and activity ids never collide.
    assert [(event["payload"]["label"], event["payload"]["hook_index"])
            for event in result.events("hook_lifecycle")][::2] == [("mark-home2", 0),
                                                                  ("mark-project", 1)]


def test_a_project_file_cannot_loosen_the_preflight_of_a_home_hook(home, project):
    # tools.bash.absolute_paths false rejects an absolute path in a command; a project file
    # turning it back on changes only its own hooks' preflight.
    settings_file(home, {"enabled": True, "before_tool": [guard_hook()]},
                  tools={"bash": {"absolute_paths": False}})
    settings_file(project, {"enabled": True}, tools={"bash": {"absolute_paths": True}})
    trust(project)
    result = run_at(project, bash_event("ls"))
    assert result.json["verdict"] == "block"
    (failed,) = [event for event in result.events("hook_lifecycle")
                 if event["payload"]["status"] == "failed"]
    assert failed["payload"]["category"] == "runner"
    assert "preflight" in failed["payload"]["message"]


def test_an_untrusted_project_file_runs_none_of_its_hooks_and_the_home_hooks_run(
        home, project, tmp_path):
    log = tmp_path / "log"
    settings_file(home, {"enabled": True, "before_tool": [mark_hook(home, log, "home")],
                         "after_tool": [mark_hook(home, log, "home-after")]})
    settings_file(project, {"enabled": True, "before_tool": [mark_hook(project, log, "proj")],
                            "after_tool": [mark_hook(project, log, "proj-after")]})
    before = run_at(project, bash_event("ls"))
    assert (before.returncode, before.json["verdict"], marks(log)) == (3, "block", ["home"])
    assert "magihook trust" in before.json["warnings"][0]
    after = run_at(project, after_event(), "after_tool")
    assert (after.json["verdict"], marks(log)) == ("continue", ["home", "home-after"])
    (diagnostic,) = after.events("hook_diagnostic")
    assert diagnostic["payload"]["label"] == "mark-proj-after"


@pytest.mark.parametrize("mode", [0o777, 0o1777], ids=["world-writable", "sticky-like-tmp"])
def test_an_untrusted_project_file_in_a_folder_others_can_write_is_ignored(home, project, mode,
                                                                           tmp_path):
    log = tmp_path / "log"
    settings_file(home, {"enabled": True, "before_tool": [guard_hook()]})
    settings_file(project, {"enabled": True, "before_tool": [mark_hook(tmp_path, log, "planted")]})
    project.chmod(mode)
    result = run_at(project, bash_event("ls"))
    # Neither runs nor blocks, and says so, naming it; the home guard still guards.
    assert (result.returncode, result.json["verdict"], marks(log)) == (0, "continue", [])
    assert result.json["warnings"] == [
        "magihook: ignored the project settings file ./.magi-code/settings.json: it is not "
        "trusted and other users can write the project folder, so none of its hooks runs and it "
        "blocks nothing; if it is yours, fix its owner or mode, review it, then run `magihook "
        "trust`"]
    assert run_at(project, bash_event("rm -rf /")).json["verdict"] == "block"
    # Once the user trusts it as it is, it runs.
    trust(project)
    assert (run_at(project, bash_event("ls")).json["warnings"], marks(log)) == ([], ["planted"])


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a file to another user")
def test_an_untrusted_project_file_another_user_owns_is_ignored(home, project, tmp_path):
    log = tmp_path / "log"
    settings_file(project, {"enabled": True, "before_tool": [mark_hook(tmp_path, log, "x")]})
    os.chown(project / ".magi-code", 12345, 12345)
    result = run_at(project, bash_event("ls"))
    assert (result.json["verdict"], marks(log)) == ("continue", [])
    assert "its .magi-code folder is owned by another user" in result.json["warnings"][0]


def test_config_explain_and_doctor_name_the_file_of_each_hook(home, project, tmp_path):
    log = tmp_path / "log"
    settings_file(home, {"enabled": True, "before_tool": [mark_hook(home, log, "home")]})
    settings_file(project, {"enabled": True, "before_tool": [mark_hook(project, log, "proj")]})
    trust(project)
    document = json.loads(run_cli("config", cwd=project).stdout)
    assert [hook["label"] for hook in document["hooks"]["before_tool"]] == ["mark-home",
                                                                           "mark-proj"]
    assert [(one["layer"], one["found_by"], one["trust"], one["hooks"])
            for one in document["settings_files"]] == [
        ("home", "~/.magi-code/settings.json", "not needed", ["before_tool[0]"]),
        ("project", "./.magi-code/settings.json", "trusted", ["before_tool[1]"])]
    explained = run_at(project, bash_event("ls"), "before_tool", "--explain").stdout.splitlines()
    assert "before_tool[0] mark-home (from ~/.magi-code/settings.json): matched" in explained
    assert "before_tool[1] mark-proj (from ./.magi-code/settings.json): matched" in explained
    doctor = run_cli("doctor", cwd=project).stdout.splitlines()
    assert doctor[:2] == [
        "settings: %s (found by ~/.magi-code/settings.json): home, its hooks before_tool[0]"
        % (home / ".magi-code" / "settings.json"),
        "settings: %s (found by ./.magi-code/settings.json): project, its hooks before_tool[1]"
        % (project / ".magi-code" / "settings.json")]
    assert marks(log) == []
    session = tmp_path / "session.jsonl"
    run_at(project, bash_event("ls"), "before_tool", "--session", str(session))
    replayed = run_cli("replay", str(session), cwd=project).stdout
    assert "mark-home · bash · success · from ~/.magi-code/settings.json" in replayed
    assert "mark-proj · bash · success · from ./.magi-code/settings.json" in replayed


def test_the_python_api_loads_both_layers(home, project, tmp_path):
    log = tmp_path / "log"
    settings_file(home, {"enabled": True, "before_tool": [mark_hook(home, log, "home")]})
    settings_file(project, {"enabled": False, "before_tool": [mark_hook(project, log, "proj")]})
    loaded = magihook.load_settings(cwd=str(project), env={"HOME": str(home)})
    assert [hook.label for hook in loaded.before_tool] == ["mark-home"]
    assert [layer.found_by for layer in loaded.layers] == ["~/.magi-code/settings.json",
                                                           "./.magi-code/settings.json"]
    watcher = magihook.SettingsWatcher(env={"HOME": str(home)}, cwd=str(project))
    assert watcher.current() == loaded
    settings_file(project, {"enabled": True, "before_tool": [mark_hook(project, log, "proj")]})
    assert [hook.label for hook in watcher.current().before_tool] == ["mark-home", "mark-proj"]


# --- 2. trust that follows no link, a home that is really home ---------------------------------

@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_symlink_to_a_trusted_settings_file_is_not_trusted(home, tmp_path, linked):
    log = tmp_path / "log"
    trusted = tmp_path / "trusted"
    settings_file(trusted, {"enabled": True, "before_tool": [
        {"label": "relative", "command": "./guard.sh"}]})
    write_script(trusted, "guard.sh", MARK.format(tag="trusted-script", log=log))
    trust(trusted)
    repository = tmp_path / "repository"
    repository.mkdir()
    write_script(repository, "guard.sh", MARK.format(tag="repository-script", log=log))
    if linked == "file":
        (repository / ".magi-code").mkdir()
        (repository / ".magi-code" / "settings.json").symlink_to(
            trusted / ".magi-code" / "settings.json")
    else:
        (repository / ".magi-code").symlink_to(trusted / ".magi-code")
    result = run_at(repository, bash_event("ls"))
    assert (result.json["verdict"], marks(log)) == ("block", [])
    assert "is not trusted" in result.json["warnings"][0]
    # Trusted under the path it is found at, it runs.
    trust(repository)
    assert run_at(repository, bash_event("ls")).json["verdict"] == "continue"
    assert marks(log) == ["repository-script"]


@pytest.mark.parametrize("home_value", [None, "", "~", "relative/home"])
def test_without_an_absolute_home_there_is_no_home_file_and_no_walk(tmp_path, home_value):
    log = tmp_path / "log"
    project = tmp_path / "project"
    # A folder literally named `~` (or the relative HOME) in the cwd is never the home folder.
    for name in ("~", "relative/home"):
        settings_file(project / name, {"enabled": True, "before_tool": [
            mark_hook(tmp_path, log, name.replace("/", "-"))]})
    above = settings_file(project, {"enabled": True, "before_tool": [
        mark_hook(tmp_path, log, "above")]})
    below = project / "sub"
    below.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("HOME", "MAGIHOOK_CONFIG")}
    if home_value is not None:
        env["HOME"] = home_value
    result = run_at(project, bash_event("ls"), env=env)
    # Only the cwd's own project file applies (untrusted: blocked, there being no trust store).
    assert (result.json["verdict"], marks(log)) == ("block", [])
    result = run_at(below, bash_event("ls"), env=env)
    assert (result.json["verdict"], result.json["warnings"], marks(log)) == ("continue", [], [])
    assert magihook.load_settings(cwd=str(below), env=env) == magihook.Settings()
    trusting = run_cli("trust", str(project), env=env)
    assert (trusting.returncode, above.exists()) == (2, True)
    assert "HOME is unset or not an absolute path" in trusting.stderr


def test_a_symlinked_home_is_resolved_so_the_walk_stops_below_it(tmp_path):
    log = tmp_path / "log"
    outer = tmp_path / "outer"
    settings_file(outer, {"enabled": True, "before_tool": [mark_hook(tmp_path, log, "above")]})
    real_home = outer / "real-home"
    (real_home / "project").mkdir(parents=True)
    link = tmp_path / "home-link"
    link.symlink_to(real_home)
    env = dict(os.environ, HOME=str(link))
    result = run_at(real_home / "project", bash_event("ls"), env=env)
    assert (result.json["verdict"], result.json["warnings"], marks(log)) == ("continue", [], [])


def test_import_refuses_a_symlinked_scripts_folder(home, project, tmp_path):
    elsewhere = tmp_path / "profile.d"
    elsewhere.mkdir()
    (project / ".magi-code").mkdir()
    (project / ".magi-code" / "imported-hooks").symlink_to(elsewhere)
    source = project / "claude.json"
    source.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "jq . >> ~/log.jsonl"}]}]}}))
    result = run_cli("import", "claude-code", str(source), cwd=project)
    assert (result.returncode, result.stdout, list(elsewhere.iterdir())) == (2, "", [])
    assert result.stderr == (
        "magihook: %s: is a symbolic link; magihook writes nothing through a link (remove it, "
        "or choose another folder)\n" % (project / ".magi-code" / "imported-hooks"))


@pytest.mark.parametrize("linked", ["scripts", ".magi-code"])
def test_init_refuses_a_symlinked_folder(home, project, tmp_path, linked):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / linked).symlink_to(elsewhere)
    result = run_cli("init", cwd=project)
    assert (result.returncode, list(elsewhere.iterdir())) == (2, [])
    assert result.stderr == (
        "magihook: %s: is a symbolic link; magihook writes nothing through a link (remove it, "
        "or choose another folder)\n" % (project / linked))
    assert not (home / ".magi-code" / "magihook-trust.json").exists()


RACER = r"""
import os, sys, time
path = sys.argv[1]
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    if os.path.exists(path):
        with open(path + ".evil", "w") as handle:
            handle.write('{"hooks": {"enabled": true, "before_tool": [{"command": "./evil.sh"}]}}')
        os.replace(path + ".evil", path)
        break
"""


def test_init_trusts_the_bytes_it_wrote_not_what_is_at_the_path_after(home, tmp_path):
    # A racing writer replaces the settings file as soon as it appears; whoever wins, the trust
    # record holds the digest of what init wrote, so the replaced file is not trusted.
    for attempt in range(10):
        project = tmp_path / ("p%d" % attempt)
        project.mkdir()
        settings = project / ".magi-code" / "settings.json"
        racer = subprocess.Popen([sys.executable, "-c", RACER, str(settings), "30"])
        try:
            assert run_cli("init", cwd=project).returncode == 0
        finally:
            racer.wait(60)
        written = json.dumps(magihook.init_settings(str(project)), indent=2) + "\n"
        record = json.loads((home / ".magi-code" / "magihook-trust.json").read_text())
        assert record["trusted"][str(settings)] == "sha256:" + hashlib.sha256(
            written.encode()).hexdigest()
        assert run_at(project, bash_event("ls")).json["verdict"] == "block"


# --- 3. imported guards fail closed -------------------------------------------------------------

GUARD_SCRIPT = "#!/bin/sh\ncat >/dev/null\n{body}\n"


def imported(project: Path, body: str, **handler) -> Path:
    """A Claude Code project whose PreToolUse guard is .claude/hooks/guard.sh, imported."""
    (project / ".claude" / "hooks").mkdir(parents=True)
    write_script(project / ".claude" / "hooks", "guard.sh", GUARD_SCRIPT.format(body=body))
    source = project / ".claude" / "settings.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [dict(
        {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'},
        **handler)]}]}}))
    result = run_cli("import", "claude-code", str(source), cwd=project)
    assert result.returncode == 0, result.stderr
    converted = project / "magihook.json"
    converted.write_text(result.stdout)
    return converted


def claude_call(project: Path, cwd: Path, converted: Path, command: str) -> dict:
    document = {"session_id": "s", "transcript_path": "/t.jsonl", "cwd": str(cwd),
                "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t1"}
    env = {key: value for key, value in os.environ.items() if key != "CLAUDE_PROJECT_DIR"}
    result = run_cli("adapt", "claude-code", "--config", str(converted), event=document, cwd=cwd,
                     env=env)
    assert result.returncode == 0, result.stderr
    return result.json if result.stdout.strip() else {}


def decision(answer: dict):
    return answer.get("hookSpecificOutput", {}).get("permissionDecision")


def test_an_imported_guard_is_found_from_a_subfolder(home, project):
    converted = imported(project, 'echo "no rm" >&2\nexit 2')
    (project / "src").mkdir()
    (project / ".git").mkdir()
    for cwd in (project, project / "src"):
        assert decision(claude_call(project, cwd, converted, "rm -rf /")) == "deny"


@pytest.mark.parametrize("body", [
    "exit 127", "sleep 30", "head -c 70000 /dev/zero | tr '\\0' x >&2\nexit 2",
    "head -c 70000 /dev/zero | tr '\\0' x\nexit 0",
], ids=["not-found", "timeout", "stderr-past-cap", "stdout-past-cap"])
def test_an_imported_guard_that_fails_blocks(home, project, body):
    converted = imported(project, body, timeout=1)
    assert decision(claude_call(project, project, converted, "ls")) == "deny"


def test_an_imported_guard_s_long_reason_is_still_a_deny(home, project):
    # Claude Code has no stderr cap: a reason past magihook's default 8 KiB is still a deny.
    converted = imported(project, "head -c 9000 /dev/zero | tr '\\0' x >&2\nexit 2")
    assert decision(claude_call(project, project, converted, "ls")) == "deny"


def test_import_makes_guards_fail_closed_and_says_how_one_could_still_fail_open(home, project):
    (project / ".claude").mkdir()
    source = project / ".claude" / "settings.json"
    source.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./guard.sh", "timeout": 5}]}]}}))
    result = run_cli("import", "claude-code", str(source), cwd=project)
    (hook,) = json.loads(result.stdout)["hooks"]["before_tool"]
    assert (hook["failure_policy"], hook["stdout_max_bytes"], hook["stderr_max_bytes"]) == (
        "block", 65536, 65536)
    assert result.stderr.splitlines() == ["magihook import: $.hooks.PreToolUse: " + line
                                          for line in magihook.IMPORTED_GUARD_REPORT]


# --- 4. the payload sweep --------------------------------------------------------------------------

HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import magihook
folder = magihook._make_spill_folder()
print(folder, flush=True)
time.sleep(600)
"""

SWEEPER = """
import sys
sys.path.insert(0, sys.argv[1])
import magihook
print(magihook.sweep_payload_folders())
"""


def sweep(env) -> int:
    done = subprocess.run([sys.executable, "-c", SWEEPER, str(MAGIHOOK.parent)], env=env,
                          capture_output=True, text=True, timeout=PROMPT * 6, check=True)
    return int(done.stdout)


@contextlib.contextmanager
def held_folder(env):
    """A payload_ref folder made by a live process (another interpreter), which holds its lock
    until the block ends and then is SIGKILLed."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(MAGIHOOK.parent)], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        yield Path(holder.stdout.readline().strip())
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_the_sweep_leaves_a_live_owner_s_folder_and_removes_it_once_the_owner_is_gone(tmpdir_env):
    with held_folder(tmpdir_env) as folder:
        assert (sweep(tmpdir_env), folder.is_dir()) == (0, True)
    assert (sweep(tmpdir_env), folder.exists()) == (1, False)


def test_the_sweep_leaves_a_folder_whose_owner_it_cannot_see_while_the_owner_holds_its_lock(
        tmpdir_env):
    # The owner runs in another PID namespace: the pid its folder's name records means nothing
    # here (no such process).  Its lock, held by a live process, keeps the folder.
    with held_folder(tmpdir_env) as made:
        # A pid above Linux's largest (2**22): no process here has it.
        other = made.with_name("magihook-payload-%d.1-abcdef" % (2 ** 22 + 7))
        made.rename(other)
        assert (sweep(tmpdir_env), other.is_dir()) == (0, True)
    assert (sweep(tmpdir_env), other.exists()) == (1, False)


def test_a_folder_of_another_pid_namespace_without_a_lock_goes_only_by_age(tmpdir_env):
    tmp = Path(tmpdir_env["TMPDIR"])
    host = magihook._host_name()
    other_namespace = tmp / ("magihook-payload-%d.1.%d.%s-abcdef" % (
        2 ** 22 + 7, magihook._pid_namespace() + 1, host))
    other_host = tmp / ("magihook-payload-%d.1.%d.other-host-abcdef" % (
        2 ** 22 + 7, magihook._pid_namespace()))
    gone_here = tmp / ("magihook-payload-%d.1.%d.%s-abcdef" % (
        2 ** 22 + 7, magihook._pid_namespace(), host))
    for folder in (other_namespace, other_host, gone_here):
        folder.mkdir()
    # Same host and namespace, no such process: proven gone.  The others are left...
    assert sweep(tmpdir_env) == 1
    assert (other_namespace.is_dir(), other_host.is_dir(), gone_here.exists()) == (
        True, True, False)
    # ... until they are older than the leftover age.
    old = time.time() - magihook.SPILL_LEFTOVER_MAX_AGE_SECONDS - 60
    os.utime(other_namespace, (old, old))
    assert (sweep(tmpdir_env), other_namespace.exists(), other_host.is_dir()) == (1, False, True)
    other_host.rmdir()


def test_a_sigkilled_hook_run_leaves_a_locked_folder_only_while_it_runs(project, tmpdir_env):
    # The lock lives in magihook, not in the hook: once magihook is gone, the folder goes even
    # while the SIGKILL-orphaned hook still runs.
    script = write_script(project, "wait.sh", "#!/bin/sh\necho $$ > hook.pid\nexec sleep 600\n")
    config = project / "settings.json"
    config.write_text(json.dumps({"hooks": {"enabled": True, "before_tool": [
        {"command": str(script), "payload": "full", "timeout_seconds": 60}]}}))
    (project / "event.json").write_text(json.dumps(bash_event("x" * (1024 * 1024 + 1))))
    with open(project / "event.json", "rb") as stdin:
        process = subprocess.Popen([sys.executable, str(MAGIHOOK), "run", "--phase",
                                    "before_tool", "--config", str(config)], stdin=stdin,
                                   stdout=subprocess.DEVNULL, cwd=project, env=tmpdir_env)
    try:
        deadline = time.monotonic() + PROMPT
        while not ((project / "hook.pid").exists() and (project / "hook.pid").read_text().strip()):
            assert time.monotonic() < deadline, "the hook never started"
            time.sleep(0.01)
        (folder,) = Path(tmpdir_env["TMPDIR"]).iterdir()
        assert (sweep(tmpdir_env), (folder / magihook.SPILL_LOCK_NAME).exists()) == (0, True)
    finally:
        process.kill()
        process.wait()
    hook = int((project / "hook.pid").read_text())
    try:
        assert (sweep(tmpdir_env), folder.exists()) == (1, False)
    finally:
        os.kill(hook, signal.SIGKILL)


@pytest.mark.parametrize("marker", [".qwen", ".github", ".codex"])
def test_an_agent_s_own_project_folder_marks_the_project_root(tmp_path, monkeypatch, marker):
    # Each registered agent's project folder (Agent.project_folder) marks the root its
    # project-folder variables name, whatever subfolder the model cd-ed into; no .git here.
    root = tmp_path / "work" / "repo"
    (root / marker).mkdir(parents=True)
    deep = root / "src" / "app"
    deep.mkdir(parents=True)
    for name in ("CLAUDE_PROJECT_DIR", "QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert magihook.agent_project_dir(["QWEN_PROJECT_DIR"], str(deep)) == str(root.resolve())
