"""MPI_T counter tracks through OTF2, on a real run. The flood sample under liblog with
MPE_LOG_PVARS=umq (rank 0's unexpected queue fills to S*K, then drains one by one) writes its log
and, at finalize (MPE_LOG_FORMAT=both), an OTF2 archive; `mpe convert` writes another. Both
archives hold one METRIC event per counter sample, otf2-print reads them without an error, the
queue variable is a metric member, and converting either archive back gives the log's samples
(`mpe print --kind counter`: times, values, elements) unchanged. Communicator indices are the
reader's own numbering, so they are compared by their members in tests/interop/test_otf2_metrics.cpp.
METRICS_TEST_MODE: pvars (the pvar-enabled MPICH, a process-wide variable) or openmpi (an Open MPI
build tree, MPE_OMPI_BUILD_DIR or <build>/mpit-openmpi as tests/mpit makes it; a variable bound to
a communicator: flood's MPI_Comm_dup)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mpitest  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = os.environ.get("METRICS_TEST_MODE", "pvars")
QUEUE = {"pvars": "unexpected_recvq_length", "openmpi": "pml_ob1_unexpected_msgq_length"}[MODE]
S, K = 2, 10  # senders, messages each


def counter_lines(log):
    """`mpe print --kind counter` lines without the communicator index (the reader renumbers them)."""
    out = mpitest.mpe("print", "--kind", "counter", log).stdout.splitlines()
    return [re.sub(r" comm=\d+", " comm", l) for l in out]


def check_archive(archive, samples, what):
    anchor = os.path.join(archive, "traces.otf2")
    p = subprocess.run(["otf2-print", anchor], capture_output=True, text=True, timeout=180)
    mpitest.expect(p.returncode == 0, "otf2-print %s exited %d:\n%s" % (what, p.returncode, p.stderr[-2000:]))
    mpitest.expect("error" not in p.stderr.lower(), "otf2-print %s: %s" % (what, p.stderr[-2000:]))
    metrics = [l for l in p.stdout.splitlines() if l.startswith("METRIC ")]
    mpitest.expect_eq(len(metrics), samples, "%s: METRIC events" % what)
    mpitest.expect(all(QUEUE in l for l in metrics), "%s: metric names: %s" % (what, metrics[:3]))
    g = subprocess.run(["otf2-print", "-G", anchor], capture_output=True, text=True, timeout=60)
    members = [l for l in g.stdout.splitlines() if l.startswith("METRIC_MEMBER")]
    mpitest.expect(any(QUEUE in l and "[MPI_T " in l for l in members), "%s: metric members %s" % (what, members))


def main():
    flood_mode = "dup" if MODE == "openmpi" else "world"
    r = mpitest.run(S + 1, [mpitest.program("flood"), str(K), flood_mode], tools=("log",),
                    env={"MPE_LOG_PVARS": "umq", "MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "flood"})
    log = os.path.join(r.workdir, "flood.mpelog")
    original = counter_lines(log)
    queue = [l for l in original if " r0." in l and QUEUE in l]
    values = [int(re.search(r"value=(\d+)", l).group(1)) for l in queue]
    mpitest.expect(values and max(values) >= S * K, "%s: the queue track on rank 0: %s" % (MODE, values))
    converted = os.path.join(r.workdir, "convert.otf2")
    mpitest.mpe("convert", "--to", "otf2", log, converted)
    for archive, what in ((os.path.join(r.workdir, "flood.otf2"), "liblog's archive"), (converted, "mpe convert's")):
        check_archive(archive, len(original), what)
        back = archive + ".mpelog"
        mpitest.mpe("convert", "--to", "mpelog", archive, back)
        mpitest.expect_eq(counter_lines(back), original, "%s %s: counter samples read back" % (MODE, what))
    print("%s: %d counter samples (queue max %d) survive liblog's and mpe convert's OTF2 and back"
          % (MODE, len(original), max(values)))
    mpitest.cleanup(r)


if MODE == "pvars":
    mpitest.use_mpich_pvars(SRC)
elif MODE == "openmpi":
    build = os.environ.get("MPE_OMPI_BUILD_DIR") or os.path.join(mpitest.BUILD, "mpit-openmpi")
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", SRC, "-B", build, "-G", "Ninja", "-DMPE_MPI=openmpi",
                        "-DMPE_BUILD_BENCH=OFF"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", build, "log", "flood", "mpe"], check=True, stdout=subprocess.DEVNULL)
    mpitest.use_openmpi(build)
else:
    mpitest.fail("unknown METRICS_TEST_MODE " + MODE)
main()
