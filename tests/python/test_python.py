"""Python programs under the tools (issue 41): every MPI call from Python is named by the Python
line that made it, in every tool, with exact counts per line.

- pyring.py (mpi4py, where it exists for this MPI: Debian's is built for Open MPI) on 2 ranks under
  `mpe run --time --log`: `mpe report --callsites` and `mpe print` give each marked line its true
  calls; mpelog's user state and event sit at the lines that logged them; liblog's OTF2 holds the
  calls as calling contexts; on 3 ranks, MPE_CALLSITE_DEPTH=2 adds the calling line, and libumq
  (threshold 0) names receive lines; liblive's `mpe top` names the line where a deadlocked ring
  hangs; a path with non-ASCII characters comes through whole.
- pythreads.py: two threads of one rank in MPI at once, each call at its own thread's line.
- samples/halo2d.py (mpi4py) on 4 ranks under all four tools: the same output as without them, and
  every message matched (liblog's matched count equals libmpetime's messages, both ends).
- ctypes_ring.py (MPI's C functions called through ctypes) on every MPI: the same exact lines; in a
  build with upshot, upshot's call-site table of its log.
- fake_python_main: an interpreter the tools cannot read gets one line, and its call keeps its C site.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "live"))
import mpitest  # noqa: E402
from mpitest import check, failures  # noqa: E402

PYTHON = "/usr/bin/python3"  # Debian's: python3-mpi4py is installed for it, not for a pyenv python
SAMPLES = os.path.join(HERE, "..", "..", "samples")


def marks(path):
    """{name: line} of the SITE:<name> comments of a source file."""
    out = {}
    with open(path) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"SITE:(\w+)", text)
            if m:
                out[m.group(1)] = n
    return out


def mpe_run(tools, np, argv, env=None, workdir=None, check_rc=True):
    """`mpe run --<tool>... -- mpiexec -n np PYTHON argv` in a fresh directory, as a user runs it."""
    workdir = workdir or tempfile.mkdtemp(prefix="mpetest-python-")
    env = dict(env or {}, MPE_MPI=mpitest.MPI, MPE_LOGFILE_PREFIX="py")
    launch = [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS
    if mpitest.MPI == "openmpi":  # Open MPI passes on only the variables named with -x
        for name in env:
            launch += ["-x", name]
    cmd = [mpitest.MPE_COMMAND, "run"] + ["--" + t for t in tools] + ["--"] + launch + ["-n", str(np), PYTHON] + argv
    p = subprocess.run(cmd, cwd=workdir, env=dict(os.environ, **env), capture_output=True, text=True, timeout=180)
    if check_rc and p.returncode != 0:
        mpitest.fail("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p, workdir


def report_sites(workdir):
    """(routine, "file:line (function)" of every frame) -> calls, from libmpetime's report."""
    out = collections.Counter()
    for site in json.load(open(os.path.join(workdir, "py.mpetime.json")))["callsites"]:
        out[(site["routine"], site["text"])] += site["calls"]
    return out


def log_sites(workdir):
    """(state, call site) -> states, from `mpe print`."""
    out = collections.Counter()
    for line in mpitest.mpe("print", "--kind", "state", os.path.join(workdir, "py.mpelog")).stdout.splitlines():
        f = line.split(" ")
        out[(f[3], line.split(" at ", 1)[1] if " at " in line else "")] += 1
    return out


def want_ring(source, recv_routine, rounds, np, outer=None):
    """The ring's true calls per (routine, site text): rank 0 sends and receives `rounds` times at
    send0/recv0, every other rank at recv/send; `outer`: the calling line's " <- ..." suffix."""
    m, name = marks(source), os.path.basename(source)
    tail = outer or ""
    return {("MPI_Send", "%s:%d (forward)%s" % (name, m["send0"], tail)): rounds,
            (recv_routine, "%s:%d (forward)%s" % (name, m["recv0"], tail)): rounds,
            ("MPI_Send", "%s:%d (forward)%s" % (name, m["send"], tail)): rounds * (np - 1),
            (recv_routine, "%s:%d (forward)%s" % (name, m["recv"], tail)): rounds * (np - 1)}


