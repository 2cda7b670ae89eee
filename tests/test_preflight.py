"""Preflight judges the words bash will run (issue 15, item 4), proven against real bash."""

from __future__ import annotations

import platform
import subprocess

import pytest
from conftest import bash_event, run_cli, write_script, write_settings

import magihook

BASH = "/bin/bash"


def bash_runs_cd(command, cwd):
    """Whether real bash, given COMMAND as magihook gives it to a hook, calls `cd`: a function
    named cd stands in for the builtin and says so."""
    probe = "cd() { echo CD-RAN; }; pushd() { echo CD-RAN; }; " + command
    completed = subprocess.run([BASH, "-c", probe], cwd=str(cwd), capture_output=True,
                               text=True, timeout=60)
    return "CD-RAN" in completed.stdout


def bash_words(command, cwd):
    """The words real bash passes to a command, after its quote removal, up to its comment."""
    probe = "words() { printf '<%s>' \"$@\"; }; words " + command
    completed = subprocess.run([BASH, "-c", probe], cwd=str(cwd), capture_output=True,
                               text=True, timeout=60)
    return completed.stdout


# `#` after `=`, `:`, `@` or an empty quote is part of a word in bash; after a blank or an
# operator it starts a comment.  Each command either runs cd in bash or does not.
COMMENT_FORMS = [
    "a=#;cd ..", "x:#; cd ..", '""#;cd ..', "''#;cd ..", "x@#; cd ..", "a#b;cd ..",
    "\\#;cd ..", "'#';cd ..", '"#";cd ..', "a=''#;cd ..", "./a.sh -d@#;cd ..",
    "true #; cd ..", "true;#; cd ..", "true&&#; cd ..", "true|#; cd ..", "true #cd ..",
    "./hook.sh # it's; cd ..", "true&#;cd ..",
]


@pytest.mark.parametrize("command", COMMENT_FORMS)
def test_a_comment_starts_where_bash_s_does(tmp_path, command):
    assert (magihook.preflight_rejection(command, True) is not None) == bash_runs_cd(
        command, tmp_path), command


@pytest.mark.parametrize("command", ["a=#;cd ..", "x:#; cd ..", '""#;cd ..'])
def test_the_issue_s_comment_bypasses_are_rejected(command):
    assert magihook.preflight_rejection(command, True) == "command uses cd"


@pytest.mark.parametrize("words", [
    "a=# b", "x:#y z", '""# c', "'' # c", "a\\ b c", '"x\\"y" z', "c''d .\\./x", "a#b #c d",
    "-d@#x y", "'it''s' # 'open", '"a b"\'c d\'e', "a=b c:d x@y", "./x.sh  -v\t--out=./y",
])
def test_the_words_are_bash_s_words(tmp_path, words):
    tokens = magihook._bash_tokens(words)
    assert "".join("<%s>" % text for _, text in tokens) == bash_words(words, tmp_path)


@pytest.mark.parametrize("command, reason", [
    ("env -iC..", "command has a '..' path component"),
    ("env -iC.. ./x.sh", "command has a '..' path component"),
    ("tar -xvC../out -f a.tar", "command has a '..' path component"),
    ("sort -ro/abs/path x", "command has an absolute path and tools.bash.absolute_paths is false"),
    ("grep -rf/etc/pat x", "command has an absolute path and tools.bash.absolute_paths is false"),
    ("ls -a.?/x", "command has a glob that can match '..'"),
])
def test_every_letter_of_a_glued_option_is_checked(command, reason):
    assert magihook.preflight_rejection(command, False) == reason


def test_glued_env_chdir_really_leaves_the_cwd(tmp_path):
    # Why it matters: GNU env's -C is the cd that `-i` hid.
    inner = tmp_path / "inner"
    inner.mkdir()
    moved = subprocess.run([BASH, "-c", "env -iC.. /bin/pwd"], cwd=str(inner),
                           capture_output=True, text=True)
    if moved.returncode != 0:
        pytest.skip("this env has no -C")
    assert moved.stdout.strip() == str(tmp_path)
    assert magihook.preflight_rejection("env -iC.. /bin/pwd", True) is not None


