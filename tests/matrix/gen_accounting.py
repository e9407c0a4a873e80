"""Generates the message-accounting programs (C, mpif.h, use mpi, use mpi_f08) from core/mpi_calls.tsv.

Every table row of a class that moves point-to-point messages, or decides whether one moves
(send, recv, sendrecv, probe, mprobe, mrecv, start, cancel, request_free; partitioned sends and
receives where the MPI has them), becomes one case, from the template of its class (and mode,
or shape) in templates_acct_c.py / templates_acct_f.py. Each case runs on MPI_COMM_WORLD and on a
communicator whose ranks are reversed (MPI_Comm_split with key size - rank), for ITERATIONS,
cycling what the tools must cope with: a status or MPI_STATUS(ES)_IGNORE, completion by MPI_Wait
or MPI_Waitall, receives naming the source and tag or MPI_ANY_SOURCE / MPI_ANY_TAG; and beside
each message, calls on MPI_PROC_NULL (and an MPI_MESSAGE_NO_PROC, a cancelled receive) that move
nothing. A routine the MPI lacks, or whose case needs a routine it lacks, is skipped, with why.

Markup, beside gen_matrix.py's (`@MPI_X(` a counted call, `$F` the routine under test):
  MSG(n) / call msg(n)  n messages sent to the partner: counted in total and by its world rank
  $STATUS, $STATUSES    the iteration's status argument: a status, or MPI_STATUS(ES)_IGNORE (in
                        Fortran the line becomes an if/else of two calls)
  $READY <line>         kept only for the ready-mode sends (the receive must be posted first)
  $SOURCE(st), $TAG(st) a status's fields (Fortran)
Variables a template sees: cm, sender, partner, tg (the case's tag), src and rtag (this
iteration's receive source and tag), csrc and ctag (a persistent receive's), k (the iteration),
ignore, the buffers sbuf rbuf rbuf2, and requests (C: req reqs[] pq[]; Fortran: reqs() pq()).
wait1(r) completes one request as the iteration says.

Each rank writes matrix_counts.<rank>.txt as the conformance matrix's programs do (routine
counts; messages, collectives, rma, markers), plus "pair <from> <to> <n>": the messages it sent to
each world rank. tests/matrix/accounting.py checks liblog, liblive and the exports against them.

Outputs (--outdir): acct_c.c, acct_mpif.f90, acct_usempi.f90, acct_f08.f90, acct_coverage.json.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_matrix as gm  # noqa: E402
from templates_acct_c import A_C, A_C_CASE, A_C_HEAD, A_C_TAIL  # noqa: E402
from templates_acct_f import (A_F, A_F_CASE, A_F_DECLS_F08, A_F_DECLS_OLD, A_F_GROUPDECL, A_F_HEAD,  # noqa: E402
                              A_F_REQDECL, A_F_TAIL)

# Iterations on MPI_COMM_WORLD and on the reversed communicator: at least the 4 kinds the
# templates cycle through; unequal, so that each pair's two directions carry different counts.
ITERATIONS = (4, 6)
CLASSES = ["send", "recv", "sendrecv", "probe", "mprobe", "mrecv", "start", "cancel", "request_free"]
HELPERS = {"pready": "called by the partitioned cases", "parrived": "called by the partitioned cases"}


def shape(row):
    if "partitions" in row.roles:
        return "partitioned"
    return gm.shape(row)


def template(row, lang):
    """(before, one iteration, after) for a row, its routine still as $F; None without a template."""
    table = A_C if lang == "c" else A_F
    for key in ((row.cls, row.mode, shape(row)), (row.cls, row.mode)):
        if key in table:
            return table[key]
    return None


def markup(text, lang, ready):
    """Expands $READY, $STATUS(ES), $SOURCE and $TAG for one language."""
    lines = []
    for line in text.split("\n"):
        if line.lstrip().startswith("$READY "):
            if not ready:
                continue
            line = line.replace("$READY ", "", 1)
        lines.append(line)
    text = "\n".join(lines)
    if lang == "c":
        return text.replace("$STATUSES", "stsp").replace("$STATUS", "stp")
    text = re.sub(r"\$(SOURCE|TAG)\((\w+)\)", r"\2%MPI_\1" if lang == "f08" else r"\2(MPI_\1)", text)
    out = []
    for line in text.split("\n"):
        m = re.match(r"^(\s*)(.*\$STATUS(ES)?\b.*)$", line)
        if not m:
            out.append(line)
            continue
        ind, stmt, many = m.group(1), m.group(2), m.group(3)
        ignore, real = ("MPI_STATUSES_IGNORE", "sts") if many else ("MPI_STATUS_IGNORE", "st")
        token = "$STATUSES" if many else "$STATUS"
        out += [ind + "if (ignore) then", ind + "  " + stmt.replace(token, ignore), ind + "else",
                ind + "  " + stmt.replace(token, real), ind + "end if"]
    return "\n".join(out)


def needed(text):
    """The MPI routines a template calls."""
    return sorted(set(re.findall(r"@(MPI_\w+)\(", text)))


def build_program(lang, cases, classes):
    """cases: [(routine, row, (pre, body, post))]. Returns the program's source."""
    counter = gm.Counter(classes)
    c = lang == "c"
    emit = gm.emit_c_calls if c else gm.emit_f_calls
    body = []
    for i, (name, row, parts) in enumerate(cases):
        pre, it, post = (emit(markup(p.replace("$F", name), lang, row.variant == "ready"), counter) for p in parts)
        text = (A_C_CASE if c else A_F_CASE).replace("@PRE@", gm.indent(pre, 4) if pre.strip() else "")
        text = text.replace("@BODY@", gm.indent(it, 6)).replace("@POST@", gm.indent(post, 4) if post.strip() else "")
        body.append(text.replace("@I@", str(i)).replace("@NAME@", name).replace("@CLASS@", row.cls)
                    .replace("@MODE@", row.mode).replace("@TAG@", str(100 + 4 * i)))
    if c:
        head = emit(markup(A_C_HEAD, lang, False), counter)
        tail = emit(markup(A_C_TAIL, lang, False), counter)
        names = ", ".join('"%s"' % n for n in counter.names)
    else:
        head = emit(markup(A_F_HEAD, lang, False), counter)
        tail = emit(markup(A_F_TAIL, lang, False), counter)
        names = gm.fortran_names(counter.names)
    src = head + "\n".join(body) + tail
    if not c:
        kind = "f08" if lang == "f08" else "old"
        use = {"mpif": "", "usempi": "use mpi", "f08": "use mpi_f08"}[lang]
        src = src.replace("@USE@", use).replace("@INCLUDE@", "include 'mpif.h'" if lang == "mpif" else "")
        src = src.replace("@DECLS@", A_F_DECLS_F08 if kind == "f08" else A_F_DECLS_OLD)
        src = src.replace("@GROUPDECL@", A_F_GROUPDECL[kind]).replace("@REQDECL@", A_F_REQDECL[kind])
        src = src.replace("@LANGNAME@", gm.LANG_NAMES[lang])
    src = src.replace("@NAMES@", names).replace("@NROUTINES@", str(len(counter.names)))
    src = src.replace("@NP@", str(gm.NP)).replace("@NCASES@", str(len(cases))).replace("@LANG@", lang)
    return src.replace("@ITER0@", str(ITERATIONS[0])).replace("@ITER1@", str(ITERATIONS[1]))


