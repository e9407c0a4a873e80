"""Runs every conformance program with 4 ranks, plain and under the tools in
MPE_CONFORMANCE_TOOLS (comma-separated), and requires identical output and PASS."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mpitest  # noqa: E402

tools = [t for t in os.environ.get("MPE_CONFORMANCE_TOOLS", "null").split(",") if t]
programs = [p for p in os.environ["MPE_CONFORMANCE_PROGRAMS"].split(",") if p]
mpitest.expect(len(programs) >= 8, "expected the full conformance set, found %s" % programs)
env = {"TMPDIR": os.environ.get("TMPDIR", "/tmp")}
for prog in programs:
    plain = mpitest.run(4, [mpitest.program(prog)], env=env)
    mpitest.expect("PASS" in plain.stdout, "%s does not pass without tools:\n%s" % (prog, plain.stdout))
    tooled = mpitest.run(4, [mpitest.program(prog)], tools=tools, env=env, workdir=None)
    mpitest.expect_eq(tooled.stdout, plain.stdout, "%s output under %s" % (prog, "+".join(tools)))
    mpitest.cleanup(plain)
    mpitest.cleanup(tooled)
    print("%s: identical under %s" % (prog, "+".join(tools)))
print("conformance: %d programs identical under %s" % (len(programs), "+".join(tools)))
