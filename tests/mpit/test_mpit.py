"""MPI_T everywhere, on three MPIs. MPIT_TEST_MODE selects the MPI:
  default  the build's own MPI: Debian's MPICH (no performance variable: `mpe mpit` lists the
           control variables and says so in one line; MPE_LOG_PVARS=umq says so in one line), or
           Open MPI (the openmpi checks) when the build is an Open MPI build;
  pvars    the pvar-enabled MPICH (scripts/build-mpich-pvars): unexpected_recvq_length, class
           level, bound to no object;
  openmpi  an Open MPI build tree (MPE_OMPI_BUILD_DIR, else built here under <build>/mpit-openmpi):
           pml_ob1_unexpected_msgq_length, class size, bound to a communicator.
The flood sample has a known queue: rank 0 receives S*K messages that all arrive before its
first receive (S senders, K each), so the queue length peaks at exactly S*K (Open MPI on
MPI_COMM_WORLD: up to S more, one message per peer of MPI_Init's own, see tests/libumq).
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mpitest  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = os.environ.get("MPIT_TEST_MODE", "default")
QUEUE = {"pvars": "unexpected_recvq_length", "openmpi": "pml_ob1_unexpected_msgq_length"}


mpe = mpitest.mpe  # runs the mpe command of the build under test, with no mpiexec


def check_mpit_listing(mode):
    listing = json.loads(mpe("mpit", "--json").stdout)
    cvars, pvars = listing["control_variables"], listing["performance_variables"]
    mpitest.expect(len(cvars) > 10, "%s: control variables: %d" % (mode, len(cvars)))
    mpitest.expect(any(v["value"] not in (None, "", "(unreadable)") for v in cvars), "%s: no control value read" % mode)
    for v in cvars + pvars:
        for field in ("name", "datatype", "binding", "count", "verbosity", "description"):
            mpitest.expect(field in v, "%s: %s lacks %s" % (mode, v.get("name"), field))
    text = mpe("mpit").stdout
    notice = [l for l in text.splitlines() if "exports no MPI_T performance variables" in l]
    if mode == "debian":
        mpitest.expect_eq(pvars, [], "Debian MPICH: performance variables")
        mpitest.expect_eq(len(notice), 1, "Debian MPICH: the one-line notice in\n" + text)
        mpitest.expect("Control variables (%d):" % len(cvars) in text, "Debian MPICH: control variables listed")
        return
    mpitest.expect_eq(notice, [], "%s: no-pvar notice" % mode)
    want = QUEUE[mode]
    found = [v for v in pvars if v["name"] == want]
    mpitest.expect_eq(len(found), 1, "%s: %s listed" % (mode, want))
    expected = ("level", "no object") if mode == "pvars" else ("size", "communicator")
    mpitest.expect_eq((found[0]["class"], found[0]["binding"], found[0]["datatype"]),
                      expected + ("MPI_UNSIGNED",), "%s: %s class, binding, datatype" % (mode, want))
    # Filters: by class (only that class, and no control variables) and by name.
    cls = expected[0]
    only = json.loads(mpe("mpit", "--json", "--class", cls).stdout)
    mpitest.expect_eq(only["control_variables"], [], "%s: --class %s control variables" % (mode, cls))
    mpitest.expect(only["performance_variables"] and all(v["class"] == cls for v in only["performance_variables"]),
                   "%s: --class %s" % (mode, cls))
    named = json.loads(mpe("mpit", "--json", "--name", want).stdout)
    mpitest.expect_eq([v["name"] for v in named["performance_variables"]], [want], "%s: --name" % mode)
    mpitest.expect(re.search(r"^  %s\n      class %s, MPI_UNSIGNED, binding %s" % (want, cls, expected[1]), text, re.M),
                   "%s: text listing of %s:\n%s" % (mode, want, text))
    bad = mpe("mpit", "--class", "nonsense", check=False)
    mpitest.expect(bad.returncode != 0 and "nonsense" in bad.stderr, "%s: a wrong class is refused" % mode)


def counter_samples(log, name):
    """(time, value, rest) of `name`'s samples on rank 0, from `mpe print --kind counter`."""
    out = mpe("print", "--kind", "counter", "--rank", "0", log).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"(\d+) r0\.t\d+ counter (\S+) (value|delta)=(\S+)(.*)", line)
        mpitest.expect(m, "mpe print counter line: %r" % line)
        if m.group(2) == name:
            rows.append((int(m.group(1)), float(m.group(4)), m.group(5)))
    return rows


