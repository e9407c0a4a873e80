"""The selected MPI's preprocessed mpi.h, read: one Proto per PMPI_ prototype."""
import re
from dataclasses import dataclass

@dataclass
class Param:
    text: str        # declaration text with the name in place
    name: str
    ctype: str       # declaration with the name removed, for classification
    is_array: bool


@dataclass
class Proto:
    ret: str
    name: str        # MPI_X (without the P)
    params: list
    variadic: bool = False


def strip_attributes(text):
    out, i = [], 0
    while True:
        j = text.find("__attribute__", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.index("(", j)
        depth = 0
        while True:
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def split_top(params):
    parts, depth, cur = [], 0, []
    for ch in params:
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


TYPE_WORDS = {"int", "char", "void", "double", "float", "long", "short", "unsigned", "signed",
              "const", "volatile", "struct", "size_t", "restrict", "__restrict"}


def parse_param(text, index):
    text = re.sub(r"\s+", " ", text).strip()
    if text == "...":
        return None
    fp = re.match(r"^(.*\(\s*\*\s*)(\w*)(\s*\).*)$", text)
    if fp:  # function pointer
        name = fp.group(2) or "arg%d" % index
        return Param(fp.group(1) + name + fp.group(3), name, fp.group(1) + fp.group(3), False)
    arr = ""
    m = re.match(r"^(.*?)((?:\s*\[[^\]]*\])+)$", text)
    if m:
        text, arr = m.group(1).strip(), m.group(2).replace(" ", "")
    m = re.match(r"^(.*?)(\w+)$", text)
    base, last = (m.group(1), m.group(2)) if m else (text, "")
    if not last or last in TYPE_WORDS or last.startswith("MPI") or not base.strip():
        name = "arg%d" % index
        decl = text + " " + name + arr
        ctype = text
    else:
        name = last
        decl = text + arr
        ctype = base.strip()
    return Param(decl, name, ctype + (" *" if arr else ""), bool(arr))


def parse_header(path):
    text = strip_attributes(open(path).read())
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    text = re.sub(r"\s+", " ", text)
    protos, named = {}, {}
    for stmt in text.split(";"):
        m = re.match(r"^\s*(?:extern\s+)?([\w\s\*]+?)\s*\b(P?MPI_\w+)\s*\((.*)\)\s*$", stmt)
        if not m or "typedef" in stmt:
            continue
        ret, fname, plist = m.group(1).strip(), m.group(2), m.group(3)
        ret = re.sub(r"\b(extern|static|inline)\b", "", ret).strip()
        raw = [] if plist.strip() in ("", "void") else split_top(plist)
        params, variadic = [], False
        for i, p in enumerate(raw):
            parsed = parse_param(p, i)
            if parsed is None:
                variadic = True
            else:
                params.append(parsed)
        proto = Proto(ret, fname[1:] if fname.startswith("PMPI_") else fname, params, variadic)
        (protos if fname.startswith("PMPI_") else named)[proto.name] = proto
    # Prefer the argument names of the MPI_X declaration where PMPI_X leaves them out.
    for name, proto in protos.items():
        other = named.get(name)
        if other and len(other.params) == len(proto.params):
            for i, p in enumerate(proto.params):
                if p.name.startswith("arg") and not other.params[i].name.startswith("arg"):
                    proto.params[i] = other.params[i]
    return protos
