"""The live view never harms the job: with the viewer killed and restarted, a viewer stopped
(SIGSTOP) for 10 s, the relay killed, or the relay's address unusable, the program's output and
exit status are those of a run without tools, the logfile written beside is complete, and one
line says what was lost."""
import os
import signal
import sys
import time

import livetest
import mpitest
from mpitest import expect, expect_eq

HALO_ITERATIONS = 1500


def halo_argv():
    return [mpitest.program("halo2d"), str(HALO_ITERATIONS)]


def check_log_complete(job, sends):
    m = livetest.log_messages(os.path.join(job.workdir, job.prefix + ".mpelog"))["messages"]
    expect_eq((m["matched"], m["unmatched_sends"], m["unmatched_recvs"]), (sends, 0, 0), "the log's messages")


def busy_argv():
    """A ring that runs for BUSY_SECONDS whatever the machine's speed: long enough to kill and
    restart things under it on either MPI."""
    return [mpitest.program("hang"), "busy"]


BUSY_SECONDS = "6"
# The runs without tools, whose output the runs under the live view must equal: hang's output does
# not depend on how long it runs, so they run briefly.
PLAIN_SECONDS = "0.2"


def check_log_matched(job):
    m = livetest.log_messages(os.path.join(job.workdir, job.prefix + ".mpelog"))["messages"]
    expect_eq((m["unmatched_sends"], m["unmatched_recvs"]), (0, 0), "unmatched messages in the log")
    expect(m["matched"] > 0, "messages in the log")
    return m["matched"]


def test_viewer_restarted(busy_plain):
    job = livetest.LiveJob(4, busy_argv(), log=True, env={"HANG_SECONDS": BUSY_SECONDS})
    first = livetest.Top(job.wait_live_file(), refresh=0.2)
    time.sleep(1.5)
    first.kill()
    first.snapshots(timeout=10)
    second = livetest.Top(job.live_file, refresh=0.2)
    job.finish()
    snaps = second.snapshots(timeout=60)
    expect(snaps and snaps[-1]["ended"], "the restarted viewer did not see the job end")
    expect_eq(snaps[-1]["ranks_finalized"], 4, "ranks the restarted viewer saw finalize")
    expect_eq(job.stdout, busy_plain, "the program's output with a viewer killed and restarted")
    n = check_log_matched(job)
    print("viewer restarted: output unchanged, log complete (%d messages), %d snapshots after the restart"
          % (n, len(snaps)))


def test_viewer_stopped():
    # Two ranks passing messages as fast as they can for 14 s, their events sent in full (a budget
    # of 10 MB/s) at 10 ms intervals: tens of MB behind a viewer stopped for 10 s, whose queue and
    # the relay's for it hold 50 frames each, and the kernel's socket buffers a few MB: frames
    # must be lost, counted, and the job untouched.
    env = {"HANG_SECONDS": "14", "MPE_LIVE_INTERVAL": "10", "MPE_LIVE_RELAY_QUEUE": "50", "MPE_LIVE_BUDGET": "10000000"}
    argv = [mpitest.program("hang"), "busy"]
    plain = mpitest.run(2, argv, env=dict(env, HANG_SECONDS=PLAIN_SECONDS)).stdout
    job = livetest.LiveJob(2, argv, log=True, env=env)
    top = livetest.Top(job.wait_live_file(), refresh=0.5, queue=50)
    time.sleep(1.0)
    top.kill(signal.SIGSTOP)
    time.sleep(10)
    top.kill(signal.SIGCONT)
    job.finish()
    snaps = top.snapshots(timeout=60)
    expect_eq(job.stdout, plain, "the program's output with a stopped viewer")
    final = snaps[-1]
    expect(final["ended"], "the viewer did not see the end after SIGCONT")
    lost = final["drops"]["frames_lost_in_transit"]
    expect(lost > 0, "a viewer stopped for 10 s lost none: %s" % final["drops"])
    expect_eq(final["drops"]["frames_dropped_by_ranks"], 0, "frames the ranks could not send (no rank waits on a viewer)")
    m = livetest.log_messages(os.path.join(job.workdir, job.prefix + ".mpelog"))["messages"]
    expect_eq((m["unmatched_sends"], m["unmatched_recvs"]), (0, 0), "unmatched messages in the log")
    expect(m["matched"] > 0, "messages in the log")
    print("viewer stopped 10 s: output unchanged, %d frames lost in transit and counted, %d messages logged"
          % (lost, m["matched"]))


