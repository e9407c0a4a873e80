"""`mpe report` on the per-process files reproduces the finalize report, text and JSON; --rank N
reports one process; bad input is one clear error."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mpitest  # noqa: E402

NP = 4
mpe = os.path.join(mpitest.BUILD, "bin", "mpe")
r = mpitest.run(NP, [mpitest.program("halo2d"), "5"], tools=("time",), env={"MPE_LOGFILE_PREFIX": "halo"})
files = [os.path.join(r.workdir, "halo.mpetime.%d.txt" % i) for i in range(NP)]
with open(os.path.join(r.workdir, "halo.mpetime.txt")) as f:
    finalize_text = f.read()
with open(os.path.join(r.workdir, "halo.mpetime.json")) as f:
    finalize_json = f.read()

text = subprocess.run([mpe, "report"] + files[::-1], capture_output=True, text=True)
mpitest.expect(text.returncode == 0, "mpe report failed: %s" % text.stderr)
mpitest.expect_eq(text.stdout, finalize_text, "mpe report text")
js = subprocess.run([mpe, "report", "--json"] + files, capture_output=True, text=True)
mpitest.expect_eq(js.stdout, finalize_json, "mpe report --json")
doc = json.loads(js.stdout)
mpitest.expect_eq(doc["ranks"], NP, "JSON ranks")
waitall = [x for x in doc["routines"] if x["name"] == "MPI_Waitall"][0]
mpitest.expect_eq(waitall["calls"], 5 * NP, "JSON MPI_Waitall calls")
for needle in ("Command :", "Hosts   :", "MPI     :", "Timer   :", "MPI time per rank", "Routines by aggregate time",
               "Routines by bytes", "Imb%", "MPI_Isend"):
    mpitest.expect(needle in finalize_text, "report lacks %r" % needle)

one = subprocess.run([mpe, "report", "--rank", "2"] + files, capture_output=True, text=True)
mpitest.expect(one.returncode == 0 and "rank 2 of 4" in one.stdout and "MPI_Waitall" in one.stdout,
               "mpe report --rank 2: %s %s" % (one.stdout, one.stderr))

bad_path = os.path.join(r.workdir, "bad.txt")
with open(bad_path, "w") as f:
    f.write("hello\n")
bad = subprocess.run([mpe, "report", bad_path], capture_output=True, text=True)
mpitest.expect(bad.returncode != 0 and "not a libmpetime per-process file" in bad.stderr, "bad file: %r" % bad.stderr)
with open(files[1]) as f:
    truncated = f.read()[:-20]
with open(bad_path, "w") as f:
    f.write(truncated)
bad = subprocess.run([mpe, "report", bad_path], capture_output=True, text=True)
mpitest.expect(bad.returncode != 0 and bad.stderr.count("\n") == 1, "truncated file: %r" % bad.stderr)
dup = subprocess.run([mpe, "report", files[0], files[0]], capture_output=True, text=True)
mpitest.expect(dup.returncode != 0 and "appears twice" in dup.stderr, "duplicate rank: %r" % dup.stderr)
mpitest.cleanup(r)
print("time report: mpe report reproduces the finalize report from the per-process files")
