"""Section 11, the process runner: how a hook starts, what it gets, and how it ends.

Every hook is a real process.  The hostile ones first write their process group id to pgid.txt
(conftest.RECORD_PGID): after each case the group must have no live member, and with `tmpdir_env`
the payload_ref folder a > 1 MiB full payload makes must be gone.  Covered: spawn (posix_spawn or
Popen, the same world either way), stdin that is never read, output caps, timeouts, process
groups and sessions, death by signal, a lost exit status, the signals held while a hook starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

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
    hook_def,
    hostile,
    live_members,
    run_cli,
    run_hook,
    terminal,
    write_script,
    write_settings,
)
from conftest import full_hook as hook

import magihook


def run_plain(project, hook_entry, event=None):
    """One hook as test_run_core runs it: a small bash call by default, the caller's TMPDIR."""
    result, _ = run_hook(project, None, hook_entry, event or bash_event())
    return result


# --- hostile hooks: timeouts, caps, groups, sessions --------------------------------------------

def test_hook_that_sleeps_forever_times_out(project, tmpdir_env):
    command = hostile(project, "sleep 1000 &\nsleep 1000\n")
    result, elapsed = run_hook(project, tmpdir_env, hook(command, timeout_seconds=1))
    assert terminal(result) == ("failed", "timeout", "hook timed out after 1 s")
    assert elapsed < PROMPT
    assert_group_gone(project)


def test_grandchild_keeping_stdout_does_not_delay_and_is_ended(project, tmpdir_env):
    # Design decision (README): the hook's process group is its lifetime.  The background job
    # holds stdout; magihook returns when the hook itself exits and ends the job with it.
    command = hostile(project, "sleep 1000 &\necho $! > job.pid\necho started\nexit 0\n")
    result, elapsed = run_hook(project, tmpdir_env, hook(command, timeout_seconds=30))
    assert (result.returncode, terminal(result)) == (0, ("success", None, None))
    assert elapsed < PROMPT
    assert_group_gone(project)
    job = int((project / "job.pid").read_text())
    assert job not in live_members(int((project / "pgid.txt").read_text()))


def test_setsid_grandchild_keeping_the_pipe_does_not_delay(project, tmpdir_env):
    # A job that detaches into its own session escapes the group by design: it must not delay
    # magihook, and it is left running (the test ends it).
    command = hostile(project, (
        "setsid bash -c 'echo $$ > escaped.pid; exec sleep 1000' &\n"
        "until [ -s escaped.pid ]; do sleep 0.01; done\n"
        "echo detached\nexit 0\n"))
    escaped = None
    try:
        result, elapsed = run_hook(project, tmpdir_env, hook(command, timeout_seconds=30))
        escaped = int((project / "escaped.pid").read_text())
        assert (result.returncode, terminal(result)) == (0, ("success", None, None))
        assert elapsed < PROMPT
        assert_group_gone(project)
        assert os.getsid(escaped) == escaped  # still running, in its own session
    finally:
        if escaped is None and (project / "escaped.pid").exists():
            escaped = int((project / "escaped.pid").read_text())
        if escaped is not None:
            os.killpg(escaped, signal.SIGKILL)


# A hook meant to succeed gets a timeout a busy machine cannot reach (SUCCEEDS_WITHIN); one meant
# to time out gets 1 s.
SUCCEEDS_WITHIN = 10


@pytest.mark.parametrize("then, timeout, outcome", [
    ("sleep 1000\n", 1, ("failed", "timeout", "hook timed out after 1 s")),
    ("sleep 0.2\nexit 0\n", SUCCEEDS_WITHIN, ("success", None, None)),
])
def test_hook_that_closes_stdout_early_and_keeps_running(project, tmpdir_env, then, timeout,
                                                        outcome):
    command = hostile(project, "exec >&- 2>&-\n" + then)
    result, elapsed = run_hook(project, tmpdir_env, hook(command, timeout_seconds=timeout))
    assert terminal(result) == outcome
    assert elapsed < PROMPT
    assert_group_gone(project)


