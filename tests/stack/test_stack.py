"""Foreign PMPI tools stacked with ours (issue 26): `mpe run --stack` with two PMPI libraries
written as users write them (libjoblog, libcollperf: see their headers), in several orders, with
libmpetime and with liblog. STACK_TEST picks a part:

  counts       halo2d, ring, fortran_ring and fortran_halo_f08 in three orders, with --time and
               with --log: every layer sees every call once (its counts are the program's known
               counts, and libmpetime's or liblog's), at the depth its place in the stack gives,
               and the program's output is the one without tools
  allgather    libcollperf's MPI_Allgather calls MPI_Barrier through MPI_: the layers below it
               (libmpetime and liblog among them) see that barrier once, those above never
  mpiio        conf_mpiio: ROMIO's internal PMPI_ calls reach no tool (every layer's counts are
               what libmpetime counts without a stack)
  conformance  the conformance set under a stack: output identical to the run without tools
  pcontrol     samples/pcontrol.c: every layer sees the same levels in order; liblog still
               honours them although the layer above it keeps MPI_Pcontrol to itself
  errors       a missing library or one that is no PMPI tool: `mpe run --stack` stops before
               launching and names it; MPE_STACK set by hand costs one line and the run goes on

What a layer saw is in <workdir>/<libjoblog|libcollperf>.<rank>.txt (layer_report.h). The
expectation for every layer follows the PMPI rules the stack keeps:
  a layer sees the application's calls of the routines it wraps, plus the calls the layers above
  it made themselves (through MPI_ or PMPI_), plus its own calls through MPI_ (which come back to
  its own wrapper); the suite's tools' own calls (at init, at finalize) and the MPI library's
  internal calls reach no one; the depth at which a call reaches a layer is the number of layers
  above it that wrap the routine (each wrapper enters libstacktrail before calling PMPI_).
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "libtime"))
import mpitest  # noqa: E402
from timelib import calls, profiles  # noqa: E402

NP = 4
PART = os.environ.get("STACK_TEST", "counts")
LIBDIR = os.environ.get("STACK_LIBS_DIR") or os.path.join(mpitest.BUILD, "tests", "stack")
LAYERS = {name: os.path.join(LIBDIR, "lib%s.so" % name) for name in ("joblog", "collperf")}
NOTATOOL = os.path.join(LIBDIR, "libnotatool.so")
STACKLIB = os.path.join(mpitest.BUILD, "lib", "libmpestack.so")
PREFIX = "stk"
check, failures = mpitest.check, mpitest.failures


def report(what, claim, since):
    """Prints what a run showed: the claim when no check failed since `since` (len(failures))."""
    if len(failures) == since:
        print("%s: %s" % (what, claim), flush=True)
    else:
        print("%s: FAILED (%d checks)" % (what, len(failures) - since), flush=True)


def check_eq(actual, expected, what):
    return check(actual == expected, "%s: expected %r, got %r" % (what, expected, actual))


def wrapped_routines(layer):
    """The routines a layer wraps, read from its source's LAYER_ROUTINES list."""
    with open(os.path.join(HERE, layer + ".c")) as f:
        text = f.read()
    m = re.search(r"#define LAYER_ROUTINES\(X\)((?:[^\n]*\\\n)*[^\n]*)", text)
    return {"MPI_" + n for n in re.findall(r"X\((\w+)\)", m.group(1))}


WRAPS = {name: wrapped_routines(name) for name in LAYERS}

# ---- running ---------------------------------------------------------------------------------


class Run:
    def __init__(self, p, workdir, order):
        self.rc, self.stdout, self.stderr, self.workdir, self.order = p.returncode, p.stdout, p.stderr, workdir, order


def stack_option(order):
    """--stack's value for a stack order (top first; "mpe" is the suite's tools). With "mpe" on
    top it is left out, which is where --stack puts ours by default."""
    listed = order[1:] if order[0] == "mpe" else order
    return ",".join(l if l == "mpe" else LAYERS[l] for l in listed)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("MPE_STACK", "LD_PRELOAD", "COLLPERF_BARRIER_IN_ALLGATHER")}
    env["MPE_LOGFILE_PREFIX"] = PREFIX
    env["TMPDIR"] = os.environ.get("TMPDIR", "/tmp")
    env.update(extra or {})
    return env


