"""MPE_QUIET=1 and `mpe run --quiet`: no informational line from any tool, the program's output
unchanged, the outputs still written; a line about lost data still prints (issue 16, item 1)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mpitest  # noqa: E402

ALL = ("time", "umq", "log")


def tool_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("mpe-tools:")]


plain = mpitest.run(4, [mpitest.program("ring"), "3"])
loud = mpitest.run(4, [mpitest.program("ring"), "3"], tools=ALL)
mpitest.expect(any("liblog wrote" in line for line in tool_lines(loud.stderr)) and
               any("libmpetime: report in" in line for line in tool_lines(loud.stderr)),
               "without MPE_QUIET the tools say what they wrote: %r" % loud.stderr)

quiet = mpitest.run(4, [mpitest.program("ring"), "3"], tools=ALL, env={"MPE_QUIET": "1"})
mpitest.expect_eq(tool_lines(quiet.stderr), [], "tool lines under MPE_QUIET=1")
mpitest.expect_eq(quiet.stdout, plain.stdout, "the program's output under MPE_QUIET=1")
for name in ("ring.mpelog", "ring.mpetime.txt", "ring.mpetime.json"):
    mpitest.expect(os.path.exists(os.path.join(quiet.workdir, name)), "%s written under MPE_QUIET=1" % name)

# Lost data still says so: an output directory that does not exist.
lost = mpitest.run(4, [mpitest.program("ring"), "3"], tools=("log", "time"),
                   env={"MPE_QUIET": "1", "MPE_TMPDIR": "/nonexistent/mpe-quiet"})
mpitest.expect_eq(lost.stdout, plain.stdout, "the program's output when the tools cannot write")
mpitest.expect(len(tool_lines(lost.stderr)) > 0, "a lost-data line under MPE_QUIET=1: %r" % lost.stderr)

# `mpe run --quiet` passes the setting to the ranks through the launcher.
mpe = os.path.join(mpitest.BUILD, "bin", "mpe")
launcher = [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + ["-n", "4", mpitest.program("ring"), "3"]
r = subprocess.run([mpe, "run", "--quiet", "--time", "--umq", "--log", "--"] + launcher, cwd=quiet.workdir,
                   capture_output=True, text=True, timeout=120)
mpitest.expect(r.returncode == 0, "mpe run --quiet failed: %s %s" % (r.stdout, r.stderr))
mpitest.expect_eq(tool_lines(r.stderr), [], "tool lines under mpe run --quiet")
mpitest.expect_eq(r.stdout, plain.stdout, "the program's output under mpe run --quiet")
for run in (plain, loud, quiet, lost):
    mpitest.cleanup(run)
print("quiet: no informational lines under MPE_QUIET=1 or mpe run --quiet; lost data still reported")