@pytest.mark.parametrize("then, timeout, outcome", [
    ("exec sleep 1000\n", 1, ("failed", "timeout", "hook timed out after 1 s")),
    ("exit 0\n", SUCCEEDS_WITHIN, ("success", None, None)),
])
def test_hook_that_never_reads_a_900_kb_stdin(project, tmpdir_env, then, timeout, outcome):
    event = bash_event("y" * 900_000)  # inline: just under the 1 MiB stdin cap
    command = hostile(project, then)
    result, elapsed = run_hook(project, tmpdir_env, hook(command, timeout_seconds=timeout), event)
    assert terminal(result) == outcome
    assert elapsed < PROMPT
    assert_group_gone(project)


@pytest.mark.parametrize("stream, output", [
    ("stdout", "head -c 1000000000 /dev/zero"), ("stderr", "head -c 1000000000 /dev/zero >&2"),
    ("stdout", "yes"),  # endless, not just large (merged from test_run_core)
], ids=["stdout", "stderr", "endless"])
def test_hook_printing_1_gb_is_stopped_at_the_cap(project, tmpdir_env, stream, output):
    command = hostile(project, output + "\n")
    result, elapsed = run_hook(project, tmpdir_env, hook(command, timeout_seconds=30))
    assert terminal(result) == ("failed", "output-limit", "hook %s exceeded 8192 bytes" % stream)
    assert elapsed < PROMPT
    assert_group_gone(project)


@pytest.mark.parametrize("signame", ["SIGKILL", "SIGSEGV", "SIGTERM"])
def test_hook_killed_by_a_signal_is_exit_naming_the_signal(project, tmpdir_env, signame):
    command = hostile(project, "kill -%s $$\n" % signame[3:])
    result, _ = run_hook(project, tmpdir_env, hook(command))
    assert terminal(result) == ("failed", "exit", "hook was killed by %s" % signame)
    assert_group_gone(project)


def test_command_of_the_hook_killed_by_a_signal_names_it_too(project, tmpdir_env):
    # bash runs (not execs) this last command and reports its death as status 128+15.
    command = hostile(project, "bash -c 'kill -TERM $$'\nexit $?\n")
    result, _ = run_hook(project, tmpdir_env, hook(command))
    assert terminal(result) == (
        "failed", "exit", "hook exited with status 143 (shell: a command was killed by SIGTERM)")


@pytest.mark.parametrize("script, mode, message", [
    ("#!/nonexistent/interpreter\n", 0o755, "hook exited with status 127 (shell: command not found)"),
    ("#!/bin/sh\nexit 0\n", 0o644, "hook exited with status 126 (shell: cannot execute)"),
    (None, None, "hook exited with status 127 (shell: command not found)"),
])
def test_missing_interpreter_no_run_bit_or_no_script(project, tmpdir_env, script, mode, message):
    if script is not None:
        path = write_script(project, "bad.sh", script)
        path.chmod(mode)
    result, elapsed = run_hook(project, tmpdir_env, hook("./bad.sh"))
    assert terminal(result) == ("failed", "exit", message)
    assert result.json["verdict"] == "continue"
    assert elapsed < PROMPT


@pytest.mark.parametrize("cwd, message", [
    ("missing-dir", "hook could not start: working directory does not exist"),
    ("a-file", "hook could not start: working directory is not a directory"),
])
def test_unusable_cwd_fails_before_spawn_and_removes_the_payload_file(project, tmpdir_env, cwd,
                                                                      message):
    (project / "a-file").write_text("")
    event = bash_event(SPILLED, context={"cwd": str(project / cwd)})
    result, _ = run_hook(project, tmpdir_env, hook("./never-runs.sh"), event)
    assert terminal(result) == ("failed", "runner", message)



# --- outcome categories -------------------------------------------------------------------------

def test_exit_category_names_the_status(project):
    result = run_plain(project, hook_def("exit 3"))
    assert terminal(result)[1:] == (
        "exit", "hook exited with status 3")


@pytest.mark.parametrize("stream, redirect", [("stdout", ""), ("stderr", " >&2")])
def test_output_over_cap_is_output_limit(project, stream, redirect):
    result = run_plain(project, hook_def("head -c 101 /dev/zero" + redirect,
                                         **{stream + "_max_bytes": 100}))
    assert terminal(result)[1:] == (
        "output-limit", "hook %s exceeded 100 bytes" % stream)
    exactly = run_plain(project, hook_def("head -c 100 /dev/zero" + redirect,
                                          **{stream + "_max_bytes": 100}))
    assert terminal(exactly)[0] == "success"


