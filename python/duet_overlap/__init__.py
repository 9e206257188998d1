"""duet_overlap: duet from Python, hardware profiles, plans, simulations and predictions as plain dicts.

A thin layer of ctypes over libduet.so's JSON entry point, duet_predict_json() (include/duet/sim.h):
no compiled extension and nothing outside the standard library. Every time is in microseconds (keys
ending in ``_us``), every size in bytes. docs/python.md describes the functions and their results.

The library is found through the ``DUET_LIBRARY`` environment variable (a path to libduet.so), then in
the build folder of the source tree this package sits in (``build/libduet.so``), then where the
system's loader looks (``ctypes.util.find_library("duet")``).

The functions take keyword arguments only for what they name: a misspelt one (``wrld=8``) is a
TypeError that names it and the closest accepted name, and every integer (GEMM and comm sizes, world,
root, top, ...) must be an int: a float is a TypeError, never truncated. A request the library
refuses raises DuetError with the library's message.
"""

import collections.abc
import ctypes
import ctypes.util
import difflib
import inspect
import json
import numbers
import os

__all__ = [
    "DuetError",
    "library_path",
    "version",
    "hw_list",
    "hw",
    "plan",
    "simulate",
    "predict",
    "request",
]


class DuetError(Exception):
    """A call the library refused or failed: ``status`` is its duet_status_t, the message its text."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


_LIB = None


def library_path():
    """The path of the libduet.so this package loads (or would load)."""
    env = os.environ.get("DUET_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    candidate = os.path.join(here, "..", "..", "build", "libduet.so")
    if os.path.exists(candidate):
        return os.path.normpath(candidate)
    found = ctypes.util.find_library("duet")
    if found:
        return found
    raise DuetError(-1, "libduet.so not found: build it (make) or set DUET_LIBRARY to its path")


def _lib():
    global _LIB
    if _LIB is None:
        path = library_path()
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise DuetError(-1, "cannot load %s: %s" % (path, e)) from None
        lib.duet_predict_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.duet_predict_json.restype = ctypes.c_int
        lib.duet_json_free.argtypes = [ctypes.c_void_p]
        lib.duet_json_free.restype = None
        lib.duet_last_error.argtypes = []
        lib.duet_last_error.restype = ctypes.c_char_p
        lib.duet_version.argtypes = []
        lib.duet_version.restype = ctypes.c_char_p
        lib.duet_hw_builtin_count.argtypes = []
        lib.duet_hw_builtin_count.restype = ctypes.c_int
        lib.duet_hw_builtin_name.argtypes = [ctypes.c_int]
        lib.duet_hw_builtin_name.restype = ctypes.c_char_p
        _LIB = lib
    return _LIB


def version():
    """The version of the loaded library, e.g. "0.4.0"."""
    return _lib().duet_version().decode()


def request(req):
    """Send one request (a dict, see docs/python.md) to duet_predict_json() and return the answer as a dict."""
    lib = _lib()
    out = ctypes.c_void_p()
    st = lib.duet_predict_json(json.dumps(req).encode(), ctypes.byref(out))
    if st < 0:
        raise DuetError(st, lib.duet_last_error().decode(errors="replace"))
    try:
        return json.loads(ctypes.string_at(out.value).decode())
    finally:
        lib.duet_json_free(out)


def hw_list():
    """The names of the built-in hardware profiles."""
    lib = _lib()
    return [lib.duet_hw_builtin_name(i).decode() for i in range(lib.duet_hw_builtin_count())]


def hw(profile="h200"):
    """A hardware profile (schema duet-hw/1): a built-in name, a JSON file's path, or a profile dict."""
    return request({"op": "hw", "hw": profile})


# The workload's keyword arguments every function takes beside its own (as the CLI's flags).
_WORKLOAD_KEYS = ("dtype", "world", "root", "comm_bytes", "hw")
# Those of them that are integers.
_INTEGER_KEYS = ("world", "root", "comm_bytes", "rank")


