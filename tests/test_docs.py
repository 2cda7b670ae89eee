"""Every command block of README.md, docs/ and bench/README.md runs as shown.

A fenced ``sh`` block is run with bash, in document order, in one scratch folder per document
that holds a copy of examples/ (so `cd examples` works) and an empty HOME; `magihook` on PATH is
this checkout's module.  Each block must exit 0.  A block that starts with ``#!`` is a hook
script: it is written to the path its second line names and run as a hook.  Install commands
are not run here (they need the network and a fresh venv): `.ci/run` runs each of them, and this
test pins that the README's are exactly those.  A ```json block that is magihook settings is
validated, and its hooks run on sample calls with the verdicts EXAMPLE_HOOKS gives.  A document
without such a block is no test case.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import magihook  # noqa: E402

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
INSTALL_BLOCKS = {
    "python3 -m venv ~/.venvs/magihook && ~/.venvs/magihook/bin/pip install .",
    "pipx install .",
}
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.M | re.S)  # also fences inside list items


def sh_blocks(path: Path):
    text = path.read_text()
    for match in FENCE.finditer(text):
        if match.group(2) == "sh":
            yield text[:match.start()].count("\n") + 1, textwrap.dedent(match.group(3))


def first_screen_commands():
    """The two indented commands of the README's first screen."""
    head = (ROOT / "README.md").read_text().split("\n## ", 1)[0]
    return [line.strip() for line in head.splitlines() if line.startswith("    ") and line.strip()]