def test_envelope_over_cap_after_summaries_is_stdin_failure(project):
    result = run_plain(project, hook_def("true"), bash_event(context={"agent_id": "a" * 1100000}))
    assert terminal(result)[1:] == (
        "stdin", "hook payload is larger than 1048576 bytes even after summaries")


def test_hooks_run_in_context_cwd(project, tmp_path):
    child = tmp_path / "child"
    child.mkdir()
    write_script(child, "here.sh", "#!/bin/sh\ncat >/dev/null\npwd > where.txt\n")
    run_plain(project, hook_def("./here.sh"), bash_event(context={"cwd": str(child)}))
    assert (child / "where.txt").read_text().strip() == str(child)


def test_without_pidfd_and_waitid_the_runner_polls(project):
    """macOS before Python 3.13 has neither os.pidfd_open nor os.waitid: same outcomes."""
    config = write_settings(project, {"enabled": True, "before_tool": [
        hook_def("exit 3", label="a"), hook_def("true", label="b"),
        hook_def("sleep 30", label="c", timeout_seconds=1)]})
    probe = ("import os, sys; del os.waitid; del os.pidfd_open; sys.path.insert(0, %r); "
             "import magihook; sys.argv = ['magihook', 'run', '--phase', 'before_tool', "
             "'--config', %r]; sys.exit(magihook.main())" % (str(ROOT), str(config)))
    done = subprocess.run([sys.executable, "-c", probe], input=json.dumps(bash_event()).encode(),
                          capture_output=True, cwd=project, timeout=60)
    result = json.loads(done.stdout)
    finals = [e["payload"] for e in result["events"] if e["type"] == "hook_lifecycle"
              and e["payload"]["status"] != "started"]
    assert [(f["label"], f["status"], f["category"], f["message"]) for f in finals] == [
        ("a", "failed", "exit", "hook exited with status 3"), ("b", "success", None, None),
        ("c", "failed", "timeout", "hook timed out after 1 s")]


# --- exit status and signals --------------------------------------------------------------------

def test_exit_status_is_real_when_the_caller_ignores_sigchld(project, tmpdir_env):
    config = write_settings(project, {"enabled": True, "before_tool": [hook("exit 3")]})
    done = subprocess.run(
        [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--config", str(config)],
        input=json.dumps(bash_event()).encode(), capture_output=True, cwd=project,
        env=tmpdir_env, timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
    payload = json.loads(done.stdout)["events"][1]["payload"]
    assert (payload["category"], payload["message"]) == ("exit", "hook exited with status 3")


def test_lost_exit_status_is_a_runner_failure_not_success(project):
    # In-process with SIGCHLD ignored, the kernel reaps the hook before magihook can.
    settings = magihook.settings_from_document(
        {"hooks": {"enabled": True, "before_tool": [{"command": "exit 3"}]}})
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        result = magihook.run_phase(settings, "before_tool", bash_event(), cwd=str(project))
    finally:
        signal.signal(signal.SIGCHLD, previous)
    payload = result["events"][1]["payload"]
    assert (payload["category"], payload["message"]) == (
        "runner", "hook exit status was lost: the hook was reaped outside magihook "
                  "(is SIGCHLD ignored?)")


def test_signals_held_are_delivered_after_the_section():
    class Stop(Exception):
        pass

    def stop(signum, frame):
        raise Stop(signum)

    steps = []
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stop):
            with magihook.SignalHold():
                os.kill(os.getpid(), signal.SIGTERM)
                os.kill(os.getpid(), signal.SIGTERM)
                steps.append("section ran to its end")
        assert signal.getsignal(signal.SIGTERM) is stop
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert steps == ["section ran to its end"]


# --- how a hook starts --------------------------------------------------------------------------
# From the CLI, a hook whose cwd is magihook's own starts by posix_spawn; elsewhere (or when
# magihook's own descriptors 0-2 are closed, so its pipes take those numbers), and always from the
# Python API, by subprocess.Popen.  Both must give the hook the same world: its cwd, only
# descriptors 0-2 (none of the caller's inheritable ones), its own session and process group,
# SIGPIPE and SIGXFSZ back at their defaults, the same blocked signals, and the payload on stdin.

PROBE = r"""#!/bin/bash
ls /proc/$$/fd > "$TMPDIR/fds.txt"
payload=$(cat)
[[ $payload == *'"call_id":"call_1"'* ]] && stdin=payload || stdin=none
stat=$(< /proc/$$/stat)
set -- ${stat##*) }
# Read by the shell itself, with no fork: a command substitution's child would read bash's
# masks while bash is forking or waiting, when it blocks signals of its own for a moment.
while IFS=$'\t' read -r key value; do
  case $key in SigIgn:) ignored=$value ;; SigBlk:) blocked=$value ;; esac
done < /proc/$$/status
printf '{"context_items":[{"role":"user","content":"cwd=%s fds=%s leader=%s ignored=%s blocked=%s stdin=%s"}]}' \
  "$(pwd -P)" "$(sort -n "$TMPDIR/fds.txt" | tr '\n' ,)" \
  "$([[ $3 == $$ && $4 == $$ ]] && echo yes || echo no)" "$ignored" "$blocked" "$stdin"
"""
PIPE_AND_XFSZ = 1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1)
# glibc's posix_spawn leaves its internal signals (32 up to SIGRTMIN) ignored in the child; a
# glibc program installs its own handlers for them, and no other program may use them.
LIBC_INTERNAL = sum(1 << (signum - 1) for signum in range(32, signal.SIGRTMIN))