def check_counters(mode, np, k, flood_mode, tools=("log", "umq")):
    """MPE_LOG_PVARS=umq plus an unknown name: the track's maximum is the known queue, and
    libumq's maximum when libumq runs too (the shared read; liblog alone reads through its own
    handles, mpit::read_direct); one line names the unknown variable."""
    total = (np - 1) * k
    slack = (np - 1) if (mode == "openmpi" and flood_mode == "world") else 0
    r = mpitest.run(np, [mpitest.program("flood"), str(k), flood_mode], tools=tools,
                    env={"MPE_LOG_PVARS": "umq,no_such_variable"})
    mpitest.expect("received=%d" % total in r.stdout, "flood output: " + r.stdout)
    unknown = [l for l in r.stderr.splitlines() if "no_such_variable" in l]
    mpitest.expect_eq(len(unknown), 1, "%s: lines naming the unknown variable in\n%s" % (mode, r.stderr))
    rows = counter_samples(r.files(".mpelog")[0], QUEUE[mode])
    mpitest.expect(rows, "%s %s: no counter sample" % (mode, flood_mode))
    values = [v for _, v, _ in rows]
    if "umq" in tools:
        umq = json.load(open(r.files(".umq.json")[0]))
        umq_max = umq["sites"][0]["max_length"]
        mpitest.expect_eq(max(values), umq_max, "%s %s: counter track max vs libumq's max" % (mode, flood_mode))
    mpitest.expect(total <= max(values) <= total + slack, "%s %s: track max %r, queue %d" % (mode, flood_mode, max(values), total))
    # Read at each receive's entry, written on change: the queue drains one by one.
    start = values.index(max(values))
    top = max(values)
    mpitest.expect_eq(values[start:start + total], [top - i for i in range(total)],
                      "%s %s: the draining queue" % (mode, flood_mode))
    times = [t for t, _, _ in rows]
    mpitest.expect_eq(times, sorted(times), "%s: sample times" % mode)
    if mode == "openmpi":
        # Per-communicator handle: samples name the communicator (dup: not world) and a sender.
        comms = {re.search(r"comm=(\d+)", rest).group(1) for _, _, rest in rows[start:start + total]}
        mpitest.expect_eq(comms, {"0"} if flood_mode == "world" else {"2"}, "%s %s: comm of the samples" % (mode, flood_mode))
        peers = {int(re.search(r"max_peer=(\d+)", rest).group(1)) for _, _, rest in rows[start:start + total]}
        mpitest.expect(peers and peers <= set(range(1, np)), "%s: max peers %r" % (mode, peers))
    else:
        mpitest.expect_eq(values[-1], 0.0, "%s: the last sample (MPI_Finalize's entry)" % mode)
    mpitest.cleanup(r)