def select(rows, lang, have):
    """The cases of one language and the routines skipped, with why. have(name) -> (bool, why)."""
    cases, skipped = [], {}
    for row in rows:
        if row.cls not in CLASSES:
            continue
        parts = template(row, lang)
        for name in [row.fn] + ([row.fn + "_c"] if lang == "c" else []):
            ok, why = have(name)
            if not ok:
                if name == row.fn:  # a missing large-count twin is no news (MPI-3.1 has none)
                    skipped[name] = why
                continue
            if parts is None:
                skipped[name] = "no template for class %s mode %s" % (row.cls, row.mode)
                continue
            missing = [n for n in needed("".join(parts)) if not have(n)[0]]
            if missing:
                skipped[name] = "its case needs %s: %s" % (" ".join(missing), have(missing[0])[1])
                continue
            cases.append((name, row, parts))
    return cases, skipped


def main():
    a = gm.parse_args(__doc__)
    rows = gm.read_table(a.table)
    classes = {r.fn: r.cls for r in rows}
    wrapped = set(open(a.wrapped).read().split())
    exported = set(open(a.exported).read().split())
    f08 = gm.f08_exported(a.f08_library)
    os.makedirs(a.outdir, exist_ok=True)
    cov = {"mpi": a.mpi, "ranks": gm.NP, "iterations": list(ITERATIONS), "languages": {}}
    for lang in gm.LANGS:
        cases, skipped = select(rows, lang, lambda n: gm.available(n, lang, wrapped, exported, f08, a.mpi))
        src = build_program(lang, cases, classes)
        path = os.path.join(a.outdir, "acct_%s.%s" % (lang, "c" if lang == "c" else "f90"))
        # Rewrite only when changed, so an unchanged table does not rebuild the programs.
        if not os.path.exists(path) or open(path).read() != src:
            with open(path, "w") as f:
                f.write(src)
        called = {n for _, _, parts in cases for n in needed("".join(parts))}
        helpers = sorted(r.fn for r in rows if r.cls in HELPERS and r.fn in called)
        cov["languages"][lang] = {"name": gm.LANG_NAMES[lang], "program": "acct_" + lang,
                                  "cases": [n for n, _, _ in cases], "helpers": helpers, "skipped": skipped}
    with open(os.path.join(a.outdir, "acct_coverage.json"), "w") as f:
        json.dump(cov, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