def mpe_run(argv, order, tools=("time",), env=None, stack=None, timeout=180):
    """`mpe run --stack ... --<tool>... -- mpiexec -n NP argv` in a fresh directory."""
    workdir = tempfile.mkdtemp(prefix="mpestack-")
    cmd = [mpitest.MPE_COMMAND, "run", "--stack", stack if stack is not None else stack_option(order)]
    cmd += ["--" + t for t in tools] + ["--", mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + ["-n", str(NP)]
    cmd += [str(a) for a in argv]
    p = subprocess.run(cmd, cwd=workdir, env=clean_env(dict(env or {}, STACKTEST_DIR=workdir)),
                       capture_output=True, text=True, timeout=timeout)
    r = Run(p, workdir, order)
    if not check(p.returncode == 0, "%s exited %d\nstdout:\n%s\nstderr:\n%s" % (" ".join(cmd), p.returncode,
                                                                              p.stdout, p.stderr)):
        return None
    return r


def preload_run(argv, preload, mpe_stack, env=None):
    """The program under mpiexec with LD_PRELOAD and MPE_STACK set by hand (no `mpe run`)."""
    workdir = tempfile.mkdtemp(prefix="mpestack-")
    settings = {"LD_PRELOAD": ":".join(preload), "MPE_STACK": mpe_stack, "STACKTEST_DIR": workdir}
    flags = []
    for k, v in settings.items():
        flags += ["-x", "%s=%s" % (k, v)] if mpitest.MPI == "openmpi" else ["-genv", k, v]
    cmd = [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + flags + ["-n", str(NP)] + [str(a) for a in argv]
    p = subprocess.run(cmd, cwd=workdir, env=clean_env(env), capture_output=True, text=True, timeout=180)
    return Run(p, workdir, None)


def program(name):
    """A built program: the build's, else beside the stack's fixtures (a build of the tests alone)."""
    try:
        return mpitest.program(name)
    except FileNotFoundError:
        path = os.path.join(LIBDIR, "..", "..", "bin", name)
        mpitest.expect(os.path.exists(path), "no program %s" % name)
        return os.path.abspath(path)


def plain_output(argv, env=None):
    r = mpitest.run(NP, [str(a) for a in argv], env=clean_env(env))
    out = r.stdout
    mpitest.cleanup(r)
    return out


def cleanup(r):
    if r is not None:
        shutil.rmtree(r.workdir, ignore_errors=True)


# ---- what the layers and the suite's tools saw -----------------------------------------------


def read_layer(workdir, layer, rank):
    """A layer's file as {'count': {}, 'depth': {}, 'nested': {}, 'own-mpi': {}, 'own-pmpi': {},
    'pcontrol': [...]}, or None when it is missing."""
    path = os.path.join(workdir, "lib%s.%d.txt" % (layer, rank))
    if not os.path.exists(path):
        return None
    out = {"count": {}, "depth": {}, "nested": {}, "own-mpi": {}, "own-pmpi": {}, "pcontrol": [], "end": False}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] in ("count", "nested", "own-mpi", "own-pmpi"):
                out[parts[0]][parts[1]] = int(parts[2])
            elif parts[0] == "depth":
                out["depth"][parts[1]] = parts[2] if parts[2] == "inconsistent" else int(parts[2])
            elif parts[0] == "pcontrol":
                out["pcontrol"].append(int(parts[1]))
            elif parts[0] == "end":
                out["end"] = True
    return out


def read_layers(r, what):
    """Every foreign layer's file on every rank: {layer: {rank: data}}; a missing one fails."""
    got = {}
    for layer in (l for l in r.order if l != "mpe"):
        got[layer] = {}
        for rank in range(NP):
            data = read_layer(r.workdir, layer, rank)
            if check(data is not None and data["end"], "%s: lib%s wrote no complete file for rank %d (files: %s)\n%s"
                     % (what, layer, rank, sorted(os.listdir(r.workdir)), r.stderr)):
                got[layer][rank] = data
    return got


def time_counts(r, what):
    """libmpetime's calls per routine, per rank."""
    profs = profiles(r.workdir, PREFIX)
    check_eq(sorted(profs), list(range(NP)), "%s: ranks with a libmpetime file" % what)
    return {rank: calls(p) for rank, p in profs.items()}


def log_counts(r, what):
    """liblog's states per routine, per rank (`mpe stat --json`)."""
    path = os.path.join(r.workdir, PREFIX + ".mpelog")
    if not check(os.path.exists(path), "%s: no %s\n%s" % (what, path, r.stderr)):
        return {}
    st = json.loads(mpitest.mpe("stat", "--json", path).stdout)
    m = st["messages"]
    check(m["unmatched_sends"] == 0 and m["unmatched_recvs"] == 0 and m["backward"] == 0,
          "%s: the log's messages do not all match: %r" % (what, m))
    return {rank: dict(st["states_per_rank"].get(str(rank), {})) for rank in range(NP)}


def reaching(order, i, layers, rank):
    """The calls that the layers made themselves and that reach level i of the stack: those the
    layers above made through MPI_ or PMPI_, and level i's own through MPI_."""
    extra = collections.Counter()
    for j, layer in enumerate(order[:i + 1]):
        if layer == "mpe" or layer not in layers or rank not in layers[layer]:
            continue
        data = layers[layer][rank]
        extra.update(data["own-mpi"])
        if j < i:
            extra.update(data["own-pmpi"])
    return extra


def check_stack(r, what, layers, reference=None, known=None, skip=()):
    """Every foreign layer's counts, nested calls and depths against what the PMPI rules give.
    reference: the suite tool's counts per rank in this run (libmpetime's or liblog's), from
    which the application's own calls are worked out (and compared with known, per rank, when
    given); without a reference, known gives the application's calls. skip: routines not
    compared (MPI_Pcontrol where a tool pauses on it)."""
    order = r.order
    for rank in range(NP):
        if reference is not None:
            if not check(rank in reference, "%s: no counts of the suite's tool for rank %d" % (what, rank)):
                continue
            app = collections.Counter(reference[rank])
            app.subtract(reaching(order, order.index("mpe"), layers, rank))
            app = {k: v for k, v in app.items() if v}
            if known is not None:
                want = known[rank] if isinstance(known, dict) and rank in known else known
                check_eq({k: v for k, v in app.items() if k not in skip},
                         {k: v for k, v in want.items() if k not in skip},
                         "%s rank %d: the application's calls as the suite's tool saw them (its counts less "
                         "the calls of the layers above it)" % (what, rank))
        else:
            app = known[rank] if rank in known else known
        for i, layer in enumerate(order):
            if layer == "mpe" or rank not in layers.get(layer, {}):
                continue
            data = layers[layer][rank]
            extra = reaching(order, i, layers, rank)
            want = {name: app.get(name, 0) + extra.get(name, 0) for name in WRAPS[layer] if name not in skip}
            got = {name: data["count"].get(name, 0) for name in WRAPS[layer] if name not in skip}
            check_eq({k: v for k, v in got.items() if v}, {k: v for k, v in want.items() if v},
                     "%s rank %d: lib%s's counts (level %d of %s)" % (what, rank, layer, i, ",".join(order)))
            nested = {name: data["own-mpi"].get(name, 0) for name in WRAPS[layer] if data["own-mpi"].get(name, 0)}
            check_eq(data["nested"], nested, "%s rank %d: lib%s's own MPI_ calls that came back to it"
                     % (what, rank, layer))
            for name in sorted(WRAPS[layer]):
                if name == "MPI_Pcontrol" or not app.get(name, 0):
                    continue  # the stack calls every layer's MPI_Pcontrol in turn, not nested
                above = sum(1 for l in order[:i] if l != "mpe" and name in WRAPS[l])
                check_eq(data["depth"].get(name), above, "%s rank %d: depth at which %s reached lib%s "
                         "(the number of layers above it that wrap it)" % (what, rank, name, layer))


# ---- the parts ---------------------------------------------------------------------------------

ORDERS = (["joblog", "mpe", "collperf"], ["collperf", "joblog", "mpe"], ["mpe", "joblog", "collperf"])


def ring_known(laps):
    return {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Send": laps, "MPI_Recv": laps,
            "MPI_Finalize": 1}


def halo2d_known(iters):
    return {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Dims_create": 1, "MPI_Cart_create": 1,
            "MPI_Cart_coords": 1, "MPI_Cart_shift": 2, "MPI_Type_vector": 1, "MPI_Type_commit": 1,
            "MPI_Irecv": 4 * iters, "MPI_Isend": 4 * iters, "MPI_Waitall": iters, "MPI_Allreduce": 1,
            "MPI_Type_free": 1, "MPI_Comm_free": 1, "MPI_Finalize": 1}


FORTRAN_RING_KNOWN = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Send": 10, "MPI_Recv": 10,
                      "MPI_Allreduce": 1, "MPI_Barrier": 1, "MPI_Finalize": 1}


