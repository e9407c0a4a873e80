"""The CPython 3.11 layout core/src/python_frames.cpp reads (its `constexpr ... = N;  // NAME`
lines) equals what python_layout (built against the installed Python.h) prints for each NAME."""
import re
import subprocess
import sys

layout, source = sys.argv[1], sys.argv[2]
printed = dict(line.rsplit(" ", 1) for line in subprocess.run([layout], capture_output=True, text=True,
                                                              check=True).stdout.splitlines())
assumed = {}
with open(source) as f:
    for line in f:
        m = re.match(r"constexpr \w+ k\w+ = (\d+);\s+// (\S+)$", line.strip())
        if m:
            assumed[m.group(2)] = m.group(1)
failures = []
if not printed.get("PY_VERSION", "").startswith("3.11."):
    failures.append("the headers are Python %s; the reader reads 3.11" % printed.get("PY_VERSION"))
if len(assumed) < 20:
    failures.append("found only %d layout constants in %s" % (len(assumed), source))
for name, value in sorted(assumed.items()):
    if printed.get(name) != value:
        failures.append("%s: the reader assumes %s, the headers say %s" % (name, value, printed.get(name)))
for name in sorted(set(printed) - set(assumed) - {"PY_VERSION"}):
    failures.append("%s printed by python_layout but not in the reader" % name)
if failures:
    sys.exit("FAIL: " + "\n".join(failures))
print("python_layout: %d offsets and constants of CPython %s agree" % (len(assumed), printed["PY_VERSION"]))
