"""`mpe diff A B` on halo2d run twice under `mpe run --time --log` (4 ranks), the second time with
HALO2D_DELAY_US of extra time on rank HALO2D_DELAY_RANK before its sends in iterations DELAYED.
From the profiles and from the logs: the call site ranked first is the MPI_Waitall where the delay
is waited for. On the 2x2 grid rank 1's neighbours (0 and 3) wait for it in each delayed
iteration, the injected total each; rank 2 waits for 0 and 3, which reach it one iteration later:
the injected total too. The Waitall's growth on each rank, the site's total and, from the logs,
its Late Sender waiting are within TOLERANCE of that; the delayed rank is named as the one whose
time outside MPI grew, by the injected total; `--iterations` names the delayed iterations as those
where rank 1's time outside MPI grew, by the delay each. A binary rebuilt from a copy of halo2d.c
with lines inserted at the top still matches its call sites, reported as moved. 4 against 8 ranks
compares and says the totals were scaled. --fail-if-slower. Bad input: two unrelated programs, a
damaged log and report, a profile against a log."""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import mpitest  # noqa: E402

MPE = mpitest.MPE_COMMAND
RANKS = 4
# Few iterations, long delays: with 4 ranks on 2 cores (MPICH polls while it waits) each iteration
# of the run without delay already waits ~10 ms for the ranks' turns on the cores, slack that the
# delay absorbs; half-second delays keep it near 2% of each.
ITERATIONS = 10
DELAY_RANK = 1
DELAY_US = 500000
DELAYED = (3, 5)  # the first and last delayed iteration, from 0
DELAY = DELAY_US * 1e-6
INJECTED = (DELAYED[1] - DELAYED[0] + 1) * DELAY  # seconds added to rank DELAY_RANK
WAITED = {0: INJECTED, 3: INJECTED, 2: INJECTED}  # per waiting rank
TOLERANCE = 0.05  # the bound
SOURCE = os.path.join(HERE, "..", "..", "samples", "halo2d.c")


def line_of(text):
    with open(SOURCE) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    mpitest.fail("no %r in halo2d.c" % text)


WAITALL_LINE = line_of("MPI_Waitall(8, requests")


