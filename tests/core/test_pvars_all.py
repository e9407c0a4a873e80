"""Every MPI_T performance variable at once (MPE_TIME_PVARS=all, MPE_LOG_PVARS=all, with libumq
beside them) never harms the program. MPI_T lists variables of components the MPI library never
initialised; binding them crashes inside the library (Open MPI's psm2 MTL without psm2 hardware:
PMPI_T_pvar_handle_alloc -> psm2_mq_get_stats). The shared reader skips them by one rule and says
so in one line, once per process, naming each one.

Known true values: on Open MPI the PML here is ob1, so the MTL components' variables (MPI_T
category ompi_mtl_*, named mtl_*) are the ones skipped, and the queue variable of the ob1 PML
(pml_ob1_unexpected_msgq_length) is read; Debian's MPICH exports no variable, so nothing is skipped.
Naming a skipped variable explicitly costs one line with the reason, and the program goes on."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest as m  # noqa: E402

NP = 4
SKIP_LINE = re.compile(r"^mpe-tools: MPI_T: (\d+) performance variables? not read \(([^)]*)\): (.*)$")


def listed_variables():
    """The performance variables `mpe-mpit` lists (a process of its own, no handle bound)."""
    p = subprocess.run([os.path.join(m.BUILD, "bin", "mpe-mpit")], capture_output=True, text=True, timeout=60)
    m.expect(p.returncode == 0, "mpe-mpit: exit %d: %s" % (p.returncode, p.stderr))
    return [v["name"] for v in json.loads(p.stdout)["performance_variables"]]


listed = listed_variables()
# The MTLs serve only Open MPI's cm PML, which does not run here (ob1 is the default without
# psm2/ofi hardware): their variables are the unsafe ones.
expected_skipped = sorted(n for n in listed if n.startswith("mtl_")) if m.MPI == "openmpi" else []
if m.MPI == "openmpi":
    m.expect(expected_skipped, "Open MPI here lists its psm2 MTL's variables: %r" % listed)

plain = m.run(NP, [m.program("ring"), "3"])
settings = {"MPE_TIME_PVARS": "all", "MPE_LOG_PVARS": "all", "MPE_QUIET": "1"}
r = m.run(NP, [m.program("ring"), "3"], tools=("time", "log", "umq"), env=settings, check=False, timeout=180)
m.expect(r.rc == 0, "all variables: exit %d\nstderr:\n%s" % (r.rc, r.stderr))
m.expect_eq(r.stdout, plain.stdout, "the program's output with every variable read")
for bad in ("Segmentation", "Signal:", "Aborted", "terminate called"):
    m.expect(bad not in r.stderr, "%r in stderr:\n%s" % (bad, r.stderr))
lines = [l for l in r.stderr.splitlines() if SKIP_LINE.match(l)]
if expected_skipped:
    m.expect(len(lines) == 1, "one line names the skipped variables (two tools asked for all): %r" % r.stderr)
    n, names, why = SKIP_LINE.match(lines[0]).groups()
    m.expect_eq(sorted(names.split(", ")), expected_skipped, "the variables named as not read")
    m.expect_eq(int(n), len(expected_skipped), "their count")
    m.expect("cm PML" in why, "the line says why: %r" % why)
else:
    m.expect_eq(lines, [], "no variable skipped on this MPI")

# The counters' report holds the variables read, none of the skipped ones.
report = r.json("ring.mpetime.pvars.json")
read = [v["name"] for v in report["variables"]]
m.expect(not set(read) & set(expected_skipped), "no skipped variable read: %r" % read)
if m.MPI == "openmpi":
    m.expect("pml_ob1_unexpected_msgq_length" in read, "the ob1 queue variable is read: %r" % read)
m.cleanup(r)

# A skipped variable named explicitly: one line with its reason, the program unharmed.
for name in expected_skipped[:1]:
    r = m.run(NP, [m.program("ring"), "3"], tools=("time",), env={"MPE_TIME_PVARS": name}, check=False)
    m.expect(r.rc == 0, "%s named: exit %d\nstderr:\n%s" % (name, r.rc, r.stderr))
    m.expect_eq(r.stdout, plain.stdout, "the program's output with %s named" % name)
    said = [l for l in r.stderr.splitlines() if name in l and "cm PML" in l]
    m.expect(len(said) == 1, "%s named: one line with the reason: %r" % (name, r.stderr))
    m.cleanup(r)
m.cleanup(plain)
print("every performance variable: the program unharmed; %d skipped by the in-use rule, named in one line" %
      len(expected_skipped))