def part_counts():
    programs = [("ring", [7], ring_known(7)), ("halo2d", [6], halo2d_known(6)),
                ("fortran_ring", [], FORTRAN_RING_KNOWN), ("fortran_halo_f08", [10], None)]
    for prog, args, known in programs:
        argv = [program(prog)] + args
        plain = plain_output(argv)
        for order in ORDERS:
            for tool in ("time", "log"):
                what = "%s --stack %s --%s" % (prog, ",".join(order), tool)
                since = len(failures)
                r = mpe_run(argv, order, tools=(tool,))
                if r is None:
                    continue
                check_eq(r.stdout, plain, "%s: program output" % what)
                layers = read_layers(r, what)
                ref = time_counts(r, what) if tool == "time" else log_counts(r, what)
                check_stack(r, what, layers, reference=ref, known=known)
                cleanup(r)
                report(what, "every layer saw every call once, in stack order", since)


def part_allgather():
    n = 5
    argv = [program("stack_allgather"), n]
    known = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Allgather": n, "MPI_Barrier": 1,
             "MPI_Finalize": 1}
    plain = plain_output(argv)
    env = {"COLLPERF_BARRIER_IN_ALLGATHER": "1"}
    runs = [(["collperf", "mpe", "joblog"], "time"), (["joblog", "collperf", "mpe"], "time"),
            (["mpe", "collperf", "joblog"], "time"), (["joblog", "mpe", "collperf"], "log"),
            (["collperf", "joblog", "mpe"], "log")]
    for order, tool in runs:
        what = "stack_allgather --stack %s --%s, collperf's MPI_Allgather calling MPI_Barrier" % (",".join(order), tool)
        since = len(failures)
        r = mpe_run(argv, order, tools=(tool,), env=env)
        if r is None:
            continue
        check_eq(r.stdout, plain, "%s: program output" % what)
        layers = read_layers(r, what)
        ref = time_counts(r, what) if tool == "time" else log_counts(r, what)
        check_stack(r, what, layers, reference=ref, known=known)
        # The point of this part, said plainly: below libcollperf, one more barrier per allgather.
        below = order.index("collperf")
        for rank in range(NP):
            for i, layer in enumerate(order):
                want = 1 + (n if i >= below else 0)
                if layer == "mpe":
                    got = ref.get(rank, {}).get("MPI_Barrier")
                    name = "libmpetime" if tool == "time" else "liblog"
                else:
                    got = layers.get(layer, {}).get(rank, {}).get("count", {}).get("MPI_Barrier")
                    name = "lib" + layer
                check_eq(got, want, "%s rank %d: MPI_Barrier calls seen by %s (%s libcollperf)"
                         % (what, rank, name, "at or below" if i >= below else "above"))
        cleanup(r)
        report(what, "the barriers reached the layers below it once, not those above", since)


