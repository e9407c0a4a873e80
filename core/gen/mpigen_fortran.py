"""The Fortran wrappers (wrappers_f.cpp): mpif.h, use mpi and use mpi_f08 entry points, each giving
the tools the C view of its arguments (handles, arrays, statuses, indices, sentinels)."""
import re
from dataclasses import dataclass

from mpigen_table import MODES, base_row, class_enumerator, fail, resolve_roles, role_bits


def is_char_param(p):
    return re.search(r"\bchar\b", p.ctype) is not None


def fortran_signature(proto, cls):
    """Argument list of the mpif.h binding: every C argument by reference, ierr last, then one
    hidden length per character argument. Returns (params, has_ierr, return type)."""
    params = list(proto.params)
    if cls == "init":
        params = [p for p in params if p.name not in ("argc", "argv")]
    if proto.ret not in ("int",):
        return params, False, proto.ret
    return params, True, "void"


@dataclass
class FortranBinding:
    """One Fortran entry point of one MPI routine: mpif.h / use mpi (mpi_x_), or mpi_f08
    (mpi_x_f08_, and MPICH's mpi_x_f08ts_ whose choice buffers arrive as array descriptors)."""
    entry: str          # the symbol the application calls
    pmpi: str           # the MPI's own entry point beneath it
    cname: str          # the C routine whose prototype and table row it follows
    descriptors: bool   # choice buffers arrive as array descriptors (TS 29113 "ts" bindings)
    optional_ierr: bool # mpi_f08: ierror is OPTIONAL, so the pointer may be null
    index_base: int = 1 # what the MPI returns in Waitany/Waitsome indices (MPICH 4.0.2's f08: 0)


def fortran_bindings(exported, protos, f08_index_base=1):
    """The Fortran entry points to wrap: every exported pmpi_x_ (mpif.h, use mpi), and every
    exported mpi_x_f08_ / mpi_x_f08ts_ (use mpi_f08, with _large_ for MPI_Count arguments) whose
    PMPI twin the MPI also exports (Open MPI: pmpi_x_f08_; MPICH: pmpir_x_f08ts_), each with a
    C routine behind it."""
    by_lower = {n.lower(): n for n in protos}
    out = []
    for sym in sorted(exported):
        m = re.match(r"^pmpi_([a-z0-9_]+?)_$", sym)
        if m and not m.group(1).endswith("_") and "f08" not in m.group(1):
            cname = by_lower.get("mpi_" + m.group(1))
            if cname and not cname.endswith("_c"):
                out.append(FortranBinding("mpi_%s_" % m.group(1), sym, cname, False, False))
            continue
        m = re.match(r"^mpi_([a-z0-9_]+?)_(f08|f08ts)(_large)?_$", sym)
        if not m:
            continue
        name, kind, large = m.group(1), m.group(2), m.group(3) or ""
        cname = by_lower.get("mpi_" + name + ("_c" if large else ""))
        pmpi = next((p for p in ("pmpi_%s_%s%s_" % (name, kind, large), "pmpir_%s_%s%s_" % (name, kind, large))
                     if p in exported), None)
        if cname and pmpi:
            out.append(FortranBinding(sym, pmpi, cname, kind == "f08ts", True, f08_index_base))
    return out


# role kind -> the handle type of a handle argument converted with PMPI_X_f2c
HANDLE_IN = {"type": "Type", "comm": "Comm", "op": "Op", "win": "Win", "file": "File"}
# role kind -> handle type of an output handle (a new communicator or window, a message), converted
# from the Fortran integer before the call (for in-out handles: MPI_Win_free, MPI_Mrecv) and again
# after it
HANDLE_OUT = {"comm_out": "Comm", "win_out": "Win", "message": "Message"}
# Order of the conversions: arrays whose length another role gives come after that role.
ARRAY_KINDS = ("requests", "statuses", "indices_out", "types")


