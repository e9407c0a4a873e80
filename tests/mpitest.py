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
TOOL_LIBS = {"time": "libmpetime.so", "umq": "libumq.so", "log": "liblog.so", "null": "libmpenull.so"}


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


def run(np, argv, tools=(), env=None, timeout=120, check=True, workdir=None):
    """Runs argv on np ranks with the given tools preloaded, in a fresh working directory."""
    workdir = workdir or tempfile.mkdtemp(prefix="mpetest-")
    full_env = dict(os.environ)
    full_env.update(env or {})
    cmd = [MPIEXEC] + MPIEXEC_FLAGS + ["-n", str(np)]
    if tools:
        preload = ":".join(lib(t) for t in tools)
        cmd += (["-x", "LD_PRELOAD=" + preload] if MPI == "openmpi" else ["-genv", "LD_PRELOAD", preload])
    cmd += list(argv)
    p = subprocess.run(cmd, cwd=workdir, env=full_env, capture_output=True, text=True, timeout=timeout)
    r = Run(p.returncode, p.stdout, p.stderr, workdir)
    if check and p.returncode != 0:
        fail("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return r


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def expect_eq(actual, expected, what):
    if actual != expected:
        fail("%s: expected %r, got %r" % (what, expected, actual))


def cleanup(r):
    shutil.rmtree(r.workdir, ignore_errors=True)
