"""Interop groups otf2 and roundtrip: liblog's parallel OTF2 archive and `mpe convert`'s agree with
our own counts, and mpelog -> OTF2 -> mpelog keeps states, messages and collectives."""
import os
import shutil
import tempfile

import mpitest
from interop_common import (RUNS, synthetic_log, check_archive, expect_messages, liblog_counts, messages, mpe, our_counts,
                            run_logged, stat)


def otf2():
    for prog, np, args in RUNS:
        r, log, archive = run_logged(prog, np, args)
        mpitest.expect(os.path.isdir(archive), "%s: no archive %s; stderr:\n%s" % (prog, archive, r.stderr))
        mpitest.expect("in parallel" in r.stderr, "%s: liblog did not report the OTF2 archive:\n%s" % (prog, r.stderr))
        st = stat(log)
        expect_messages(prog, st)
        want = liblog_counts(st, log)
        if prog == "halo2d":  # all its messages go through Isend/Irecv and Waitall
            mpitest.expect(want["MPI_ISEND"] == want["MPI_IRECV"] == st["messages"]["matched"] > 0,
                           "halo2d: nonblocking messages %r" % want)
        if prog == "pingpong":  # its final MPI_Ibarrier, on each of the 2 ranks
            mpitest.expect_eq(want["NON_BLOCKING_COLLECTIVE_REQUEST"], 2, "pingpong: nonblocking collectives")
        check_archive(archive, st, prog + " (liblog, parallel)", want)
        # After the fact: the same log converted by one process gives the same events.
        converted = os.path.join(r.workdir, "converted")
        mpe("convert", log, "--to", "otf2", converted)
        check_archive(converted, st, prog + " (mpe convert)", want)
        # `mpe stat` reads the archive itself.
        st2 = stat(archive)
        mpitest.expect_eq(our_counts(st2), our_counts(st), prog + ": mpe stat of the OTF2 archive")
        mpitest.cleanup(r)
    # Logging paused throughout: no calls, only communicator creations; still a valid archive.
    r = mpitest.run(3, [mpitest.program("ring"), "2"], tools=("log",),
                    env={"MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "ring", "MPE_LOG_PAUSED": "yes"})
    st = stat(os.path.join(r.workdir, "ring.mpelog"))
    check_archive(os.path.join(r.workdir, "ring.otf2"), st, "ring, logging paused")
    mpitest.expect_eq(our_counts(stat(os.path.join(r.workdir, "ring.otf2"))), our_counts(st), "paused: mpe stat of OTF2")
    mpitest.cleanup(r)
    # MPE_LOG_FORMAT=otf2: the archive only.
    r, log, archive = run_logged("ring", 3, ["2"], fmt="otf2")
    mpitest.expect(os.path.isdir(archive) and not os.path.exists(log),
                   "MPE_LOG_FORMAT=otf2: expected only the archive; files %r" % os.listdir(r.workdir))
    mpitest.expect_eq([f for f in os.listdir(r.workdir) if f.endswith(".part") or ".tmp" in f], [], "leftovers")
    mpitest.cleanup(r)
    print("otf2: liblog's parallel archive and mpe convert's agree with our counts (otf2-print, Python reader)")


def roundtrip():
    for prog, np, args in RUNS:
        r, log, archive = run_logged(prog, np, args)
        st = stat(log)
        expect_messages(prog, st)
        for source in ("liblog", "convert"):
            if source == "convert":
                archive = os.path.join(r.workdir, "converted")
                mpe("convert", log, "--to", "otf2", archive)
            back = os.path.join(r.workdir, "back-%s.mpelog" % source)
            mpe("convert", archive, "--to", "mpelog", back)
            st2 = stat(back)
            what = "%s via %s's OTF2" % (prog, source)
            mpitest.expect_eq({k: v["count"] for k, v in st2["states"].items()},
                              {k: v["count"] for k, v in st["states"].items()}, what + ": states by name")
            mpitest.expect_eq(st2["states_per_rank"], st["states_per_rank"], what + ": states per rank")
            mpitest.expect_eq(st2["messages"]["matched"], st["messages"]["matched"], what + ": matched messages")
            mpitest.expect_eq(st2["messages"]["bytes"], st["messages"]["bytes"], what + ": message bytes")
            mpitest.expect_eq(st2["collectives"], st["collectives"], what + ": collectives")
            mpitest.expect_eq(st2["comm_creates"], st["comm_creates"], what + ": communicator creations")
            mpitest.expect_eq(st2["user_events"], st["user_events"], what + ": user events (OTF2 markers)")
            mpitest.expect_eq(st2["markers"], st["markers"], what + ": MPI_Pcontrol markers")
            mpitest.expect_eq({k: v["color"] for k, v in st2["categories"].items() if v["kind"] == "state"},
                              {k: v["color"] for k, v in st["categories"].items() if v["kind"] == "state"},
                              what + ": user state colours")
            mpitest.expect(messages(back) == messages(log),
                           what + ": message pairings differ")
            # `mpe print` and `mpe stat` read the archive itself as well.
            before = set(f for f in os.listdir(tempfile.gettempdir()) if f.startswith("mpe-otf2-"))
            mpitest.expect(messages(archive) == messages(log),
                           what + ": mpe print on the archive: message pairings differ")
            mpitest.expect_eq(stat(archive)["states_per_rank"], st["states_per_rank"],
                              what + ": mpe stat on the archive: states per rank")
            after = set(f for f in os.listdir(tempfile.gettempdir()) if f.startswith("mpe-otf2-"))
            mpitest.expect_eq(sorted(after - before), [], what + ": scratch files left by reading the archive")
        mpitest.cleanup(r)
    # A log whose index interleaves the ranks' chunks (as `mpe synth` and `mpe merge --recover`
    # write them), with user states: each location must take its own chunks only.
    work, log, st = synthetic_log()
    mpe("convert", log, "--to", "otf2", os.path.join(work, "synth-otf2"))
    check_archive(os.path.join(work, "synth-otf2"), st, "synth")
    back = os.path.join(work, "back.mpelog")
    mpe("convert", os.path.join(work, "synth-otf2"), "--to", "mpelog", back)
    st2 = stat(back)
    mpitest.expect_eq(st2["states_per_rank"], st["states_per_rank"], "synth: states per rank")
    mpitest.expect_eq(st2["collectives"], st["collectives"], "synth: collectives")
    mpitest.expect(messages(back) == messages(log), "synth: message pairings differ")
    shutil.rmtree(work, ignore_errors=True)
    print("roundtrip: mpelog -> OTF2 -> mpelog keeps states, messages (every pairing), collectives")
