"""The Python API a vendoring agent uses: load_settings, run_phase, SessionFile."""

from __future__ import annotations

import copy
import datetime
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import typing

import pytest
from conftest import MAGIHOOK, WENT_ON, after_event, bash_event, run_cli, write_script, write_settings

import magihook


def normalized(result):
    """A result with its run-dependent values (timestamps, durations) blanked."""
    result = copy.deepcopy(dict(result))
    for event in result["events"]:
        event["timestamp"] = "T"
        if event["payload"].get("elapsed_ms") is not None:
            event["payload"]["elapsed_ms"] = 0
    return result


# --- the surface --------------------------------------------------------------------------------

def test_all_names_exist_and_are_importable():
    namespace: dict = {}
    exec("from magihook import *", namespace)  # noqa: S102 - the vendoring agent's import
    assert set(magihook.__all__) <= set(namespace)
    for name in ("load_settings", "run_phase", "settings_from_document", "SessionFile",
                 "Settings", "MagihookError", "SettingsError", "InputError"):
        assert name in magihook.__all__


@pytest.mark.parametrize("function", [magihook.load_settings, magihook.run_phase,
                                      magihook.settings_from_document,
                                      magihook.SessionFile.append])
def test_api_is_fully_annotated_and_the_annotations_resolve(function):
    # The annotations are strings for type checkers (the module does not import typing at run
    # time); evaluated with typing's names they must resolve, on 3.9 too (no `dict[str, Any]`).
    namespace = dict(vars(typing), **vars(magihook), PhaseResult=dict)
    hints = typing.get_type_hints(function, globalns=namespace)
    parameters = [name for name in inspect.signature(function).parameters if name != "self"]
    assert set(parameters) | {"return"} == set(hints)


def test_phase_result_type_lists_exactly_the_result_keys(project):
    import ast

    result = magihook.run_phase(magihook.Settings(), "before_tool", bash_event(), cwd=str(project))
    tree = ast.parse(open(magihook.__file__, encoding="utf-8").read())
    phase_result = next(node for node in ast.walk(tree)
                        if isinstance(node, ast.ClassDef) and node.name == "PhaseResult")
    fields = [item.target.id for item in phase_result.body if isinstance(item, ast.AnnAssign)]
    assert fields == list(result)


# --- load_settings ------------------------------------------------------------------------------

def test_load_settings_by_path_and_by_discovery(project, tmp_path, monkeypatch):
    explicit = write_settings(tmp_path, {"enabled": True, "before_tool": [{"command": "a"}]},
                              "explicit.json")
    assert magihook.load_settings(str(explicit)).before_tool[0].command == "a"
    (project / ".magi-code").mkdir()
    write_settings(project / ".magi-code", {"enabled": True, "before_tool": [{"command": "b"}]})
    found = magihook.load_settings(cwd=str(project), env={})
    assert (found.before_tool[0].command, found.found_by) == ("b", "./.magi-code/settings.json")
    by_env = magihook.load_settings(cwd=str(project), env={"MAGIHOOK_CONFIG": str(explicit)})
    assert (by_env.before_tool[0].command, by_env.found_by) == ("a", "$MAGIHOOK_CONFIG")
    # The process's own environment is not consulted when env is given.
    monkeypatch.setenv("MAGIHOOK_CONFIG", str(tmp_path / "missing.json"))
    assert magihook.load_settings(cwd=str(project), env={}).found_by == (
        "./.magi-code/settings.json")
    assert magihook.load_settings(cwd=str(tmp_path), env={}) == magihook.Settings()


def test_load_settings_errors_are_settings_errors(tmp_path):
    bad = write_settings(tmp_path, {"enabled": "yes"})
    with pytest.raises(magihook.SettingsError) as caught:
        magihook.load_settings(str(bad))
    assert str(caught.value) == "%s: $.hooks.enabled: expected a boolean, got a string" % bad


# --- run_phase ----------------------------------------------------------------------------------

def test_run_phase_returns_what_the_cli_prints(project):
    write_script(project, "mem.sh", "#!/bin/sh\ncat >/dev/null\n"
                 "echo '{\"context_items\": [{\"role\": \"user\", \"content\": \"m\"}]}'\n")
    config = write_settings(project, {"enabled": True, "show_in_tui": True, "after_tool": [
        {"label": "mem", "command": "./mem.sh", "provider_context_injection": True},
        {"label": "broken", "command": "exit 3"}]})
    event = after_event()
    cli = run_cli("run", "--phase", "after_tool", "--config", str(config), event=event,
                  cwd=project)
    api = magihook.run_phase(magihook.load_settings(str(config)), "after_tool", event,
                             cwd=str(project))
    assert normalized(api) == normalized(cli.json)
    assert json.loads(magihook.dump_json(api)) == api  # plain JSON, nothing else inside


