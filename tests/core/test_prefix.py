"""MPE_LOGFILE_PREFIX may include a directory, absolute or relative, for every tool; MPE_TMPDIR
holds only liblog's per-rank temporary files (issue 16, item 2)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mpitest  # noqa: E402

ALL = ("time", "log")
RING = [mpitest.program("ring"), "2"]


def expect_outputs(directory, name, what):
    for suffix in (".mpelog", ".mpetime.txt", ".mpetime.json", ".mpetime.0.txt", ".mpetime.3.txt"):
        path = os.path.join(directory, name + suffix)
        mpitest.expect(os.path.exists(path), "%s: no %s (files there: %r)" % (what, path, sorted(os.listdir(directory))))


def outputs_in(directory):
    return sorted(f for f in os.listdir(directory) if ".mpelog" in f or ".mpetime" in f)


# An absolute directory in the prefix: the outputs go there, none to the working directory.
target = tempfile.mkdtemp(prefix="mpe-prefix-abs-")
os.makedirs(os.path.join(target, "sub"))
r = mpitest.run(4, RING, tools=ALL, env={"MPE_LOGFILE_PREFIX": os.path.join(target, "sub", "run")})
expect_outputs(os.path.join(target, "sub"), "run", "absolute prefix")
mpitest.expect_eq(outputs_in(r.workdir), [], "absolute prefix: outputs in the working directory")
mpitest.expect("liblog wrote %s/sub/run.mpelog" % target in r.stderr, "absolute prefix: the line names the file: %r" % r.stderr)
mpitest.cleanup(r)

# A relative directory: relative to the working directory. Temporary files go to MPE_TMPDIR,
# named from the prefix's file name.
work = tempfile.mkdtemp(prefix="mpe-prefix-rel-")
os.makedirs(os.path.join(work, "out"))
tmp = tempfile.mkdtemp(prefix="mpe-prefix-tmp-")
r = mpitest.run(4, RING, tools=ALL, workdir=work,
                env={"MPE_LOGFILE_PREFIX": "out/run7", "MPE_TMPDIR": tmp, "MPE_DELETE_LOCALFILE": "no"})
expect_outputs(os.path.join(work, "out"), "run7", "relative prefix")
mpitest.expect_eq(sorted(os.listdir(tmp)), ["run7.mpelog.%d.part" % k for k in range(4)], "MPE_TMPDIR's files")
mpitest.expect_eq(outputs_in(work), [], "relative prefix: outputs beside out/")
mpitest.cleanup(r)

# A directory that does not exist: one line saying so, and the outputs in the working directory.
r = mpitest.run(4, RING, tools=ALL, env={"MPE_LOGFILE_PREFIX": "/nonexistent/mpe/run"})
expect_outputs(r.workdir, "run", "missing directory")
lines = [line for line in r.stderr.splitlines() if "does not exist or is not writable" in line]
mpitest.expect(len(lines) >= 1 and "/nonexistent/mpe" in lines[0], "missing directory: %r" % r.stderr)
mpitest.cleanup(r)
for d in (target, tmp):
    import shutil  # noqa: E402

    shutil.rmtree(d, ignore_errors=True)
print("prefix: absolute and relative directories for every tool; MPE_TMPDIR for temporary files only")