def check_comm_rounds(mode, np=2, counts=(4, 1, 3, 1)):
    """liblog alone (its own handles, kept per thread for the last communicator): rounds of a
    known queue on a duplicate that is freed and duplicated again (tests/mpit/comm_rounds.c), so
    that MPI gives a round's communicator the freed one's handle value. Rank 0's track drains from
    (np-1)*k to 1 in a round of k messages per sender, exactly. On Open MPI each round is on its
    own communicator, and a round of one message (1 after the previous round's 1) still gets its
    sample: it is read through the new communicator's handle, into its own series. On the pvar
    MPICH (one process-wide variable) the rounds are one series, written on change."""
    r = mpitest.run(np, [mpitest.program("comm_rounds")] + [str(k) for k in counts], tools=("log",),
                    env={"MPE_LOG_PVARS": "umq"})
    m = re.search(r"comm_rounds: rounds=(\d+) received=(\d+) reused=(\d+) ok", r.stdout)
    mpitest.expect(m, "comm_rounds output: " + r.stdout)
    peaks = [(np - 1) * k for k in counts]
    mpitest.expect_eq(int(m.group(2)), sum(peaks), "%s: messages received" % mode)
    # Without the reuse this check would not test what it is for.
    mpitest.expect(int(m.group(3)) >= 1, "%s: no round reused the freed handle: %s" % (mode, r.stdout))
    rows = counter_samples(r.files(".mpelog")[0], QUEUE[mode])
    drains = [[float(x) for x in range(p, 0, -1)] for p in peaks]
    if mode == "openmpi":
        by_comm = {}
        for _, v, rest in rows:
            comm = re.search(r"comm=(\d+)", rest).group(1)
            if comm != "0":  # MPI_COMM_WORLD: MPI_Finalize's read
                by_comm.setdefault(comm, []).append(v)
        tracks, want = list(by_comm.values()), drains
    else:
        series = [x for d in drains for x in d] + [0.0]  # MPI_Finalize's read: empty
        tracks = [[v for _, v, _ in rows]]
        want = [[x for i, x in enumerate(series) if i == 0 or x != series[i - 1]]]
    mpitest.expect_eq(tracks, want, "%s: rank 0's queue track per communicator" % mode)
    mpitest.cleanup(r)


def check_read_once(mode):
    """liblog and libumq on one variable read it once per receive: a PMPI_T_pvar_read counter
    preloaded first sees rank 0's S*K receives, not twice as many (+1: liblog at MPI_Finalize;
    MPI_Barrier and MPI_Send are not read)."""
    counter = os.path.join(mpitest.BUILD, "tests", "libcount_pvar_reads.so")
    if not os.path.exists(counter):
        counter = os.path.join(mpitest.BUILD, "lib", "libcount_pvar_reads.so")
    np, k = 3, 10
    lib = mpitest.lib
    mpitest.lib = lambda t: counter if t == "count" else lib(t)
    try:
        r = mpitest.run(np, [mpitest.program("flood"), str(k), "dup" if mode == "openmpi" else "world"],
                        tools=("count", "log", "umq"), env={"MPE_LOG_PVARS": "umq"})
    finally:
        mpitest.lib = lib
    reads = {int(a): int(b) for a, b in re.findall(r"pvar reads: rank (\d+): (\d+)", r.stderr)}
    mpitest.expect(0 in reads, "read counter output missing:\n" + r.stderr)
    mpitest.expect_eq(reads[0], (np - 1) * k + 1, "%s: rank 0's MPI_T reads with liblog and libumq" % mode)
    mpitest.cleanup(r)