def probe_report(content, cwd):
    """The probe's report, checked for what must hold whichever way the hook started."""
    fields = dict(field.split("=", 1) for field in content.split(" "))
    assert (fields["cwd"], fields["fds"], fields["leader"], fields["stdin"]) == (
        str(cwd), "0,1,2,255,", "yes", "payload")  # 255: bash's own descriptor on the script
    ignored = int(fields["ignored"], 16)
    assert ignored & PIPE_AND_XFSZ == 0
    return ignored & ~LIBC_INTERNAL, fields["blocked"]


@pytest.fixture
def probe(tmp_path, monkeypatch):
    """The probe script, a second folder to run it in, and TMPDIR for its listing."""
    folder = tmp_path / "probe"
    folder.mkdir()
    write_script(folder, "probe.sh", PROBE)
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return str(folder / "probe.sh"), other


def probe_hooks(command):
    return {"enabled": True, "after_tool": [{"command": command, "payload": "full",
                                             "provider_context_injection": True}]}


def reports_from_both_folders(project, elsewhere, context_items):
    """The probe's reports with the hook's cwd ours, then elsewhere, while the caller holds an
    inheritable pipe; `context_items(cwd)` runs the hook and returns the result's items."""
    leak_read, leak_write = os.pipe()
    os.set_inheritable(leak_read, True)
    os.set_inheritable(leak_write, True)
    reports = []
    try:
        for cwd in (project, elsewhere):
            content = [item["content"] for item in context_items(cwd, (leak_read, leak_write))]
            assert len(content) == 1, content
            reports.append(probe_report(content[0], cwd))
    finally:
        os.close(leak_read)
        os.close(leak_write)
    return reports


@pytest.mark.parametrize("closed, mode", [((), "run"), ((2,), "run"), ((), "stream")],
                         ids=["stdio-open", "stderr-closed", "stream"])
def test_a_hook_starts_the_same_in_its_cwd_and_elsewhere(project, probe, closed, mode):
    command, elsewhere = probe
    config = write_settings(project, probe_hooks(command))
    run = ["--phase", "after_tool"] if mode == "run" else ["--stream"]

    def context_items(cwd, leaked):
        event = after_event(context={"cwd": str(cwd)})
        if mode == "stream":
            event["phase"] = "after_tool"
        (project / "event.json").write_text(json.dumps(event) + "\n")
        with open(project / "event.json", "rb") as stdin:
            done = subprocess.run(
                [*MAGIHOOK_ARGV, "run", *run, "--config", str(config)],
                stdin=stdin, stdout=subprocess.PIPE, cwd=project, timeout=60, pass_fds=leaked,
                preexec_fn=lambda: [os.close(fd) for fd in closed])
        assert done.returncode == 0, done
        return json.loads(done.stdout)["context_items"]

    first, second = reports_from_both_folders(project, elsewhere, context_items)
    assert first == second


