"""Runs jobs under `mpe run --live` in the background and watches them with `mpe top`, for the
live view's tests (tests/live)."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402


def mpe_path():
    return os.path.join(mpitest.BUILD, "bin", "mpe")


class LiveJob:
    """A job started by `mpe run --live [--log]` in its own working directory."""

    def __init__(self, np, argv, log=False, env=None, launch=(), prefix=None, workdir=None, tools=()):
        """`tools`: more of `mpe run`'s tool flags ("--time", "--umq")."""
        self.workdir = workdir or tempfile.mkdtemp(prefix="mpetest-live-")
        self.prefix = prefix or os.path.basename(argv[0])
        self.live_file = os.path.join(self.workdir, self.prefix + ".live")
        full_env = dict(os.environ)
        full_env.update(env or {})
        cmd = [mpe_path(), "run", "--live"] + (["--log"] if log else []) + list(tools) + ["--"]
        cmd += [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + list(launch) + ["-n", str(np)] + list(argv)
        self.cmd = cmd
        self.started = time.time()
        self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=full_env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.stdout = self.stderr = None

    def wait_live_file(self, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if os.path.exists(self.live_file):
                return self.live_file
            if self.proc.poll() is not None:
                mpitest.fail("the job ended before writing %s:\n%s" % (self.live_file, self.proc.stderr.read()))
            time.sleep(0.05)
        mpitest.fail("no %s after %d s" % (self.live_file, timeout))

    def relay_pid(self):
        with open(self.wait_live_file()) as f:
            return json.load(f)["relay_pid"]

    def top_once(self, stuck=1.0, wait=20, live_file=None, check=True):
        """`mpe top --once --json`: the snapshot, as a dict (None when it failed and check is False)."""
        p = subprocess.run([mpe_path(), "top", "--once", "--json", "--stuck", str(stuck), "--wait", str(wait),
                            live_file or self.live_file], capture_output=True, text=True, timeout=wait + 30)
        if p.returncode != 0:
            if check:
                mpitest.fail("mpe top --once exited %d: %s" % (p.returncode, p.stderr))
            return None
        return json.loads(p.stdout)

    def finish(self, timeout=300, expect_rc=0):
        try:
            self.stdout, self.stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            mpitest.fail("the job did not end within %d s" % timeout)
        if expect_rc is not None and self.proc.returncode != expect_rc:
            mpitest.fail("%s exited %d (expected %d)\nstdout:\n%s\nstderr:\n%s" %
                         (" ".join(self.cmd), self.proc.returncode, expect_rc, self.stdout, self.stderr))
        return self.proc.returncode

    def kill(self):
        """Ends the job: SIGTERM to `mpe run`, which passes it to the launcher and ends the relay."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.stdout, self.stderr = self.proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.stdout, self.stderr = self.proc.communicate()


class Top:
    """`mpe top --json` running continuously: one snapshot per refresh until the job ends."""

    def __init__(self, live_file, refresh=0.5, stuck=1.0, wait=60, queue=1000):
        self.proc = subprocess.Popen([mpe_path(), "top", "--json", "--refresh", str(refresh), "--stuck", str(stuck),
                                      "--wait", str(wait), "--queue", str(queue), live_file], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)

    def snapshots(self, timeout=300):
        """Waits for the end (the job's, or this viewer's) and returns every snapshot printed."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.stderr = err
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    def kill(self, sig=signal.SIGKILL):
        self.proc.send_signal(sig)


def log_messages(mpelog):
    """What `mpe stat --json` says about a logfile's messages."""
    p = mpitest.mpe("stat", "--json", mpelog)
    return json.loads(p.stdout)
