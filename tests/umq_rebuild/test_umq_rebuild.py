"""`mpe umq`: the unexpected queue rebuilt from a liblog run, on real runs of samples/flood.c.
UMQ_REBUILD_MODE selects the MPI:
  default  the build's own MPI: Debian's MPICH (no MPI_T variable: the rebuilt figures are checked
           against the flood's known queue) or Open MPI (which has the variable: -llog and -lumq
           run together and the rebuilt report is checked against libumq's from the same run);
  pvars    the pvar-enabled MPICH at MPE_MPICH_PVARS_PREFIX (default
           /var/cache/mpe-tools/mpich-pvars), -llog and -lumq together as above; built here when
           missing (scripts/build-mpich-pvars, about 4 minutes), a failure when it cannot be.

The flood sends S*K messages (S = ranks - 1 senders, K each) to rank 0 before a barrier, and rank 0
receives them after it, one MPI_Recv per message at the line marked flood-receive-line: its first
receive meets a queue of S*K. The issue's bound: the top call site is that line, the same one
libumq names, and the maximum length is within 10% of libumq's (and of S*K). A balanced flood
(every receive pre-posted) shows no call site."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
MODE = os.environ.get("UMQ_REBUILD_MODE", "default")
TOLERANCE = 0.10


LINE = mpitest.marked_line(os.path.join(SRC, "samples", "flood.c"), "/* flood-receive-line */")


def mpe_umq(log, *args):
    p = subprocess.run([MPE, "umq", *args, log], capture_output=True, text=True, timeout=120)
    mpitest.expect(p.returncode == 0, "mpe umq %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def one_file(r, suffix):
    files = r.files(suffix)
    mpitest.expect(len(files) == 1, "expected one %s in %s, found %r\nstderr:\n%s" % (suffix, r.workdir, files, r.stderr))
    return files[0]


def within(actual, expected, what):
    mpitest.expect(abs(actual - expected) <= TOLERANCE * expected,
                   "%s: %r is not within %d%% of %r" % (what, actual, TOLERANCE * 100, expected))


def check_flood(np, k, mode, with_libumq):
    total = (np - 1) * k
    tools = ("log", "umq") if with_libumq else ("log",)
    r = mpitest.run(np, [mpitest.program("flood"), str(k), mode], tools=tools)
    mpitest.expect("received=%d mode=%s" % (total, mode) in r.stdout, "flood output: " + r.stdout)
    log = one_file(r, ".mpelog")
    rebuilt = json.loads(mpe_umq(log, "--json"))
    what = "%s np=%d k=%d" % (mode, np, k)
    mpitest.expect_eq(rebuilt["variable"], "rebuilt from " + os.path.basename(log), what + ": variable")
    mpitest.expect(rebuilt["sites"], "%s: no call site in the rebuilt report" % what)
    top = rebuilt["sites"][0]
    mpitest.expect_eq((top["location"], top["mpi_function"], top["ranks"]), ("flood.c:%d" % LINE, "MPI_Recv", [0]),
                      what + ": rebuilt top call site")
    within(top["max_length"], total, what + ": rebuilt max length against the flood's queue")
    # Rank 0's receive i meets S*K - i: above the default threshold 5 for all but the last 5.
    within(top["occurrences"], total - 5, what + ": rebuilt occurrences")
    mpitest.expect({p["peer"] for p in top["top_peers"]} <= set(range(1, np)) and top["top_peers"],
                   "%s: top senders %r" % (what, top["top_peers"]))
    if with_libumq:
        with open(one_file(r, ".umq.json")) as f:
            measured = json.load(f)
        mpitest.expect(measured["sites"], "%s: libumq reported no call site\n%s" % (what, r.stderr))
        mpitest.expect_eq(top["location"], measured["sites"][0]["location"], what + ": libumq's top call site")
        within(top["max_length"], measured["sites"][0]["max_length"], what + ": rebuilt max length against libumq's")
        print("%s: rebuilt max %d, libumq max %d (%s), flood queue %d" % (
            what, top["max_length"], measured["sites"][0]["max_length"], measured["variable"], total))
    else:
        print("%s: rebuilt max %d, flood queue %d" % (what, top["max_length"], total))
    # The text report and -o: libumq's layout, named as rebuilt.
    text = mpe_umq(log)
    mpitest.expect(text.startswith("libumq report: receives that met a long unexpected-message queue\n"
                                   "variable: rebuilt from %s (per communicator, per peer)" % os.path.basename(log)),
                   "text header:\n" + text)
    mpitest.expect("#1  MPI_Recv at flood.c:%d (main)" % LINE in text, "text report:\n" + text)
    prefix = os.path.join(r.workdir, "rebuilt")
    mpe_umq(log, "-o", prefix)
    with open(prefix + ".umq.json") as f:
        mpitest.expect_eq(json.load(f), rebuilt, what + ": -o's JSON against --json")
    mpitest.expect_eq(open(prefix + ".umq.txt").read(), text, what + ": -o's text against the printed text")
    mpitest.cleanup(r)


def check_balanced(np, k, with_libumq):
    tools = ("log", "umq") if with_libumq else ("log",)
    r = mpitest.run(np, [mpitest.program("flood"), str(k), "balanced"], tools=tools)
    rebuilt = json.loads(mpe_umq(one_file(r, ".mpelog"), "--json", "--threshold", "0"))
    # Every receive is posted before any send begins: no post meets a message, not even one.
    mpitest.expect_eq(rebuilt["sites"], [], "balanced: rebuilt call sites at threshold 0")
    if with_libumq:
        with open(one_file(r, ".umq.json")) as f:
            mpitest.expect_eq(json.load(f)["sites"], [], "balanced: libumq's call sites")
    mpitest.cleanup(r)


def check_bad_input():
    scratch = mpitest.run(1, [mpitest.program("flood"), "0"], tools=("log",))
    good = one_file(scratch, ".mpelog")
    bad = os.path.join(scratch.workdir, "bad.mpelog")
    with open(bad, "wb") as f:
        f.write(b"not a log at all")
    for args, words in (([bad], "not a logfile"), (["--threshold", "many", good], "--threshold")):
        p = subprocess.run([MPE, "umq", *args], capture_output=True, text=True, timeout=60)
        mpitest.expect(p.returncode != 0 and words in p.stderr and len(p.stderr.splitlines()) == 1,
                       "mpe umq %s: expected one error line naming %r, got %d: %r" % (args, words, p.returncode, p.stderr))
    mpitest.cleanup(scratch)


def checks(with_libumq):
    check_flood(3, 20, "world", with_libumq)
    check_flood(3, 10, "dup", with_libumq)
    check_flood(2, 30, "split", with_libumq)
    check_balanced(3, 10, with_libumq)


if MODE == "default":
    checks(with_libumq=mpitest.MPI == "openmpi")  # Debian's MPICH has no variable
    check_bad_input()
elif MODE == "pvars":
    mpitest.use_mpich_pvars(SRC)
    checks(with_libumq=True)
else:
    mpitest.fail("unknown UMQ_REBUILD_MODE " + MODE)
print("ok")
