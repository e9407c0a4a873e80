"""Interop group errors: wrong options, corrupt OTF2 archives and logs give one line and no output;
an OTF2 archive that cannot be written spares the run."""
import os
import shutil

import mpitest
from interop_common import mpe, run_logged


def errors():
    r, log, archive = run_logged("pingpong", 2, ["8", "10"])
    work = r.workdir
    # A wrong option: one line, non-zero, nothing written.
    p = mpe("convert", log, "--to", "vampir", os.path.join(work, "x"), check=False)
    mpitest.expect(p.returncode != 0 and not os.path.exists(os.path.join(work, "x")), "--to vampir accepted")
    # OTF2 -> OTF2 and mpelog -> mpelog are refused.
    p = mpe("convert", archive, "--to", "otf2", os.path.join(work, "y"), check=False)
    mpitest.expect(p.returncode != 0 and "already OTF2" in p.stderr, "otf2 -> otf2: %s" % p.stderr)
    # A corrupt archive: an event file cut short and one overwritten with garbage.
    bad = os.path.join(work, "bad")
    shutil.copytree(archive, bad)
    evt = sorted(f for f in os.listdir(os.path.join(bad, "traces")) if f.endswith(".evt"))
    with open(os.path.join(bad, "traces", evt[0]), "r+b") as f:
        f.truncate(100)
    with open(os.path.join(bad, "traces", evt[1]), "r+b") as f:
        f.seek(64)
        f.write(b"\xff" * 256)
    for cmd in (["convert", bad, "--to", "mpelog", os.path.join(work, "bad.mpelog")],
                ["convert", bad, "--to", "chrome", os.path.join(work, "bad.json")], ["stat", bad]):
        p = mpe(*cmd, check=False)
        mpitest.expect(p.returncode != 0, "mpe %s accepted a corrupt archive" % " ".join(cmd))
        mpitest.expect(len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("mpe: "),
                       "mpe %s: not one clear line:\n%s" % (" ".join(cmd), p.stderr))
        mpitest.expect("Segmentation" not in p.stderr and p.returncode > 0, "crashed")
    leftovers = [f for f in os.listdir(work) if f.startswith("bad.") or ".tmp" in f or "scratch" in f]
    mpitest.expect_eq(leftovers, [], "partial output left after failures")
    # A garbage anchor.
    junk = os.path.join(work, "junk")
    os.mkdir(junk)
    with open(os.path.join(junk, "traces.otf2"), "w") as f:
        f.write("not an anchor\n")
    p = mpe("convert", junk, "--to", "mpelog", os.path.join(work, "junk.mpelog"), check=False)
    mpitest.expect(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1, "garbage anchor: %s" % p.stderr)
    # A corrupt .mpelog to OTF2 and Chrome: the reader's one-line error, no output.
    cut = os.path.join(work, "cut.mpelog")
    with open(log, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    for to, out in (("otf2", "cut-otf2"), ("chrome", "cut.json")):
        p = mpe("convert", cut, "--to", to, os.path.join(work, out), check=False)
        mpitest.expect(p.returncode != 0 and "truncated" in p.stderr and not os.path.exists(os.path.join(work, out)),
                       "truncated log -> %s: %s" % (to, p.stderr))
    # A bad MPE_LOG_FORMAT: reported, and the run still writes its .mpelog.
    r2 = mpitest.run(2, [mpitest.program("pingpong"), "8", "10"], tools=("log",),
                     env={"MPE_LOG_FORMAT": "otf3", "MPE_LOGFILE_PREFIX": "pp"})
    mpitest.expect("MPE_LOG_FORMAT='otf3'" in r2.stderr and os.path.exists(os.path.join(r2.workdir, "pp.mpelog")),
                   "bad MPE_LOG_FORMAT: %s" % r2.stderr)
    # An archive that cannot be written (its directory is a file): the program still ends well.
    r3 = mpitest.run(2, [mpitest.program("pingpong"), "8", "10"], tools=("log",), check=False,
                     env={"MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "pp"},
                     workdir=_with_blocker())
    mpitest.expect(r3.rc == 0, "an unwritable OTF2 archive made the program fail:\n%s" % r3.stderr)
    mpitest.expect("no OTF2 archive" in r3.stderr and os.path.exists(os.path.join(r3.workdir, "pp.mpelog")),
                   "unwritable archive: %s" % r3.stderr)
    mpitest.expect_eq(sorted(os.listdir(os.path.join(r3.workdir, "pp.otf2"))), ["keep"], "the user's directory")
    mpitest.expect_eq([f for f in os.listdir(r3.workdir) if ".tmp" in f], [], "temporary archive left")
    for x in (r, r2, r3):
        mpitest.cleanup(x)
    print("errors: wrong options, corrupt OTF2 and logs give one line and no output; OTF2 failures spare the run")


def _with_blocker():
    """A working directory where the archive's name is taken by a directory of the user's (not an
    OTF2 archive, so liblog must neither replace it nor fail the run). Root ignores permissions,
    so this is the failure a test can provoke here."""
    import tempfile
    d = tempfile.mkdtemp(prefix="mpetest-")
    os.mkdir(os.path.join(d, "pp.otf2"))
    with open(os.path.join(d, "pp.otf2", "keep"), "w") as f:
        f.write("x")
    return d
