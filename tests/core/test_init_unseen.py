"""A program whose MPI_Init the tools never see (here: PMPI_Init called directly) gets one
`mpe-tools:` line at exit naming the likely cause, from one rank, and runs unchanged; a program
the tools do see gets no such line."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest as m  # noqa: E402

plain = m.run(2, [m.program("init_unseen")])
for tools in (["log"], ["time", "umq", "log"]):
    r = m.run(2, [m.program("init_unseen")], tools=tools)
    m.expect_eq(r.stdout, plain.stdout, "init_unseen output under %s" % "+".join(tools))
    lines = [l for l in r.stderr.splitlines() if "never saw MPI_Init" in l]
    m.expect_eq(len(lines), 1, "lines saying MPI_Init was not seen under %s (stderr: %r)" % ("+".join(tools), r.stderr))
    m.expect(lines[0].startswith("mpe-tools:") and "mpi_f08" in lines[0], "the line names a cause: %r" % lines[0])
    m.cleanup(r)
seen = m.run(2, [m.program("ring")], tools=["log"], env={"MPE_QUIET": "1"})
m.expect("never saw MPI_Init" not in seen.stderr, "a line for a program whose MPI_Init was seen: %r" % seen.stderr)
m.cleanup(seen)
m.cleanup(plain)
print("init unseen: one line at exit, program output unchanged")