def check_counts(got, want, what):
    for key, n in want.items():
        check(got[key] == n, "%s: %d %s calls at %s, expected %d (all: %s)" % (what, got[key], key[0], key[1], n,
                                                                              dict(got)))


def check_otf2(workdir, want, what):
    """liblog's OTF2 archive of the same run: each call's calling context, as OTF2's own Python reader
    finds it, is at the same line."""
    from interop_callsites import CS_READER
    from interop_common import SYSTEM_PYTHON
    archive = os.path.join(workdir, "converted")
    mpitest.mpe("convert", os.path.join(workdir, "py.mpelog"), "--to", "otf2", archive)
    p = subprocess.run([SYSTEM_PYTHON, "-c", CS_READER, os.path.join(archive, "traces.otf2")], capture_output=True,
                       text=True, timeout=300)
    if not check(p.returncode == 0, "%s: the OTF2 reader failed: %s" % (what, p.stderr[-1000:])):
        return
    seen = collections.Counter()
    for key, n in json.loads(p.stdout).items():
        k = json.loads(key)
        seen[(k[0], k[1])] += n
    for (routine, site), n in want.items():
        line = site.split(" ")[0]
        check(seen[(routine, line)] == n, "%s: %d %s at %s in OTF2, expected %d" % (what, seen[(routine, line)],
                                                                                     routine, line, n))


