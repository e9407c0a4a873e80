"""A tool whose allocations fail, inside its hooks and at finalize, must not harm the program: the
program completes with the same output, and the tool says what it lost in `mpe-tools:` lines
(one per failure site, never a crash, a C++ exception or a hang). Besides each tool's default
output, the finalize steps of liblog's OTF2 output (MPE_LOG_FORMAT=otf2) and of libmpetime's MPI_T
counters (MPE_TIME_PVARS) are failed too: each is a gather to rank 0 that a rank short of memory
must not leave the others waiting in."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest as m  # noqa: E402

# Every variable the shared reader may bind (on Open MPI: its ob1 PML's queues and the memory pool's
# counter; the MTL variables it must skip are tested by test_pvars_all.py).
PVARS = "all"

SHIM = os.path.join(m.BUILD, "lib", "libfailing_alloc.so")
TOOLS = {"log": "liblog.so", "time": "libmpetime.so", "umq": "libumq.so"}
# What is run: a tool, and the settings that choose its output.
CONFIGS = (
    ("log", "log", {}),
    ("time", "time", {}),
    ("umq", "umq", {}),
    ("log with OTF2 output", "log", {"MPE_LOG_FORMAT": "otf2"}),
    ("time with MPE_TIME_PVARS", "time", {"MPE_TIME_PVARS": PVARS}),
)
HANG_SECONDS = 120  # a run that takes this long is a rank left waiting in a collective


def run(tool, after, argv, settings, report=False):
    preload = SHIM + ":" + m.lib(tool)
    env = {"MPE_TEST_FAIL_ALLOC_IN": TOOLS[tool], "MPE_TEST_FAIL_ALLOC_AFTER": str(after)}
    env.update(settings)
    if report:
        env["MPE_TEST_FAIL_ALLOC_REPORT"] = "1"
    flags = ["-x", "LD_PRELOAD=" + preload] if m.MPI == "openmpi" else ["-genv", "LD_PRELOAD", preload]
    for k, v in env.items():
        flags += ["-x", k + "=" + v] if m.MPI == "openmpi" else ["-genv", k, v]
    try:
        return m.run(4, flags + argv, timeout=HANG_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        m.fail("%s under %s %r failing after %d allocations: no end after %d s (a hang at finalize?)" %
               (argv[0], tool, settings, after, HANG_SECONDS))


# Each tool's hooks under two programs; the settings that only add finalize steps (OTF2 output, the
# MPI_T counters) under the first only: their steps do not depend on the program's traffic, and
# each failure point is a 4-rank run (the test's time is those runs).
# Open MPI runs halo2d alone: ring repeats the same hooks under other traffic, which does not
# depend on the MPI, and each of its 21 runs takes about 2 s on Open MPI here (0.4 s on MPICH).
PROGRAMS = [("halo2d", [m.program("halo2d")])] + ([("ring", [m.program("ring")])] if m.MPI != "openmpi" else [])
for name, argv in PROGRAMS:
    plain = m.run(4, argv)
    plain_totals = {}  # allocations per tool without the extra settings
    for label, tool, settings in (CONFIGS if name == "halo2d" else [c for c in CONFIGS if not c[2]]):
        # How many allocations each rank of the tool makes in a whole run; then fail from points
        # spread over it: set-up, the hooks while the program runs, and finalize.
        counted = run(tool, 10**12, argv, settings, report=True)
        totals = [int(l.split()[1]) for l in counted.stderr.splitlines() if l.startswith("failing_alloc:")]
        m.expect(len(totals) == 4 and min(totals) > 0, "%s under %s: allocation counts %r" % (name, label, totals))
        m.cleanup(counted)
        total = min(totals)
        points = {0, total // 4, total // 2, (9 * total) // 10, total - 5, total - 1}
        if settings and tool in plain_totals:
            # The setting's own work comes after what the tool does without it (the OTF2 archive
            # after the merge, the counters' report after the time report): fail inside it too.
            base = min(plain_totals[tool], total)
            points |= {base + (total - base) * i // 6 for i in range(6)}
        else:
            plain_totals[tool] = total
        for after in sorted(points):
            r = run(tool, after, argv, settings)
            what = "%s under %s failing after %d allocations" % (name, label, after)
            m.expect(r.rc == 0, "%s: exit %d\nstderr:\n%s" % (what, r.rc, r.stderr))
            m.expect_eq(r.stdout, plain.stdout, what + ": program output")
            for bad in ("terminate called", "std::bad_alloc", "Segmentation", "Aborted"):
                m.expect(bad not in r.stderr, "%s: %r in stderr:\n%s" % (what, bad, r.stderr))
            tool_lines = [l for l in r.stderr.splitlines() if l.startswith("mpe-tools:")]
            other = [l for l in r.stderr.splitlines() if l and not l.startswith("mpe-tools:")]
            m.expect(not other, "%s: stray stderr lines %r" % (what, other))
            m.expect(any("memory" in l for l in tool_lines), "%s: no line says what was lost: %r" % (what, tool_lines))
            m.cleanup(r)
    m.cleanup(plain)
print("allocation failures (liblog's OTF2 output and MPE_TIME_PVARS included): programs complete with unchanged "
      "output and no hang; the tools report in one-line messages")
