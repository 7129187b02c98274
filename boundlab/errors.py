"""Precise exception types shared by the three packages.

Every error raised for bad user input derives from :class:`BoundlabError`, so the CLI can turn
it into one line on stderr and exit status 2.

Example
-------
>>> from boundlab.errors import DomainError
>>> try:
...     raise DomainError("eta", -1.0, "positive real (0, inf)")
... except DomainError as exc:
...     print(exc)
eta = -1.0 is outside its domain: positive real (0, inf)
"""

from __future__ import annotations

__all__ = [
    "BoundlabError",
    "DomainError",
    "PreconditionError",
    "UnknownNameError",
    "MissingParameterError",
    "IntegrityError",
    "OverwriteError",
    "WriteError",
]


class BoundlabError(ValueError):
    """Base class of every user-facing error of boundlab, toys and verify."""


class DomainError(BoundlabError):
    """A parameter value lies outside its allowed domain.

    >>> str(DomainError("tau", 0, "integer >= 1"))
    'tau = 0 is outside its domain: integer >= 1'
    """

    def __init__(self, name: str, value, domain: str, detail: str = ""):
        self.name, self.value, self.domain = name, value, domain
        msg = f"{name} = {_short(value)} is outside its domain: {domain}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)


class PreconditionError(BoundlabError):
    """A step-size or structural precondition of a theorem fails.

    >>> str(PreconditionError("drift.fedavg_convex", ["eta <= 1/(4*L)"]))
    'drift.fedavg_convex: precondition violated: eta <= 1/(4*L)'
    """

    def __init__(self, bound_id: str, failed: list[str]):
        self.bound_id, self.failed = bound_id, list(failed)
        super().__init__(f"{bound_id}: precondition violated: {'; '.join(self.failed)}")


class UnknownNameError(BoundlabError, KeyError):
    """An unknown id, parameter, algorithm or option name; lists the valid ones.

    >>> str(UnknownNameError("bound id", "drift.nope", ["drift.plateau"]))
    "unknown bound id 'drift.nope'; valid: drift.plateau"
    >>> str(UnknownNameError("bound id", "drift.platau", ["drift.plateau", "skew.speed"]))
    "unknown bound id 'drift.platau' (did you mean 'drift.plateau'?); valid: drift.plateau, \
skew.speed"
    """

    #: at most this many valid names are listed; a longer list says how many there are
    MAX_LISTED = 30

    def __init__(self, what: str, name, valid):
        self.what, self.name, self.valid = what, name, list(valid)
        names = [str(v) for v in self.valid]
        msg = f"unknown {what} {name!r}"
        close = _close_matches(str(name), names)
        if close:
            msg += f" (did you mean {' or '.join(repr(c) for c in close)}?)"
        if len(names) <= self.MAX_LISTED:
            msg += f"; valid: {', '.join(names)}"
        else:
            msg += (f"; valid: {', '.join(names[:self.MAX_LISTED])}, ... "
                    f"({len(names)} in all)")
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


class MissingParameterError(BoundlabError):
    """A required parameter was not given.

    >>> str(MissingParameterError("drift.plateau", ["eta"], {"eta": "positive real (0, inf)"}))
    'drift.plateau: missing parameter eta (domain: positive real (0, inf))'
    """

    def __init__(self, owner: str, missing, domains: dict | None = None):
        self.owner, self.missing = owner, list(missing)
        domains = domains or {}
        parts = [f"{m} (domain: {domains[m]})" if m in domains else m for m in self.missing]
        word = "parameter" if len(parts) == 1 else "parameters"
        super().__init__(f"{owner}: missing {word} {', '.join(parts)}")


class IntegrityError(BoundlabError):
    """A file boundlab reads back is damaged, forged, too large or belongs to something else.

    Names the file, the first field that is wrong, what is allowed, and why (text read from the
    file is escaped before it gets here).

    >>> str(IntegrityError("ck.npz", "problem", "a checkpoint of this run", "it is 'p2'"))
    "ck.npz: problem is not valid: a checkpoint of this run (it is 'p2')"
    """

    def __init__(self, path, field: str, allowed: str, detail: str = "",
                 header: str | None = None):
        self.path, self.field, self.allowed = str(path), field, allowed
        head = header if header is not None else f"{field} is not valid"
        msg = f"{_printable(str(path))}: {head}: "
        msg += allowed if header is None else detail
        if detail and header is None:
            msg += f" ({detail})"
        super().__init__(msg)


class OverwriteError(DomainError):
    """An output would replace or delete a file boundlab did not write, or one changed since
    boundlab wrote it (``--force`` / :func:`boundlab.io.force_overwrite` overrides).

    >>> str(OverwriteError("--out", "my.csv"))  # doctest: +ELLIPSIS
    "--out = 'my.csv' is outside its domain: a new file or a file boundlab wrote, unchanged..."
    """

    def __init__(self, name: str, path, detail: str = "boundlab did not write it",
                 what: str = "a file"):
        self.path = str(path)
        super().__init__(name, _printable(str(path)), f"a new {what.split(' ', 1)[-1]} or "
                         f"{what} boundlab wrote, unchanged since", f"{detail}; delete or "
                         "move it, choose another path, or pass --force to replace it")


class WriteError(OSError):
    """Writing an output failed (a full disk, a file-size limit, no permission): names the file
    and the option or parameter that chose it. An :class:`OSError`, so callers that tolerate a
    failed write (caches) still do.

    >>> str(WriteError(27, "File too large", "out/report.md", option="--out"))
    'cannot write out/report.md (--out): File too large'
    """

    def __init__(self, errno_, strerror, filename, option: str | None = None):
        super().__init__(errno_, strerror, filename)
        self.option = option

    def __str__(self) -> str:
        where = f" ({self.option})" if self.option else ""
        return f"cannot write {_printable(str(self.filename))}{where}: {self.strerror}"


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


def _close_matches(name: str, names: list[str]) -> list[str]:
    """Up to three valid names close to ``name`` (difflib), also after its last dot.

    >>> _close_matches("drift.platau", ["drift.plateau", "skew.speed"])
    ['drift.plateau']
    """
    import difflib

    found = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
    if not found and "." in name:
        tail = name.rsplit(".", 1)[1]
        found = [n for n in names if n.rsplit(".", 1)[-1] == tail][:3]
    return found


def _short(value) -> str:
    try:
        import numpy as np

        arr = np.asarray(value)
        if arr.ndim > 0:
            return f"array(shape={arr.shape}, offending values e.g. {arr.ravel()[:3].tolist()})"
    except Exception:  # pragma: no cover - formatting only
        pass
    return repr(value)
