"""`mpe --version` names the MPI; `mpe coverage` reports 100%; `mpe run` preloads the tools."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mpitest  # noqa: E402

mpe = os.path.join(mpitest.BUILD, "bin", "mpe")
v = subprocess.run([mpe, "--version"], capture_output=True, text=True)
mpitest.expect(v.returncode == 0 and mpitest.MPI in v.stdout, "mpe --version: %r" % v.stdout)

cov = subprocess.run([mpe, "coverage", "--tool-library", os.path.join(mpitest.BUILD, "lib", "libmpenull.so")],
                     capture_output=True, text=True)
mpitest.expect(cov.returncode == 0, "mpe coverage failed: %s %s" % (cov.stdout, cov.stderr))
mpitest.expect("(100.0%)" in cov.stdout.splitlines()[2], "C coverage not 100%%: %s" % cov.stdout)
print(cov.stdout)

bad = subprocess.run([mpe, "run", "--", "true"], capture_output=True, text=True)
mpitest.expect(bad.returncode != 0 and "choose at least one tool" in bad.stderr, "mpe run without a tool: %r" % bad.stderr)
bad = subprocess.run([mpe, "--frobnicate"], capture_output=True, text=True)
mpitest.expect(bad.returncode != 0 and "frobnicate" in (bad.stderr + bad.stdout), "unknown option not named")
print("mpe cli: version, coverage and option errors behave")

# `mpe run` preloads the chosen tools into an unmodified, un-relinked program.
import tempfile  # noqa: E402

work = tempfile.mkdtemp(prefix="mpe-run-")
launcher = [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + ["-n", "4", mpitest.program("ring"), "5"]
r = subprocess.run([mpe, "run", "--time", "--umq", "--"] + launcher, cwd=work, capture_output=True, text=True,
                   env=dict(os.environ, MPE_LOGFILE_PREFIX="ringrun"), timeout=120)
mpitest.expect(r.returncode == 0, "mpe run failed: %s %s" % (r.stdout, r.stderr))
mpitest.expect("ring: laps=5 ranks=4 token=20" in r.stdout, "ring output under mpe run: %r" % r.stdout)
mpitest.expect(os.path.exists(os.path.join(work, "ringrun.mpetime.txt")), "no libmpetime report in %s" % os.listdir(work))
mpitest.expect(len([f for f in os.listdir(work) if f.startswith("ringrun.mpetime.") and f[-5:-4].isdigit()]) == 4,
               "expected one libmpetime file per rank: %s" % os.listdir(work))
print("mpe run: --time --umq preloaded into an unmodified ring on 4 ranks")
import shutil  # noqa: E402

shutil.rmtree(work, ignore_errors=True)
