#!/usr/bin/env python3
"""magihook's speed, measured: prints a table of figure, baseline, ratio and target.

    python3 bench/run.py [--quick] [--only inert,launch,hook,args,stream,flood,message,scan] [--module PATH]

Every process figure is a ratio against a baseline measured in this same process, interleaved
with the candidate (baseline and candidate alternate run by run, in alternating order), under an
identical environment.  The table shows the median time of each, and as the ratio the median of
the run-by-run ratios.  Absolute numbers on a busy machine are noisy, ratios much less.  The
environment of every run:

- the interpreter is this one (`sys.executable`), never a shim;
- the magihook module under test (`--module`, default: the repository's) is copied into a temporary
  folder and compiled there, so imports read cached bytecode, as an installed package does; the
  "console script" is pip's launcher template pointing at it;
- HOME is an empty temporary folder (no ~/.magi-code, and `bash -l` reads only /etc/profile), the
  working directory a temporary project, MAGIHOOK_CONFIG unset.

Not part of the test run: the tests never time anything.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import py_compile
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import corpus  # noqa: E402

MIB = 1024 * 1024
BASH = ["/bin/bash", "-lc"]
# pip's console-script template (pip >= 22), with the interpreter as its shebang and the entry
# point pyproject.toml declares.
LAUNCHER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from {module} import {function}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({function}())
"""
JSON_BASELINE = "import json,sys; json.load(sys.stdin)"
HOOK_BASELINE = ("import json,subprocess,sys; json.load(sys.stdin); "
                 "subprocess.run(['/bin/bash', '-lc', 'true'])")
FEED_BASELINE = ("import json,subprocess,sys; json.load(sys.stdin); data = open(%r, 'rb').read(); "
                 "subprocess.run(['/bin/bash', '-lc', 'cat > /dev/null'], input=data)")
BASH_EVENT = {"tool": {"name": "bash", "call_id": "call_bench"},
              "request": {"command": "ls -la", "timeout": 30},
              "context": {"invocation_mode": "shell", "turn_id": "turn-0", "message_id": "m-1"}}
FLOOD_SCRIPT = """#!/bin/bash
# Where and when the flood starts: the cap is crossed microseconds later.
printf '%s %s\\n' "$$" "$EPOCHREALTIME" > flood.start
exec yes {redirect}
"""


# --- measurement ---------------------------------------------------------------------------------

class Row:
    """One line of the table."""

    def __init__(self, item: str, figure: str, baseline: str = "—", ratio: Optional[float] = None,
                 target: str = "—", ok: Optional[bool] = None, note: str = "") -> None:
        self.item, self.figure, self.baseline, self.ratio = item, figure, baseline, ratio
        self.target, self.ok, self.note = target, ok, note


def interleaved(runs: Dict[str, Callable[[], float]], repeat: int) -> Dict[str, List[float]]:
    """Run each function `repeat` times, alternating them and their order; samples by name."""
    samples: Dict[str, List[float]] = {name: [] for name in runs}
    names = list(runs)
    for index in range(repeat):
        for name in names if index % 2 == 0 else names[::-1]:
            samples[name].append(runs[name]())
    return samples


def paired_ratio(samples: Sequence[float], baseline: Sequence[float]) -> float:
    """The median of run-by-run ratios: each candidate run against the baseline run next to it,
    so a load that comes and goes during the bench cancels out instead of landing on one side."""
    return statistics.median(each / base for each, base in zip(samples, baseline))


def ratio_row(item: str, samples: Sequence[float], baseline: Sequence[float], limit: float,
              note: str = "") -> Row:
    ratio = paired_ratio(samples, baseline)
    return Row(item, ms(statistics.median(samples)), ms(statistics.median(baseline)), ratio,
               "≤ %.2f×" % limit, ratio <= limit, note)


def info_row(item: str, samples: Sequence[float], baseline: Sequence[float], note: str = "") -> Row:
    return Row(item, ms(statistics.median(samples)), ms(statistics.median(baseline)),
               paired_ratio(samples, baseline), "(report)", None, note)


def ms(seconds: float) -> str:
    return "%.2f ms" % (seconds * 1000) if seconds < 0.1 else "%.0f ms" % (seconds * 1000)