def scalar_type(p):
    """The C type a Fortran integer argument holds, from the C parameter: INTEGER, or
    INTEGER(KIND=MPI_COUNT_KIND / MPI_ADDRESS_KIND / MPI_OFFSET_KIND)."""
    for t in ("MPI_Count", "MPI_Aint", "MPI_Offset"):
        if re.search(r"\b%s\b" % t, p.ctype):
            return t
    return "MPI_Fint"


def fortran_conversions(cname, proto, params, rmap, roles, binding):
    """Statements before the PMPI call (pre) and after it (post) that give the tools the C view of
    each role argument. `rmap` maps role -> index into `params` (the Fortran arguments)."""
    pre, post = [], []
    def order(item):
        return roles[item[0]] in ARRAY_KINDS
    for role, idx in sorted(rmap.items(), key=order):
        kind = roles[role]
        a = "a%d" % idx
        fint = "*static_cast<MPI_Fint*>(%s)" % a
        if kind in ("count", "int"):
            t = scalar_type(params[idx])
            pre.append("  call.%s = static_cast<%s>(*static_cast<%s*>(%s));"
                       % (role, "int64_t" if kind == "count" else "int", t, a))
        elif kind in HANDLE_IN:
            pre.append("  call.%s = PMPI_%s_f2c(%s);" % (role, HANDLE_IN[kind], fint))
        elif kind == "buf":
            fn = "descriptor_buffer" if binding.descriptors else "buffer"
            pre.append("  call.%s = core::fortran::%s(%s);" % (role, fn, a))
        elif kind == "counts":
            pre.append("  call.%s = static_cast<const void*>(%s);" % (role, a))
        elif kind in ("int_out",):
            pre.append("  call.%s = static_cast<int*>(%s);" % (role, a))
        elif kind in HANDLE_OUT:
            h = HANDLE_OUT[kind]
            pre.append("  MPI_%s %s_c_ = PMPI_%s_f2c(%s);" % (h, role, h, fint))
            pre.append("  call.%s = &%s_c_;" % (role, role))
            post.append("  %s_c_ = PMPI_%s_f2c(%s);" % (role, h, fint))
        elif kind == "status":
            pre.append("  MPI_Fint* fstatus_ = static_cast<MPI_Fint*>(%s);" % a)
            pre.append("  MPI_Fint fstatus_storage_[core::fortran::kStatusInts];")
            pre.append("  if (core::fortran::status_ignored(fstatus_))")
            pre.append("    fstatus_ = core::Registered::needs(kNeedsStatus) ? static_cast<MPI_Fint*>(%s = fstatus_storage_) : nullptr;" % a)
            pre.append("  MPI_Status status_c_;\n  call.%s = &status_c_;" % role)
            post.append("  if (fstatus_ && call.rc == MPI_SUCCESS) PMPI_Status_f2c(fstatus_, &status_c_);")
            post.append("  else call.%s = MPI_STATUS_IGNORE;" % role)
        elif kind == "requests" and "nrequests" not in rmap:
            pre.append("  MPI_Request request_c_ = PMPI_Request_f2c(%s);" % fint)
            pre.append("  call.%s = &request_c_;" % role)
            post.append("  request_c_ = PMPI_Request_f2c(%s);" % fint)
        elif kind == "requests":
            pre.append("  call.%s = core::fortran::requests(ts, %s, call.nrequests);" % (role, a))
            pre.append("  if (!call.%s) {\n    core::fortran::lost(\"requests\");\n    call.roles &= ~role::%s;\n  }" % (role, role))
            post.append("  if (call.has(role::%s)) core::fortran::refresh_requests(call.%s, %s, call.nrequests);"
                        % (role, role, a))
        elif kind == "statuses":
            n = "call.nrequests" if "nrequests" in rmap else "1"
            done = n
            if "outcount" in rmap:
                done = "(*call.outcount > 0 && *call.outcount != MPI_UNDEFINED ? *call.outcount : 0)"
            pre.append("  MPI_Fint* fstatuses_ = static_cast<MPI_Fint*>(%s);" % a)
            pre.append("  if (core::fortran::statuses_ignored(fstatuses_)) {")
            pre.append("    fstatuses_ = core::Registered::needs(kNeedsStatus) ? core::fortran::status_storage(ts, %s) : nullptr;" % n)
            pre.append("    if (fstatuses_) %s = fstatuses_;" % a)
            pre.append("  }")
            pre.append("  call.%s = MPI_STATUSES_IGNORE;" % role)
            post.append("  if (fstatuses_ && (call.rc == MPI_SUCCESS || call.rc == MPI_ERR_IN_STATUS)) {")
            post.append("    call.%s = core::fortran::statuses(ts, fstatuses_, %s);" % (role, done))
            post.append("    if (!call.%s) {\n      core::fortran::lost(\"statuses\");\n      call.%s = MPI_STATUSES_IGNORE;\n    }" % (role, role))
            post.append("  }")
        elif kind == "index_out":
            pre.append("  int %s_c_ = MPI_UNDEFINED;\n  call.%s = &%s_c_;" % (role, role, role))
            # MPI_UNDEFINED, or below the base (MPICH's mpif.h returns MPI_UNDEFINED + 1), is none.
            post.append("  %s_c_ = %s == MPI_UNDEFINED || %s < %d ? MPI_UNDEFINED : %s - %d;"
                        % (role, fint, fint, binding.index_base, fint, binding.index_base))
        elif kind == "indices_out":
            if "outcount" not in rmap:
                fail("%s: role %s needs an outcount role" % (cname, role))
            pre.append("  call.%s = nullptr;" % role)
            post.append("  if (call.rc == MPI_SUCCESS && *call.outcount > 0 && *call.outcount != MPI_UNDEFINED) {")
            post.append("    call.%s = core::fortran::indices(ts, %s, *call.outcount, %d);" % (role, a, binding.index_base))
            post.append("    if (!call.%s) {\n      core::fortran::lost(\"indices\");\n      call.roles &= ~role::%s;\n    }" % (role, role))
            post.append("  }")
        elif kind == "types":
            send = "true" if role.startswith("send") else "false"
            skip = ""
            if send == "true" and "sendbuf" in rmap:
                skip = "call.sendbuf == MPI_IN_PLACE ? nullptr : "  # ignored by MPI, may be a dummy
            pre.append("  call.%s = %score::fortran::types(ts, %s, %s, mpe::per_peer_count(call.cls, call.comm, %s));"
                       % (role, skip, send, a, send))
        else:
            fail("%s: no Fortran conversion for role %s of kind %s" % (cname, role, kind))
    return pre, post