def test_an_api_caller_s_inheritable_descriptors_stay_out_of_hooks(project, probe, monkeypatch):
    command, elsewhere = probe
    settings = magihook.settings_from_document({"hooks": probe_hooks(command)})
    monkeypatch.chdir(project)

    def context_items(cwd, leaked):
        return magihook.run_phase(settings, "after_tool",
                                  after_event(context={"cwd": str(cwd)}))["context_items"]

    first, second = reports_from_both_folders(project, elsewhere, context_items)
    assert first == second


def test_a_signal_the_caller_ignores_stays_ignored_in_the_hook(project, probe):
    """Under nohup (or `&` in a script) SIGHUP/SIGINT are ignored; a hook inherits that, however
    it starts, even though magihook holds its signals while the hook starts."""
    command, elsewhere = probe
    config = write_settings(project, probe_hooks(command))

    def ignore_hangup_and_interrupt():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def context_items(cwd, leaked):
        (project / "event.json").write_text(json.dumps(after_event(context={"cwd": str(cwd)})))
        with open(project / "event.json", "rb") as stdin:
            done = subprocess.run(
                [*MAGIHOOK_ARGV, "run", "--phase", "after_tool", "--config",
                 str(config)], stdin=stdin, stdout=subprocess.PIPE, cwd=project, timeout=60,
                preexec_fn=ignore_hangup_and_interrupt)
        return json.loads(done.stdout)["context_items"]

    reports = reports_from_both_folders(project, elsewhere, context_items)
    wanted = 1 << (signal.SIGHUP - 1) | 1 << (signal.SIGINT - 1)
    assert [ignored & wanted for ignored, _ in reports] == [wanted, wanted]


def test_main_called_by_a_host_leaves_the_host_s_descriptors_alone(project, probe):
    """A host calling main() keeps its inheritable descriptors inheritable (its own children may
    need them), and its hooks still do not get them."""
    command, _ = probe
    config = write_settings(project, probe_hooks(command))
    host = ("import json, os, sys; sys.path.insert(0, %r); import magihook; "
            "read_end, write_end = os.pipe(); os.set_inheritable(write_end, True); "
            "code = magihook.main(['run', '--phase', 'after_tool', '--config', %r]); "
            "sys.stderr.write(json.dumps([code, os.get_inheritable(write_end)]))"
            % (str(MAGIHOOK.parent), str(config)))
    done = subprocess.run([sys.executable, "-c", host], input=json.dumps(after_event()).encode(),
                          capture_output=True, cwd=project, timeout=60)
    assert json.loads(done.stderr) == [0, True]
    [item] = json.loads(done.stdout)["context_items"]
    probe_report(item["content"], project)


