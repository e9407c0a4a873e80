"""A tool whose allocations fail, inside its hooks and at finalize, must not harm the program: the
program completes with the same output, and the tool says what it lost in `mpe-tools:` lines
(one per failure site, never a crash or a C++ exception)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest as m  # noqa: E402

SHIM = os.path.join(m.BUILD, "lib", "libfailing_alloc.so")
TOOLS = {"log": "liblog.so", "time": "libmpetime.so", "umq": "libumq.so"}


def run(tool, after, argv, report=False):
    preload = SHIM + ":" + m.lib(tool)
    env = {"MPE_TEST_FAIL_ALLOC_IN": TOOLS[tool], "MPE_TEST_FAIL_ALLOC_AFTER": str(after)}
    if report:
        env["MPE_TEST_FAIL_ALLOC_REPORT"] = "1"
    flags = ["-x", "LD_PRELOAD=" + preload] if m.MPI == "openmpi" else ["-genv", "LD_PRELOAD", preload]
    for k, v in env.items():
        flags += ["-x", k + "=" + v] if m.MPI == "openmpi" else ["-genv", k, v]
    return m.run(4, flags + argv, timeout=120, check=False)


for name, argv in (("halo2d", [m.program("halo2d")]), ("ring", [m.program("ring")])):
    plain = m.run(4, argv)
    for tool in TOOLS:
        # How many allocations each rank of the tool makes in a whole run; then fail from points
        # spread over it: set-up, the hooks while the program runs, and finalize.
        counted = run(tool, 10**12, argv, report=True)
        totals = [int(l.split()[1]) for l in counted.stderr.splitlines() if l.startswith("failing_alloc:")]
        m.expect(len(totals) == 4 and min(totals) > 0, "%s under %s: allocation counts %r" % (name, tool, totals))
        m.cleanup(counted)
        total = min(totals)
        for after in sorted({0, total // 4, total // 2, (9 * total) // 10, total - 5, total - 1}):
            r = run(tool, after, argv)
            what = "%s under %s failing after %d allocations" % (name, tool, after)
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
print("allocation failures: programs complete with unchanged output; the tools report in one-line messages")