def test_a_slow_row_callback_is_not_the_hook_s_time(project):
    """The hook's timeout counts from its start: a caller's slow `on_row` (a terminal, a locked
    session file) before it does not time it out."""
    # A timeout generous for `true` on a busy machine (a hang bound, not a speed check), and a
    # callback that really sleeps past it.
    settings = magihook.settings_from_document({"hooks": {
        "enabled": True, "show_in_tui": True, "before_tool": [{"command": "true",
                                                                "timeout_seconds": 5}]}})
    rows = []

    def slow_first_row(row):
        rows.append(row)
        if len(rows) == 1:  # the `started` row
            time.sleep(6)

    result = magihook.run_phase(settings, "before_tool", bash_event(), cwd=str(project),
                                on_row=slow_first_row)
    assert [e["payload"]["status"] for e in result["events"]] == ["started", "success"]


def test_run_phase_leaves_the_event_alone_and_keeps_no_state(project):
    settings = magihook.settings_from_document(
        {"hooks": {"enabled": True, "after_tool": [{"command": "exit 1"}]}})
    event = after_event()
    pristine = copy.deepcopy(event)
    first = magihook.run_phase(settings, "after_tool", event, cwd=str(project))
    second = magihook.run_phase(settings, "after_tool", event, cwd=str(project))
    assert event == pristine
    assert normalized(first) == normalized(second)
    assert first["events"] is not second["events"]
    assert first["warnings"] == second["warnings"] and len(first["warnings"]) == 1


@pytest.mark.parametrize("event, message", [
    (dict(bash_event(), request={"when": datetime.date(2026, 1, 1)}),
     "$.request.when: expected a JSON value, got date"),
    (dict(bash_event(), request={"n": float("nan")}), "$.request.n: NaN is not valid JSON"),
    (dict(bash_event(), request={"n": [1, float("-inf")]}),
     "$.request.n[1]: -Infinity is not valid JSON"),
    (dict(bash_event(), request={1: "x"}), "$.request: object keys must be strings, got int"),
    (dict(bash_event(), request={"s": {1, 2}}), "$.request.s: expected a JSON value, got set"),
    (dict(bash_event(), request={"b": b"x"}), "$.request.b: expected a JSON value, got bytes"),
    ({"tool": {"name": "bash"}, "request": {}, "context": {"cwd": 3}},
     "$.context.cwd: expected a string, got an integer"),
    ([], "$: expected an object, got an array"),
])
def test_run_phase_rejects_what_the_cli_could_not_have_read(project, event, message):
    with pytest.raises(magihook.InputError) as caught:
        magihook.run_phase(magihook.Settings(), "before_tool", event, cwd=str(project))
    assert str(caught.value) == message


def test_run_phase_rejects_deep_nesting_and_unknown_phases(project):
    deep: dict = {}
    cursor = deep
    for _ in range(300):
        cursor["x"] = {}
        cursor = cursor["x"]
    with pytest.raises(magihook.InputError) as caught:
        magihook.run_phase(magihook.Settings(), "before_tool", dict(bash_event(), request=deep))
    assert str(caught.value) == "input is nested deeper than 256 levels"
    with pytest.raises(magihook.UsageError) as caught:
        magihook.run_phase(magihook.Settings(), "during_tool", bash_event())
    assert str(caught.value) == ("unknown phase 'during_tool': expected one of before_tool, "
                                 "after_tool, after_assistant, after_reasoning")


def test_tuples_count_as_arrays(project):
    write_script(project, "cap.sh", "#!/bin/sh\ncat > payload.json\n")
    settings = magihook.settings_from_document(
        {"hooks": {"enabled": True, "before_tool": [{"command": "./cap.sh", "payload": "full"}]}})
    magihook.run_phase(settings, "before_tool", dict(bash_event(), request={"argv": ("a", "b")}),
                       cwd=str(project))
    assert json.loads((project / "payload.json").read_text())["request"] == {"argv": ["a", "b"]}


def test_a_tuple_s_strings_are_redacted_as_a_list_s(project):
    # A tuple's strings once reached a redacted-payload hook and the model as they were.
    write_script(project, "cap.sh", "#!/bin/sh\ncat > payload.json\n")
    settings = magihook.settings_from_document({"hooks": {
        "enabled": True, "redact_tool_output": True,
        "after_tool": [{"command": "./cap.sh", "payload": "redacted"}]}})
    secret = "password=hunter2xyz"
    event = after_event(request={"command": "ls", "argv": ("--password", "hunter2xyz")},
                        content="ok")
    event["result"]["metadata"] = {"lines": (secret, "seen: hunter2xyz")}
    result = magihook.run_phase(settings, "after_tool", event, cwd=str(project))
    payload = json.loads((project / "payload.json").read_text())
    assert payload["request"]["argv"] == [
        "--password", {"redacted": True, "kind": "credential", "bytes": 10}]
    assert payload["result"]["metadata"] == {"lines": [
        "password=<redacted:credential>", "seen: <redacted:credential>"]}
    assert result["tool_result"]["metadata"] == payload["result"]["metadata"]
    assert magihook.redact_tree(("--password", "hunter2xyz")) == payload["request"]["argv"]
    assert magihook.redact_tool_result((secret,)) == ["password=<redacted:credential>"]


