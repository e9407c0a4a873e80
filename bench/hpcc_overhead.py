#!/usr/bin/env python3
"""What libmpetime, libumq and liblog together add to a real application no one here wrote:
Debian's hpcc (HPC Challenge, linked against Open MPI), without relinking, on 2 ranks (HPL at
N = 2000, NB = 80 on a 1 x 2 grid; the other kernels as tests/realprogs/test_hpcc.py runs them).
The stand-in for the issue's LULESH figure, which Debian does not package.

Each round runs hpcc plain and under `mpe run --time --umq --log`, in alternating order, so that
machine noise hits both alike. Prints, as medians over the rounds of each round's ratio (tools /
plain): the whole run's wall time (start-up and the tools' finalize included), and hpcc's own
figures of merit (higher is better, so a ratio under 1 is a slowdown) and its ring latency.

MPE_ settings pass through to the tooled runs: MPE_LOG_FILTER=f.txt with `exclude routine
MPI_Testany` shows what leaving out MPIRandomAccess's polling costs.

Usage: bench/hpcc_overhead.py [Open MPI build dir, default build-ompi] [rounds, default 7]
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = ["HPL_Tflops", "StarDGEMM_Gflops", "PTRANS_GBs", "MPIRandomAccess_GUPs", "MPIFFT_Gflops",
           "RandomlyOrderedRingLatency_usec"]


def input_file(build):
    """test_hpcc.py's input file (one place for it), with a larger HPL."""
    sys.path[:0] = [os.path.join(HERE, "..", "tests", "realprogs"), os.path.join(HERE, "..", "tests")]
    # What its test harness reads from ctest's environment when imported.
    os.environ.setdefault("MPE_BUILD_DIR", build)
    os.environ.setdefault("MPE_MPIEXEC", "mpiexec.openmpi")
    os.environ.setdefault("MPE_MPI", "openmpi")
    from test_hpcc import HPCCINF
    text = HPCCINF
    for old, new in [("400          Ns", "2000         Ns"), ("40           NBs", "80           NBs"),
                     ("2            Ps", "1            Ps")]:
        if old not in text:
            sys.exit("hpcc_overhead: test_hpcc.py's input no longer has %r" % old)
        text = text.replace(old, new, 1)
    return text


def run(build, tools, workdir):
    """Wall seconds and hpcc's figures of one run."""
    out = os.path.join(workdir, "hpccoutf.txt")
    if os.path.exists(out):
        os.remove(out)  # hpcc appends to it
    cmd = ["mpiexec.openmpi", "-n", "2", "hpcc"]
    if tools:
        cmd = [os.path.join(build, "bin", "mpe"), "run", "--time", "--umq", "--log", "--quiet", "--"] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", MPE_TMPDIR=workdir)
    start = time.monotonic()
    r = subprocess.run(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=600)
    wall = time.monotonic() - start
    text = open(out).read() if os.path.exists(out) else ""
    if r.returncode != 0 or "Success=1" not in text:
        sys.exit("hpcc_overhead: hpcc failed (%s, exit %d): %s" % ("tools" if tools else "plain", r.returncode,
                                                                   r.stderr.strip()[-300:]))
    figures = {k: float(v) for k, v in re.findall(r"^(\w+)=([0-9.eE+-]+)$", text, re.M) if k in FIGURES}
    return wall, figures


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build-ompi")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    if rounds < 1 or not shutil.which("hpcc") or not os.path.exists(os.path.join(build, "bin", "mpe")):
        sys.exit("usage: bench/hpcc_overhead.py [Open MPI build dir with bin/mpe] [rounds >= 1]; needs Debian's hpcc")
    workdir = tempfile.mkdtemp(prefix="mpe-hpcc-bench-")
    with open(os.path.join(workdir, "hpccinf.txt"), "w") as f:
        f.write(input_file(build))
    ratios = {k: [] for k in ["wall"] + FIGURES}
    plain_walls = []
    for i in range(rounds):
        order = [False, True] if i % 2 == 0 else [True, False]
        results = {tools: run(build, tools, workdir) for tools in order}
        (pw, pf), (tw, tf) = results[False], results[True]
        plain_walls.append(pw)
        ratios["wall"].append(tw / pw)
        for k in FIGURES:
            if pf.get(k) and k in tf:
                ratios[k].append(tf[k] / pf[k])
    shutil.rmtree(workdir, ignore_errors=True)
    print("hpcc on 2 ranks, plain against `mpe run --time --umq --log`, medians of %d paired rounds "
          "(plain run %.2f s):" % (rounds, statistics.median(plain_walls)))
    for k in ["wall"] + FIGURES:
        if ratios[k]:
            what = "time ratio" if k in ("wall", "RandomlyOrderedRingLatency_usec") else "rate ratio"
            print("  %-32s %s %.3f" % (k, what, statistics.median(ratios[k])))


if __name__ == "__main__":
    main()
