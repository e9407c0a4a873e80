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