def emit_fortran_wrapper(w, proto, row, roles, binding):
    cls = row.cls if row else "other"
    params, has_ierr, ret = fortran_signature(proto, cls)
    if proto.variadic and cls != "pcontrol":
        return False
    # MPI_Pcontrol(level) has no ierror in Open MPI's bindings, while MPICH's mpif.h and mpi_f08
    # bindings take one (pmpir_pcontrol_f08_ writes it when not null): the register is forwarded
    # untouched, never read nor written here, which is right for both.
    reads_ierr = has_ierr and cls != "pcontrol"
    own_ierr = binding.optional_ierr and has_ierr and cls != "pcontrol"
    nchar = sum(1 for p in params if is_char_param(p))
    args = ["void* a%d" % i for i in range(len(params))]
    if has_ierr:
        args.append("MPI_Fint* ierr")
    args += ["size_t len%d" % i for i in range(nchar)]
    ptypes = ["void*"] * len(params) + (["MPI_Fint*"] if has_ierr else []) + ["size_t"] * nchar
    lens = ["len%d" % i for i in range(nchar)]
    def forward(ierr):
        return "%s(%s)" % (binding.pmpi, ", ".join(["a%d" % i for i in range(len(params))] +
                                                   ([ierr] if has_ierr else []) + lens))
    w("extern \"C\" %s %s(%s);\n" % (ret, binding.pmpi, ", ".join(ptypes) or "void"))
    w("extern \"C\" MPE_EXPORT %s %s(%s) {\n" % (ret, binding.entry, ", ".join(args) or "void"))
    w("  core::ThreadState& ts = core::thread_state();\n")
    if ret != "void":
        w("  if (!core::observing(ts)) return %s;\n" % forward("ierr"))
    else:
        w("  if (!core::observing(ts)) {\n    %s;\n    return;\n  }\n" % forward("ierr"))
    rmap = {}
    if row:
        full = resolve_roles(proto, row)
        # Map C argument indices to Fortran argument indices (Init drops argc/argv).
        index_of = {id(p): i for i, p in enumerate(params)}
        for role, idx in full.items():
            p = proto.params[idx]
            if id(p) in index_of:
                rmap[role] = index_of[id(p)]
    large = binding.cname.endswith("_c")
    w("  constexpr core::Shape kShape{Fn::%s, CallClass::%s, Mode::%s, %s};\n"
      % (binding.cname, class_enumerator(cls), MODES[row.mode] if row else "kBlocking", role_bits(rmap)))
    w("  Call call;\n  core::poison(call);\n  call.fn = kShape.fn;\n  call.cls = kShape.cls;\n")
    w("  call.mode = kShape.mode;\n  call.flags = %s;\n" % ("kFortran | kLargeCount" if large else "kFortran"))
    pre, post = fortran_conversions(binding.cname, proto, params, rmap, roles, binding)
    w("  call.roles = kShape.roles;\n")
    w("  call.caller = reinterpret_cast<uintptr_t>(__builtin_return_address(0));\n")
    for line in pre:
        w(line + "\n")
    w("  core::enter<core::Registered>(ts, call, kShape);\n")
    if cls == "finalize":
        w("  core::before_finalize(ts);\n")
    w("  core::suppress(ts);\n")
    # mpi_f08's ierror is OPTIONAL: the MPI gets our own, copied back when the caller passed one.
    ierr_arg = "&ierr_" if own_ierr else "ierr"
    if own_ierr:
        w("  MPI_Fint ierr_ = MPI_SUCCESS;\n")
    if ret != "void":
        w("  %s result = %s;\n" % (ret, forward(ierr_arg)))
    else:
        w("  %s;\n" % forward(ierr_arg))
    w("  core::unsuppress(ts);\n")
    if own_ierr:
        w("  if (ierr) *ierr = ierr_;\n")
    w("  call.rc = %s;\n" % (("ierr_" if binding.optional_ierr else "*ierr") if reads_ierr else "MPI_SUCCESS"))
    for line in post:
        w(line + "\n")
    if cls == "init":
        w("  if (call.rc == MPI_SUCCESS) core::after_init(ts);\n")
    w("  core::leave<core::Registered>(ts, call, kShape);\n")
    if ret != "void":
        w("  return result;\n")
    w("}\n\n")
    return True


def emit_fortran_wrappers(out, protos, rows, roles, bindings):
    w = out.write
    w("// Generated by core/gen/mpigen.py. Do not edit.\n")
    w("// Fortran bindings (mpif.h, use mpi, use mpi_f08): arguments arrive by reference; handles,\n")
    w("// handle arrays and sentinels are converted so the tools see the C view (mpe/fortran.h). What\n")
    w("// the MPI's binding does beneath (MPICH's calls MPI_X) is suppressed, so each call is seen once.\n")
    w("#include \"mpe/bytes.h\"\n#include \"mpe/core.h\"\n#include \"mpe/fortran.h\"\n#include <cstddef>\n\n")
    w("using namespace mpe;\n\n")
    wrapped = []
    for binding in bindings:
        proto = protos[binding.cname]
        row, _ = base_row(binding.cname, rows)
        if emit_fortran_wrapper(w, proto, row, roles, binding):
            wrapped.append(binding.entry)
    return wrapped