def run_halo(ranks, iterations, env=None, binary=None):
    """halo2d (or `binary`) under `mpe run --time --log`; returns the working directory."""
    workdir = mpitest.tempfile.mkdtemp(prefix="mpetest-diff-")
    launch = [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS
    if env and mpitest.MPI == "openmpi":
        for k in env:
            launch += ["-x", k]
    launch += ["-n", str(ranks), binary or mpitest.program("halo2d"), str(iterations)]
    full_env = dict(os.environ, MPE_QUIET="1")
    full_env.update(env or {})
    p = subprocess.run([MPE, "run", "--time", "--log", "--"] + launch, cwd=workdir, env=full_env,
                       capture_output=True, text=True, timeout=120)
    mpitest.expect(p.returncode == 0, "mpe run failed: %s %s" % (p.stdout, p.stderr))
    for f in ("halo2d.mpelog", "halo2d.mpetime.json"):
        mpitest.expect(os.path.exists(os.path.join(workdir, f)), "%s written" % f)
    return workdir


def diff(a, b, *extra, check=True):
    return mpitest.mpe("diff", a, b, *extra, check=check)


def diff_json(a, b):
    return json.loads(diff(a, b, "--json").stdout)


def within(actual, expected, what):
    mpitest.expect(abs(actual - expected) <= TOLERANCE * expected,
                   "%s: %.4f s, expected %.4f s within %d%%" % (what, actual, expected, TOLERANCE * 100))


base = run_halo(RANKS, ITERATIONS)
slow = run_halo(RANKS, ITERATIONS, {"HALO2D_DELAY_RANK": str(DELAY_RANK), "HALO2D_DELAY_US": str(DELAY_US),
                                     "HALO2D_DELAY_ITERATIONS": "%d-%d" % DELAYED})
figures = []
for kind, name in (("profiles", "halo2d.mpetime.json"), ("logs", "halo2d.mpelog")):
    a, b = os.path.join(base, name), os.path.join(slow, name)
    d = diff_json(a, b)
    mpitest.expect(not d["scaled"], "%s: same rank counts are not scaled" % kind)
    first = d["callsites"][0]
    mpitest.expect(first["routine"] == "MPI_Waitall" and first["name"].startswith("halo2d.c:%d " % WAITALL_LINE),
                   "%s: the first call site is the Waitall at halo2d.c:%d: %r" % (kind, WAITALL_LINE, first))
    within(first["delta_s"], sum(WAITED.values()), "%s: the Waitall's growth" % kind)
    for rank, waited in WAITED.items():
        within(first["per_rank_delta_s"][rank], waited, "%s: the Waitall's growth on rank %d" % (kind, rank))
    grew = d["ranks"][0]
    mpitest.expect_eq(grew["rank"], DELAY_RANK, "%s: the rank whose time outside MPI grew most" % kind)
    within(grew["outside_mpi_delta_s"], INJECTED, "%s: rank %d's time outside MPI" % (kind, DELAY_RANK))
    # The wall time grows by the delay less the slack it absorbed (see above), and carries the runs'
    # own jitter (tens of ms per iteration with 4 ranks on 2 shared cores): a looser bound, 25%.
    wall = d["whole_run"]["wall"]["delta_s"]
    mpitest.expect(abs(wall - INJECTED) <= 0.25 * INJECTED,
                   "%s: the wall time grew by %.3f s, expected %.3f s within 25%%" % (kind, wall, INJECTED))
    figures.append("%s: Waitall %+.3f s (expected %.3f), rank %d outside MPI %+.3f s (expected %.3f)" % (
        kind, first["delta_s"], sum(WAITED.values()), DELAY_RANK, grew["outside_mpi_delta_s"], INJECTED))
    if kind == "logs":
        w = d["wait_states_by_callsite"][0]
        mpitest.expect(w["routine"] == "MPI_Waitall" and w["pattern"] == "late_sender",
                       "logs: the first waiting row is the Waitall's Late Sender: %r" % w)
        within(w["delta_s"], sum(WAITED.values()), "logs: the Waitall's Late Sender waiting")
        figures.append("logs: Late Sender at the Waitall %+.3f s" % w["delta_s"])
        # The iterations that carried the delay: where rank 1's time outside MPI grew, by the delay.
        it = json.loads(diff(a, b, "--iterations", "--json").stdout)["iterations"]
        mpitest.expect_eq(it["a"]["count"], ITERATIONS, "logs: halo2d's iterations")
        named = [r["iteration"] for r in it["iterations"] if DELAY_RANK in r["ranks_outside_mpi_changed"]]
        carried = mpitest.delayed_iterations(it, DELAY_RANK, named, range(DELAYED[0], DELAYED[1] + 1), DELAY,
                                             "logs: ")
        for k in carried:
            within(it["iterations"][k]["per_rank_outside_mpi_delta_s"][DELAY_RANK], DELAY,
                   "logs: rank %d's time outside MPI in iteration %d" % (DELAY_RANK, k))
            mpitest.expect(k in it["parting"], "logs: A and B part in iteration %d: %r" % (k, it["parting"]))
        figures.append("logs: iterations %r carried the delay" % carried)
    text = diff(a, b).stdout
    mpitest.expect("grew most on rank %d" % DELAY_RANK in text, "%s: the text names rank %d:\n%s" % (kind, DELAY_RANK, text))
    mpitest.expect(re.search(r"MPI_Waitall  halo2d.c:%d " % WAITALL_LINE, text), "%s: the text's site row:\n%s" % (kind, text))
    # CI: B is slower by far more than 5%; A against itself is not.
    slower = diff(a, b, "--fail-if-slower", "5%", check=False)
    mpitest.expect(slower.returncode == 1 and "B is slower than A: wall time" in slower.stderr,
                   "%s: --fail-if-slower 5%% exits 1 with a line: %d %r" % (kind, slower.returncode, slower.stderr))
    same = diff(a, a, "--fail-if-slower", "5%", check=False)
    mpitest.expect_eq(same.returncode, 0, "%s: A against itself under --fail-if-slower" % kind)

# A rebuilt binary whose lines moved: a copy of halo2d.c with SHIFT lines inserted at the top,
# compiled with debug information, run, compared with the original: its call sites match, moved.
SHIFT = 7
rebuilt = mpitest.tempfile.mkdtemp(prefix="mpetest-diff-src-")
with open(SOURCE) as f:
    text = f.read()
with open(os.path.join(rebuilt, "halo2d.c"), "w") as f:
    f.write("/* shifted */\n" * SHIFT + text)
mpicc = "mpicc.openmpi" if mpitest.MPI == "openmpi" else "mpicc.mpich"
cc = subprocess.run([mpicc, "-g", "-O2", "-o", os.path.join(rebuilt, "halo2d"), os.path.join(rebuilt, "halo2d.c"), "-lm"],
                    capture_output=True, text=True)
mpitest.expect(cc.returncode == 0, "the shifted copy compiles: %s" % cc.stderr)
shifted = run_halo(RANKS, ITERATIONS, binary=os.path.join(rebuilt, "halo2d"))
for name in ("halo2d.mpetime.json", "halo2d.mpelog"):
    d = diff_json(os.path.join(base, name), os.path.join(shifted, name))
    rows = {r["name"].split(" ")[0]: r for r in d["callsites"] if r["routine"] == "MPI_Waitall"}
    waitall = rows.get("halo2d.c:%d" % (WAITALL_LINE + SHIFT))
    mpitest.expect(waitall is not None and waitall.get("note") == "moved from L%d to L%d" % (WAITALL_LINE, WAITALL_LINE + SHIFT),
                   "%s: the rebuilt Waitall matched, moved: %r" % (name, rows))
    only = [r for r in d["callsites"] if r.get("note", "").startswith("only in")]
    mpitest.expect(d["callsites_moved"] >= 10 and not only,
                   "%s: every site of main matched (%d moved), none only in A or B: %r" % (name, d["callsites_moved"], only))

# 4 against 8 ranks: compared per rank, and said so.
eight = run_halo(8, 10)
for name in ("halo2d.mpetime.json", "halo2d.mpelog"):
    p = diff(os.path.join(base, name), os.path.join(eight, name))
    mpitest.expect("totals scaled per rank: A has 4 ranks, B has 8" in p.stdout, "%s: 4 vs 8 says so:\n%s" % (name, p.stdout))
    d = diff_json(os.path.join(base, name), os.path.join(eight, name))
    mpitest.expect(d["scaled"] and len(d["rank_groups"]) == 4, "%s: scaled, rank groups" % name)
    mpitest.expect(d["callsites_in_common"] > 0, "%s: the same program has call sites in common" % name)

# Bad input. Two unrelated programs: said so, the routine totals still compared.
ring = mpitest.run(4, [mpitest.program("ring"), "3"], tools=("time", "log"), env={"MPE_QUIET": "1"})
for name, other in (("halo2d.mpetime.json", "ring.mpetime.json"), ("halo2d.mpelog", "ring.mpelog")):
    p = diff(os.path.join(base, name), os.path.join(ring.workdir, other))
    mpitest.expect("no call site in common" in p.stdout, "unrelated programs said so:\n%s" % p.stdout)
    d = diff_json(os.path.join(base, name), os.path.join(ring.workdir, other))
    names = {r["name"] for r in d["routines"]}
    mpitest.expect("MPI_Waitall" in names and "MPI_Send" in names, "routine totals of both: %r" % names)
# A profile against a log: refused, saying what to pass.
p = diff(os.path.join(base, "halo2d.mpetime.json"), os.path.join(slow, "halo2d.mpelog"), check=False)
mpitest.expect(p.returncode != 0 and "pass two libmpetime profiles" in p.stderr and "two logs" in p.stderr,
               "a profile against a log refused: %d %r" % (p.returncode, p.stderr))
# A damaged log and a damaged report: the reader's error.
log = os.path.join(base, "halo2d.mpelog")
cut = os.path.join(base, "cut.mpelog")
with open(log, "rb") as f:
    data = f.read()
with open(cut, "wb") as f:
    f.write(data[: len(data) // 2])
p = diff(log, cut, check=False)
mpitest.expect(p.returncode != 0 and re.match(r"mpe: (truncated|corrupt|not-a-logfile)", p.stderr),
               "a truncated log: the reader's error: %d %r" % (p.returncode, p.stderr))
bad = os.path.join(base, "bad.mpetime.json")
with open(bad, "w") as f:
    f.write('{"tool": "libmpetime", "size": 4, "per_rank": [{"rank": 0}]}')
p = diff(os.path.join(base, "halo2d.mpetime.json"), bad, check=False)
mpitest.expect(p.returncode != 0 and p.stderr.startswith("mpe: corrupt:"), "a damaged report: %r" % p.stderr)
p = diff(os.path.join(base, "halo2d.mpetime.json"), os.path.join(base, "missing.json"), check=False)
mpitest.expect(p.returncode != 0 and "missing.json" in p.stderr, "a missing file named: %r" % p.stderr)

for w in (base, slow, eight, ring.workdir, shifted, rebuilt):
    shutil.rmtree(w, ignore_errors=True)
print("diff: " + "; ".join(figures))
