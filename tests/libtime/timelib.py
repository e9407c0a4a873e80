"""Reads libmpetime's per-process files (<prefix>.mpetime.<rank>.txt) for the tests."""
import glob
import os
import re


def read_profile(path):
    """One per-process file as {'header': {...}, 'routines': {name: {...}}}."""
    header, routines = {}, {}
    fields = ("calls", "incl_ns", "excl_ns", "min_ns", "max_ns", "bytes_sent", "bytes_recv")
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("mpetime "), path
    n = None
    for line in lines[1:]:
        if line == "end" or line.startswith("#"):
            continue
        if n is not None and len(routines) < n:
            parts = line.split()
            routines[parts[0]] = dict(zip(fields, map(int, parts[1:])))
            continue
        key, _, value = line.partition(" ")
        header[key] = value
        if key == "routines":
            n = int(value)
    for k in ("rank", "size", "threads", "run_ns", "mpi_ns"):
        header[k] = int(header[k])
    return {"header": header, "routines": routines}


def profiles(workdir, prefix):
    """Every rank's profile, indexed by rank."""
    paths = glob.glob(os.path.join(workdir, prefix + ".mpetime.*.txt"))
    out = {}
    for p in paths:
        if re.search(r"\.mpetime\.\d+\.txt$", p):
            prof = read_profile(p)
            out[prof["header"]["rank"]] = prof
    return out


def calls(prof):
    return {name: r["calls"] for name, r in prof["routines"].items()}
