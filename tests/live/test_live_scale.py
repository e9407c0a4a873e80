"""Scale: 256 ranks (LIVE_SCALE_RANKS), oversubscribed on the machine's cores, passing messages
around a ring for 30 s while streaming to one relay and one `mpe top`: the job runs to its end
(no rank waits on the stream), the viewer sees the job (most ranks, at least) and its end, and what
was lost on the way is counted and reported."""
import os
import sys
import tempfile

import livetest
import mpitest
from mpitest import expect, expect_eq

NP = int(os.environ.get("LIVE_SCALE_RANKS", "256"))
SECONDS = 30


def main():
    workdir = tempfile.mkdtemp(prefix="mpetest-live-scale-")
    top = livetest.Top(os.path.join(workdir, "hang.live"), refresh=1.0, wait=300)
    job = livetest.LiveJob(NP, [mpitest.program("hang"), "busy"], workdir=workdir, env={"HANG_SECONDS": str(SECONDS)})
    job.finish(timeout=900)
    expect("busy on %d ranks" % NP in job.stdout, "the job did not run on %d ranks: %s" % (NP, job.stdout))
    snaps = top.snapshots(timeout=120)
    expect(snaps, "mpe top printed nothing: %s" % getattr(top, "stderr", ""))
    final = snaps[-1]
    expect(final["ended"], "the viewer saw the job end; last snapshot: %s" % {k: final[k] for k in
                                                                              ("ranks_seen", "ranks_finalized", "drops")})
    d = final["drops"]
    for key in ("frames_dropped_by_ranks", "frames_lost_in_transit", "events_dropped", "frames_received"):
        expect(key in d, "the snapshot reports %s" % key)
    # With 256 ranks on 2 cores the viewer gets a sliver of the CPU: it falls behind, and the relay
    # drops what it cannot take (counted as lost in transit). Most ranks must still get through.
    expect(final["ranks_seen"] >= NP // 2, "ranks whose frames reached the viewer: %d of %d" % (final["ranks_seen"], NP))
    print("%d ranks: %d seen, %d frames received, %d lost in transit, %d not sent by the ranks, %d events dropped; "
          "%d ranks' last frames arrived; end message %s" % (NP, final["ranks_seen"], d["frames_received"],
                                                              d["frames_lost_in_transit"], d["frames_dropped_by_ranks"],
                                                              d["events_dropped"], final["ranks_finalized"],
                                                              "lost" if final.get("end_message_lost") else "received"))
    print("PASS")


if __name__ == "__main__":
    main()
