"""The floor under redact_credentials' speed: what Python's own primitives cost before anything
is judged, against issue 14's budgets (50 MiB/s = 20 ms of CPU a MiB; a 1 MiB after_assistant
call within 25 ms of a 1 KiB one).

Usage: python3 bench/redaction_floor.py [--quick]   (--quick: 256 KiB texts, a smoke run)

For each text kind of corpus.py, in the same process, one figure after another (this machine's speed
swings ~2x within minutes: compare the columns of one row, not rows of two runs):
  redact    redact_credentials on the text, ms a MiB (best of N);
  scans     one engine pass per literal the detection looks for and the text holds (the pass's
            pattern made impossible: its literal then a NUL), nothing found: what the scanning
            alone costs; passes: how many;
  1 pass    the same for one literal, and `find` for the same literal with str.find;
  class     one pass led by a character set of every lead's first character (the other way to
            look for several literals in one pass), nothing found;
  memchr    str.find of one absent character (what the one-character gates cost).
Then, in fresh processes: compiling every pattern a long text needs (a 1 MiB call pays it).
"""
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import corpus  # noqa: E402

import magihook  # noqa: E402

MIB = 1024 * 1024
BUDGET_MS = 20.0     # 50 MiB/s
# The literals the syntax passes start with (bench-side copy: element, Kubernetes kind, command
# flags, `config set`, .netrc, the three query names, CLI flags, a bare bearer, user:pass@).
SYNTAX_LITERALS = ("</", "kind", " -", "set", "password", "sig", "code=", "key=", "-", "bearer", "://")


def literals():
    names = [literal for stems in magihook._stem_literals().values() for literal in stems]
    return names, list(magihook._PREFIXED_LEADS), list(SYNTAX_LITERALS)


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def row(kind, repeat, size):
    text = corpus.text(kind, size)
    low = magihook._lowered(text)
    mib = len(text.encode("utf-8")) / MIB
    names, leads, syntax = literals()
    # One engine pass per name lead (its stems share the first character), per vendor lead, and
    # per syntax literal, as the detection runs them; not one whose literal the text lacks.
    heads = [head for head in sorted({n[0] for n in names}) + leads + syntax if head in low or head in text]
    impossible = [re.compile(re.escape(head) + "\x00") for head in heads]
    first = "".join(sorted({head[0] for head in heads}))
    klass = re.compile("[%s]\x00" % re.escape(first))
    one = re.compile("key\x00")
    work = {"redact": lambda: magihook.redact_credentials(text),
            "scans": lambda: [p.search(low) for p in impossible],
            "1 pass": lambda: one.search(low),
            "find": lambda: low.find("key\x00"),
            "class": lambda: klass.search(low),
            "memchr": lambda: low.find("\x00")}
    return len(heads), {name: best(fn, repeat) * 1000 / mib for name, fn in work.items()}


COMPILE = """import sys, time
sys.path.insert(0, %r)
import magihook as m
start = time.process_time()
for lead in m._PREFIXED_LEADS:
    m._prefixed_re(lead)
for lead in m._named_leads():
    m._named_lead_re(lead)
m._value_re()
m.redact_credentials("x" * 20000)     # the syntax passes' patterns, on a long text
print((time.process_time() - start) * 1000)
"""


def main():
    quick = "--quick" in sys.argv
    repeat, size = (2, MIB // 4) if quick else (7, 2 * MIB)
    print("ms of CPU a MiB (budget %.0f ms = 50 MiB/s), %d KiB of each kind, best of %d:"
          % (BUDGET_MS, size // 1024, repeat))
    print("  %-9s %7s %7s %7s %7s %7s %7s %7s" % ("kind", "redact", "scans", "passes", "1 pass", "find", "class",
                                                 "memchr"))
    for kind in list(corpus.KINDS) + ["mixed"]:
        count, f = row(kind, repeat, size)
        print("  %-9s %7.1f %7.1f %7d %7.2f %7.2f %7.1f %7.3f" % (
            kind, f["redact"], f["scans"], count, f["1 pass"], f["find"], f["class"], f["memchr"]))
    runs = [float(subprocess.run([sys.executable, "-S", "-c", COMPILE % os.path.dirname(HERE)], check=True,
                                 capture_output=True, text=True).stdout) for _ in range(2 if quick else 5)]
    print("compiling every pattern of a long text, fresh process: %.1f ms CPU (best of %d; budget of "
          "a 1 MiB call over a 1 KiB one: 25 ms)" % (min(runs), len(runs)))


if __name__ == "__main__":
    main()