@pytest.mark.parametrize("command, reason", [
    ("eval c\\\\d .\\\\.", "command uses eval"),
    ("eval ./x.sh", "command uses eval"),
    ("pushd scripts", "command uses pushd"),
    ("true; popd", "command uses popd"),
    ("exec ./hook.sh", "command uses exec"),
    ("source ./env.sh; ./x.sh", "command uses source"),
    ("trap ./x.sh EXIT", "command uses trap"),
    (". ./env.sh", "command uses . (source)"),
    (". ./env.sh a b", "command uses . (source)"),
    ("X=1 . ./env.sh", "command uses . (source)"),
    ("true && . ./env.sh", "command uses . (source)"),
    ("true;. ./env.sh", "command uses . (source)"),
    (">log . ./env.sh", "command uses . (source)"),
    ("2>log . ./env.sh", "command uses . (source)"),
    ("command . ./env.sh", "command uses . (source)"),
    ("cat <(. ./env.sh)", "command uses . (source)"),
    ("'.' ./env.sh", "command uses . (source)"),
    ("bash -c ./x.sh", "command runs a shell on a command string"),
    ("sh -c './x.sh a'", "command runs a shell on a command string"),
    ("/bin/bash -lc ./x.sh", "command runs a shell on a command string"),
    ("bash -ec x", "command runs a shell on a command string"),
    ("xargs sh -c x", "command lets xargs put the payload in its command"),
    ("env X=1 dash -c x", "command runs a shell on a command string"),
    ("./gen.sh | bash", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | sh -s", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | bash -o posix", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | nice bash -e", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | bash 2>err", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | bash 2>&1", "command runs a shell that reads commands from stdin"),
    ("env -S'bash -c ./x.sh'", "command runs a shell on a command string"),
    ("env -S'sh -o posix -c ./x.sh'", "command runs a shell on a command string"),
    ("coproc . ./env.sh", "command uses . (source)"),
    # timeout's own words (options, their values, the duration) come before the command it runs,
    # and env -S runs its string as a command line.
    ("timeout 5 sh", "command runs a shell that reads commands from stdin"),
    ("timeout -s KILL 5s bash", "command runs a shell that reads commands from stdin"),
    ("timeout --kill-after=1 -- 5 sh", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | timeout 1m bash -e", "command runs a shell that reads commands from stdin"),
    ("timeout -k 1 5 sh -c ./x.sh", "command runs a shell on a command string"),
    ("env -Ssh", "command runs a shell that reads commands from stdin"),
    ("env -iSbash", "command runs a shell that reads commands from stdin"),
    ("env --split-string=sh", "command runs a shell that reads commands from stdin"),
    ("env -S 'bash -o posix'", "command runs a shell that reads commands from stdin"),
    ("timeout 5 env -S'dash -c x'", "command runs a shell on a command string"),
    # A word after a prefix's option may be its value, so the next one may be the command (these
    # passed: the shell read the payload as commands).
    ("env -u X sh", "command runs a shell that reads commands from stdin"),
    ("env --unset X bash", "command runs a shell that reads commands from stdin"),
    ("sudo -u root sh", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | sudo -u root bash", "command runs a shell that reads commands from stdin"),
    ("./gen.sh | sudo -iu root bash", "command starts a user's shell"),
    ("sudo -u root . ./env.sh", "command uses . (source)"),
    ("env -i ./x.sh bash", "command runs a shell that reads commands from stdin"),
])
def test_commands_that_reparse_or_change_directory_are_rejected(command, reason):
    assert magihook.preflight_rejection(command, True) == reason


STDIN = "command runs a shell that reads commands from stdin"
STRING = "command runs a shell on a command string"
STARTS = "command starts a user's shell"
INTERPRETER = "command runs an interpreter that reads its program from stdin"
PAYLOAD_IN_XARGS = "command lets xargs put the payload in its command"

# The third red team's bypasses (each passed, and in real bash ran the payload as commands).
BYPASSES = [
    # a word lost after a runner's option: a descriptor between option and value, a value that
    # is a runner's name, timeout's options in a cluster or shortened, a descriptor before its
    # duration
    ("env -u 2>err X sh", STDIN), ("stdbuf -o 2>err L sh", STDIN), ("env -u timeout sh", STDIN),
    ("timeout -vk 1 5s sh", STDIN), ("timeout --sig KILL 5s sh", STDIN),
    ("timeout 2>err 5s sh", STDIN), ("env -i timeout 5s sh", STDIN),
    # a shell's option cluster whose `o` or `O` takes the next word, hiding a later -c
    ("bash -eo pipefail", STDIN), ("bash -xO extglob", STDIN),
    ("bash -eo pipefail -c 's\\h'", STRING), ("bash -oc pipefail x", STRING),
    # env -S after an option's value, shortened; redirections bash reads as one operator
    ("env -u X -Ssh", STDIN), ("env --split=sh", STDIN), ("env -S 'sh -e'", STDIN),
    (">|out sh", STDIN), ("true;>x sh", STDIN), ("true;2>x sh", STDIN),
    # a runner named by its path; a shell by another name, a glob, or stdin as its script
    ("/usr/bin/nice sh", STDIN), ("/usr/bin/nohup sh", STDIN), ("rbash", STDIN),
    ("ksh93", STDIN), ("/bin/s[h]", "command names its program with a glob"),
    ("/bin/b?sh", "command names its program with a glob"), ("bash /dev/stdin", STDIN),
    ("sh /proc/self/fd/0", STDIN), ("bash -- /dev/fd/0", STDIN),
    ("/proc/self/exe", "command runs a program from /proc or /dev"),
    ("//proc/./self/exe", "command runs a program from /proc or /dev"),
    ("bash /proc/thread-self/fd/0", STDIN), ("sh /dev/./stdin", STDIN),
    ("python3 /dev//stdin", INTERPRETER),
    # runners outside the old prefix list
    ("ionice -c3 sh", STDIN), ("chrt 1 sh", STDIN), ("chrt -o 0 sh", STDIN),
    ("taskset 0x1 sh", STDIN), ("taskset -c 0 sh", STDIN), ("setpriv --reuid 0 sh", STDIN),
    ("setarch x86_64 sh", STDIN), ("flock lock sh", STDIN), ("flock lock -c sh", STDIN),
    ("flock lock -c 'sh -e'", STDIN), ("unshare -r sh", STDIN), ("strace -f sh", STDIN),
    ("find . -exec sh \\;", STDIN), ("chroot / sh", STDIN), ("busybox sh", STDIN),
    ("nsenter -t 1 sh", STDIN), ("xargs -a list sh", PAYLOAD_IN_XARGS), ("command sh", STDIN),
    # programs that start a user's shell
    ("su", STARTS), ("su -c sh", STARTS), ("runuser root", STARTS), ("newgrp", STARTS),
    ("script -q out", STARTS), ("sudo -s", STARTS), ("sudo -i", STARTS), ("sudo --sh", STARTS),
    ("doas -s", STARTS),
    # interpreters with no program
    ("python3", INTERPRETER), ("python3 -", INTERPRETER), ("python3 -u", INTERPRETER),
    ("python3 -W ignore", INTERPRETER), ("python3.12 -", INTERPRETER), ("perl", INTERPRETER),
    ("node", INTERPRETER), ("ruby -w", INTERPRETER),
]

# The fourth red team's bypasses, on the automaton (each ran the payload, or cd, in real bash).
FOURTH_BYPASSES = [
    # a shell's `+c` and `+s`, its long options with one dash, a value that is stdin
    ("bash +s ./x.sh", STDIN), ("sh +c \"s''h\"", STRING), ("bash -init-file ./x.sh", STDIN),
    ("bash --rcfile /dev/stdin -i ./x.sh", STDIN), ("bash --init-file=/dev/stdin ./x.sh", STDIN),
    # variables that make bash run a file or expand a string
    ("BASH_ENV=/dev/stdin ./x.sh", "command uses BASH_ENV"),
    ("env BASH_ENV=/dev/stdin bash ./x.sh", "command uses BASH_ENV"),
    ("read -r PS4; set -x; true", "command uses PS4"),
    ("RUBYOPT=-r/dev/stdin ruby x.rb", "command uses RUBYOPT"),
    ("env PERL5OPT=-d perl x.pl", "command uses PERL5OPT"),
    ("ENV=/dev/stdin sh -i ./x.sh", "command uses ENV"),
    ("PYTHONINSPECT=1 python3 x.py", "command uses PYTHONINSPECT"),
    # env: `-` is `-i`, any NAME=VALUE, a long option's start, -S's own escapes and operators
    ("env - sh", STDIN), ("env -- - sh", STDIN), ("env - PATH=/usr/bin:/bin bash", STDIN),
    ("env 1=x sh", STDIN), ("env a.b=c sh", STDIN), ("nice env x-y=1 sh", STDIN),
    ("env --s=sh", STDIN), ("env -S'sh\\c'", STDIN), ("env -S'bash\\_-s'", STDIN),
    ("env -S'flock > sh'", STDIN),
    # runners that start a shell when no command follows
    ("setarch x86_64", STARTS), ("setarch x86_64 -R", STARTS), ("linux64", STARTS),
    ("x86_64", STARTS), ("i386 -R", STARTS), ("x86_64 bash", STDIN),
    ("unshare -r", STARTS), ("fakeroot", STARTS), ("fakeroot-tcp sh", STDIN),
    ("chroot /", STARTS), ("nsenter -t 1 -m", STARTS), ("ssh host", STARTS),
    # find's second -exec; command strings inside command strings by every rule
    ("find . -exec true \\; -exec sh \\;", STDIN), ("find . -exec true ';' -exec bash ';'", STDIN),
    ("flock lk -c \"e''val sh\"", "command uses eval"),
    ("flock lk -c \"exe''c sh\"", "command uses exec"),
    ("flock lk -c \"c''d ..\"", "command uses cd"),
    # builtins that read the payload into variables, run a string, or map a name to a program
    ("read -r x; (( x ))", "command uses read"), ("IFS= read -r x", "command uses read"),
    ("printf -v x 'a'; (( x ))", "command uses printf -v"),
    ("mapfile -c 1 -C x y", "command uses mapfile"), ("readarray y", "command uses readarray"),
    ("hash -p /bin/sh x; x", "command uses hash"), ("select x in a; do true; done",
                                                    "command uses select"),
    # interpreters: inspect mode, the debugger, a long option's value, a versioned name
    ("python3 -i ./x.py", INTERPRETER), ("python3 -ic pass", INTERPRETER),
    ("perl -d ./x.pl", INTERPRETER), ("node --title ./x.js", INTERPRETER),
    ("node --input-type module", INTERPRETER), ("perl5.36-x86_64-linux-gnu", INTERPRETER),
    # xargs: a runner left without a command runs the payload's first word; a replace string
    ("xargs env", PAYLOAD_IN_XARGS), ("xargs nice -n 5", PAYLOAD_IN_XARGS),
    ("xargs timeout 5", PAYLOAD_IN_XARGS), ("xargs -I X env X", PAYLOAD_IN_XARGS),
    ("xargs --replace=X ./x.sh X", PAYLOAD_IN_XARGS), ("watch sh", STDIN),
]


# The fifth red team's, on the fourth's fixes (each ran the payload, or cd, in real bash).
FIFTH_BYPASSES = [
    # history run again re-parses its text, like eval
    ("history -s x; fc -e tee", "command uses history"),
    ("history -s 's\\h'; fc -s", "command uses history"), ("fc -s", "command uses fc"),
    # `for NAME do`, without `in`, and `function NAME`
    ("set -- a; for x do sh; done", STDIN), ("function f for x do bash; done; f a", STDIN),
    ("f() for x do sh; done; f a", STDIN), ("set -- a; for x do python3; done", INTERPRETER),
    # NAME+=VALUE
    ("BASH_ENV+=/dev/stdin bash ./x.sh", "command uses BASH_ENV"),
    ("ENV+=/dev/stdin sh -i ./x.sh", "command uses ENV"),
    ("PERL5OPT+=-d perl x.pl", "command uses PERL5OPT"),
    # long options that take a value, listed or not, whole or shortened
    ("unshare -r --propagation slave", STARTS), ("unshare -U --map-user 0", STARTS),
    ("unshare --setu 0 -r", STARTS), ("chroot --user 0:0 /", STARTS),
    ("xargs --max-a 2 env", PAYLOAD_IN_XARGS), ("xargs --process-slot-var X nice",
                                                 PAYLOAD_IN_XARGS),
    ("node --unhandled-rejections strict", INTERPRETER), ("node --inspect-port 9229", INTERPRETER),
    ("node --disable-proto delete", INTERPRETER),
    # xargs giving an interpreter its program
    ("xargs -n1 python3 -c", PAYLOAD_IN_XARGS), ("xargs -n1 node -e", PAYLOAD_IN_XARGS),
    ("xargs perl -e", PAYLOAD_IN_XARGS),
    # runners, shells and interpreters outside the tables
    ("/lib64/ld-linux-x86-64.so.2 /bin/sh", STDIN), ("choom -n 0 sh", STDIN),
    ("ssh-agent sh", STDIN), ("dbus-run-session sh", STDIN), ("systemd-run --shell", STARTS),
    ("tclsh", INTERPRETER), ("hush", STDIN), ("bash-static", STDIN),
]


# The sixth red team's, on the fifth's fixes (each ran the payload in real bash).
SIXTH_BYPASSES = [
    # env -S's string is more of env's own words
    ("env -S'-i sh'", STDIN), ("env -S '-- sh'", STDIN), ("env --split-string='-u X sh'", STDIN),
    # declare and its kin re-read an array value, build a variable's name, or map a program
    ("declare -a 'x=(<(sh))'", "command uses declare"), ("readonly -a 'x=(<(sh))'",
                                                         "command uses readonly"),
    ("f() ( local -a 'x=(<(sh))' ); f", "command uses local"),
    ("declare -u r=bash_env; declare -n r", "command uses declare"),
    ("BASH_CMDS=(); x", "command uses BASH_CMDS"), ("export PS4[0]=x", "command uses PS4"),
    ("SHELL=tclsh flock lk -c x", "command uses SHELL"),
    # node and perl read more options after their program
    ("node -e 1 -i", INTERPRETER), ("node --interactive -e 1", INTERPRETER),
    ("node -p 1 --interactive", INTERPRETER), ("perl -e 1 -d", INTERPRETER),
    ("perl -ld -e 1", INTERPRETER), ("perl -0d -e 1", INTERPRETER),
    # tclsh reads stdin after any option but -encoding
    ("tclsh -encoding utf-8", INTERPRETER), ("tclsh -- x.tcl", INTERPRETER),
    ("tclsh -x x.tcl", INTERPRETER),
    # strace's output to a command; watch and ssh join their words into a command line
    ("strace -o'|sh<&3' true 3<&0", STDIN), ("strace -o '!sh<&3' true 3<&0", STDIN),
    ("watch -n 1 true '&&' sh", STDIN), ("ssh host 'true && sh'", STDIN),
    # the seventh: coproc's name before a compound command; a glued value that is stdin
    ("(coproc w if bash <&3; then :; fi; wait) 3<&0", STDIN),
    ("(coproc w while python3 <&3; do break; done) 3<&0", INTERPRETER),
    ("coproc w until . /dev/fd/3; do break; done", "command uses . (source)"),
    ("ruby -r/dev/stdin x.rb", INTERPRETER),
]


@pytest.mark.parametrize("command, reason",
                         BYPASSES + FOURTH_BYPASSES + FIFTH_BYPASSES + SIXTH_BYPASSES)
def test_the_red_teams_bypasses_are_rejected(command, reason):
    assert magihook.preflight_rejection(command, True) == reason


def bash_runs_payload(command, cwd):
    """Whether real bash, given COMMAND with a payload on stdin as magihook gives it to a hook,
    runs that payload as commands: the payload makes a file only a shell would make."""
    subprocess.run([BASH, "-c", command], cwd=str(cwd), input=b": > payload-$((6*7))\n",
                   capture_output=True, timeout=60)
    return (cwd / "payload-42").exists()


def test_command_strings_are_read_three_deep_then_refused():
    import shlex

    command = "sh"
    for _ in range(4):  # `env -S sh` is no string yet: the other three are
        command = "env -S " + shlex.quote(command)
    assert magihook.preflight_rejection(command, True) == STDIN
    assert magihook.preflight_rejection("env -S " + shlex.quote(command), True) == (
        "command nests command strings too deeply")


# The bypasses above made of programs every Linux machine has, run by real bash.
REAL = ["env -u 2>err X sh", "stdbuf -o 2>err L sh", "env -u timeout sh", "timeout -vk 1 5s sh",
        "timeout --sig KILL 5s sh", "timeout 2>err 5s sh", "bash -eo pipefail", ">|out sh",
        "true;>x sh", "env -u X -Ssh", "/usr/bin/nice sh", "bash /dev/stdin",
        "sh /proc/self/fd/0", "/proc/self/exe", "/bin/s[h]", "find . -maxdepth 0 -exec sh \\;",
        "setarch %s sh" % platform.machine(), "flock lock -c sh", "chrt -o 0 sh"]


@pytest.mark.parametrize("command", REAL)
def test_each_bypass_runs_the_payload_in_real_bash(tmp_path, command):
    # The probe itself: each rejection matters, as bash really runs the payload.
    assert bash_runs_payload(command, tmp_path)
    assert magihook.preflight_rejection(command, True) is not None


@pytest.mark.parametrize("command", [
    "find . -name x", "ls .", "./a.sh . b", "./a.sh 'two . words'", "bash ./x.sh",
    "bash -e ./x.sh", "sh scripts/a.sh arg", "./notify.sh bash", "./a.sh --exec-mode=x",
    "./hook.sh # it's fine", "python3 scripts/audit.py -c config.json", "ls -la ./x",
    "bash ./x.sh -c y", "bash -o posix ./x.sh", "bash ./x 2>&1 | tee log", "bash -x ./a.sh 2>err",
    "timeout 5 ./x.sh", "timeout -s KILL 5 sh ./x.sh", "timeout 5 bash -e ./x.sh", "env -S './x.sh a'",
    "env -S 'sh ./x.sh'", "env -i ./x.sh", "./sh-timeout.sh 5 sh",
    "sudo -u root ./x.sh bash", "nice -n 5 ./notify.sh bash", "env -i -- ./x.sh bash",
    "env -u X ./x.sh sh", "bash -eo pipefail ./x.sh", "python3 x.py", "python3 -u x.py",
    "python3 -c 'import x'", "python3 -m pkg", "python3 -W ignore x.py", "perl -Ilib x.pl",
    "perl -e 'print 1'", "node -r ts-node/register x.ts", "ruby x.rb", "sudo -u sam ./x.sh",
    "ionice -c3 ./x.sh", "flock lock ./x.sh", "chrt 1 ./x.sh", "xargs -0 ./x.sh",
    "find . -name x -exec ./check.sh ';'", "[ -f x ] && ./x.sh", "./x.sh 2>err", "5 sh",
    "./x.sh >|out", "command -v jq >/dev/null && ./x.sh", "PATTERN='*.py' ./lint.sh",
    "GLOB=\"src/**\" ./x.sh", "unshare -r ./x.sh", "setarch x86_64 -R ./x.sh", "ssh host ./x.sh",
    "xargs -0 nice -n 5 ./x.sh", "node --no-warnings x.js", "env A=1 B=2 ./x.sh",
    "chroot / ./x.sh", "python3 -X dev ./x.py", "timeout -k 5 10 python3 x.py",
    # version and help options exit without reading stdin
    "python3 --version", "python3 -V", "node --version", "node -v", "perl -v", "bash --version",
    "node --test", "node --env-file .env x.js", "perl -e 'print 1' x", "perl -lne 'print' f",
    "tclsh x.tcl", "tclsh -encoding utf-8 x.tcl", "python3 -c 'import x' -i", "strace -o log ./x.sh",
    "watch -n 5 ./x.sh", "export A=1; ./x.sh",
])
def test_ordinary_commands_still_pass(command):
    assert magihook.preflight_rejection(command, True) is None


def test_pushd_runs_as_cd_does_in_bash(tmp_path):
    # The probe itself: bash really runs these directory changes, so they must not pass.
    for command in ("pushd ..", "true; pushd .."):
        assert bash_runs_cd(command, tmp_path)
        assert magihook.preflight_rejection(command, True) == "command uses pushd"


def test_a_rejected_bypass_is_a_runner_failure_and_runs_nothing(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    write_script(project, "mark.sh", "#!/bin/sh\ntouch marked\n")
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "h", "command": "a=#;./mark.sh;cd .."}]})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config),
                     event=bash_event(), cwd=project)
    failed = result.events("hook_lifecycle")[1]["payload"]
    assert (failed["status"], failed["category"], failed["message"]) == (
        "failed", "runner", "command rejected by preflight: command uses cd")
    assert not (project / "marked").exists()