def check_time_pvars(mode, np, k, flood_mode):
    """libmpetime: the queue grows in MPI_Barrier (every message arrives while rank 0 waits there)
    and drains in MPI_Recv, one per call."""
    total = (np - 1) * k
    r = mpitest.run(np, [mpitest.program("flood"), str(k), flood_mode], tools=("time",),
                    env={"MPE_TIME_PVARS": "umq"})
    rep = json.load(open(r.files(".mpetime.pvars.json")[0]))
    var = [v for v in rep["variables"] if v["name"] == QUEUE[mode]]
    mpitest.expect_eq(len(var), 1, "%s: variables in the libmpetime report" % mode)
    routines = {x["routine"]: x for x in var[0]["routines"]}
    mpitest.expect_eq(var[0]["routines"][0]["routine"], "MPI_Barrier", "%s: routine with the largest growth" % mode)
    # Up to one message per peer more: the MPI's own collective traffic on the same queue (Open MPI:
    # MPI_Init's and the barrier's, see the module comment; MPICH ch3: a peer's message of the next
    # collective that arrives before rank 0 leaves the barrier, seen once in a full test run).
    slack = np - 1
    grew = routines["MPI_Barrier"]["sum_of_changes"]
    mpitest.expect(total <= grew <= total + slack, "%s: growth in MPI_Barrier %r, queue %d" % (mode, grew, total))
    mpitest.expect_eq(routines["MPI_Recv"]["sum_of_changes"], -total, "%s: change in MPI_Recv" % mode)
    mpitest.expect(total <= routines["MPI_Recv"]["max"] <= total + slack and routines["MPI_Recv"]["max_rank"] == 0,
                   "%s: largest queue seen in MPI_Recv: %r" % (mode, routines["MPI_Recv"]))
    # Per call site: the growth is rank 0's barrier before its receives (3 lines above the marked
    # receive line; the MPI's own messages may add to the other ranks' barrier sites), the drain is
    # the marked receive line, exactly as MPI_Recv's routine row says.
    recv_line = mpitest.marked_line(os.path.join(SRC, "samples", "flood.c"), "/* flood-receive-line */")
    sites = var[0]["callsites"]
    mpitest.expect(sites and sites[0]["routine"] == "MPI_Barrier" and
                   re.search(r"flood\.c:%d\b" % (recv_line - 3), sites[0]["site"]) and
                   total <= sites[0]["sum_of_changes"] <= total + slack,
                   "%s: call site with the largest growth: %r" % (mode, sites[:2]))
    drains = [x for x in sites if x["routine"] == "MPI_Recv"]
    mpitest.expect(len(drains) == 1 and re.search(r"flood\.c:%d\b" % recv_line, drains[0]["site"]) and
                   drains[0]["sum_of_changes"] == -total and drains[0]["calls"] == total,
                   "%s: MPI_Recv's call sites: %r" % (mode, drains))
    txt = open(r.files(".mpetime.pvars.txt")[0]).read()
    mpitest.expect(re.search(r"^  MPI_Barrier\s+\d+\s+%d\b" % grew, txt, re.M), "text report:\n" + txt)
    mpitest.expect(re.search(r"^  \S*flood\.c:%d\S*.*MPI_Recv\s+%d\s+-%d\b" % (recv_line, total, total), txt, re.M),
                   "text report's call sites:\n" + txt)
    mpitest.cleanup(r)


def check_debian():
    check_mpit_listing("debian")
    plain = mpitest.run(3, [mpitest.program("flood"), "10"])
    r = mpitest.run(3, [mpitest.program("flood"), "10"], tools=("log",), env={"MPE_LOG_PVARS": "umq"})
    mpitest.expect_eq(r.stdout, plain.stdout, "program output under MPE_LOG_PVARS")
    lines = [l for l in r.stderr.splitlines() if "MPE_LOG_PVARS" in l]
    mpitest.expect_eq(len(lines), 1, "one line for the missing variable in\n" + r.stderr)
    mpitest.expect("exports no unexpected-queue length" in lines[0], "the line: " + lines[0])
    mpitest.expect_eq(counter_samples(r.files(".mpelog")[0], "unexpected_recvq_length"), [], "samples")
    mpitest.cleanup(r)
    mpitest.cleanup(plain)


def full_checks(mode):
    check_mpit_listing(mode)
    check_counters(mode, 3, 10, "world")
    check_counters(mode, 3, 8, "dup")
    check_counters(mode, 2, 20, "split")
    check_counters(mode, 3, 8, "dup", tools=("log",))
    check_comm_rounds(mode)
    check_read_once(mode)
    # World: a variable bound to a communicator is read on the call's communicator, and on a
    # duplicate the messages land while MPI_Comm_dup (read on its parent) completes.
    check_time_pvars(mode, 3, 10, "world")


if MODE == "default":
    if mpitest.MPI == "openmpi":
        full_checks("openmpi")
    else:
        check_debian()
elif MODE == "pvars":
    mpitest.use_mpich_pvars(SRC)
    full_checks("pvars")
elif MODE == "openmpi":
    build = os.environ.get("MPE_OMPI_BUILD_DIR") or os.path.join(mpitest.BUILD, "mpit-openmpi")
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", SRC, "-B", build, "-G", "Ninja", "-DMPE_MPI=openmpi",
                        "-DMPE_BUILD_BENCH=OFF"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", build, "log", "umq", "mpetime", "flood", "mpe", "mpe-mpit", "count_pvar_reads",
                    "comm_rounds"],
                   check=True, stdout=subprocess.DEVNULL)
    mpitest.use_openmpi(build)
    full_checks("openmpi")
else:
    mpitest.fail("unknown MPIT_TEST_MODE " + MODE)
print("ok")