def part_mpiio():
    argv = [program("conf_mpiio")]
    plain = plain_output(argv)
    # Without a stack: what libmpetime counts is the application's calls (ROMIO's own PMPI_
    # calls never reach the suite's tools).
    workdir = tempfile.mkdtemp(prefix="mpestack-")
    cmd = [mpitest.MPE_COMMAND, "run", "--time", "--", mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + ["-n", str(NP)] + argv
    p = subprocess.run(cmd, cwd=workdir, env=clean_env(), capture_output=True, text=True, timeout=180)
    mpitest.expect(p.returncode == 0, "conf_mpiio under --time failed:\n%s\n%s" % (p.stdout, p.stderr))
    base = {rank: calls(prof) for rank, prof in profiles(workdir, PREFIX).items()}
    mpitest.expect_eq(sorted(base), list(range(NP)), "conf_mpiio without a stack: ranks with a libmpetime file")
    shutil.rmtree(workdir, ignore_errors=True)
    for order in (["collperf", "joblog", "mpe"], ["mpe", "joblog", "collperf"], ["joblog", "mpe", "collperf"]):
        what = "conf_mpiio --stack %s --time" % ",".join(order)
        since = len(failures)
        r = mpe_run(argv, order, tools=("time",))
        if r is None:
            continue
        check_eq(r.stdout, plain, "%s: program output" % what)
        check("PASS" in r.stdout, "%s: no PASS" % what)
        layers = read_layers(r, what)
        check_stack(r, what, layers, reference=time_counts(r, what), known=base)
        cleanup(r)
        report(what, "the layers' counts are the application's: no internal PMPI_ call of the MPI-IO library "
               "reached a tool", since)


def part_conformance():
    programs = [p for p in os.environ.get("MPE_CONFORMANCE_PROGRAMS", "").split(",") if p]
    mpitest.expect(len(programs) >= 8, "expected the full conformance set, found %s" % programs)
    for prog in programs:
        argv = [program(prog)]
        since = len(failures)
        plain = plain_output(argv)
        check("PASS" in plain, "%s does not pass without tools:\n%s" % (prog, plain))
        # Two foreign layers and nothing of ours: libmpestack preloaded by hand.
        r = preload_run(argv, [STACKLIB], ",".join(LAYERS[l] for l in ("joblog", "collperf")))
        r.order = ["joblog", "collperf"]
        what = "%s under MPE_STACK=joblog,collperf" % prog
        if check(r.rc == 0, "%s exited %d:\n%s\n%s" % (what, r.rc, r.stdout, r.stderr)):
            check_eq(r.stdout, plain, "%s: program output" % what)
            layers = read_layers(r, what)
            for rank in range(NP):
                for layer in r.order:
                    d = layers.get(layer, {}).get(rank)
                    if d:
                        check(all(v != "inconsistent" for v in d["depth"].values()),
                              "%s rank %d: lib%s saw calls at varying depths: %r" % (what, rank, layer, d["depth"]))
                # The routines both wrap reach both, libjoblog (on top) first.
                top, below = (layers.get(l, {}).get(rank) for l in r.order)
                if top and below:
                    for name in sorted(WRAPS["joblog"] & WRAPS["collperf"] - {"MPI_Pcontrol"}):
                        n = top["count"].get(name, 0)
                        check_eq(below["count"].get(name, 0), n, "%s rank %d: %s calls seen by both layers"
                                 % (what, rank, name))
                        if n:
                            check_eq((top["depth"].get(name), below["depth"].get(name)), (0, 1),
                                     "%s rank %d: depths of %s in libjoblog and libcollperf" % (what, rank, name))
        cleanup(r)
        # Ours between them, with libmpetime: the layers' counts follow libmpetime's.
        order = ["collperf", "mpe", "joblog"]
        what = "%s --stack %s --time" % (prog, ",".join(order))
        r = mpe_run(argv, order, tools=("time",))
        if r is not None:
            check_eq(r.stdout, plain, "%s: program output" % what)
            check_stack(r, what, read_layers(r, what), reference=time_counts(r, what))
            cleanup(r)
        report(prog, "identical output under two stacks", since)


def part_pcontrol():
    argv = [program("pcontrol")]
    plain = plain_output(argv)
    # samples/pcontrol.c: every rank calls Pcontrol(1), then Pcontrol(0); around them 13
    # Allreduce, 7 Barrier, 2 Sendrecv. The layers do not pause; the suite's tools log and count
    # from the start to Pcontrol(0): 12 Allreduce, 6 Barrier, 1 Sendrecv, both Pcontrol calls.
    known = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Allreduce": 13, "MPI_Barrier": 7,
             "MPI_Sendrecv": 2, "MPI_Pcontrol": 2, "MPI_Finalize": 1}
    paused = {"MPI_Allreduce": 12, "MPI_Barrier": 6, "MPI_Sendrecv": 1, "MPI_Pcontrol": 2}
    # collperf keeps MPI_Pcontrol to itself (never calls PMPI_Pcontrol); joblog passes it on.
    for order in (["collperf", "mpe", "joblog"], ["joblog", "collperf", "mpe"], ["mpe", "collperf", "joblog"]):
        what = "pcontrol --stack %s --time --log" % ",".join(order)
        since = len(failures)
        r = mpe_run(argv, order, tools=("time", "log"))
        if r is None:
            continue
        check_eq(r.stdout, plain, "%s: program output" % what)
        layers = read_layers(r, what)
        check_stack(r, what, layers, known=known)
        for layer in layers:
            for rank, data in layers[layer].items():
                check_eq(data["pcontrol"], [1, 0], "%s rank %d: the levels lib%s saw, in order" % (what, rank, layer))
        tc, lc = time_counts(r, what), log_counts(r, what)
        for rank in range(NP):
            check_eq({k: tc.get(rank, {}).get(k) for k in paused}, paused,
                     "%s rank %d: libmpetime's counts (paused by Pcontrol(0))" % (what, rank))
            check_eq({k: lc.get(rank, {}).get(k) for k in paused}, paused,
                     "%s rank %d: liblog's states (paused by Pcontrol(0))" % (what, rank))
        cleanup(r)
        report(what, "every layer saw levels 1, 0; libmpetime and liblog paused at 0", since)