def test_no_accepted_command_makes_bash_change_directory_or_reparse(tmp_path):
    # Seeded random commands made of the pieces the bypasses were made of: of those preflight
    # accepts, real bash must run none of cd, pushd, popd, eval, or a shell (functions stand in).
    import random

    pieces = ["c", "d", "cd", " cd", "cd ", " ", ";", "&", "|", "=", ":", "@", "#", "'", '"',
              "\\", "(", ")", "<", ">", "a", "x", "''", '""', "-", "eval ", "pushd ", "c\\d",
              "bash -c ", "sh -c ", "-C.."]
    chooser = random.Random(15)
    accepted = []
    while len(accepted) < 150:
        command = "".join(chooser.choice(pieces) for _ in range(chooser.randint(2, 8)))
        if magihook.preflight_rejection(command, True) is None:
            accepted.append(command)
    probe = "".join("%s() { echo CD-RAN; }; " % name
                    for name in ("cd", "pushd", "popd", "eval", "bash", "sh"))
    for command in accepted:
        completed = subprocess.run([BASH, "-c", probe + command], cwd=str(tmp_path),
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=60)
        assert "CD-RAN" not in completed.stdout, command


# A hang detector, not a speed check: CPU time, and a bound far past any linear pass.  Each
# shell, env or timeout word once read the rest of the command again (quadratic; figures in
# bench/README.md).
HANG_CPU_SECONDS = 20