@pytest.fixture
def sandbox(tmp_path):
    """A scratch folder with examples/ and a `magihook` command that runs this checkout."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "magihook"
    # As --print-settings starts it: this interpreter importing the module (cached bytecode).
    launcher.write_text("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(shlex.quote(part) for part in magihook.launch_argv()))
    launcher.chmod(0o755)
    env = dict(os.environ, HOME=str(tmp_path / "home"), PATH="%s:%s" % (bin_dir, os.environ["PATH"]))
    env.pop("MAGIHOOK_CONFIG", None)
    (tmp_path / "home").mkdir(exist_ok=True)  # conftest may have made it (and emptied HOME)
    work = tmp_path / "work"
    shutil.copytree(tmp_path / "examples", work / "examples")
    return work, env


def run_block(block: str, cwd: Path, env: dict, errexit: bool = True) -> subprocess.CompletedProcess:
    """A doc block runs under `bash -e`; a command typed at a prompt runs without -e, as there."""
    argv = ["bash", "-e", "-c", block] if errexit else ["bash", "-c", block]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_readme_first_screen_is_the_two_commands_ci_runs():
    install, tests = first_screen_commands()
    assert install.startswith("pip install . && (cd examples && magihook run --phase before_tool")
    assert tests == "pip install -e '.[test]' && python -m pytest -q"
    assert tests in (ROOT / ".ci" / "run").read_text()


def test_the_first_command_blocks_the_example_and_leaves_you_at_the_root(sandbox):
    work, env = sandbox
    command = first_screen_commands()[0].split(" && ", 1)[1] + "; pwd"
    done = run_block(command, work, env, errexit=False)
    lines = done.stdout.splitlines()
    assert json.loads(lines[0])["verdict"] == "block"
    assert lines[1:] == ["exit 3", str(work)]


def documents_with(blocks):
    """The DOCUMENTS that hold at least one of BLOCKS (a document without is no test case)."""
    return [document for document in DOCUMENTS if any(True for _ in blocks(document))]


def doc_id(document: Path) -> str:
    return str(document.relative_to(ROOT))


def test_the_readme_has_command_blocks():
    assert ROOT / "README.md" in documents_with(sh_blocks)


@pytest.mark.parametrize("document", documents_with(sh_blocks), ids=doc_id)
def test_every_sh_block_runs_as_shown(document, sandbox):
    work, env = sandbox
    ran = 0
    for line, block in sh_blocks(document):
        if block.strip() in INSTALL_BLOCKS:
            continue
        if block.startswith("#!"):
            run_hook_script(block, work, env)
        else:
            done = run_block(block, work, env)
            assert done.returncode == 0, "%s:%d exit %d\n%s%s" % (
                document.name, line, done.returncode, done.stdout[-2000:], done.stderr[-2000:])
        ran += 1
    assert ran >= (5 if document == ROOT / "README.md" else 1)  # not only install blocks


def run_hook_script(block: str, work: Path, env: dict) -> None:
    """A hook script shown in the docs, named on its second line, blocks and passes as it says."""
    name = block.splitlines()[1].lstrip("# ").strip()
    script = work / name
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(block)
    script.chmod(0o755)
    settings = work / "script-settings.json"
    settings.write_text(json.dumps({"hooks": {"enabled": True, "before_tool": [{
        "label": "doc-script", "command": "./" + name, "payload": "full",
        "failure_policy": "block", "include_tools": ["bash"]}]}}))
    verdicts = {}
    for command in ("git push --force origin main", "ls -la"):
        event = json.dumps({"tool": {"name": "bash", "call_id": "c"}, "request": {"command": command}})
        done = subprocess.run(["magihook", "run", "--phase", "before_tool", "--config", str(settings)],
                              input=event, cwd=work, env=env, capture_output=True, text=True, timeout=60)
        verdicts[command] = json.loads(done.stdout)["verdict"]
    assert verdicts == {"git push --force origin main": "block", "ls -la": "continue"}


def test_install_blocks_are_the_ones_ci_runs():
    shown = {block.strip() for document in DOCUMENTS for _, block in sh_blocks(document)
             if "pip install" in block or "pipx install" in block}
    assert shown <= INSTALL_BLOCKS
    ci = (ROOT / ".ci" / "run").read_text()
    for block in INSTALL_BLOCKS:
        assert "'%s'" % block in ci


def settings_blocks(path: Path):
    """The ```json blocks of a document that are magihook settings (hooks under a phase)."""
    text = path.read_text()
    for match in FENCE.finditer(text):
        if match.group(2) != "json":
            continue
        try:
            data = json.loads(textwrap.dedent(match.group(3)))
        except ValueError:
            continue  # JSON Lines, or an abridged example
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if isinstance(hooks, dict) and {"before_tool", "after_tool", "after_assistant",
                                        "after_reasoning"} & set(hooks):
            yield text[:match.start()].count("\n") + 1, match.group(3)


def settings_examples():
    """(document, line, block) for every settings example of DOCUMENTS, one test case each."""
    return [(document, line, block) for document in DOCUMENTS for line, block in settings_blocks(document)]


# What each settings example's hooks do, by label: the sample calls (a bash command) and the
# verdict each gets.  A hook's script is the document's own `#!` block that names its path, else
# the stand-in here.  An example whose hook is missing from this table fails, as does a stale entry.
CLAUDE_GUARD = """#!/usr/bin/env bash
# A Claude Code PreToolUse hook: exit 2 with a reason on stderr denies the call.
command=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"].get("command", ""))')
case "$command" in
  *"git push --force"*) echo "force push is not allowed" >&2; exit 2 ;;
esac
"""
EXAMPLE_HOOKS = {
    "no-force-push": {"git push --force origin main": "block", "ls -la": "continue"},
    "claude-guard": {"git push --force origin main": "block", "ls -la": "continue"},
}
STAND_INS = {".claude/hooks/guard.sh": CLAUDE_GUARD}
EXAMPLE_PROJECT = "/home/me/project/"  # where the docs' absolute hook paths live


def test_every_example_hook_has_its_outcomes_and_none_is_stale():
    labels = {hook["label"] for _, _, block in settings_examples()
              for hooks in json.loads(block)["hooks"].values() if isinstance(hooks, list) for hook in hooks}
    assert labels == set(EXAMPLE_HOOKS)


def example_script(relative: str) -> str:
    """The script at RELATIVE (a path in the example project): the docs' `#!` block naming it."""
    for document in DOCUMENTS:
        for _, block in sh_blocks(document):
            if block.startswith("#!") and block.splitlines()[1].lstrip("# ").strip() == relative:
                return block
    return STAND_INS[relative]