class Sandbox:
    """The temporary world every process of the bench runs in."""

    def __init__(self, module: str) -> None:
        self.root = tempfile.mkdtemp(prefix="magihook-bench-")
        self.lib = os.path.join(self.root, "lib")
        self.home = os.path.join(self.root, "home")
        self.project = os.path.join(self.root, "project")
        for folder in (self.lib, self.home, self.project):
            os.mkdir(folder)
        self.module = os.path.join(self.lib, "magihook.py")
        shutil.copyfile(module, self.module)
        # Written regardless of PYTHONDONTWRITEBYTECODE: an installed package has its .pyc.
        py_compile.compile(self.module, doraise=True)
        self.launcher = os.path.join(self.root, "magihook")
        module, function = entry_point()
        with open(self.launcher, "w") as handle:
            handle.write(LAUNCHER.format(python=sys.executable, module=module, function=function))
        os.chmod(self.launcher, 0o755)
        self.env = {key: value for key, value in os.environ.items() if key != "MAGIHOOK_CONFIG"}
        self.env.update(HOME=self.home, PYTHONPATH=self.lib)
        # Hooks that the Python API figures start in this process inherit its environment.
        os.environ.pop("MAGIHOOK_CONFIG", None)
        os.environ["HOME"] = self.home

    def settings(self, name: str, hooks: Dict[str, Any]) -> str:
        path = os.path.join(self.root, name)
        with open(path, "w") as handle:
            json.dump({"hooks": hooks}, handle)
        return path

    def script(self, name: str, body: str) -> str:
        path = os.path.join(self.project, name)
        with open(path, "w") as handle:
            handle.write(body)
        os.chmod(path, 0o755)
        return "./" + name

    def magihook(self, *args: str) -> List[str]:
        return [self.launcher, *args]

    def popen(self, argv: Sequence[str], **options: Any) -> subprocess.Popen:
        return subprocess.Popen(list(argv), cwd=self.project, env=self.env, **options)

    def run(self, argv: Sequence[str], stdin: bytes, expect: int = 0) -> subprocess.CompletedProcess:
        done = subprocess.run(list(argv), input=stdin, capture_output=True, cwd=self.project,
                              env=self.env)
        if done.returncode != expect:
            raise SystemExit("bench: %s exited %d: %s" % (
                " ".join(argv[:4]), done.returncode, done.stderr.decode(errors="replace")[:500]))
        return done

    def timer(self, argv: Sequence[str], stdin: bytes) -> Callable[[], float]:
        def timed() -> float:
            started = time.perf_counter()
            self.run(argv, stdin)
            return time.perf_counter() - started
        return timed

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def entry_point() -> Tuple[str, str]:
    """The `magihook` console script's module and function, as pyproject.toml declares them."""
    with open(os.path.join(ROOT, "pyproject.toml")) as handle:
        found = re.search(r'^magihook\s*=\s*"([\w.]+):(\w+)"', handle.read(), re.M)
    if found is None:
        raise SystemExit("bench: no magihook console script in pyproject.toml")
    return found.group(1), found.group(2)


def load_module(path: str) -> Any:
    """The module under test, imported into this process (for the Python API figures)."""
    name = "magihook_under_bench"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses looks its module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


def result_of(done: subprocess.CompletedProcess) -> Dict[str, Any]:
    return json.loads(done.stdout)


def statuses(result: Dict[str, Any]) -> List[str]:
    return [event["payload"]["status"] for event in result["events"]]


# --- 1. inert calls ------------------------------------------------------------------------------

def bench_inert(box: Sandbox, repeat: int) -> List[Row]:
    event = json.dumps(BASH_EVENT).encode()
    disabled = box.settings("disabled.json", {"enabled": False,
                                              "before_tool": [{"command": "true"}]})
    unmatched = box.settings("unmatched.json", {"enabled": True, "before_tool": [
        {"command": "true", "include_tools": ["read"]}]})
    run = ["run", "--phase", "before_tool"]
    candidates = {
        "console script, no settings": box.magihook(*run),
        "console script, hooks disabled": box.magihook(*run, "--config", disabled),
        "console script, no matching hook": box.magihook(*run, "--config", unmatched),
    }
    light = {  # python -S: no site, i.e. a machine whose site-packages import nothing
        "baseline -S": [sys.executable, "-S", "-c", JSON_BASELINE],
        "console script, python -S": [sys.executable, "-S", box.launcher, *run],
    }
    for argv in list(candidates.values()) + [light["console script, python -S"]]:
        result = result_of(box.run(argv, event))
        assert result["verdict"] == "continue" and result["events"] == [], result
    runs = {"baseline": box.timer([sys.executable, "-c", JSON_BASELINE], event)}
    runs.update((name, box.timer(argv, event)) for name, argv in candidates.items())
    runs.update((name, box.timer(argv, event)) for name, argv in light.items())
    samples = interleaved(runs, repeat)
    rows = [ratio_row("1 inert: " + name, samples[name], samples["baseline"], 1.10)
            for name in candidates]
    rows.append(info_row("1 inert: console script, python -S (light site)",
                         samples["console script, python -S"], samples["baseline -S"],
                         "baseline is python -S too"))
    return rows


