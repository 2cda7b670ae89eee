"""Throughput of magihook.redact_credentials, in MiB of UTF-8 per CPU second.

Usage: python3 bench_redact.py [--quick] [--base REV]

Measures time.process_time of this process (other load on a shared machine does not count) on
every text kind of corpus.py without secrets, then the time for 1, 4 and 16 MiB of mixed text
with a credential line every ~2 KiB (linearity check), then one short path string in a fresh
interpreter (what a one-hook call pays: compiling only the rules its leads need).

With --base REV, magihook.py at git revision REV and this checkout's are measured side by side,
interleaved (each figure the best of rounds that alternate the two): each kind's throughput,
texts with secrets, 2,000 texts of 8 KiB in one process, and in fresh interpreters (cached
bytecode) the import and the first call on a short path and on a 6 KB page (medians).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import corpus  # noqa: E402

import magihook  # noqa: E402

MIB = 1024 * 1024
TARGET = 50.0       # MiB/s (issue 14)


def rate(text, repeat=5):
    size = len(text.encode("utf-8"))
    best = None
    for _ in range(repeat):
        start = time.process_time()
        magihook.redact_credentials(text)
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    return size / MIB / best, best


SHORT = """import time, sys
sys.path.insert(0, %r)
import magihook
start = time.process_time()
magihook.redact_credentials("/home/dev/my_project/src/some-file.name_v2.py")
print((time.process_time() - start) * 1000)
"""


def main():
    quick = "--quick" in sys.argv
    size = 2 * MIB if quick else 4 * MIB
    print("no secrets (%d MiB each, best of 5, CPU time):" % (size // MIB))
    for kind in list(corpus.KINDS) + ["mixed"]:
        text = corpus.text(kind, size)
        changed = magihook.redact_credentials(text) != text
        mibs, _ = rate(text)
        print("  %-9s %7.1f MiB/s%s%s" % (kind, mibs, "" if mibs >= TARGET else "  (below %d)" % TARGET,
                                         "  (CHANGED!)" if changed else ""))
    print("with secrets (one every ~2 KiB, mixed text):")
    for mib in (1, 4, 16):
        text, _ = corpus.with_secrets(corpus.text("mixed", mib * MIB, seed=mib))
        mibs, best = rate(text, repeat=2 if mib == 16 else 5)
        print("  %2d MiB  %6.3f s  %7.1f MiB/s" % (mib, best, mibs))
    runs = [float(subprocess.run([sys.executable, "-c", SHORT % os.path.dirname(HERE)], check=True,
                                 capture_output=True, text=True).stdout) for _ in range(5)]
    print("one short path string in a fresh interpreter: %.2f ms CPU (best of 5)" % min(runs))


def _best_pair(base, new, text, rounds):
    best = [None, None]
    for _ in range(rounds):
        for index, module in enumerate((base, new)):
            start = time.process_time()
            module.redact_credentials(text)
            elapsed = time.process_time() - start
            best[index] = elapsed if best[index] is None else min(best[index], elapsed)
    return best


def _many_short(module, texts):
    start = time.process_time()
    for text in texts:
        module.redact_credentials(text)
    return time.process_time() - start


FIRST = """import sys, time
sys.path.insert(0, %r)
start = time.process_time()
import %s as m
imported = time.process_time()
m.redact_credentials(%r)
print((imported - start) * 1000, (time.process_time() - imported) * 1000)
"""


def _first_calls(folder, names, text, runs):
    figures = {name: ([], []) for name in names}
    for _ in range(runs):
        for name in names:
            out = subprocess.run([sys.executable, "-c", FIRST % (folder, name, text)], check=True,
                                 capture_output=True, text=True).stdout.split()
            figures[name][0].append(float(out[0]))
            figures[name][1].append(float(out[1]))
    return {name: (statistics.median(a), statistics.median(b)) for name, (a, b) in figures.items()}


def compare(rev, quick):
    import importlib.util
    source = subprocess.run(["git", "-C", os.path.dirname(HERE), "show", "%s:magihook.py" % rev], check=True,
                            capture_output=True, text=True).stdout
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "magihook_base.py"), "w", encoding="utf-8") as f:
        f.write(source)
    with open(os.path.join(os.path.dirname(HERE), "magihook.py"), encoding="utf-8") as f:
        new_source = f.read()
    with open(os.path.join(folder, "magihook_new.py"), "w", encoding="utf-8") as f:
        f.write(new_source)
    sys.path.insert(0, folder)
    base = importlib.import_module("magihook_base")
    new = magihook
    size = 2 * MIB if quick else 4 * MIB
    rounds = 3 if quick else 5
    print("MiB/s (CPU), base %s / this checkout, %d MiB each, best of %d interleaved:" % (rev, size // MIB, rounds))
    for kind in list(corpus.KINDS) + ["mixed"]:
        text = corpus.text(kind, size)
        b, n = _best_pair(base, new, text, rounds)
        mib = len(text.encode("utf-8")) / MIB
        print("  %-9s %7.1f %7.1f" % (kind, mib / b, mib / n))
    print("with secrets (one every ~2 KiB, mixed text), seconds:")
    for mib in (1, 4):
        text, _ = corpus.with_secrets(corpus.text("mixed", mib * MIB, seed=mib))
        b, n = _best_pair(base, new, text, rounds)
        print("  %2d MiB  %6.3f %6.3f" % (mib, b, n))
    texts = [corpus.with_secrets(corpus.text("mixed", 8192, seed=i), every=4096, seed=i)[0] for i in range(2000)]
    for module in (base, new):
        _many_short(module, texts[:200])       # both past any first-use compiling
    pair = [[], []]
    for _ in range(3):
        for index, module in enumerate((base, new)):
            pair[index].append(_many_short(module, texts))
    print("2,000 texts of 8 KiB in one process (after 200 first), s: %.3f %.3f" % (min(pair[0]), min(pair[1])))
    runs = 5 if quick else 11
    _first_calls(folder, ["magihook_base", "magihook_new"], "x", 1)      # caches the bytecode
    page = corpus.text("mixed", 6000, seed=3)
    for label, text in (("short path", "/home/dev/my_project/src/some-file.name_v2.py"), ("6 KB page", page)):
        figures = _first_calls(folder, ["magihook_base", "magihook_new"], text, runs)
        print("fresh interpreter, %s (median of %d), import / first call ms: base %.1f / %.2f, new %.1f / %.2f" % (
            label, runs, *figures["magihook_base"], *figures["magihook_new"]))


if __name__ == "__main__":
    if "--base" in sys.argv:
        compare(sys.argv[sys.argv.index("--base") + 1], "--quick" in sys.argv)
    else:
        main()
