"""Golden test: mpigen.py on a small fake mpi.h, and routines.py, must emit exactly the checked-in files.
Run with --update to rewrite them after an intended change (then review the diff)."""
import filecmp
import os
import subprocess
import sys
import tempfile

gen, golden = sys.argv[1], sys.argv[2]
update = "--update" in sys.argv
out = tempfile.mkdtemp(prefix="mpigen-")
subprocess.run([sys.executable, gen, "--header", os.path.join(golden, "fake_mpi.h"),
                "--table", os.path.join(golden, "table.tsv"), "--exported", os.path.join(golden, "exported.txt"),
                "--outdir", out], check=True)
# routines.py (the offline routine table) on the same table.
subprocess.run([sys.executable, os.path.join(os.path.dirname(gen), "routines.py"), "--table",
                os.path.join(golden, "table.tsv"), "--out", os.path.join(out, "routine_table.cpp")], check=True)
failed = []
for name in ("mpe/calls.h", "calls_info.cpp", "wrapper_bodies.h", "wrappers_c.cpp", "wrappers_solo.cpp",
             "wrappers_f.cpp", "wrapped.txt", "stack_c.cpp",
             "stack_f.cpp", "routine_table.cpp"):
    expected = os.path.join(golden, "expected", name.replace("/", "_"))
    if update:
        os.makedirs(os.path.dirname(expected), exist_ok=True)
        with open(os.path.join(out, name)) as src, open(expected, "w") as dst:
            dst.write(src.read())
    elif not filecmp.cmp(os.path.join(out, name), expected, shallow=False):
        subprocess.run(["diff", "-u", expected, os.path.join(out, name)])
        failed.append(name)
if failed:
    sys.exit("generator output differs from golden files: " + ", ".join(failed))
print("generator: all outputs match the golden files")
