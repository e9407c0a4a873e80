"""`mpe cut` on real logs (liblog, 4 ranks): halo2d with an MPI_Allreduce per iteration, and the
pcontrol sample. A cut without a selection prints byte for byte as the original and has the same
`mpe stat --json`; a cut by ranks, by time, by both, by Pcontrol level prints the original's lines
restricted to what it keeps; a cut by iterations keeps those iterations' calls; every command reads
every cut; bad options fail with one line and leave no file."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cutcheck  # noqa: E402
from cutcheck import mpitest  # noqa: E402

RANKS = 4
ITERATIONS = 8


def logged(argv, env=None):
    r = mpitest.run(RANKS, argv, tools=("log",), env=dict(env or {}, MPE_QUIET="1"))
    logs = r.files(".mpelog")
    mpitest.expect(len(logs) == 1, "one log written: %r" % logs)
    return r, logs[0]


def everything(log, work):
    out = os.path.join(work, "all.mpelog")
    cutcheck.cut(log, out)
    mpitest.check(cutcheck.print_lines(out) == cutcheck.print_lines(log), "a cut without selection prints as the original")
    mpitest.check(cutcheck.stat_json(out) == cutcheck.stat_json(log), "a cut without selection has the original's stat --json")
    cutcheck.reads_everywhere(out, work)


def by_ranks(log, work, lines):
    out = os.path.join(work, "ranks.mpelog")
    kept = {0, 2, 3}
    cutcheck.cut(log, out, "--ranks", "0,2-3")
    cutcheck.check_lines(cutcheck.print_lines(out), cutcheck.expected(lines, lambda r, t: r in kept, lambda r: r in kept),
                         "--ranks 0,2-3")
    cutcheck.reads_everywhere(out, work)
    # ":k": every k-th of a range.
    cutcheck.cut(log, out, "--ranks", "1-3:2")
    cutcheck.check_lines(cutcheck.print_lines(out), cutcheck.expected(lines, lambda r, t: r in (1, 3), lambda r: r in (1, 3)),
                         "--ranks 1-3:2")


def by_time(log, work, lines):
    """The middle of the iterations (MPI_Init takes most of the run), in ns (print's unit) and in
    seconds (the option's default unit): from the 30th to the 70th percentile of the messages' sends."""
    sends = sorted(cutcheck.parse(x)[0] for x in lines if " msg " in x)
    lo, hi = sends[len(sends) * 3 // 10] - 1000, sends[len(sends) * 7 // 10] + 1000
    out = os.path.join(work, "time.mpelog")
    cutcheck.cut(log, out, "--from", "%dns" % lo, "--to", "%dns" % hi)
    cut_lines = cutcheck.print_lines(out)
    cutcheck.check_lines(cut_lines, cutcheck.expected(lines, lambda r, t: lo <= t <= hi, lambda r: True),
                         "--from %dns --to %dns" % (lo, hi))
    mpitest.check(any(" msg " in x for x in cut_lines), "the time cut keeps messages")
    cutcheck.reads_everywhere(out, work)
    # Seconds, and both selections at once.
    cutcheck.cut(log, out, "--from", "%.9f" % (lo * 1e-9), "--to", "%.9f" % (hi * 1e-9), "--ranks", "1-2")
    cutcheck.check_lines(cutcheck.print_lines(out),
                         cutcheck.expected(lines, lambda r, t: r in (1, 2) and lo <= t <= hi, lambda r: r in (1, 2)),
                         "--ranks 1-2 with a time range in seconds")
    # Only --from, only --to.
    cutcheck.cut(log, out, "--to", "%dns" % lo)
    cutcheck.check_lines(cutcheck.print_lines(out), cutcheck.expected(lines, lambda r, t: t <= lo, lambda r: True), "--to only")
    cutcheck.cut(log, out, "--from", "%dns" % hi)
    cutcheck.check_lines(cutcheck.print_lines(out), cutcheck.expected(lines, lambda r, t: t >= hi, lambda r: True), "--from only")


def by_iterations(log, work, lines):
    """Iterations 2-4 of 8 (each starts at its MPI_Allreduce): three Allreduce calls per rank, all
    of them lines of the original."""
    out = os.path.join(work, "iterations.mpelog")
    cutcheck.cut(log, out, "--iterations", "2-4")
    cut_lines = cutcheck.print_lines(out)
    original = set(lines)
    mpitest.check(all(x in original for x in cut_lines), "the iteration cut's lines are the original's")
    for r in range(RANKS):
        n = sum(1 for x in cut_lines if x.split()[1] == "r%d.t0" % r and " state MPI_Allreduce " in x)
        mpitest.check(n == 3, "iterations 2-4: rank %d has 3 MPI_Allreduce calls, got %d" % (r, n))
    cutcheck.reads_everywhere(out, work)


def by_pcontrol(log, work):
    """The pcontrol sample's region: on each rank, from its MPI_Pcontrol(1) marker to its
    MPI_Pcontrol(0) marker."""
    lines = cutcheck.print_lines(log)
    region = {}
    for x in lines:
        t, rank, kind, _, _ = cutcheck.parse(x)
        if kind == "marker":
            level = int(x.split("level=")[1].split()[0])
            region.setdefault(rank, [None, None])[0 if level == 1 else 1] = t
    mpitest.expect(len(region) == RANKS and all(a is not None and b is not None for a, b in region.values()),
                   "each rank has its two Pcontrol markers: %r" % region)
    out = os.path.join(work, "pcontrol.mpelog")
    cutcheck.cut(log, out, "--pcontrol", "1")
    cut_lines = cutcheck.print_lines(out)
    cutcheck.check_lines(cut_lines, cutcheck.expected(lines, lambda r, t: region[r][0] <= t < region[r][1], lambda r: True),
                         "--pcontrol 1")
    n = sum(1 for x in cut_lines if " state MPI_Allreduce " in x)
    mpitest.check(n == 10 * RANKS, "--pcontrol 1 keeps the region's 10 MPI_Allreduce per rank, got %d" % n)
    cutcheck.reads_everywhere(out, work)


def bad_options(log, work):
    out = os.path.join(work, "bad.mpelog")
    cutcheck.fails(log, out, ["--ranks", "0-9"], "outside the run's 4 ranks")
    cutcheck.fails(log, out, ["--ranks", "1,x"], "bad rank range 'x'")
    cutcheck.fails(log, out, ["--ranks", "3-1"], "bad rank range '3-1'")
    cutcheck.fails(log, out, ["--from", "soon"], "is not a time")
    cutcheck.fails(log, out, ["--from", "2", "--to", "1"], "is after --to")
    cutcheck.fails(log, out, ["--iterations", "5-99"], "the run has 8 iterations")
    cutcheck.fails(log, out, ["--iterations", "two"], "is not an iteration")
    cutcheck.fails(log, out, ["--pcontrol", "7"], "no rank has an MPI_Pcontrol(7) marker")
    cutcheck.fails(log, os.path.join(work, "no-such-dir", "x.mpelog"), ["--ranks", "0"], "cannot create")
    before = os.path.getsize(log)
    p = mpitest.mpe("cut", log, "-o", log, check=False)
    mpitest.check(p.returncode != 0 and "is the input log" in p.stderr, "the input as output is refused: %r" % p.stderr)
    mpitest.check(os.path.getsize(log) == before, "the input is left as it was")


r, halo = logged([mpitest.program("halo2d"), str(ITERATIONS)], {"HALO2D_ALLREDUCE": "1"})
work = r.workdir
halo_lines = cutcheck.print_lines(halo)
everything(halo, work)
by_ranks(halo, work, halo_lines)
by_time(halo, work, halo_lines)
by_iterations(halo, work, halo_lines)
bad_options(halo, work)
p, pcontrol = logged([mpitest.program("pcontrol")])
by_pcontrol(pcontrol, work)
if mpitest.failures:
    mpitest.fail("%d check(s) failed" % len(mpitest.failures))
mpitest.cleanup(r)
mpitest.cleanup(p)
print("ok")
