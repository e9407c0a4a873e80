"""upshot on logs larger than memory (issue 38), at a scale CI affords:
- `mpiexec -n 2 mpe serve LOG --listen-file F`, then `upshot --connect F --export P` writes the same
  PNG, byte for byte, as `upshot --out-of-core --export P LOG`: at full view (drawn from the view
  index) and zoomed in (drawn from the records of the view's chunks);
- the listen file is mode 0600; a viewer with other keys is refused (clear error, nothing drawn);
  a listen file whose server is gone gives one clear line;
- memory per record does not grow: the out-of-core export's peak memory over a log 4x larger
  grows by less than 1.25x (in memory it grows about 4x), and so does the index build's."""
import os
import json
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402
from mpitest import expect, expect_eq  # noqa: E402

UPSHOT = os.path.join(mpitest.BUILD, "bin", "upshot")
if not os.path.exists(UPSHOT):
    mpitest.skip("upshot is not built (MPE_BUILD_VIEWER=OFF)")
work = tempfile.mkdtemp(prefix="mpe-serve-")
# A view of more than 300,000 records is drawn from the index: the full views here, not the zoomed ones.
ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR=work, UPSHOT_WINDOW_RECORDS="300000")


def upshot(*args):
    p = subprocess.run([UPSHOT] + list(args), capture_output=True, text=True, timeout=300, env=ENV)
    expect(p.returncode == 0, "upshot %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def peak_mib(*args):
    """The peak RSS of one upshot run, from /usr/bin/time's %M (getrusage's children maximum keeps
    the largest child so far)."""
    p = subprocess.run(["/usr/bin/time", "-f", "%M", UPSHOT] + list(args), capture_output=True, text=True,
                       timeout=600, env=ENV)
    expect(p.returncode == 0, "upshot %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return int(p.stderr.strip().splitlines()[-1]) / 1024.0


def serve(log, listen, seconds=120):
    """Starts `mpiexec -n 2 mpe serve` and waits for its listen file."""
    cmd = [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + ["-n", "2", mpitest.MPE_COMMAND, "serve", log,
                                                       "--listen-file", listen, "--for", str(seconds)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if os.path.exists(listen) or proc.poll() is not None:
            break
        time.sleep(0.1)
    expect(os.path.exists(listen), "mpe serve wrote no listen file: %s" % (proc.communicate()[1] if proc.poll() is not None else "still running"))
    return proc


log = os.path.join(work, "run.mpelog")
mpitest.mpe("synth", "--ranks", "256", "--ranks-per-node", "16", "--events", "2000000", log)
listen = os.path.join(work, "run.listen")
server = serve(log, listen)
expect_eq(stat.S_IMODE(os.stat(listen).st_mode), 0o600, "listen file mode")

# Full view, then two zoomed views: drawn from the index, then from the chunks of each view.
for name, extra in (("full", []), ("zoom1", ["--range", "2ms:2.2ms"]), ("zoom2", ["--range", "5.5ms:5.6ms"])):
    local = os.path.join(work, name + "-local.png")
    remote = os.path.join(work, name + "-remote.png")
    p = upshot("--out-of-core", "--export", local, *extra, log)
    q = upshot("--connect", listen, "--export", remote, *extra)
    with open(local, "rb") as a, open(remote, "rb") as b:
        expect(a.read() == b.read(), "%s: upshot --connect drew another picture than the local open" % name)
    source = "from the view index" if name == "full" else "window read from the log"
    expect(source in p.stdout and source in q.stdout, "%s: drawn %s: %s / %s" % (name, source, p.stdout, q.stdout))

# Another viewer's keys: refused, one clear line, no picture.
with open(listen) as f:
    keys = json.load(f)
forged = dict(keys)
forged["viewer_public"], forged["viewer_secret"] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7", "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
forged_path = os.path.join(work, "forged.listen")
with open(forged_path, "w") as f:
    json.dump(forged, f)
p = subprocess.run([UPSHOT, "--connect", forged_path, "--export", os.path.join(work, "forged.png")],
                   capture_output=True, text=True, timeout=120, env=dict(ENV, MPE_SERVE_TIMEOUT_MS="2000"))
expect(p.returncode == 1 and "did not answer" in p.stderr, "forged keys: exit %d, %s" % (p.returncode, p.stderr))
expect(not os.path.exists(os.path.join(work, "forged.png")), "forged keys: a picture was written")
server.terminate()
out, err = server.communicate(timeout=60)
expect("connections refused" in err, "mpe serve's last line: %s" % err)
expect(not os.path.exists(listen), "mpe serve left its listen file")

# A listen file whose server is gone.
with open(forged_path, "w") as f:
    json.dump(keys, f)
p = subprocess.run([UPSHOT, "--connect", forged_path, "--export", os.path.join(work, "gone.png")],
                   capture_output=True, text=True, timeout=120, env=dict(ENV, MPE_SERVE_TIMEOUT_MS="2000"))
expect(p.returncode == 1 and "did not answer" in p.stderr and p.stderr.count("\n") == 1,
       "server gone: exit %d, %s" % (p.returncode, p.stderr))

# Memory per record does not grow: 4x the records on the same 64 ranks (whose chunks, 64 Ki records
# each, set what the replay holds in flight). The index is built with an 8 MiB message sort.
sizes = {}
for events in (8000000, 32000000):
    path = os.path.join(work, "m%d.mpelog" % events)
    mpitest.mpe("synth", "--ranks", "64", "--ranks-per-node", "16", "--events", str(events), path)
    png = os.path.join(work, "m.png")
    build = peak_mib("--out-of-core", "--sort-memory", "8388608", "--export", png, path)
    reopen = peak_mib("--out-of-core", "--export", png, path)
    whole = peak_mib("--in-memory", "--export", png, path)
    sizes[events] = (build, reopen, whole)
    os.remove(path)
    os.remove(path + ".view")
(b1, o1, w1), (b4, o4, w4) = sizes[8000000], sizes[32000000]
print("peak MiB at 8 M -> 32 M records: index build %.0f -> %.0f, open %.0f -> %.0f; in memory %.0f -> %.0f"
      % (b1, b4, o1, o4, w1, w4))
expect(b4 < 1.25 * b1, "the index build grew %.0f -> %.0f MiB for 4x the records" % (b1, b4))
expect(o4 < 1.25 * o1, "the out-of-core open grew %.0f -> %.0f MiB for 4x the records" % (o1, o4))
# The baseline: the in-memory open grows with the records (2.5-4x here: its fixed part, Qt and the
# process, is not 4x), so the two checks above measure something that would grow.
expect(w4 > 2 * w1, "the in-memory baseline should grow with the records (%.0f -> %.0f MiB)" % (w1, w4))
shutil.rmtree(work)
print("serve: same pictures, refused keys, bounded memory")