def bench_printed(box: Sandbox, repeat: int) -> List[Row]:
    """The hook command `adapt claude-code --print-settings` writes, printed by each way of
    having magihook (the console script, `python -m magihook` with the module on the path, a
    copied magihook.py in a folder of its own, no cache yet), run as the agent runs it on an
    inert call (a settings file whose one hook matches no Bash call), against the baseline; and
    the copy run as a script, the command printed before (compiled on every call)."""
    vendor = os.path.join(box.root, "vendor")
    os.mkdir(vendor)
    copy = os.path.join(vendor, "magihook.py")
    shutil.copyfile(box.module, copy)
    config = box.settings("inert.json", {"enabled": True, "before_tool": [
        {"command": "true", "include_tools": ["read"]}]})
    event = json.dumps({"session_id": "s", "transcript_path": os.devnull, "cwd": box.project,
                        "hook_event_name": "PreToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "ls -la"}}).encode()
    printers = {"console script": [box.launcher],
                "python -m magihook": [sys.executable, "-m", "magihook"],
                "copied magihook.py": [sys.executable, copy]}
    commands = {name: printed_command(box, argv, config) for name, argv in printers.items()}
    commands["copied magihook.py run as a script"] = [sys.executable, copy, "adapt", "claude-code",
                                                      "--config", config]
    for argv in commands.values():
        done = box.run(argv, event)
        assert (done.stdout, done.stderr) == (b"", b""), (argv, done)
    runs = {"baseline": box.timer([sys.executable, "-c", JSON_BASELINE], event)}
    runs.update((name, box.timer(argv, event)) for name, argv in commands.items())
    samples = interleaved(runs, repeat)
    rows = [ratio_row("1 inert Claude Code call, as --print-settings of the %s wires it" % name,
                      samples[name], samples["baseline"], 1.15, "printed: `%s`" % (
                          "magihook" if argv[1:2] != ["-I"] else "python -I -c <import stub>"))
            for name, argv in commands.items() if name in printers]
    rows.append(info_row("1 inert Claude Code call: copied magihook.py run as a script",
                         samples["copied magihook.py run as a script"], samples["baseline"],
                         "compiles %d KB of source each run; printed before" % (
                             os.path.getsize(copy) // 1000)))
    return rows


def printed_command(box: Sandbox, argv: Sequence[str], config: str) -> List[str]:
    """The PreToolUse command `ARGV adapt claude-code --print-settings` prints, as argv."""
    import shlex

    done = box.run([*argv, "adapt", "claude-code", "--print-settings", "--config", config], b"")
    if done.stderr:
        raise SystemExit("bench: --print-settings warned: %s" % done.stderr.decode(errors="replace"))
    snippet = json.loads(done.stdout)
    return shlex.split(snippet["hooks"]["PreToolUse"][0]["hooks"][0]["command"])


def extra_imports(box: Sandbox) -> List[str]:
    """Modules a run imports beyond its baseline's (python -X importtime), with self times."""
    event = json.dumps(BASH_EVENT).encode()
    hooked = box.settings("true.json", {"enabled": True, "before_tool": [{"command": "true"}]})
    run = [box.launcher, "run", "--phase", "before_tool"]
    lines = []
    for label, flags, argv, baseline in (
            ("inert run", [], run, JSON_BASELINE),
            ("inert run, python -S", ["-S"], run, JSON_BASELINE),
            ("one `true` hook", [], run + ["--config", hooked], HOOK_BASELINE)):
        base = _imported(box, flags + ["-c", baseline], event)
        extra = {name: us for name, us in _imported(box, flags + argv, event).items()
                 if name not in base}
        lines.append("%s, imports beyond the baseline's (%.1f ms self time): %s" % (
            label, sum(extra.values()) / 1000, ", ".join(
                "%s %.2f" % (name, us / 1000)
                for name, us in sorted(extra.items(), key=lambda each: -each[1])) or "none"))
    return lines


def _imported(box: Sandbox, argv: Sequence[str], stdin: bytes) -> Dict[str, int]:
    """{module: self import time in µs} of one run."""
    done = box.run([sys.executable, "-X", "importtime", *argv], stdin)
    found = {}
    for line in done.stderr.decode().splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, _, name = line[len("import time:"):].split("|")
            found[name.strip()] = int(self_us)
    return found


# --- 2. one trivial hook -------------------------------------------------------------------------

def bench_hook(box: Sandbox, repeat: int) -> List[Row]:
    event = json.dumps(BASH_EVENT).encode()
    config = box.settings("true.json", {"enabled": True, "before_tool": [{"command": "true"}]})
    argv = box.magihook("run", "--phase", "before_tool", "--config", config)
    assert statuses(result_of(box.run(argv, event))) == ["started", "success"]
    samples = interleaved({"baseline": box.timer([sys.executable, "-c", HOOK_BASELINE], event),
                           "magihook": box.timer(argv, event)}, repeat)
    return [ratio_row("2 one `true` hook (console script)", samples["magihook"],
                      samples["baseline"], 1.10, "baseline: python reads the JSON, spawns "
                      "`bash -lc true`")]


# --- 2. args: no shell, no login profile --------------------------------------------------------

# A login profile of the usual kind: ~/.bash_profile sources ~/.bashrc, which sources a few
# files, runs an nvm-like loop over installed versions, asks two commands for their output (as
# `eval "$(tool init -)"` lines do) and defines aliases and functions.
PROFILE_FILES = {
    ".bash_profile": '[ -f ~/.profile ] && . ~/.profile\n[ -f ~/.bashrc ] && . ~/.bashrc\n',
    ".profile": 'export EDITOR=vi PAGER=less LANG=C.UTF-8\numask 022\n',
    ".bashrc": (
        'for f in ~/.bashrc.d/*.sh; do . "$f"; done\n'
        'HISTSIZE=10000; HISTCONTROL=ignoreboth; shopt -s histappend checkwinsize\n'
        'for v in ~/.nvm/versions/node/*; do case ":$PATH:" in *":$v/bin:"*) ;; '
        '*) PATH="$v/bin:$PATH";; esac; done\n'
        'OS="$(uname -s)"; ARCH="$(uname -m)"\n'
        'eval "$(printf \'alias ll="ls -l"; alias gs="git status"\')"\n'
        'command -v git >/dev/null && export GIT_PAGER=cat\n'),
    ".bashrc.d/aliases.sh": "".join("alias a%d='echo %d'\n" % (n, n) for n in range(60)),
    ".bashrc.d/functions.sh": "".join(
        'nvm_f%d() {\n  local v="${1:-}"\n  [ -n "$v" ] && printf "%%s\\n" "$v%d" || return 1\n}\n'
        % (n, n) for n in range(1500)),
    ".bashrc.d/path.sh": 'for d in /opt/*/bin ~/.local/bin ~/bin; do [ -d "$d" ] && PATH="$d:$PATH"; done\n',
}


def profile_home(box: Sandbox) -> str:
    home = os.path.join(box.root, "profile-home")
    for name, text in PROFILE_FILES.items():
        path = os.path.join(home, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
    for version in range(12):
        os.makedirs(os.path.join(home, ".nvm", "versions", "node", "v%d.0.0" % version, "bin"))
    return home


def bench_args(box: Sandbox, repeat: int) -> List[Row]:
    """One `true` hook given as `args` against the same hook as `command` (`bash -lc`), both
    through the console script, with HOME holding the login profile above, then an empty one."""
    event = json.dumps(BASH_EVENT).encode()
    configs = {"args": box.settings("args.json", {"enabled": True, "before_tool": [
                   {"args": ["/bin/true"]}]}),
               "command": box.settings("command.json", {"enabled": True, "before_tool": [
                   {"command": "/bin/true"}]})}
    homes = {"profile": profile_home(box), "empty HOME": box.home}
    runs = {}
    for home_name, home in homes.items():
        env = dict(box.env, HOME=home)
        for form, config in configs.items():
            argv = box.magihook("run", "--phase", "before_tool", "--config", config)
            done = subprocess.run(argv, input=event, capture_output=True, cwd=box.project, env=env)
            assert statuses(result_of(done)) == ["started", "success"], done.stderr
            runs["%s, %s" % (form, home_name)] = _env_timer(box, argv, event, env)
    samples = interleaved(runs, repeat)
    return [info_row("2 one hook as args vs as command (bash -lc), %s" % home_name,
                     samples["args, " + home_name], samples["command, " + home_name],
                     "console script; baseline: the same hook as `command`" + (
                         "; profile: bench/run.py PROFILE_FILES" if home_name == "profile" else ""))
            for home_name in homes]


def _env_timer(box: Sandbox, argv: Sequence[str], stdin: bytes,
               env: Dict[str, str]) -> Callable[[], float]:
    def timed() -> float:
        started = time.perf_counter()
        subprocess.run(list(argv), input=stdin, capture_output=True, cwd=box.project, env=env,
                       check=True)
        return time.perf_counter() - started
    return timed


# --- 3. --stream ---------------------------------------------------------------------------------

class StreamProcess:
    """A `magihook run --stream` child (or another line-for-line server), one line in, one out."""

    def __init__(self, box: Sandbox, *args: str, argv: Optional[Sequence[str]] = None) -> None:
        self.process = box.popen(argv or box.magihook("run", "--stream", *args),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)

    def ask(self, line: bytes) -> bytes:
        self.process.stdin.write(line)
        self.process.stdin.flush()
        return self.process.stdout.readline()

    def close(self) -> bytes:
        """End of input; what it wrote on stderr."""
        self.process.stdin.close()
        stderr = self.process.stderr.read()
        self.process.wait(timeout=60)
        return stderr


def bench_stream(box: Sandbox, repeat: int, events: int) -> Tuple[List[Row], List[str]]:
    line = json.dumps(dict(BASH_EVENT, phase="before_tool")).encode() + b"\n"
    config = box.settings("true.json", {"enabled": True, "before_tool": [{"command": "true"}]})
    hooked = StreamProcess(box, "--config", config)
    floor = StreamProcess(box, argv=[sys.executable, os.path.join(HERE, "stream_floor.py")])
    traced = StreamProcess(box, argv=[sys.executable, os.path.join(HERE, "stream_trace.py"),
                                      box.module, "--config", config])
    for server in (hooked, traced):
        assert statuses(json.loads(server.ask(line))) == ["started", "success"]

    def asking(server: StreamProcess, expect: bytes) -> Callable[[], float]:
        def one_event() -> float:
            started = time.perf_counter()
            answer = server.ask(line)
            elapsed = time.perf_counter() - started
            assert expect in answer, answer[:300]
            return elapsed
        return one_event

    def one_spawn() -> float:
        started = time.perf_counter()
        subprocess.run(BASH + ["true"], cwd=box.project, env=box.env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - started

    # The same pipeline called in this process: what the stream's extra process hop costs.
    module = load_module(box.module)
    settings = module.settings_from_document(
        {"hooks": {"enabled": True, "before_tool": [{"command": "true"}]}})
    document = dict(BASH_EVENT, context=dict(BASH_EVENT["context"], cwd=box.project))

    def in_process() -> float:
        started = time.perf_counter()
        result = module.run_phase(settings, "before_tool", document)
        elapsed = time.perf_counter() - started
        assert statuses(result) == ["started", "success"], result
        return elapsed

    payload = json.dumps({"schema": "magi-code.tool_hook", "pad": "x" * 600}).encode()

    def one_piped_spawn() -> float:
        started = time.perf_counter()
        subprocess.run(BASH + ["true"], cwd=box.project, env=box.env, input=payload,
                       capture_output=True, check=True)
        return time.perf_counter() - started

    samples = interleaved({"baseline": one_spawn, "event": asking(hooked, b'"success"'),
                           "api": in_process, "piped": one_piped_spawn,
                           "floor": asking(floor, b'"continue"'),
                           "traced": asking(traced, b'"success"')}, repeat)
    hooked.close()
    floor.close()
    steps = json.loads(traced.close().decode().splitlines()[-1])
    if "error" in steps:
        raise SystemExit("bench: stream_trace.py: %s" % steps["error"])
    rows = [ratio_row("3 --stream: per event, one `true` hook", samples["event"],
                      samples["baseline"], 1.05, "baseline: one `bash -lc true` spawn from Python"),
            info_row("3 --stream: per event, vs a spawn with stdin piped, output captured",
                     samples["event"], samples["piped"], "baseline: subprocess.run(input=payload, "
                     "capture_output=True)"),
            info_row("3 run_phase() in-process, one `true` hook", samples["api"],
                     samples["baseline"], "the stream's pipeline without its process hop"),
            info_row("3 floor: a minimal Python stream (posix_spawn, pipes, a JSON line each "
                     "way)", samples["floor"], samples["baseline"], "bench/stream_floor.py")]
    notes = ["--stream, one event with one `true` hook, from the inside (bench/stream_trace.py, "
             "median µs): " + ", ".join("%s %.0f" % step for step in steps.items())]

    inert = StreamProcess(box)
    json.loads(inert.ask(line))  # started and answering: start-up is not part of the rate

    def feed() -> None:
        inert.process.stdin.write(line * events)
        inert.process.stdin.close()

    started = time.perf_counter()
    writer = threading.Thread(target=feed)
    writer.start()
    answers = sum(1 for _ in inert.process.stdout)
    elapsed = time.perf_counter() - started
    writer.join()
    inert.process.wait(timeout=60)
    assert answers == events, (answers, events)
    rate = events / elapsed
    rows.append(Row("3 --stream: inert events per second", "%.0f/s" % rate, target="≥ 5000/s",
                    ok=rate >= 5000, note="%d events piped, %.1f µs each" % (
                        events, elapsed / events * 1e6)))
    return rows, notes


# --- 4. floods -----------------------------------------------------------------------------------

def bench_flood(box: Sandbox, repeat: int) -> List[Row]:
    rows = []
    event = json.dumps(BASH_EVENT).encode()
    baseline_peak = max(_peak_rss(box.popen([sys.executable, "-c", JSON_BASELINE],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE), event)[1]
                        for _ in range(3))
    for stream, redirect in (("stdout", ""), ("stderr", ">&2")):
        command = box.script("flood-%s.sh" % stream, FLOOD_SCRIPT.format(redirect=redirect))
        config = box.settings("flood-%s.json" % stream, {"enabled": True, "before_tool": [
            {"command": command, "%s_max_bytes" % stream: 65536}]})
        latencies, peaks = [], []
        for _ in range(repeat):
            latency, peak = _one_flood(box, config, event)
            latencies.append(latency)
            peaks.append(peak)
        rows.append(Row("4 flood: `yes` on %s, cap 64 KiB: flood start to result" % stream,
                        "%.1f ms" % (statistics.median(latencies) * 1000), target="≤ 100 ms",
                        ok=max(latencies) <= 0.1, note="max %.1f ms of %d runs; hook gone" % (
                            max(latencies) * 1000, repeat)))
        rows.append(Row("4 flood: magihook peak RSS (%s flood)" % stream,
                        "%.1f MiB" % (max(peaks) / 1024), "%.1f MiB" % (baseline_peak / 1024),
                        max(peaks) / baseline_peak, "≤ 32 MiB", max(peaks) <= 32 * 1024,
                        "VmHWM, max of %d runs; baseline: python json.load" % repeat))
    return rows


def _one_flood(box: Sandbox, config: str, event: bytes) -> Tuple[float, int]:
    """(seconds from the flood's start to magihook's result, magihook's peak RSS in KiB)."""
    start_file = os.path.join(box.project, "flood.start")
    if os.path.exists(start_file):
        os.unlink(start_file)
    process = box.popen(box.magihook("run", "--phase", "before_tool", "--config", config),
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    (answer, answered), peak = _peak_rss(process, event)
    failed = [each["payload"] for each in json.loads(answer)["events"]
              if each["type"] == "hook_lifecycle"]
    assert failed[-1]["category"] == "output-limit", failed
    with open(start_file) as handle:
        pid, started = handle.read().split()
    # The hook's process (bash exec'd into yes) must be gone by the time the result is out.
    assert not os.path.exists("/proc/%s" % pid), "flood process %s still alive" % pid
    return answered - float(started), peak


def _peak_rss(process: subprocess.Popen, stdin: bytes) -> Tuple[Tuple[bytes, float], int]:
    """Feed stdin, read the first stdout line and when it came; and the process's peak RSS (KiB).

    The peak is VmHWM from /proc/PID/status, sampled until the process exits (it is a high-water
    mark, so late samples still see an early peak).  Not ru_maxrss: for a child started by
    vfork+exec, Linux folds the parent's own peak into it.
    """
    peak = [0]

    def sample() -> None:
        path = "/proc/%d/status" % process.pid
        while True:
            try:
                with open(path) as handle:
                    lines = [line for line in handle if line.startswith("VmHWM:")]
            except OSError:
                return
            if not lines:  # a zombie: its memory is gone
                return
            peak[0] = max(peak[0], int(lines[0].split()[1]))
            time.sleep(0.0002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    process.stdin.write(stdin)
    process.stdin.close()
    answer = process.stdout.readline()
    answered = time.time()
    process.stdout.read()
    process.stderr.read()
    process.wait()
    process.stdout.close()
    process.stderr.close()
    sampler.join()
    return (answer, answered), peak[0]


def bench_big_payload(box: Sandbox, repeat: int) -> List[Row]:
    config = box.settings("cat.json", {"enabled": True, "payload": "full", "before_tool": [
        {"command": "cat > /dev/null"}]})
    keep = box.settings("keep.json", {"enabled": True, "payload": "full", "before_tool": [
        {"command": "cat > payload.json"}]})
    # The envelope holds the request twice (payload.data and the legacy top-level copy): size
    # the content so the hook's stdin is just under the 1 MiB inline cap.
    overhead = len(_hook_stdin(box, keep, _write_event(""))) - 2 * len('""')
    content = corpus.text("mixed", MIB // 2)
    while 2 * len(json.dumps(content)) + overhead > MIB:
        content = content[:-256]
    event = _write_event(content)
    stdin = _hook_stdin(box, keep, event)
    assert MIB - 1024 < len(stdin) <= MIB, len(stdin)
    argv = box.magihook("run", "--phase", "before_tool", "--config", config)
    assert statuses(result_of(box.run(argv, event))) == ["started", "success"]
    # The baseline reads the same event, then feeds the very bytes the hook got.
    feed = FEED_BASELINE % os.path.join(box.project, "payload.json")
    samples = interleaved({"baseline": box.timer([sys.executable, "-c", feed], event),
                           "magihook": box.timer(argv, event)}, repeat)
    return [ratio_row("4 1 MiB full payload through `cat > /dev/null`", samples["magihook"],
                      samples["baseline"], 1.20, "hook stdin %d bytes, inline; baseline: python "
                      "reads the event JSON, feeds those bytes to `bash -lc 'cat > /dev/null'`"
                      % len(stdin))]


def _write_event(content: str) -> bytes:
    return json.dumps({"tool": {"name": "write", "call_id": "call_big"},
                       "request": {"path": "big.txt", "content": content}}).encode()


def _hook_stdin(box: Sandbox, config: str, event: bytes) -> bytes:
    """The bytes a hook got on stdin (the config's hook is `cat > payload.json`)."""
    box.run(box.magihook("run", "--phase", "before_tool", "--config", config), event)
    with open(os.path.join(box.project, "payload.json"), "rb") as handle:
        return handle.read()


def bench_message(box: Sandbox, repeat: int) -> List[Row]:
    """A 1 MiB after_assistant message against a 1 KiB one, one redacted `true` hook: what the
    size alone costs a call (issue 14: at most 25 ms more), in wall and in CPU time (the hook's
    and magihook's own, from getrusage of the children), run by run."""
    config = box.settings("message.json", {"enabled": True, "after_assistant": [
        {"command": "true"}]})
    argv = box.magihook("run", "--phase", "after_assistant", "--config", config)
    events = {name: json.dumps({"text": corpus.text("mixed", size)}).encode()
              for name, size in (("1 KiB", 1024), ("1 MiB", MIB))}
    for event in events.values():
        assert statuses(result_of(box.run(argv, event))) == ["started", "success"]
    wall: Dict[str, List[float]] = {name: [] for name in events}
    cpu: Dict[str, List[float]] = {name: [] for name in events}
    names = list(events)
    for index in range(repeat):
        for name in names if index % 2 == 0 else names[::-1]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            box.run(argv, events[name])
            wall[name].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    rows = []
    for kind, samples in (("wall", wall), ("CPU", cpu)):
        extra = statistics.median(big - small for big, small in zip(samples["1 MiB"],
                                                                     samples["1 KiB"]))
        rows.append(Row("6 after_assistant 1 MiB vs 1 KiB, %s" % kind,
                        ms(statistics.median(samples["1 MiB"])),
                        ms(statistics.median(samples["1 KiB"])),
                        paired_ratio(samples["1 MiB"], samples["1 KiB"]), "≤ 25 ms more",
                        extra <= 0.025, "%.1f ms more (median of run-by-run differences); "
                        "redacted, the bodies go to a payload_ref file" % (extra * 1000)))
    return rows


# --- 5. scanning ---------------------------------------------------------------------------------

def bench_scan(module_path: str, quick: bool) -> List[Row]:
    redact = load_module(module_path).redact_credentials
    size = MIB // 2 if quick else 2 * MIB
    probe, _ = corpus.with_secrets(corpus.text("mixed", 64 * 1024))
    if redact(probe) == probe:
        return [Row("5 scan", "not measured", note="redact_credentials returned text full of "
                    "credentials unchanged: a placeholder, not a scanner")]
    rows = []
    for kind in list(corpus.KINDS) + ["mixed"]:
        text = corpus.text(kind, size)
        seconds = _scan_seconds(redact, text, 3)
        rate = len(text) / seconds / 1e6
        changed = redact(text) != text
        rows.append(Row("5 scan, no secrets: %s" % kind, _rate(rate), target="≥ 50 MB/s",
                        ok=rate >= 50, note="%d KiB%s" % (len(text) // 1024,
                                                           "; CHANGED the text" if changed else "")))
    per_mib = {}
    for mib in (1, 4, 16):
        text, secrets = corpus.with_secrets(corpus.text("mixed", mib * MIB, seed=mib))
        seconds = _scan_seconds(redact, text, 1 if mib == 16 else 3)
        per_mib[mib] = seconds / (len(text) / MIB)
        output = redact(text)
        left = sum(1 for secret in secrets if secret in output)
        rows.append(Row("5 scan, with secrets: %d MiB" % mib, "%.0f ms" % (seconds * 1000),
                        note="%s; %d secret lines, %d left verbatim" % (
                            _rate(len(text) / seconds / 1e6), len(secrets), left)))
    growth = per_mib[16] / per_mib[1]
    rows.append(Row("5 scan, with secrets: time per MiB, 16 MiB vs 1 MiB", "%.2f×" % growth,
                    target="≤ 1.5× (linear)", ok=growth <= 1.5))
    return rows


def _scan_seconds(redact: Callable[[str], str], text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        redact(text)
        times.append(time.perf_counter() - started)
    return max(statistics.median(times), 1e-9)


def _rate(mb_per_second: float) -> str:
    return "%.0f MB/s" % mb_per_second if mb_per_second < 1e5 else "> 100000 MB/s"


# --- the table -----------------------------------------------------------------------------------

def machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%d × %s, %s, Python %s, %s" % (
        os.cpu_count() or 0, model, platform.platform(terse=True), platform.python_version(),
        datetime.date.today().isoformat())


def print_table(rows: Sequence[Row]) -> None:
    print("| figure | measured | baseline | ratio | target | met | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        met = {True: "yes", False: "**no**", None: ""}[row.ok]
        ratio = "" if row.ratio is None else "%.3f" % row.ratio
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            row.item, row.figure, row.baseline, ratio, row.target, met, row.note))


SECTIONS = ("inert", "launch", "hook", "args", "stream", "flood", "message", "scan")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions: a smoke run")
    parser.add_argument("--only", default=",".join(SECTIONS),
                        help="comma-separated sections: %s" % ", ".join(SECTIONS))
    parser.add_argument("--module", default=os.path.join(ROOT, "magihook.py"),
                        help="the magihook.py to measure (default: this repository's)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    unknown = only - set(SECTIONS)
    if unknown:
        parser.error("unknown section(s): %s" % ", ".join(sorted(unknown)))
    repeat = 10 if args.quick else 60
    print("machine: %s; load average %s" % (machine(), _load()))
    box = Sandbox(os.path.abspath(args.module))
    rows: List[Row] = []
    notes: List[str] = []
    try:
        if "inert" in only:
            rows += bench_inert(box, repeat)
            notes += extra_imports(box)
        if "launch" in only:
            rows += bench_printed(box, repeat)
        if "hook" in only:
            rows += bench_hook(box, repeat)
        if "args" in only:
            rows += bench_args(box, max(5, repeat // 2))
        if "stream" in only:
            stream_rows, stream_notes = bench_stream(box, repeat * 10, 2000 if args.quick else 20000)
            rows += stream_rows
            notes += stream_notes
        if "flood" in only:
            rows += bench_flood(box, max(5, repeat // 3))
            rows += bench_big_payload(box, max(5, repeat // 2))
        if "message" in only:
            rows += bench_message(box, max(5, repeat // 2))
        if "scan" in only:
            rows += bench_scan(box.module, args.quick)
    finally:
        box.close()
    print("repetitions: %d per process figure (interleaved), medians; ratio: median of run-by-run "
          "ratios; load average after: %s" % (repeat, _load()))
    print()
    print_table(rows)
    for line in notes:
        print()
        print(line)
    return 0 if all(row.ok is not False for row in rows) else 1


def _load() -> str:
    try:
        return " ".join("%.2f" % each for each in os.getloadavg())
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
