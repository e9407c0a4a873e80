"""Interop tests: real runs of the samples under mpiexec, their logs written as OTF2 (by liblog
at finalize, in parallel, and by `mpe convert`), checked with otf2-print and OTF2's Python reader
against our own counts; round trips mpelog -> OTF2 -> mpelog; call sites as OTF2 calling
contexts, out and back; Chrome JSON structure and counts; bad input; archives from another
producer read in; nonblocking collectives with their completions (request records, OTF2's
NonBlockingCollectiveRequest/Complete, round trip, wait states). INTEROP_TEST selects a group:
otf2, roundtrip, callsites, chrome, errors, otf2_in, nbc, vite (ViTE opens our archives)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # mpitest
import interop_callsites  # noqa: E402
import interop_chrome  # noqa: E402
import interop_errors  # noqa: E402
import interop_nbc  # noqa: E402
import interop_otf2  # noqa: E402
import interop_otf2_in  # noqa: E402
import interop_vite  # noqa: E402

if __name__ == "__main__":
    group = os.environ.get("INTEROP_TEST", "otf2")
    {"otf2": interop_otf2.otf2, "roundtrip": interop_otf2.roundtrip, "callsites": interop_callsites.callsites,
     "chrome": interop_chrome.chrome, "errors": interop_errors.errors, "otf2_in": interop_otf2_in.otf2_in,
     "nbc": interop_nbc.nbc, "vite": interop_vite.vite}[group]()
