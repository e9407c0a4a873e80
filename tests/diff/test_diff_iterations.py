"""Iterations found in real logs (liblog, 4 ranks), against the known iteration count, by each
basis: halo2d's per-iteration MPI_Allreduce on MPI_COMM_WORLD (HALO2D_ALLREDUCE=1), its
MPI_Waitall without it (no collective repeats), MPI_Pcontrol around each iteration
(HALO2D_PCONTROL=1), and the pcontrol sample (one Pcontrol region: the barrier repeating inside). Then, with Pcontrol iterations, a run
whose rank 1 computes DELAY longer in one iteration: `mpe diff --iterations` names that iteration
and rank 1, and `--fail-if-slower 5% --region "Pcontrol level 1"` fails on that region."""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import mpitest  # noqa: E402

RANKS = 4
ITERATIONS = 8
SOURCE = os.path.join(HERE, "..", "..", "samples", "halo2d.c")


def line_of(text):
    with open(SOURCE) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    mpitest.fail("no %r in halo2d.c" % text)


def logged(argv, env=None):
    r = mpitest.run(RANKS, argv, tools=("log",), env=dict(env or {}, MPE_QUIET="1"))
    logs = r.files(".mpelog")
    mpitest.expect(len(logs) == 1, "one log written: %r" % logs)
    return r, logs[0]


def iterations(a, b=None, *extra, check=True):
    p = mpitest.mpe("diff", a, b or a, "--iterations", "--json", *extra, check=check)
    return json.loads(p.stdout)["iterations"] if p.returncode == 0 else p


halo = mpitest.program("halo2d")
runs = []
for knob, basis in (({"HALO2D_ALLREDUCE": "1"}, "MPI_Allreduce on MPI_COMM_WORLD at halo2d.c:%d (main)" %
                     line_of("MPI_Allreduce(&local_residual, &largest")),
                    ({}, "halo2d.c:%d (main), once per iteration on every rank" % line_of("MPI_Irecv(&u[0 * stride")),
                    ({"HALO2D_PCONTROL": "1"}, "MPI_Pcontrol markers")):
    r, log = logged([halo, str(ITERATIONS)], knob)
    runs.append(r)
    it = iterations(log)
    mpitest.expect_eq(it["a"]["count"], ITERATIONS, "iterations of halo2d %r" % knob)
    mpitest.expect(basis in it["a"]["basis"], "basis of halo2d %r: %r, expected %r" % (knob, it["a"]["basis"], basis))
    # The same log against itself: every iteration within the noise.
    mpitest.expect(it["parting"] == [], "halo2d %r against itself parts nowhere: %r" % (knob, it["parting"]))
pcontrol_base = log

# The pcontrol sample: one Pcontrol region, which gives way to what repeats inside it: its loop's
# MPI_Barrier on MPI_COMM_WORLD, every second of 10 steps (REGION_BARRIER = 5 in pcontrol.c).
r, log = logged([mpitest.program("pcontrol")])
runs.append(r)
it = iterations(log)
pcontrol_c = os.path.join(HERE, "..", "..", "samples", "pcontrol.c")
barrier = [n for n, line in enumerate(open(pcontrol_c), 1) if line.startswith("      MPI_Barrier(MPI_COMM_WORLD);")][0]  # the loop's
mpitest.expect(it["a"]["count"] == 5 and it["a"]["basis"] == "MPI_Barrier on MPI_COMM_WORLD at pcontrol.c:%d (main)" % barrier,
               "the pcontrol sample: 5 iterations cut at the loop's barrier (line %d): %r" % (barrier, it["a"]))

# Rank 1 computes DELAY longer in iteration DELAYED only.
DELAYED, DELAY_US = 5, 200000
r, slow = logged([halo, str(ITERATIONS)], {"HALO2D_PCONTROL": "1", "HALO2D_DELAY_RANK": "1",
                                            "HALO2D_DELAY_US": str(DELAY_US),
                                            "HALO2D_DELAY_ITERATIONS": "%d-%d" % (DELAYED, DELAYED)})
runs.append(r)
it = iterations(pcontrol_base, slow)
named = [row["iteration"] for row in it["iterations"] if 1 in row.get("ranks_outside_mpi_changed", [])]
mpitest.delayed_iterations(it, 1, named, [DELAYED], DELAY_US * 1e-6)
mpitest.expect(DELAYED in it["parting"], "iteration %d named where A and B part: %r" % (DELAYED, it["parting"]))
row = it["iterations"][DELAYED]
mpitest.expect(abs(row["per_rank_outside_mpi_delta_s"][1] - DELAY_US * 1e-6) <= 0.05 * DELAY_US * 1e-6,
               "rank 1's time outside MPI in iteration %d grew by %.4f s, expected %.4f s within 5%%" %
               (DELAYED, row["per_rank_outside_mpi_delta_s"][1], DELAY_US * 1e-6))
text = mpitest.mpe("diff", pcontrol_base, slow, "--iterations").stdout
mpitest.expect("A and B part in" in text and "outside MPI: rank 1 +0.2" in text,
               "the text names the iteration and rank 1:\n%s" % text)

# The threshold on a named region: Pcontrol level 1 (the iterations) is slower in B.
p = mpitest.mpe("diff", pcontrol_base, slow, "--fail-if-slower", "5%", "--region", "Pcontrol level 1", check=False)
mpitest.expect(p.returncode == 1 and "B is slower than A: region Pcontrol level 1" in p.stderr,
               "--region \"Pcontrol level 1\" fails: %d %r" % (p.returncode, p.stderr))
p = mpitest.mpe("diff", pcontrol_base, pcontrol_base, "--fail-if-slower", "5%", "--region", "level 1", check=False)
mpitest.expect_eq(p.returncode, 0, "A against itself on region \"level 1\"")
p = mpitest.mpe("diff", pcontrol_base, slow, "--fail-if-slower", "5%", "--region", "solve", check=False)
mpitest.expect(p.returncode == 1 and "no region \"solve\"" in p.stderr and "Pcontrol level 1" in p.stderr,
               "an unknown region names the ones there are: %d %r" % (p.returncode, p.stderr))

for r in runs:
    shutil.rmtree(r.workdir, ignore_errors=True)
print("diff_iterations: rank 1 outside MPI in iteration %d %+.4f s (expected %.4f)" % (
    DELAYED, row["per_rank_outside_mpi_delta_s"][1], DELAY_US * 1e-6))
