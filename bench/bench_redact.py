"""Throughput of magihook.redact_credentials, in MiB of UTF-8 per CPU second.

Usage: python3 bench_redact.py [--quick]

Measures time.process_time of this process (other load on a shared machine does not count) on
every text kind of corpus.py without secrets, then the time for 1, 4 and 16 MiB of mixed text
with a credential line every ~2 KiB (linearity check), then one short path string in a fresh
interpreter (what a one-hook call pays: compiling only the rules its leads need).
"""
import os
import subprocess
import sys
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


if __name__ == "__main__":
    main()