def install_example_hooks(block: str, work: Path) -> str:
    """BLOCK with its hooks' scripts written under WORK, which stands for the example project."""
    for hooks in json.loads(block)["hooks"].values():
        for hook in hooks if isinstance(hooks, list) else ():
            match = re.search(r"(?:%s|\$CLAUDE_PROJECT_DIR\"?/)(\S+?)\"?$" % re.escape(EXAMPLE_PROJECT),
                              hook["command"])
            assert match, "%s: a hook example names its script by an absolute path" % hook["label"]
            script = work / match.group(1)
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_text(example_script(match.group(1)))
            script.chmod(0o755)
    return block.replace(EXAMPLE_PROJECT, str(work) + "/")


@pytest.mark.parametrize("document, line, block", settings_examples(),
                         ids=["%s:%d" % (doc_id(d), line) for d, line, _ in settings_examples()])
def test_every_settings_example_is_valid_and_runs_its_hooks(document, line, block, sandbox):
    """A settings example validates with no note (it is not inert: hooks.enabled as shown), and
    its hooks, run on sample calls, give the verdicts EXAMPLE_HOOKS says."""
    work, env = sandbox
    example = work / "example-settings.json"
    example.write_text(install_example_hooks(block, work))
    done = subprocess.run(["magihook", "validate", str(example)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), "%s:%d %s" % (document.name, line, done.stderr)
    labels = [hook["label"] for hook in json.loads(block)["hooks"]["before_tool"]]
    env = dict(env, CLAUDE_PROJECT_DIR=str(work))
    for label in labels:
        for command, verdict in EXAMPLE_HOOKS[label].items():
            event = json.dumps({"tool": {"name": "bash", "call_id": "c"}, "request": {"command": command}})
            ran = subprocess.run(["magihook", "run", "--phase", "before_tool", "--config", str(example)],
                                 input=event, cwd=work, env=env, capture_output=True, text=True, timeout=60)
            result = json.loads(ran.stdout)
            assert (ran.returncode, result["verdict"], result["warnings"]) == (
                {"block": 3, "continue": 0}[verdict], verdict, []), (label, command, ran.stderr)
            ended = [("hook_lifecycle", "failed", "exit"), ("hook_diagnostic", "failed", "exit")] if (
                verdict == "block") else [("hook_lifecycle", "success", None)]
            assert [(event["type"], event["payload"]["status"], event["payload"].get("category"))
                    for event in result["events"]] == [("hook_lifecycle", "started", None), *ended]


def test_the_redaction_reference_counts_what_the_table_and_the_corpus_hold():
    text = (ROOT / "docs" / "payloads-and-redaction.md").read_text(encoding="utf-8")
    data = ROOT / "tests" / "data"
    positives = [json.loads(line) for line in (data / "secrets_positive.jsonl").open(encoding="utf-8")]
    negatives = (data / "secrets_negative.jsonl").read_text(encoding="utf-8").splitlines()
    assert re.search(r"in text: %d formats of" % len(magihook.TOKEN_RULES), text)
    assert re.search(r"%d positives in %d formats, %d\s+look-alikes" % (
        len(positives), len({p["format"] for p in positives}), len(negatives)), text)
    assert "100.0%% (%d/%d) | 100.0%% (%d/%d)" % ((len(positives),) * 2 + (len(negatives),) * 2) in text


def test_the_preflight_reference_lists_every_runner_and_shell():
    # One source: the tables in magihook.py; the reference must name exactly their entries.
    usage = (ROOT / "docs" / "usage.md").read_text()
    where = usage[usage.index("### Where a command is"):usage.index("### What preflight is for")]
    listed = where[where.index("The runners:"):where.index("; and `find`")]
    assert set(re.findall(r"`([^`]+)`", listed)) == set(magihook._RUNNERS)
    shells = re.search(r"\| a shell \(([^)]*)\)", usage).group(1)
    assert set(re.findall(r"`([a-z-]+)`", shells)) == set(magihook._SHELL_ARGUMENTS.names)
