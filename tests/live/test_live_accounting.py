"""Every message counted once, by one rule (issue 36): tests/live/isendrecv_ring.c (MPI_Isendrecv
and MPI_Isendrecv_replace with and without statuses, MPI_Mprobe + MPI_Mrecv on a communicator with
its ranks reversed; 240 messages whose pairs the program fixes) under `mpe run --live --log`:
liblog matches all 240 and leaves none unmatched; liblive counts 240 sends and 240 receives, per
(sender, receiver) pair of world ranks exactly as the program sent them, none from a rank to
itself, and the live view pairs every send with its receive."""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import livetest  # noqa: E402
import mpitest  # noqa: E402
from mpitest import expect, expect_eq  # noqa: E402

NP = 3
ITERATIONS = 60


def expected_pairs():
    """(from, to) -> messages, in world ranks, as isendrecv_ring.c sends them."""
    pairs = collections.Counter()
    for r in range(NP):
        pairs[(r, (r + 1) % NP)] += ITERATIONS  # Isendrecv to the right
        pairs[(r, (r - 1) % NP)] += len(range(3, ITERATIONS, 3))  # Isendrecv_replace to the left
        pairs[(r, (r - 1) % NP)] += 1  # the reversed communicator's right neighbour is world rank r-1
    return pairs


def as_counter(pairs):
    return collections.Counter({(p["from"], p["to"]): p["count"] for p in pairs})


def main():
    want = expected_pairs()
    total = sum(want.values())
    expect_eq(total, 240, "the program's message count")
    job = livetest.LiveJob(NP, [mpitest.program("isendrecv_ring")], log=True)
    top = livetest.Top(job.wait_live_file(), refresh=0.5)
    job.finish(timeout=300)
    snaps = top.snapshots(timeout=120)
    expect(job.stdout.strip().endswith("ok"), "the program's own check: %r" % job.stdout)
    expect(snaps and snaps[-1].get("ended"), "mpe top saw the job end: %d snapshots" % len(snaps))
    traffic = snaps[-1]["traffic"]
    # liblog: every message matched, once.
    st = livetest.log_messages(os.path.join(job.workdir, "isendrecv_ring.mpelog"))["messages"]
    expect_eq((st["matched"], st["unmatched_sends"], st["unmatched_recvs"]), (total, 0, 0),
              "liblog's messages (matched, unmatched sends, unmatched receives)")
    # liblive: the same messages, per pair, on both ends.
    expect_eq((traffic["sends"], traffic["recvs"]), (total, total), "liblive's (sends, receives)")
    expect_eq(as_counter(traffic["pairs"]), want, "liblive's sends per (from, to)")
    expect_eq(as_counter(traffic["received_pairs"]), want, "liblive's receives per (from, to)")
    expect(all(p["from"] != p["to"] for p in traffic["pairs"] + traffic["received_pairs"]),
           "no pair from a rank to itself: %s" % traffic["pairs"])
    expect_eq(traffic["arrows_matched"], total, "live arrows whose receive the one matcher found")
    print("PASS")


if __name__ == "__main__":
    main()