def part_errors():
    ring = [program("ring"), 3]
    # On the command line: refused before anything is launched, with the file named.
    for bad, why in (("/nonexistent/libnope.so", "a missing library"), (NOTATOOL, "a library with no MPI_ routine")):
        for stack in (bad, LAYERS["joblog"] + "," + bad):
            since = len(failures)
            workdir = tempfile.mkdtemp(prefix="mpestack-")
            cmd = [mpitest.MPE_COMMAND, "run", "--stack", stack, "--time", "--", mpitest.MPIEXEC] + \
                mpitest.MPIEXEC_FLAGS + ["-n", str(NP)] + [str(a) for a in ring]
            p = subprocess.run(cmd, cwd=workdir, env=clean_env(), capture_output=True, text=True, timeout=60)
            what = "mpe run --stack %s (%s)" % (stack, why)
            check(p.returncode != 0, "%s: exit status 0" % what)
            check(bad in p.stderr, "%s: the message does not name %s: %r" % (what, bad, p.stderr))
            check("ring:" not in p.stdout and not os.listdir(workdir),
                  "%s: the program ran (stdout %r, files %s)" % (what, p.stdout, os.listdir(workdir)))
            shutil.rmtree(workdir, ignore_errors=True)
            report(what, "refused before launching", since)
    # A relative path is made absolute (the ranks may start elsewhere).
    since = len(failures)
    workdir = tempfile.mkdtemp(prefix="mpestack-")
    rel = os.path.relpath(LAYERS["joblog"], workdir)
    cmd = [mpitest.MPE_COMMAND, "run", "--stack", rel, "--time", "--", mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + \
        ["-n", str(NP)] + [str(a) for a in ring]
    p = subprocess.run(cmd, cwd=workdir, env=clean_env({"STACKTEST_DIR": workdir}), capture_output=True, text=True,
                       timeout=120)
    if check(p.returncode == 0, "mpe run --stack %s (relative): exit %d\n%s" % (rel, p.returncode, p.stderr)):
        r = Run(p, workdir, ["mpe", "joblog"])
        check_stack(r, "ring --stack %s (relative)" % rel, read_layers(r, "relative path"),
                    reference=time_counts(r, "relative path"), known=ring_known(3))
    shutil.rmtree(workdir, ignore_errors=True)
    report("mpe run --stack <relative path>", "the layer is found", since)
    # Set by hand: one line names the problem, the run goes on with the other layers.
    plain = plain_output(ring)
    for bad in ("/nonexistent/libnope.so", NOTATOOL):
        since = len(failures)
        r = preload_run(ring, [STACKLIB, mpitest.lib("time")], bad + ",mpe," + LAYERS["joblog"])
        r.order = ["mpe", "joblog"]
        what = "MPE_STACK=%s,mpe,libjoblog.so" % bad
        if check(r.rc == 0, "%s: exit %d\n%s\n%s" % (what, r.rc, r.stdout, r.stderr)):
            check_eq(r.stdout, plain, "%s: program output" % what)
            lines = [l for l in r.stderr.splitlines() if bad in l]
            check(len(lines) == 1, "%s: expected one line naming %s, got %r" % (what, bad, r.stderr))
            check_stack(r, what, read_layers(r, what), reference=time_counts(r, what), known=ring_known(3))
        cleanup(r)
        report(what, "one line, and the run went on with the others", since)


PARTS = {"counts": part_counts, "allgather": part_allgather, "mpiio": part_mpiio, "conformance": part_conformance,
         "pcontrol": part_pcontrol, "errors": part_errors}

mpitest.expect(os.path.exists(STACKLIB), "%s is missing" % STACKLIB)
for lib in list(LAYERS.values()) + [NOTATOOL]:
    mpitest.expect(os.path.exists(lib), "%s is missing: build the target stack_fixtures" % lib)
for part in (PARTS if PART == "all" else PART.split(",")):
    PARTS[part]()
if failures:
    mpitest.fail("%d checks failed (listed above)" % len(failures))
print("stack %s: passed" % PART)