def _integer(name, value):
    """value as an int, or TypeError: a float (even 8.0), a string or a bool is refused rather than
    truncated or converted, so that 4096.7 never quietly becomes 4096."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an integer, not %r (%s)" % (name, value, type(value).__name__))
    return int(value)


def _integers(name, values, count=None):
    """A sequence of integers (count of them, if given), each checked as _integer."""
    if isinstance(values, (str, bytes)) or not isinstance(values, collections.abc.Iterable):
        raise TypeError("%s must be a sequence of integers, not %r" % (name, values))
    out = [_integer("%s[%d]" % (name, i), v) for i, v in enumerate(values)]
    if count is not None and len(out) != count:
        raise TypeError("%s must hold %d integers, not %d" % (name, count, len(out)))
    return out


def _workload(func, kw, gemm, collective, comm, extra=()):
    """The request's workload members; every key of kw must be a workload argument (or one of extra),
    else TypeError naming it, with the closest accepted name."""
    accepted = _WORKLOAD_KEYS + tuple(extra)
    for key in kw:
        if key not in accepted:
            names = [n for n in inspect.signature(func).parameters if n != "kw"] + list(accepted)
            close = difflib.get_close_matches(key, names, n=1)
            raise TypeError("%s() got an unexpected keyword argument %r%s" %
                            (func.__name__, key, "; did you mean %r?" % close[0] if close else ""))
    req = {}
    if gemm is not None:
        req["m"], req["n"], req["k"] = _integers("gemm", gemm, 3)
    if comm is not None:
        req["mc"], req["nc"] = _integers("comm", comm, 2)
    if collective is not None:
        req["collective"] = collective
    for key, value in kw.items():
        if value is not None:
            req[key] = _integer(key, value) if key in _INTEGER_KEYS else value
    return req


def plan(gemm=None, collective=None, comm=None, config=None, **kw):
    """The plan of one workload and configuration (schema duet-plan/1): tiles, bytes, FLOPs, a tile's price.

    kw: the workload's dtype, world, root, comm_bytes, hw, and rank (the rank whose plan it is)."""
    req = _workload(plan, kw, gemm, collective, comm, extra=("rank",))
    req["op"] = "plan"
    if config:
        req["config"] = dict(config)
    return request(req)


def simulate(gemm=None, collective=None, comm=None, config=None, policy=None, **kw):
    """Simulate one configuration (schema duet-simulate/1): makespan_us, queue finishes, busbw.

    kw: the workload's dtype, world, root, comm_bytes, hw."""
    req = _workload(simulate, kw, gemm, collective, comm)
    req["op"] = "simulate"
    if config:
        req["config"] = dict(config)
    if policy:
        req["policy"] = policy
    return request(req)


def _comm_tile(value):
    """comm_tile as the request's "CMxCN": a string as it is (the library checks it), else two integers."""
    if isinstance(value, str):
        return value
    cm, cn = _integers("comm_tile", value, 2)
    return "%dx%d" % (cm, cn)


def _sweep_shape(req, num_wgs, comm_tile, group_m, reference_pricing):
    """The sweep's grid, comm tile and swizzle, and reference_pricing, into the request where given."""
    if num_wgs is not None:
        req["num_wgs"] = _integer("num_wgs", num_wgs)
    if comm_tile is not None:
        req["comm_tile"] = _comm_tile(comm_tile)
    if group_m is not None:
        req["group_m"] = _integer("group_m", group_m)
    if reference_pricing is not None:
        if not isinstance(reference_pricing, bool):
            raise TypeError("reference_pricing must be True or False, not %r (%s)" %
                            (reference_pricing, type(reference_pricing).__name__))
        req["reference_pricing"] = reference_pricing


def predict(gemm=None, collective=None, comm=None, modes=None, tiles=None, split_ks=None, split_step=None,
            top=10, policy=None, emit=None, running_vendor=None, num_wgs=None, comm_tile=None, group_m=None,
            reference_pricing=None, **kw):
    """Sweep and rank configurations (schema duet-predict/2), as ``duet predict --json``.

    modes: list of "fused", "concurrent", "vendor"; tiles: list of "BMxBNxBK"; top: rows (0 for all);
    emit: "nccl", "rccl", "torch", "te" or "env" adds the best vendor split as that stack's settings;
    running_vendor: (gemm_sms, comm_ctas) or gemm_sms, the vendor split you run, the safe choice of the
    decision instead of the static default. Rows are ranked by the upper end of their interval (hi_us);
    "decision" says whether the predicted gain of leaving the safe choice exceeds the model's error band.
    num_wgs: the fused grid (default one CTA per SM); comm_tile: (cm, cn) or "CMxCN" (default 256x64);
    group_m: the GEMM swizzle (default 8); reference_pricing: True with policy "frozen" prices as the
    reference predictor did and adds its own pick (reference_predict_split).
    kw: the workload's dtype, world, root, comm_bytes, hw.
    """
    req = _workload(predict, kw, gemm, collective, comm)
    req["op"] = "predict"
    req["top"] = _integer("top", top)
    if split_step is not None:
        req["split_step"] = _integer("split_step", split_step)
    if split_ks is not None:
        req["split_ks"] = _integers("split_ks", split_ks)
    for key, value in (("modes", modes), ("tiles", tiles), ("policy", policy), ("emit", emit)):
        if value is not None:
            req[key] = list(value) if key in ("modes", "tiles") else value
    if running_vendor is not None:
        if isinstance(running_vendor, numbers.Integral) and not isinstance(running_vendor, bool):
            req["running_vendor"] = {"gemm_sms": _integer("running_vendor", running_vendor)}
        else:
            g, c = _integers("running_vendor", running_vendor, 2)
            req["running_vendor"] = {"gemm_sms": g, "comm_ctas": c}
    _sweep_shape(req, num_wgs, comm_tile, group_m, reference_pricing)
    return request(req)