# --- nothing leaks over 1,000 calls -------------------------------------------------------------

def open_fds():
    return sorted(os.listdir("/proc/self/fd"))


def child_processes():
    """Every process (zombies too) whose parent is this one."""
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                children.append(int(entry))
    return children


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_thousand_calls_leak_no_fd_process_or_temp_file(project, tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # tempfile caches the system's
    write_script(project, "cap.sh", "#!/bin/sh\ncat > payload.json\n")
    settings = magihook.settings_from_document({"hooks": {
        "enabled": True, "before_tool": [{"command": "true", "payload": "full"}],
        "after_tool": [{"command": "./cap.sh", "payload": "full"}]}})
    big = bash_event("x" * (1024 * 1024 + 1))
    session = str(tmp_path / "s.jsonl")
    # A spilled payload really goes through the temporary folder we watch.
    magihook.run_phase(settings, "after_tool", dict(big, result={"content": "y"}),
                       cwd=str(project))
    spilled = json.loads((project / "payload.json").read_text())
    assert spilled["payload"]["status"] == "referenced"
    assert os.path.dirname(os.path.dirname(spilled["payload_ref"]["path"])) == str(temp)
    fds, children = open_fds(), child_processes()
    assert os.listdir(temp) == []
    for index in range(1000):
        event = big if index % 25 == 0 else bash_event(call_id="call_%d" % index)
        result = magihook.run_phase(settings, "before_tool", event, cwd=str(project),
                                    session_path=session if index % 10 == 0 else None)
        assert result["events"][-1]["payload"]["status"] == "success"
    assert open_fds() == fds
    assert child_processes() == children
    assert os.listdir(temp) == []
    with open(session) as handle:
        assert len(handle.read().splitlines()) == 100 * 2


# --- threads ------------------------------------------------------------------------------------

def test_threads_share_settings_and_one_session_file(project):
    settings = magihook.settings_from_document(
        {"hooks": {"enabled": True, "before_tool": [{"command": "true"}]}})
    session = project / "shared.jsonl"
    results = {}

    def worker(thread: int) -> None:
        for call in range(10):
            call_id = "call_%d_%d" % (thread, call)
            results[call_id] = magihook.run_phase(
                settings, "before_tool", bash_event(call_id=call_id), cwd=str(project),
                session_path=str(session))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    written = [json.loads(line) for line in session.read_text().splitlines()]
    assert len(results) == 80 and len(written) == 160
    for call_id, result in results.items():
        assert [e for e in written if e["payload"]["tool_call_id"] == call_id] == (
            result["events"])


# --- vendoring: the file alone, standard library only -------------------------------------------

def test_a_vendored_copy_runs_without_site_packages(project, tmp_path):
    vendor = tmp_path / "vendor" / "agent_hooks"
    vendor.mkdir(parents=True)
    shutil.copy(MAGIHOOK, vendor / "magihook.py")
    config = write_settings(project, {"enabled": True, "before_tool": [{"command": "exit 1"}]})
    program = (
        "import json, sys\n"
        "sys.path.insert(0, %r)\n"
        "import magihook\n"
        "settings = magihook.load_settings(%r)\n"
        "result = magihook.run_phase(settings, 'before_tool', %r, cwd=%r)\n"
        "print(json.dumps([result['verdict'], result['warnings'],\n"
        "                  'jsonschema' in sys.modules]))\n"
    ) % (str(vendor), str(config), bash_event(), str(project))
    done = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True,
                          text=True, timeout=60)
    assert done.stderr == ""
    assert json.loads(done.stdout) == [
        "continue", ["before_tool hook #0 (bash) failed: exit: hook exited with status 1" + WENT_ON],
        False]


@pytest.mark.parametrize("document, got", [
    (None, "null"), (5, "an integer"), (1.5, "a non-integer number"), (True, "a boolean"),
    ("x", "a string"), ([], "an array")])
def test_a_settings_document_that_is_no_object_is_a_settings_error(document, got):
    # null and numbers once raised TypeError (a string was read key by key).
    with pytest.raises(magihook.SettingsError) as raised:
        magihook.settings_from_document(document)
    assert str(raised.value) == "settings: $: expected an object, got %s" % got
