"""Hang diagnosis on programs that hang in known ways (samples/hang.c): two ranks each receiving
from the other first, a three-rank cycle, and one rank computing forever before a barrier.
`mpe top --once --json` must name the cycle (or the rank holding everyone), each rank's call,
call site and peer, within 2 s of the hang's start (the stuck threshold is 1 s)."""
import json
import os
import subprocess
import sys
import time

import livetest
import mpitest
from mpitest import expect, expect_eq

HANG_C = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "hang.c")
DETECT_WITHIN = 2.0  # seconds from the hang's start


def first_diagnosis(job, what, complete=lambda found: True, timeout=60):
    """Polls `mpe top --once --json` until the diagnosis has `what` ("deadlocks" or "stuck") and
    `complete` holds for it (a rank enters its hang when the machine lets it: under load, some
    ranks reach the barrier later than others)."""
    end = time.time() + timeout
    while time.time() < end:
        snap = job.top_once(stuck=1.0, wait=20)
        if snap["diagnosis"][what] and complete(snap["diagnosis"][what]):
            return snap
    mpitest.fail("no %s reported within %d s; last snapshot: %s" % (what, timeout, snap))


def upshot_summary(job):
    """upshot --live --export, headless: attaches for 2 s and prints its one-line summary. None in a
    build without the viewer (scripts/test builds it against MPICH only)."""
    if not os.path.exists(os.path.join(mpitest.BUILD, "bin", "upshot")):
        print("upshot is not in this build: its live view is checked in the build that has it")
        return None
    image = os.path.join(job.workdir, "live.png")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    p = subprocess.run([os.path.join(mpitest.BUILD, "bin", "upshot"), "--live", job.live_file, "--export", image,
                        "--after", "2"], capture_output=True, text=True, timeout=60, env=env)
    expect_eq(p.returncode, 0, "upshot --live's exit status (stderr: %s)" % p.stderr)
    expect(os.path.getsize(image) > 0, "upshot wrote no image")
    return json.loads(p.stdout.strip().splitlines()[-1])


def check_cycle(np, mode, cycle):
    """Runs `hang <mode>` on np ranks; the deadlock must be `cycle`, each rank in MPI_Recv from
    the next at hang.c's receive line."""
    job = livetest.LiveJob(np, [mpitest.program("hang"), mode])
    try:
        job.wait_live_file()
        snap = first_diagnosis(job, "deadlocks")
        deadlocks = snap["diagnosis"]["deadlocks"]
        expect_eq(len(deadlocks), 1, "deadlocks reported")
        expect_eq(deadlocks[0]["ranks"], cycle, "the cycle")
        recv_line = mpitest.marked_line(HANG_C, "MPI_Recv(&value")
        for call in deadlocks[0]["calls"]:
            r = call["rank"]
            expect_eq(call["routine"], "MPI_Recv", "rank %d's call" % r)
            expect(("hang.c:%d" % recv_line) in call["callsite"], "rank %d's call site %r" % (r, call["callsite"]))
            expect_eq(call["peer"], cycle[(cycle.index(r) + 1) % len(cycle)], "rank %d's peer" % r)
            expect_eq(call["tag"], 7, "rank %d's tag" % r)
            # The first snapshot naming the deadlock saw the calls this long after they began.
            expect(call["seconds"] <= DETECT_WITHIN, "rank %d: deadlock named only %.2f s after the hang"
                   % (r, call["seconds"]))
        print("%s: cycle %s named %.2f s after the hang" % (mode, cycle, max(c["seconds"] for c in deadlocks[0]["calls"])))
        seen = upshot_summary(job)
        if seen is not None:
            expect_eq(seen["deadlocks"], [cycle], "the cycles upshot --live names")
        return job, snap
    finally:
        job.kill()


def test_deadlock2():
    check_cycle(2, "deadlock2", [0, 1])


def test_deadlock3():
    check_cycle(4, "deadlock3", [0, 1, 2])  # rank 3 waits in the barrier, outside the cycle


def test_stuck():
    np = 4
    job = livetest.LiveJob(np, [mpitest.program("hang"), "stuck"])
    try:
        job.wait_live_file()
        snap = first_diagnosis(job, "stuck", lambda s: len(s[0]["waiting"]) == np - 1)
        expect(not snap["diagnosis"]["deadlocks"], "a computing rank is not a deadlock: %s" % snap["diagnosis"])
        stuck = snap["diagnosis"]["stuck"]
        expect_eq(len(stuck), 1, "holders reported")
        expect_eq(stuck[0]["holder"]["rank"], np - 1, "the rank holding everyone")
        expect_eq(stuck[0]["holder"]["in_mpi"], False, "the holder is computing")
        expect_eq(stuck[0]["waiting"], list(range(np - 1)), "the ranks held")
        barrier_line = mpitest.marked_line(HANG_C, "MPI_Barrier(MPI_COMM_WORLD)")
        waiting = [r for r in snap["now"] if r["rank"] in stuck[0]["waiting"]]
        for r in waiting:
            expect_eq(r["routine"], "MPI_Barrier", "rank %d's call" % r["rank"])
            expect(("hang.c:%d" % barrier_line) in r["callsite"], "rank %d's call site %r" % (r["rank"], r["callsite"]))
            expect(r["seconds"] <= DETECT_WITHIN, "rank %d: named only %.2f s after the hang" % (r["rank"], r["seconds"]))
        print("stuck: rank %d holds %s" % (np - 1, stuck[0]["waiting"]))
        seen = upshot_summary(job)
        if seen is not None:
            expect_eq(seen["stuck"], [{"holder": np - 1, "waiting": list(range(np - 1))}], "what upshot --live says holds")
            expect_eq(seen["deadlocks"], [], "deadlocks upshot --live names")
    finally:
        job.kill()


if __name__ == "__main__":
    for name in sys.argv[1:] or ["deadlock2", "deadlock3", "stuck"]:
        globals()["test_" + name]()
    print("PASS")