def test_relay_killed(busy_plain):
    job = livetest.LiveJob(4, busy_argv(), log=True, env={"HANG_SECONDS": BUSY_SECONDS})
    pid = job.relay_pid()
    time.sleep(1.0)
    os.kill(pid, signal.SIGKILL)
    job.finish()
    expect_eq(job.stdout, busy_plain, "the program's output with the relay killed")
    check_log_matched(job)
    lines = [l for l in job.stderr.splitlines() if "live relay" in l]
    expect_eq(len(lines), 1, "lines about the lost relay in %r" % job.stderr)
    expect("ended before the job did" in lines[0], "the line says what happened: %s" % lines[0])
    print("relay killed: " + lines[0])


def test_bad_address(plain):
    for address, says in (("203.0.113.7", "cannot listen on 203.0.113.7"), ("nosuchif0", "MPE_LIVE_ADDRESS=nosuchif0")):
        job = livetest.LiveJob(4, halo_argv(), log=True, env={"MPE_LIVE_ADDRESS": address})
        job.finish()
        expect_eq(job.stdout, plain, "halo2d's output with MPE_LIVE_ADDRESS=%s" % address)
        lines = [l for l in job.stderr.splitlines() if "live view is off" in l]
        expect_eq(len(lines), 1, "lines saying the live view is off in %r" % job.stderr)
        expect(says in lines[0], "the line names the problem: %s" % lines[0])
        check_log_complete(job, 4 * 2 * HALO_ITERATIONS)
        print("MPE_LIVE_ADDRESS=%s: %s" % (address, lines[0]))


def test_ranks_without_relay(plain):
    """liblive preloaded by hand, publishing to a port nobody listens on, or with no settings."""
    env = {"MPE_LIVE_ENDPOINT": "tcp://127.0.0.1:9", "MPE_LIVE_SERVER_KEY": "x" * 40,
           "MPE_LIVE_PUBLIC_KEY": "y" * 40, "MPE_LIVE_SECRET_KEY": "z" * 40}
    live = os.path.join(mpitest.BUILD, "lib", "liblive.so")
    for extra in (env, {}):
        launch = ["-x", "LD_PRELOAD=" + live] if mpitest.MPI == "openmpi" else ["-genv", "LD_PRELOAD", live]
        for k, v in extra.items():
            launch += ["-x", "%s=%s" % (k, v)] if mpitest.MPI == "openmpi" else ["-genv", k, v]
        r = mpitest.run(4, halo_argv(), launch=launch)
        expect_eq(r.stdout, plain, "halo2d's output under liblive with %s" % (extra or "no settings"))
        lines = [l for l in r.stderr.splitlines() if "liblive" in l]
        expect(len(lines) == 1 and ("live view is off" in lines[0] or "shows nothing" in lines[0]),
               "one line from liblive: %r" % r.stderr)
        print("liblive with %s: %s" % ("nobody at its endpoint" if extra else "no settings", lines[0]))


if __name__ == "__main__":
    names = sys.argv[1:] or ["viewer_restarted", "viewer_stopped", "relay_killed", "bad_address", "ranks_without_relay"]
    plain = mpitest.run(4, halo_argv()).stdout
    busy_plain = mpitest.run(4, busy_argv(), env={"HANG_SECONDS": PLAIN_SECONDS}).stdout
    for name in names:
        fn = globals()["test_" + name]
        arg = {"plain": plain, "busy_plain": busy_plain}
        fn() if fn.__code__.co_argcount == 0 else fn(arg[fn.__code__.co_varnames[0]])
    print("PASS")
