"""The live stream is readable only with the run's keys, and cannot be fed by anyone else: the
.live file is its owner's alone; a viewer with another run's keys receives nothing; a publisher
with another run's keys is refused (and says so); random bytes and half-open connections on the
relay's ports leave the relay, the ranks and an attached `mpe top` working."""
import json
import os
import socket
import stat
import subprocess
import tempfile
import time

import livetest
import mpitest
from mpitest import expect, expect_eq


def endpoint_address(endpoint):
    host, port = endpoint[len("tcp://"):].rsplit(":", 1)
    return host, int(port)


def other_run(workdir):
    """Keys of another run: a second relay's .live file and its ranks' environment."""
    live, env = os.path.join(workdir, "other.live"), os.path.join(workdir, "other.env")
    relay = subprocess.Popen([livetest.mpe_path(), "live", "relay", "--live-file", live, "--env-file", env],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.time() + 20
    while not (os.path.exists(live) and os.path.exists(env)) and time.time() < end:
        time.sleep(0.05)
    expect(os.path.exists(env), "mpe live relay wrote no environment")
    keys = {}
    for line in open(env):
        k, v = line.strip()[len("export "):].split("=", 1)
        keys[k] = v.strip("'")
    with open(live) as f:
        return relay, json.load(f), keys


def main():
    argv = [mpitest.program("hang"), "stuck"]
    # The job must outlast the checks below, however slow the machine: its last rank computes for
    # up to 120 s, and the test ends it as soon as the checks are done (HANG_STOP_FILE).
    workdir = tempfile.mkdtemp(prefix="mpetest-live-security-")
    stop_file = os.path.join(workdir, "stop")
    env = {"HANG_SECONDS": "120", "HANG_STOP_FILE": stop_file}
    plain = mpitest.run(4, argv, env={"HANG_SECONDS": "0"}).stdout
    job = livetest.LiveJob(4, argv, env=env, workdir=workdir)
    live_file = job.wait_live_file()
    mode = stat.S_IMODE(os.stat(live_file).st_mode)
    expect_eq(oct(mode), oct(0o600), "the .live file's mode")
    ours = json.load(open(live_file))
    relay, theirs, their_env = other_run(job.workdir)
    try:
        # 1. A viewer with keys that are not this run's receives nothing.
        forged = dict(ours, viewer_public=theirs["viewer_public"], viewer_secret=theirs["viewer_secret"])
        forged_file = os.path.join(job.workdir, "forged.live")
        with open(forged_file, "w") as f:
            json.dump(forged, f)
        p = subprocess.run([livetest.mpe_path(), "top", "--once", "--json", "--wait", "4", forged_file],
                           capture_output=True, text=True, timeout=60)
        expect(p.returncode != 0 and "no frame" in p.stderr, "a viewer with another run's keys got: rc %d %s %s"
               % (p.returncode, p.stdout[:200], p.stderr))
        # Nor does one that knows this run's viewer keys but trusts another relay's identity.
        forged = dict(ours, server_public=theirs["server_public"])
        with open(forged_file, "w") as f:
            json.dump(forged, f)
        p = subprocess.run([livetest.mpe_path(), "top", "--once", "--json", "--wait", "4", forged_file],
                           capture_output=True, text=True, timeout=60)
        expect(p.returncode != 0, "a viewer expecting another relay's key got frames: %s" % p.stdout[:200])
        print("a viewer without this run's keys receives nothing")

        # 2. A publisher with another run's keys cannot inject: ring's frames never arrive, and
        # its liblive says the relay refused it.
        live_lib = os.path.join(mpitest.BUILD, "lib", "liblive.so")
        inject = {"MPE_LIVE_ENDPOINT": ours["publish_endpoint"], "MPE_LIVE_SERVER_KEY": ours["server_public"],
                  "MPE_LIVE_PUBLIC_KEY": their_env["MPE_LIVE_PUBLIC_KEY"],
                  "MPE_LIVE_SECRET_KEY": their_env["MPE_LIVE_SECRET_KEY"]}
        launch = ["-x", "LD_PRELOAD=" + live_lib] if mpitest.MPI == "openmpi" else ["-genv", "LD_PRELOAD", live_lib]
        for k, v in inject.items():
            launch += ["-x", "%s=%s" % (k, v)] if mpitest.MPI == "openmpi" else ["-genv", k, v]
        r = mpitest.run(2, [mpitest.program("ring"), "2000"], launch=launch)
        expect("refused this job's key" in r.stderr, "the refused publisher says so: %r" % r.stderr)

        # 3. Garbage and half-open connections on both ports.
        half_open = []
        for endpoint in (ours["publish_endpoint"], ours["viewer_endpoint"]):
            addr = endpoint_address(endpoint)
            s = socket.create_connection(addr)
            s.sendall(os.urandom(1 << 16))
            s.close()
            s = socket.create_connection(addr)
            s.sendall(b"\xff" + b"\x00" * 8 + b"\x7f\x03\x00" + os.urandom(4096))  # a ZMTP greeting, then noise
            s.close()
            half_open.append(socket.create_connection(addr))  # connects, never speaks
        snap = job.top_once(wait=20)
        expect_eq(snap["ranks_seen"], 4, "ranks an attached mpe top sees after the attack")
        sites = {r["callsite"] for r in snap["now"]}
        expect(not any("ring.c" in s for s in sites), "the refused publisher's calls reached the viewer: %s" % sites)
        expect_eq(snap["world_size"], 4, "the job's size (nothing injected)")
        print("garbage, a false greeting and half-open connections: the relay and mpe top work on")
        open(stop_file, "w").close()
        job.finish(timeout=120)
        expect_eq(job.stdout, plain, "the program's output under attack")
        for s in half_open:
            s.close()
    finally:
        job.kill()
        relay.terminate()
        relay.wait(timeout=30)
    print("PASS")


if __name__ == "__main__":
    main()
