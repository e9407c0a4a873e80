"""Runs real MPI programs under mpiexec for the integration tests; paths come from ctest."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ["MPE_BUILD_DIR"]
MPIEXEC = os.environ["MPE_MPIEXEC"]
MPIEXEC_FLAGS = os.environ.get("MPE_MPIEXEC_FLAGS", "").split()
MPI = os.environ.get("MPE_MPI", "mpich")
TOOL_LIBS = {"time": "libmpetime.so", "umq": "libumq.so", "log": "liblog.so", "live": "liblive.so", "null": "libmpenull.so"}


def program(name):
    """Path of a built sample or test program."""
    for sub in ("bin", "samples", "tests"):
        p = os.path.join(BUILD, sub, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(name)


def lib(tool):
    return os.path.join(BUILD, "lib", TOOL_LIBS[tool])


class Run:
    def __init__(self, rc, stdout, stderr, workdir):
        self.rc, self.stdout, self.stderr, self.workdir = rc, stdout, stderr, workdir

    def files(self, suffix=""):
        return sorted(os.path.join(self.workdir, f) for f in os.listdir(self.workdir) if f.endswith(suffix))

    def json(self, name):
        with open(os.path.join(self.workdir, name)) as f:
            return json.load(f)


def run(np, argv, tools=(), env=None, timeout=120, check=True, workdir=None, launch=()):
    """Runs argv on np ranks with the given tools preloaded, in a fresh working directory.
    `launch`: more mpiexec options (where and how to start the ranks)."""
    workdir = workdir or tempfile.mkdtemp(prefix="mpetest-")
    full_env = dict(os.environ)
    full_env.update(env or {})
    cmd = [MPIEXEC] + MPIEXEC_FLAGS + list(launch) + ["-n", str(np)]
    if tools:
        preload = ":".join(lib(t) for t in tools)
        cmd += (["-x", "LD_PRELOAD=" + preload] if MPI == "openmpi" else ["-genv", "LD_PRELOAD", preload])
    cmd += list(argv)
    p = subprocess.run(cmd, cwd=workdir, env=full_env, capture_output=True, text=True, timeout=timeout)
    r = Run(p.returncode, p.stdout, p.stderr, workdir)
    if check and p.returncode != 0:
        fail("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return r


# The `mpe` command the tests run: the build's own, or MPE_COMMAND (the sanitized build of the
# memory-checked runs has no command of its own: tests/memcheck/run passes the main build's).
MPE_COMMAND = os.environ.get("MPE_COMMAND") or os.path.join(BUILD, "bin", "mpe")


def mpe(*args, check=True):
    """Runs the `mpe` command; a nonzero exit fails the test unless check is False."""
    p = subprocess.run([MPE_COMMAND] + list(args), capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        fail("mpe %s exited %d:\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


# ctest's SKIP_RETURN_CODE for every script test (tests/CMakeLists.txt), the automake convention:
# ctest then reports the test as skipped, not passed.
SKIP = 77


def skip(reason):
    """Ends the test as skipped. Only for what this build or machine cannot run by design (another
    MPI, no root, no viewer): a dependency that scripts/test installs is a failure when missing."""
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


def expect(cond, msg):
    if not cond:
        fail(msg)


def expect_eq(actual, expected, what):
    if actual != expected:
        fail("%s: expected %r, got %r" % (what, expected, actual))


def delayed_iterations(comparison, rank, named, delayed, delay_s, what=""):
    """The iterations `mpe diff --iterations` named (`named`) as those where `rank`'s time outside
    MPI changed, checked against the ones a delay of `delay_s` was injected in (`delayed`): each
    delayed one is named. Any other named iteration must have moved by under a tenth of the delay:
    the machine's own noise (a rank preempted outside MPI on oversubscribed cores, most often in
    the first or last iteration), which the analysis rightly reports and which is printed. Returns
    the delayed iterations."""
    delayed = list(delayed)
    missed = [k for k in delayed if k not in named]
    expect(not missed, "%sthe delayed iterations %r of rank %d not named; named %r" % (what, missed, rank, named))
    for k in named:
        if k in delayed:
            continue
        moved = comparison["iterations"][k]["per_rank_outside_mpi_delta_s"][rank]
        expect(abs(moved) < 0.1 * delay_s, "%siteration %d named for rank %d, moved %.4f s: more than a tenth of "
               "the %.4f s delay, which it did not carry" % (what, k, rank, moved, delay_s))
        print("(%siteration %d also named for rank %d: %+.4f s of the machine's noise)" % (what, k, rank, moved))
    return delayed


# Checks that record a failure and go on, so that one run reports every check that fails; a test
# ends with `if failures: fail(...)`.
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        sys.stderr.write("FAIL: %s\n" % what)
    return cond


def cleanup(r):
    shutil.rmtree(r.workdir, ignore_errors=True)


def marked_line(path, marker):
    """The number of the first line of a source file that contains marker (a comment such as
    /* flood-receive-line */ that tests find a call site by)."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if marker in line:
                return n
    fail("no %s in %s" % (marker, path))


def use_openmpi(build):
    """Runs the rest of a test against the Open MPI build tree `build` (mpiexec.openmpi), its `mpe`
    command included (`mpe mpit` lists the MPI it was built for)."""
    global BUILD, MPIEXEC, MPI, MPIEXEC_FLAGS, MPE_COMMAND
    BUILD = build
    MPE_COMMAND = os.environ.get("MPE_COMMAND") or os.path.join(BUILD, "bin", "mpe")
    MPIEXEC = shutil.which("mpiexec.openmpi") or "mpiexec.openmpi"
    MPI = "openmpi"
    MPIEXEC_FLAGS = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def use_mpich_pvars(src):
    """Runs the rest of a test on the pvar-enabled MPICH (building it with scripts/build-mpich-pvars
    when missing, about 4 minutes): its mpiexec, and its libraries through LD_LIBRARY_PATH. Fails
    when it cannot be had: scripts/test always builds it, so a skip would hide the queue variables."""
    global MPIEXEC
    prefix = os.environ.get("MPE_MPICH_PVARS_PREFIX", "/var/cache/mpe-tools/mpich-pvars")
    if not os.path.exists(os.path.join(prefix, ".mpe-built")):
        print("building the pvar-enabled MPICH into %s (about 4 minutes)" % prefix, flush=True)
        subprocess.run([os.path.join(src, "scripts", "build-mpich-pvars"), prefix])
    if not os.path.exists(os.path.join(prefix, ".mpe-built")):
        fail("the pvar-enabled MPICH is missing at %s and scripts/build-mpich-pvars could not build it "
             "(its output is above)" % prefix)
    MPIEXEC = os.path.join(prefix, "bin", "mpiexec")
    old = os.environ.get("LD_LIBRARY_PATH")
    os.environ["LD_LIBRARY_PATH"] = os.path.join(prefix, "lib") + (":" + old if old else "")
