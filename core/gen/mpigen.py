#!/usr/bin/env python3
"""Generates the interposition layer from the selected MPI's own preprocessed mpi.h.

Inputs: the preprocessed header (`mpicc -E -P`), the per-function table (core/mpi_calls.tsv) and
optionally the Fortran entry points the MPI library exports (`pmpi_*_` names from `nm -D`).
Outputs (into the build tree, never committed):
  calls.h        - enum Fn, CallClass, Mode, role bits, struct Call, per-function descriptors
  wrapper_bodies.h - one wrapper body per PMPI_X prototype: fill a Call, run the hooks, call PMPI_X
  wrappers_c.cpp - those bodies through the registry: MPI_X, and libmpestack's mpe_stacked_MPI_X
  wrappers_solo.cpp - MPI_X of the per-message routines with one tool's hooks inline (per tool)
  wrappers_f.cpp - one mpi_x_ per exported pmpi_x_ with a C counterpart
  wrapped.txt    - the wrapped names, for `mpe coverage`
  stack_c.cpp    - libmpestack: MPI_X and PMPI_X dispatched through a stack of PMPI tools
  stack_f.cpp    - libmpestack: the MPI's Fortran entry points, placed above every layer

The wrappers are thin: they call PMPI and return its code unchanged; all meaning lives in the
hand-written tools, reached through mpe::Call.

This file is the driver; each part lives in its own module beside it: mpigen_table.py (the table),
mpigen_header.py (mpi.h), mpigen_calls.py (calls.h, calls_info.cpp), mpigen_c.py (C wrappers),
mpigen_fortran.py (Fortran wrappers), mpigen_stack.py (libmpestack).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpigen_c import emit_c_wrappers, emit_solo_wrappers, emit_wrapper_bodies  # noqa: E402
from mpigen_calls import emit_header, emit_info  # noqa: E402
from mpigen_fortran import emit_fortran_wrappers, fortran_bindings  # noqa: E402
from mpigen_header import parse_header  # noqa: E402
from mpigen_stack import emit_stack_c, emit_stack_f  # noqa: E402
from mpigen_table import fail, parse_table  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", required=True, help="preprocessed mpi.h")
    ap.add_argument("--table", required=True)
    ap.add_argument("--exported", help="file with the PMPI_/pmpi_ names the MPI libraries export")
    ap.add_argument("--f08-index-base", type=int, choices=(0, 1), default=1,
                    help="the index base this MPI's mpi_f08 Waitany/Waitsome return (probed by CMake)")
    ap.add_argument("--outdir", required=True)
    a = ap.parse_args()
    protos = parse_header(a.header)
    if not protos:
        fail("no PMPI_ prototypes found in " + a.header)
    roles, rows = parse_table(a.table)
    classes = []
    for r in rows.values():
        if r.cls not in classes:
            classes.append(r.cls)
    bindings, unexported = [], []
    if a.exported:
        exported = set(line.strip() for line in open(a.exported))
        unexported = sorted(n for n in protos if "P" + n not in exported)
        for n in unexported:
            del protos[n]
        bindings = fortran_bindings(exported, protos, a.f08_index_base)
    os.makedirs(os.path.join(a.outdir, "mpe"), exist_ok=True)

    def write(path, fn, *args):
        tmp = os.path.join(a.outdir, path + ".tmp")
        with open(tmp, "w") as f:
            result = fn(f, *args)
        os.replace(tmp, os.path.join(a.outdir, path))
        return result

    write("mpe/calls.h", emit_header, roles, protos, rows, classes)
    write("calls_info.cpp", emit_info, protos, rows, roles, classes)
    write("wrapper_bodies.h", emit_wrapper_bodies, protos, rows, roles)
    write("wrappers_c.cpp", emit_c_wrappers, protos, rows, roles)
    write("wrappers_solo.cpp", emit_solo_wrappers, protos, rows, roles)
    fwrapped = write("wrappers_f.cpp", emit_fortran_wrappers, protos, rows, roles, bindings)
    write("stack_c.cpp", emit_stack_c, protos)
    write("stack_f.cpp", emit_stack_f, protos, rows, bindings)
    missing = [n for n in rows if n not in protos]
    with open(os.path.join(a.outdir, "wrapped.txt"), "w") as f:
        for n in sorted(protos):
            f.write(n + "\n")
        for n in fwrapped:
            f.write(n + "\n")
    print("mpigen: %d C wrappers, %d Fortran wrappers, %d table rows (%d not in this MPI); "
          "declared but not exported, so not wrapped: %s" % (
              len(protos), len(fwrapped), len(rows), len(missing), " ".join(unexported) or "none"))


if __name__ == "__main__":
    main()
