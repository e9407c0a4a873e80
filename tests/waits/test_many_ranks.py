"""Many ranks (issue 25, item 4). On an `mpe synth` log of 2,048 ranks, `mpe waits`, `mpe umq` and
`mpe stat` (and `mpe report` on 40 per-process files) summarise each per-rank table: min, mean and
max over the ranks with the ranks holding them, the top ranks (--top N), and how many were left
out; the figures are those of --json, which keeps every rank. `mpe waits` keeps blame per pair that
waited: its JSON lists those pairs, their sums are each rank's waiting, and on 4,096 ranks its peak
memory stays far below the 128 MiB that a dense ranks x ranks matrix alone would take."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
RANKS = 2048
TOP = 10  # the commands' default
PAGE = 32  # tables of more rows are summarised (cli/rank_table.h)
MEMORY_RANKS = 4096
MEMORY_BOUND_MIB = 64  # half of the dense matrix's 4096^2 x 8 B = 128 MiB, which the old analysis allocated


def mpe(*args):
    p = subprocess.run([MPE] + [str(a) for a in args], capture_output=True, text=True, timeout=300)
    mpitest.expect(p.returncode == 0, "mpe %s failed (%d): %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p.stdout


def summary(text, header, what):
    """The statistics line of a column of a summarised table: (min, its rank, mean, max, its rank)."""
    m = re.search(r"^ *%s +(\S+) +(\d+) +(\S+) +(\S+) +(\d+)$" % re.escape(header), text, re.M)
    mpitest.expect(m, "%s: no min/mean/max line for %r in:\n%s" % (what, header, text))
    return float(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4)), int(m.group(5))


def top_rows(text, header, what):
    """The ranks listed under "top N by <header>:", in order, and the count said left out."""
    m = re.search(r"top (\d+) by %s:\n.*\n((?: +\d+ .*\n)*) *\((\d+) more ranks left out" % re.escape(header), text)
    mpitest.expect(m, "%s: no top ranks by %r in:\n%s" % (what, header, text))
    rows = [int(line.split()[0]) for line in m.group(2).splitlines()]
    mpitest.expect_eq(len(rows), int(m.group(1)), what + ": top rows listed")
    return rows, int(m.group(3))


def check_summary(text, header, values, decimals, top, what, ranked_by_it=True):
    """text summarises values (one per rank) in column `header`, as the values say; with
    ranked_by_it, its top ranks are those of the largest values."""
    lo, lo_rank, mean, hi, hi_rank = summary(text, header, what)
    first_min = min(range(len(values)), key=lambda r: (values[r], r))
    first_max = min(range(len(values)), key=lambda r: (-values[r], r))
    unit = 10 ** -decimals
    mpitest.expect(abs(lo - values[first_min]) <= unit and lo_rank == first_min,
                   "%s: min %r at rank %d, expected %r at rank %d" % (what, lo, lo_rank, values[first_min], first_min))
    mpitest.expect(abs(hi - values[first_max]) <= unit and hi_rank == first_max,
                   "%s: max %r at rank %d, expected %r at rank %d" % (what, hi, hi_rank, values[first_max], first_max))
    mpitest.expect(abs(mean - sum(values) / len(values)) <= unit, "%s: mean %r, expected %r"
                   % (what, mean, sum(values) / len(values)))
    if ranked_by_it:
        rows, left_out = top_rows(text, header, what)
        expected = sorted(range(len(values)), key=lambda r: (-values[r], r))[:top]
        mpitest.expect_eq(rows, expected, what + ": the top ranks")
        mpitest.expect_eq(left_out, len(values) - top, what + ": ranks said left out")
    mpitest.expect(len(text.splitlines()) < 4 * PAGE, "%s: %d lines for %d ranks" % (what, len(text.splitlines()),
                                                                                  len(values)))


def section(text, start, end):
    """The text from the line starting with `start` to the next line starting with `end`."""
    i = text.index(start)
    j = text.find(end, i + len(start))
    return text[i:j if j >= 0 else len(text)]


def check_waits(log):
    rep = json.loads(mpe("waits", "--json", log))
    mpitest.expect_eq(rep["ranks"], RANKS, "waits --json ranks")
    waited = [0.0] * RANKS
    busy = [p for p, pat in rep["patterns"].items() if pat["instances"]]
    mpitest.expect(busy, "waits: the synthetic log shows no waiting")
    for p, pat in rep["patterns"].items():
        mpitest.expect_eq(len(pat["per_rank"]), RANKS, "waits --json: %s per_rank" % p)
        for r, s in enumerate(pat["per_rank"]):
            waited[r] += s
    # Only the pairs that waited, each once, in order; their sums are each rank's waiting.
    pairs = [(b["late"], b["waiting"]) for b in rep["blame"]]
    mpitest.expect(pairs and pairs == sorted(set(pairs)) and all(b["seconds"] > 0 for b in rep["blame"]),
                   "waits --json: blame is not the sorted pairs that waited: %r" % rep["blame"][:10])
    blamed = [0.0] * RANKS
    for b in rep["blame"]:
        blamed[b["waiting"]] += b["seconds"]
    for r in range(RANKS):
        mpitest.expect(abs(blamed[r] - waited[r]) <= 1e-9 * (1 + len(pairs)),
                       "waits: rank %d waited %.9f s, its blame pairs sum to %.9f s" % (r, waited[r], blamed[r]))
    for top in (TOP, 3):
        text = mpe("waits", log) if top == TOP else mpe("waits", "--top", top, log)
        for p in busy:
            name = rep["patterns"][p]["name"]
            table = section(text, name + ", per rank:", "  waiting (s)     instances")
            mpitest.expect("%d ranks: min, mean and max" % RANKS in table, "waits: %s not summarised:\n%s" % (p, table))
            check_summary(table, "waiting (s)", rep["patterns"][p]["per_rank"], 6, top, "waits %s --top %d" % (p, top))
        m = re.search(r"who makes whom wait: the (\d+) pairs that cost most, of (\d+) that waited\n.*\n"
                      r"((?: +\d+ +\d+ +\S+\n)*)\((\d+) more pairs left out", text)
        mpitest.expect(m, "waits --top %d: no summarised blame in:\n%s" % (top, text))
        listed = [tuple(map(int, line.split()[:2])) for line in m.group(3).splitlines()]
        worst = sorted(rep["blame"], key=lambda b: -b["seconds"])
        mpitest.expect_eq((int(m.group(1)), int(m.group(2)), len(listed), int(m.group(4))),
                          (top, len(pairs), top, len(pairs) - top), "waits --top %d: blame pairs" % top)
        mpitest.expect(abs(next(b["seconds"] for b in rep["blame"] if (b["late"], b["waiting"]) == listed[0])
                           - worst[0]["seconds"]) < 1e-12, "waits: the first pair listed is not the costliest")
    print("waits: %d ranks summarised, %d blame pairs (of %d rank pairs)" % (RANKS, len(pairs), RANKS * RANKS))


def check_umq(log):
    rep = json.loads(mpe("umq", "--json", log))
    lengths = rep["max_length_per_rank"]
    mpitest.expect_eq(len(lengths), RANKS, "umq --json max_length_per_rank")
    text = mpe("umq", log)
    table = section(text, "longest queue a receive met, per rank:", "\0")
    check_summary(table, "longest queue", lengths, 0, TOP, "umq")
    print("umq: %d ranks summarised, longest queue %d" % (RANKS, max(lengths)))


def check_stat(log):
    rep = json.loads(mpe("stat", "--json", log))
    mpitest.expect_eq((len(rep["clock_sync"]), len(rep["states_per_rank"]), len(rep["threads"])), (RANKS,) * 3,
                      "stat --json: per-rank entries")
    text = mpe("stat", log)
    table = section(text, "per rank:", "state ")
    threads = [rep["threads"][str(r)] for r in range(RANKS)]
    check_summary(table, "threads", threads, 0, TOP, "stat", ranked_by_it=False)
    # The top ranks are those of the largest round trips; synth's ranks have no clock measurement,
    # so they come in rank order, and their offsets are "-", outside the statistics.
    mpitest.expect(not any(c["valid"] for c in rep["clock_sync"]), "stat: synth measured clocks?")
    mpitest.expect(re.search(r"^ *round trip \(ns\) +-$", table, re.M), "stat: round trips without values:\n" + table)
    mpitest.expect_eq(top_rows(table, "round trip (ns)", "stat"), (list(range(TOP)), RANKS - TOP), "stat: top ranks")
    print("stat: %d ranks summarised" % RANKS)


def profile(rank, size, mpi_ns):
    return ("mpetime 2\nrank %d\nsize %d\nthreads 1\nhost node%03d\ncommand ./app\nmpi MPICH\ntimer tsc\n"
            "run_ns 1000000000\nmpi_ns %d\nroutines 1\nMPI_Send 10 %d %d 1000 90000 800 0\ncallsites 0\nend\n"
            % (rank, size, rank // 8, mpi_ns, mpi_ns, mpi_ns))


def check_report(work):
    for size in (4, 40):
        files = []
        mpi = [(r * 7919) % 100 * 1000000 + 1000 for r in range(size)]  # 1 ms .. 99 ms, in a shuffled order
        for r in range(size):
            files.append(os.path.join(work, "run%d.mpetime.%d.txt" % (size, r)))
            with open(files[-1], "w") as f:
                f.write(profile(r, size, mpi[r]))
        text = mpe("report", *files)
        table = section(text, "MPI time per rank", "Routines by aggregate time")
        if size <= PAGE:  # libmpetime's own table, a row per rank and the total
            mpitest.expect("min, mean and max" not in table and len(table.splitlines()) == size + 4,
                           "report on %d ranks: not the full table:\n%s" % (size, table))
            continue
        check_summary(table, "MPI (s)", [ns * 1e-9 for ns in mpi], 6, TOP, "report")
        mpitest.expect_eq(len(json.loads(mpe("report", "--json", *files))["per_rank"]), size, "report --json per_rank")
        rows, _ = top_rows(mpe("report", "--top", 2, *files), "MPI (s)", "report --top 2")
        mpitest.expect_eq(len(rows), 2, "report --top 2: ranks listed")
    print("report: 40 ranks summarised, 4 in full")


def check_memory(work):
    log = os.path.join(work, "memory.mpelog")
    mpe("synth", "--ranks", MEMORY_RANKS, "--events", 200000, log)
    p = subprocess.run(["/usr/bin/time", "-v", MPE, "waits", log], capture_output=True, text=True, timeout=300)
    mpitest.expect(p.returncode == 0, "mpe waits on %d ranks failed: %s" % (MEMORY_RANKS, p.stderr))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    mpitest.expect(m, "no peak memory from /usr/bin/time -v: %s" % p.stderr)
    mib = int(m.group(1)) / 1024
    dense = MEMORY_RANKS * MEMORY_RANKS * 8 / 2**20
    mpitest.expect(mib < MEMORY_BOUND_MIB, "mpe waits on %d ranks: peak %.0f MiB, not far below the dense matrix's "
                   "%.0f MiB (bound %d MiB)" % (MEMORY_RANKS, mib, dense, MEMORY_BOUND_MIB))
    print("memory: mpe waits on %d ranks peaks at %.0f MiB; a dense blame matrix alone is %.0f MiB"
          % (MEMORY_RANKS, mib, dense))


with tempfile.TemporaryDirectory(prefix="mpe-many-ranks-") as work:
    log = os.path.join(work, "many.mpelog")
    mpe("synth", "--ranks", RANKS, "--events", 200000, log)
    check_waits(log)
    check_umq(log)
    check_stat(log)
    check_report(work)
    check_memory(work)
print("ok")