@pytest.mark.parametrize("word", ["sh ", "env ", "timeout 5 ", "'sh' ", "sudo sh ", "sh -x ",
                                  "env -o sh ", "./x sh -o ", "nice -n ", "find -exec ",
                                  "env -S'env -S ", "x -Ssh -o ", "xargs nice -n ",
                                  "unshare -G ", "setarch x ", "env -x/printf ",
                                  " -x ".join(sorted(magihook._RUNNERS)) + " -x 1 "])
def test_preflight_of_a_long_command_of_shell_words_stays_linear(word):
    import time

    command = (word * (256 * 1024 // len(word)))
    start = time.process_time()
    magihook.preflight_rejection(command, True)
    assert time.process_time() - start < HANG_CPU_SECONDS


def test_no_accepted_command_runs_the_payload_in_real_bash(tmp_path):
    # Seeded random commands of runners, shells, options, values, descriptors and redirections:
    # of those preflight accepts, real bash must run none that reads the payload as commands.
    import random

    words = ["env", "timeout", "nice", "stdbuf", "/usr/bin/nice", "find", ".", "-exec", "\\;",
             "-u", "-o", "-eo", "-vk", "-S", "-i", "X", "5s", "1", "2>err", ">|out", "sh",
             "bash", "pipefail", "-Ssh", "--", "-c", "./x.sh", ";", "|", "/dev/stdin"]
    chooser = random.Random(4)
    accepted = set()
    while len(accepted) < 300:
        command = " ".join(chooser.choice(words) for _ in range(chooser.randint(1, 6)))
        if magihook.preflight_rejection(command, True) is None:
            accepted.add(command)
    for index, command in enumerate(sorted(accepted)):
        cwd = tmp_path / str(index)
        cwd.mkdir()
        assert not bash_runs_payload(command, cwd), command


def test_command_strings_in_command_strings_stay_linear():
    # Each string was read two ways and four deep: 256 KiB took 4 s.
    import shlex
    import time

    command = ("a|" * 131072)[:262144 - 160]
    for _ in range(4):
        command = shlex.quote(command)
    start = time.process_time()
    magihook.preflight_rejection(command, True)
    assert time.process_time() - start < HANG_CPU_SECONDS


@pytest.mark.parametrize("head, letters", [("x -", "a"), ("env -", "i"), ("x -", "sh")],
                         ids=["letters", "env", "shells"])
def test_preflight_of_a_long_option_cluster_stays_linear(head, letters):
    # Each rest of a cluster was a value of its own: 64 KiB took 7 s, 256 KiB ran out of memory.
    import time

    command = head + letters * (256 * 1024 // len(letters))
    start = time.process_time()
    magihook.preflight_rejection(command, True)
    assert time.process_time() - start < HANG_CPU_SECONDS