def test_an_environment_entry_posix_spawn_refuses_does_not_stop_hooks(project):
    """An entry with an empty name is valid for execve; posix_spawn refuses it, Popen passes it."""
    config = write_settings(project, {"enabled": True, "before_tool": [hook("true")]})
    launcher = (
        "import ctypes, os, sys; argv = [a.encode() for a in sys.argv[1:]]; "
        "env = [b'PATH=' + os.environb[b'PATH'], b'HOME=' + os.environb[b'HOME'], b'=odd']; "
        "ctypes.CDLL(None).execve(argv[0], (ctypes.c_char_p * (len(argv) + 1))(*argv, None), "
        "(ctypes.c_char_p * (len(env) + 1))(*env, None))")
    done = subprocess.run(
        [sys.executable, "-c", launcher, sys.executable, str(MAGIHOOK), "run", "--phase",
         "before_tool", "--config", str(config)], input=json.dumps(bash_event()).encode(),
        capture_output=True, cwd=project, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    assert [(e["payload"]["status"], e["payload"]["message"]) for e in json.loads(done.stdout)[
        "events"]] == [("started", None), ("success", None)]


def test_failure_categories_are_exactly_the_spec_s():
    """Section 2 (constants) names them once; the spec lists these five (DESIGN "Hook processes")."""
    assert magihook.FAILURE_CATEGORIES == ("exit", "timeout", "runner", "stdin", "output-limit")


# --- the hook's environment -----------------------------------------------------------------------

AGENT_CREDENTIALS = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "a1B2" * 20, "GITHUB_TOKEN": "ghp_" + "Z9y8" * 9,
                     "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENGbPxRfiCY" + "Q1w2" * 3,
                     "AWS_SESSION_TOKEN": "FwoGZXIvYXdzE" + "k" * 40, "DB_PASSWORD": "hunter2-horse",
                     "MY_SECRET_THING": "s3cr3t-value", "NPM_TOKEN": "npm_" + "q" * 36,
                     "GH_PAT": "github_pat_" + "Q7r2" * 20, "AZURE_DEVOPS_EXT_PAT": "k" * 52,
                     # a random value under another name ending in key
                     "SUPABASE_SERVICE_ROLE_KEY": "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZSJ9.Zk3q9vX2pL7mN4rT8wY1",
                     "VERTEX_AI_KEY": "AQ.Ab8RN6Kx2mP9vL4tW7yZ",
                     # a URL's password under a plain name: found by its value
                     "DATABASE_URL": "postgres://app:Xk9pw2vQz@db:5432/app",
                     "HTTP_PROXY": "http://me:pr0xyPw9x@proxy.corp:3128",
                     # a vendor's token or a private key under a name of the user's own
                     "DEPLOY_BOT": "ghp_" + "Xq7Lm2Pz9Rt4Wk8Jd3Fh6Nb1Vc5Gy0Ts7Qe",
                     "OPENAI": "sk-proj-" + "Xq7Lm2Pz9Rt4Wk8Jd3Fh6Nb1Vc5Gy0Ts7Qe2Ua9Ho4Ri8Kp3Mw6",
                     "ALERTS": "https://hooks.slack.com/services/T01ABCDEF23/B04GHIJKL56/Xq7Lm2Pz9Rt4Wk8Jd3Fh6Nb1",
                     # a body with no digit, or cut by ~ or - into runs of fewer than 16
                     "HF": "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", "AWS_ID": "ASIAZKXERLOSTPUQVXOB",
                     "AZURE_APP": "I2a7Q~ghKDmSPEYS4uaCW~20AFs6~RJaSdVN_Tk", "GL": "glpat-CHUOHNvIOf-IHfC-lfRq",
                     # a name inside a value: a connection string, headers, options, Docker's config
                     "AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
                                            "q8ZxW3vLp9Rt2Kj7Nm4Bc6Xy1Df5Gh0Jk8Lq3Ws9E==;EndpointSuffix=core.windows.net",
                     "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=Xq7Lm2Pz9Rt4Wk8Jd3Fh6Nb1",
                     "ANTHROPIC_CUSTOM_HEADERS": "X-Api-Key: Xk9mQ2vR7tLp4wZs8N\nX-Team: web",
                     "JAVA_TOOL_OPTIONS": "-Ddb.password=Xk9pw2vQzRt4 -Xmx2g",
                     "JDBC_URL": "jdbc:postgresql://db:5432/app?user=app&password=S3cr3tPassw0rd99",
                     "DOCKER_AUTH_CONFIG": '{"auths": {"registry.example.com": {"auth": "Ym9iOlhrOXB3MnZRelJ0NA=="}}}',
                     "TLS_KEY": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aumg"
                                "\n-----END RSA PRIVATE KEY-----"}
