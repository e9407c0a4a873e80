"""Runs an MPI program on two simulated hosts of this machine, for the tests of what differs
between nodes: Hydra (MPICH's mpiexec) starts its proxies through tests/twohost/launch.sh, which
gives each its own hostname and, for the directories asked, its own copy of them."""
import os
import subprocess
import tempfile

import mpitest

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "twohost", "launch.sh")
HOSTS = ("nodeA", "nodeB")


def unavailable():
    """Why two hosts cannot be simulated here, or None."""
    if mpitest.MPI != "mpich":
        return "needs Hydra (MPICH's mpiexec); this build uses %s" % mpitest.MPI
    if os.geteuid() != 0:
        return "needs root for unshare --uts --mount"
    p = subprocess.run(["unshare", "--uts", "--mount", "true"], capture_output=True, text=True)
    if p.returncode != 0:
        return "unshare fails here: " + p.stderr.strip()
    return None


def skip_unless_available():
    why = unavailable()
    if why:
        mpitest.skip(why)


class TwoHostRun(mpitest.Run):
    def __init__(self, run, root):
        super().__init__(run.rc, run.stdout, run.stderr, run.workdir)
        self.root = root

    def host_dir(self, host, i=0):
        """What host `host` saw in the i-th private directory."""
        return os.path.join(self.root, host, str(i))

    def host_files(self, host, i=0, suffix=""):
        d = self.host_dir(host, i)
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(suffix)) if os.path.isdir(d) else []


def run(np, argv, tools=(), env=None, private=(), timeout=180, check=True, workdir=None, root=None):
    """Runs argv on np ranks, np/2 on each of nodeA and nodeB (ranks 0..np/2-1 on nodeA). Each
    directory in `private` (the working directory is "." ) is replaced, for each host, by its own
    empty directory, kept under the run's root (TwoHostRun.host_dir; `root`, else a new one)."""
    workdir = workdir or tempfile.mkdtemp(prefix="mpetest-twohost-")
    root = root or tempfile.mkdtemp(prefix="mpetest-hosts-")
    dirs = [workdir if d == "." else d for d in private]
    full_env = dict(env or {})
    full_env.update({"MPE_TWOHOST_ROOT": root, "MPE_TWOHOST_PRIVATE": ":".join(dirs)})
    launch = ["-launcher", "ssh", "-launcher-exec", LAUNCHER, "-hosts", ",".join(HOSTS), "-ppn", str(np // 2)]
    r = mpitest.run(np, argv, tools=tools, env=full_env, timeout=timeout, check=check, workdir=workdir,
                    launch=launch)
    return TwoHostRun(r, root)