def mpi4py_ring():
    """pyring.py: report, log, depth 2, OTF2, the user state, libumq and a non-ASCII path."""
    source = os.path.join(HERE, "pyring.py")
    m = marks(source)
    want = want_ring(source, "MPI_Mrecv", 5, 2)
    _, w = mpe_run(["time", "log"], 2, [source])
    check_counts(report_sites(w), want, "pyring, mpe report --callsites")
    got = log_sites(w)
    check_counts(got, want, "pyring, mpe print")
    check(got[("step", "pyring.py:%d (<module>)" % m["state"])] == 10, "pyring: the mpelog state at its begin line: "
          "%r" % {k: v for k, v in got.items() if k[0] == "step"})
    check(got[("MPI_Barrier", "pyring.py:%d (<module>)" % m["barrier"])] == 2, "pyring: the barrier's line")
    events = mpitest.mpe("print", "--kind", "event", os.path.join(w, "py.mpelog")).stdout.splitlines()
    at = " at pyring.py:%d (<module>)" % m["event"]
    check(len(events) == 10 and all(e.endswith(at) and " event passed data=" in e for e in events),
          "pyring: mpelog's events at their line: %r" % events)
    check_otf2(w, want, "pyring")
    shutil.rmtree(w, ignore_errors=True)

    # Two Python frames: the line in forward() and the line that called forward(); 3 ranks.
    outer = " <- pyring.py:%d (<module>)" % (m["state"] + 1)
    _, w = mpe_run(["time"], 3, [source], env={"MPE_CALLSITE_DEPTH": "2"})
    check_counts(report_sites(w), want_ring(source, "MPI_Mrecv", 5, 3, outer), "pyring, MPE_CALLSITE_DEPTH=2")
    shutil.rmtree(w, ignore_errors=True)

    # libumq: every receive meets a queue longer than 0 or not; those that do are at receive lines.
    _, w = mpe_run(["umq"], 3, [source], env={"MPE_UMQ_THRESHOLD": "0"})
    report = json.load(open(os.path.join(w, "py.umq.json")))
    sites = report["sites"]
    check(sites, "libumq: no call site at threshold 0 (%s)" % report)
    recv_lines = {"pyring.py:%d" % m[k] for k in ("recv", "recv0")}
    for s in sites:
        check(s["location"] in recv_lines and s["stack"][0]["module"] == "python",
              "libumq: a receive at %r, not at a receive line %s" % (s["location"], recv_lines))
    shutil.rmtree(w, ignore_errors=True)

    # A path that is not ASCII: the frame reader encodes the interpreter's string as UTF-8.
    d = tempfile.mkdtemp(prefix="mpetest-python-")
    odd = os.path.join(d, "ring-é€", "pyring.py")
    os.makedirs(os.path.dirname(odd))
    shutil.copy(source, odd)
    _, w = mpe_run(["time"], 2, [odd])
    files = {f["file"] for s in json.load(open(os.path.join(w, "py.mpetime.json")))["callsites"]
             for f in s["frames"] if f["module"] == "python"}
    check(files == {odd}, "non-ASCII path: frames name %r, expected %r" % (files, odd))
    shutil.rmtree(w, ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    print("pyring: mpi4py's calls at their Python lines in libmpetime, liblog, OTF2 and libumq")


def mpi4py_threads():
    """pythreads.py: two threads of rank 0 in MPI at once, one blocked in a receive (GIL released)
    while the other sends; each call at its own thread's line."""
    source = os.path.join(HERE, "pythreads.py")
    m = marks(source)
    _, w = mpe_run(["time", "log"], 2, [source])
    want = {("MPI_Send", "pythreads.py:%d (sender)" % m["tsend"]): 50,
            ("MPI_Mrecv", "pythreads.py:%d (<genexpr>)" % m["trecv"]): 50,
            ("MPI_Mrecv", "pythreads.py:%d (<module>)" % m["echo_recv"]): 50,
            ("MPI_Send", "pythreads.py:%d (<module>)" % m["echo_send"]): 50}
    check_counts(report_sites(w), want, "pythreads, mpe report --callsites")
    check_counts(log_sites(w), want, "pythreads, mpe print")
    shutil.rmtree(w, ignore_errors=True)
    print("pythreads: two threads' calls at their own lines")


def mpi4py_hang():
    """liblive: a ring whose ranks all receive first; `mpe top` names the hang line on each rank."""
    import livetest
    source = os.path.join(HERE, "pyring.py")
    line = "pyring.py:%d (<module>)" % marks(source)["hang"]
    job = livetest.LiveJob(2, [PYTHON, source, "deadlock"], prefix="python3")
    try:
        job.wait_live_file()
        for _ in range(30):
            snap = job.top_once(stuck=1.0, wait=20)
            deadlocks = snap["diagnosis"]["deadlocks"]
            if deadlocks:
                break
        else:
            mpitest.fail("liblive: no deadlock named: %s" % snap)
        check(deadlocks[0]["ranks"] == [0, 1], "liblive: the cycle %r" % deadlocks[0]["ranks"])
        for call in deadlocks[0]["calls"]:
            check(call["callsite"] == line, "liblive: rank %d in %r, expected %r" % (call["rank"], call["callsite"],
                                                                                    line))
    finally:
        job.kill()
    print("pyring deadlock: mpe top names %s on both ranks" % line)


def halo2d():
    """samples/halo2d.py under the four tools: its output unchanged, every message matched."""
    sample = os.path.join(SAMPLES, "halo2d.py")
    plain = mpitest.run(4, [PYTHON, sample], env={"PYTHONPATH": ""})
    tooled, w = mpe_run(["time", "umq", "log", "live"], 4, [sample])
    check(tooled.stdout == plain.stdout and "residual" in plain.stdout,
          "halo2d.py: output with the tools %r, without %r" % (tooled.stdout, plain.stdout))
    st = json.loads(mpitest.mpe("stat", "--json", os.path.join(w, "py.mpelog")).stdout)
    msg = st["messages"]
    report = json.load(open(os.path.join(w, "py.mpetime.json")))
    moved = sum(v.get("messages", 0) for r in report["per_rank"] for v in r["routines"].values())
    check(msg["unmatched_sends"] == 0 and msg["unmatched_recvs"] == 0, "halo2d.py: unmatched %r" % msg)
    # 160 halos and 40 notes, and mpi4py's own for the lowercase allreduce; each end once in libmpetime.
    check(msg["matched"] >= 200 and 2 * msg["matched"] == moved,
          "halo2d.py: liblog matched %d, libmpetime counted %d message ends" % (msg["matched"], moved))
    got = report_sites(w)
    isends = {k: v for k, v in got.items() if k[0] == "MPI_Isend" and "(main)" in k[1]}
    check(len(isends) == 5 and sorted(isends.values()) == [80] * 5,
          "halo2d.py: 4 halo Isend lines and the note's, 80 calls each: %r" % isends)
    check(not [k for k in got if k[0] in ("MPI_Isend", "MPI_Waitall") and "halo2d.py:" not in k[1]],
          "halo2d.py: a call not at a Python line: %r" % [k for k in got if "halo2d.py:" not in k[1]])
    shutil.rmtree(w, ignore_errors=True)
    mpitest.cleanup(plain)
    print("halo2d.py: %d messages matched, output unchanged under all four tools" % msg["matched"])


def ctypes_ring():
    """ctypes_ring.py on this build's MPI: exact lines in the report and the log; upshot's table."""
    source = os.path.join(HERE, "ctypes_ring.py")
    want = want_ring(source, "MPI_Recv", 4, 3)
    _, w = mpe_run(["time", "log"], 3, [source])
    check_counts(report_sites(w), want, "ctypes_ring, mpe report --callsites")
    check_counts(log_sites(w), want, "ctypes_ring, mpe print")
    tst = os.environ.get("UPSHOT_SITES_TEST")
    if tst:
        expect = ";".join("%s=%d" % (site, n) for (_, site), n in want.items())
        p = subprocess.run([tst, "sitesOfTheGivenLog"], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, QT_QPA_PLATFORM="offscreen", UPSHOT_SITES_LOG=os.path.join(w, "py.mpelog"),
                                    UPSHOT_SITES_EXPECT=expect))
        check(p.returncode == 0 and "SKIP" not in p.stdout, "upshot's call sites of the ctypes ring:\n" + p.stdout[-2000:])
    shutil.rmtree(w, ignore_errors=True)
    print("ctypes_ring: the lines in libmpetime and liblog%s" % (" and upshot" if tst else ""))


