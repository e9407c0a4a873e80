"""The live view across two (simulated) hosts: ranks on nodeA and nodeB publish to the relay on
the launching host, which listens on this host's address rather than loopback, and a viewer
attached there sees every rank with its own host name."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import livetest  # noqa: E402
import mpitest  # noqa: E402
import twohost  # noqa: E402
from mpitest import expect, expect_eq  # noqa: E402


def main():
    twohost.skip_unless_available()
    workdir = os.path.realpath(os.path.join(os.environ.get("TMPDIR", "/tmp"), "mpetest-live-twohost-%d" % os.getpid()))
    os.makedirs(workdir)
    root = os.path.join(workdir, "hosts")
    os.makedirs(root)
    launch = ["-launcher", "ssh", "-launcher-exec", twohost.LAUNCHER, "-hosts", ",".join(twohost.HOSTS), "-ppn", "2"]
    laps = 3000
    # Frames every 300 ms, not 100: on a busy machine a viewer that falls seconds behind a
    # stream of 40 frames a second may lose the last ones when the relay closes; what this test
    # checks is that ranks on both hosts get through, not throughput (live_traffic does that).
    top = livetest.Top(os.path.join(workdir, "ring.live"), refresh=1.0)
    job = livetest.LiveJob(4, [mpitest.program("ring"), str(laps)], log=True, launch=launch, workdir=workdir,
                           env={"MPE_TWOHOST_ROOT": root, "MPE_TWOHOST_PRIVATE": "", "MPE_LIVE_INTERVAL": "300"})
    with open(job.wait_live_file()) as f:
        endpoint = json.load(f)["publish_endpoint"]
    expect(not endpoint.startswith("tcp://127."), "ranks on other hosts cannot reach %s" % endpoint)
    job.finish()
    snaps = top.snapshots(timeout=60)
    final = snaps[-1]
    expect(final["ended"], "the viewer saw the job end")
    if final["ranks_finalized"] != 4:
        mpitest.fail("ranks whose last frame reached the launching host: expected 4, got %d (ranks seen %d in %d "
                     "snapshots)\njob's stderr:\n%s\nlast snapshot: %s" % (
                         final["ranks_finalized"], final["ranks_seen"], len(snaps), job.stderr,
                         json.dumps(final)[:300] + "\nviewer's stderr: " + str(top.stderr)))
    hosts = {r["rank"]: r.get("host") for s in snaps for r in s["now"]}
    expect_eq(sorted(set(hosts.values())), ["nodeA", "nodeB"], "hosts the ranks reported")
    expect_eq([hosts[r] for r in range(4)], ["nodeA", "nodeA", "nodeB", "nodeB"], "each rank's host")
    pairs = {(p["from"], p["to"]): p["count"] for p in final["traffic"]["pairs"]}
    expect_eq(pairs, {(r, (r + 1) % 4): laps for r in range(4)}, "ring's messages across the hosts")
    print("two hosts: ranks on %s reached the viewer at %s; %d messages"
          % (sorted(set(hosts.values())), endpoint, final["traffic"]["sends"]))
    print("PASS")


if __name__ == "__main__":
    main()