ORDINARY_VARIABLES = {"KEEP_ME": "plain", "MAX_TOKENS": "4096", "TOKENIZERS_PARALLELISM": "false",
                      "SSH_AUTH_SOCK": "/tmp/agent.sock", "PASSWORD_STORE_DIR": "/tmp/store",
                      "GITHUB_SHA": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4", "NO_PROXY": "localhost,.corp",
                      "DOCKER_HOST": "unix:///run/user/1000/docker.sock", "LS_COLORS": "rs=0:di=01;34:*.tar=01;31",
                      "SESSION_MANAGER": "local/host:@/tmp/.ICE-unix/1234,unix/host:/tmp/.ICE-unix/1234",
                      "EMAIL": "me@example.org", "GIT_REMOTE": "ssh://git@github.com/acme/app.git",
                      "URL_PAT": "^https?://", "XKB_KEY": "pc105", "SORT_KEY": "name",
                      "INVOCATION_ID": "3f1c2b7a9d8e4f6a8b0c1d2e3f4a5b6c",
                      "NODE_OPTIONS": "--max-old-space-size=4096",
                      "GITHUB_HEAD_REF": "feature/sk-1234-fix-login-redirect-v2",
                      "XAUTHORITY": "/run/user/1000/gdm/Xauthority", "KEY_FILE_OPTS": "key=/etc/ssl/app.pem",
                      "PROMPT_HINT": "token: none, key: see docs",
                      "PYENV_ROOT": "/home/u/.pyenv/versions/3.11.7/lib/python3.11/site-packages"}


def dumped_env(path):
    return dict(entry.split("=", 1) for entry in path.read_text().split("\0") if entry)


def env_seen_by(project, payload, cwd, through):
    """The variables a real hook (`env -0`) found, started by the CLI in CWD or by run_phase."""
    dump = project / ("env-%s-%s.txt" % (payload, through))
    script = write_script(project, "dump-env.sh", "#!/bin/bash\nenv -0 > '%s'\n" % dump)
    hooks = {"enabled": True, "after_tool": [{"command": str(script), "payload": payload}]}
    event = after_event(context={"cwd": str(cwd)})
    given = dict(os.environ, **AGENT_CREDENTIALS, **ORDINARY_VARIABLES)
    if through == "cli":
        config = write_settings(project, hooks)
        result = run_cli("run", "--phase", "after_tool", "--config", str(config), event=event,
                         env=given, cwd=str(project))
        assert result.returncode == 0, result.stderr
    else:
        settings = magihook.settings_from_document({"hooks": hooks})
        old = dict(os.environ)
        os.environ.update(given)
        try:
            result = magihook.run_phase(settings, "after_tool", event)
        finally:
            os.environ.clear()
            os.environ.update(old)
        assert result["warnings"] == []
    return dumped_env(dump)


@pytest.mark.parametrize("through, elsewhere", [("cli", False), ("cli", True), ("api", True)],
                         ids=["posix_spawn", "popen", "api"])
def test_a_redacted_hook_gets_the_environment_without_credentials(project, tmp_path, through, elsewhere):
    cwd = tmp_path if elsewhere else project
    seen = env_seen_by(project, "redacted", cwd, through)
    assert [name for name in AGENT_CREDENTIALS if name in seen] == []
    assert {name: seen.get(name) for name in ORDINARY_VARIABLES} == ORDINARY_VARIABLES
    assert seen["HOME"] == os.environ["HOME"]
    assert not any(value in "\0".join(seen.values()) for value in AGENT_CREDENTIALS.values())


@pytest.mark.parametrize("through", ["cli", "api"])
def test_a_full_payload_hook_gets_the_whole_environment(project, through):
    seen = env_seen_by(project, "full", project, through)
    expected = dict(AGENT_CREDENTIALS, **ORDINARY_VARIABLES)
    assert {name: seen.get(name) for name in expected} == expected


def test_hook_environment_leaves_pwd_and_hands_over_ours_when_nothing_is_dropped():
    plain = {"PATH": "/usr/bin", "PWD": "/work", "HOME": "/home/u"}
    assert magihook.hook_environment("redacted", plain) is plain
    assert magihook.hook_environment("full", None) is None
    assert magihook.hook_environment("redacted", dict(plain, GITHUB_TOKEN="x")) == plain
    by_value = dict(plain, DATABASE_URL="postgres://app:Xk9pw2vQz@db/app", PGHOST="db")
    assert magihook.hook_environment("redacted", by_value) == dict(plain, PGHOST="db")
    assert magihook.hook_environment("full", dict(plain, GITHUB_TOKEN="x")) == dict(plain, GITHUB_TOKEN="x")