def unreadable_python():
    """An interpreter of another version: one line for the job, and the call keeps its C site."""
    r = mpitest.run(2, [mpitest.program("fake_python_main")], tools=("time",), env={"MPE_LOGFILE_PREFIX": "fake"})
    said = [line for line in r.stderr.splitlines() if "cannot read" in line]
    check(said == ["mpe-tools: this program runs Python 3.12.1, whose frames the tools cannot read (they read 3.11): "
                   "its MPI calls are named by the C code that made them, not by Python lines"],
          "the line for an unreadable Python: %r" % r.stderr)
    sites = [s["text"] for s in r.json("fake.mpetime.json")["callsites"] if s["routine"] == "MPI_Barrier"]
    check(len(sites) == 1 and "fake_python" in sites[0], "the barrier's C site: %r" % sites)
    mpitest.cleanup(r)


def main():
    if mpitest.MPI == "openmpi":
        p = subprocess.run([PYTHON, "-c", "import mpi4py, numpy"], capture_output=True, text=True)
        if p.returncode != 0:
            mpitest.fail("python3-mpi4py and python3-numpy are needed (scripts/test installs them): " + p.stderr)
        mpi4py_ring()
        mpi4py_threads()
        mpi4py_hang()
        halo2d()
    else:
        print("mpi4py: Debian's is built for Open MPI, and Debian's mirror does not serve its source to build it "
              "for MPICH: the Open MPI build runs pyring.py and halo2d.py; here ctypes_ring.py")
    ctypes_ring()
    unreadable_python()
    if failures:
        mpitest.fail("%d checks failed" % len(failures))


if __name__ == "__main__":
    main()
