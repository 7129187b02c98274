"""House style of every verify figure: fonts, verdict colours, words for titles and labels,
legends outside the data, and the atomic 300 dpi PNG + SVG save.

The rc settings live in the matplotlib style file ``house.mplstyle`` next to this module
(:data:`STYLE_FILE`; ``plt.style.use(STYLE_FILE)`` gives a script the same look);
:func:`style` applies them inside a block. :func:`save` passes every figure to the figure
lint's hook (:func:`verify.figures.lint.record`) before writing it.

Titles and labels are in words, derived from a bound's metadata (``Bound.source`` names the
paper as ``seed NNN``; :data:`verify.reproduce.registry.PAPERS` gives its authors), never the
internal ids (``skew.corollary_gamma``, ``fedmax-k_k2``).

Example
-------
>>> source_words("seed 003, Theorem 1, eq. (7)")
'Buttaci & Calafiore, Theorem 1, eq. (7)'
>>> case_words("fedmax-k_k2"), case_words("tau=10"), case_words("fedsoftmax_temperature0.1")
('FedMax(k), k = 2', 'τ = 10', 'FedSoftMax, temperature 0.1')
>>> theorem_short("seed 000, Corollary 4 = seed 001, Corollary 1, corrected")
'Cor. 4 (corrected)'
"""

from __future__ import annotations

import contextlib
import pathlib
import re
import textwrap

__all__ = ["STYLE", "STYLE_FILE", "VERDICT_COLORS", "VERDICT_WORDS", "QUANTITIES", "A4_WIDTH",
           "A4_HEIGHT", "style", "save", "frame_verdict",
           "legend_below", "source_words", "paper_short", "theorem_short", "case_words",
           "scrub", "quantity_label", "term_words", "wrap", "suptitle", "integer_axes",
           "PARAM_WORDS"]

#: text width and height of an A4 page with 2.5 cm margins, inches
A4_WIDTH, A4_HEIGHT = 6.3, 9.7
#: the matplotlib style file of every figure
STYLE_FILE = pathlib.Path(__file__).with_name("house.mplstyle")


def _read_style(path) -> dict:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, sep, value = line.split("#")[0].partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


#: matplotlib settings of every figure (read from :data:`STYLE_FILE`): fonts >= 8 pt,
#: constrained layout, 300 dpi, text kept in SVG
STYLE = _read_style(STYLE_FILE)
#: verdict -> colour; a figure's colours follow the verdict, never a ratio alone
VERDICT_COLORS = {"holds": "tab:green", "VIOLATED": "tab:red", "not-applicable": "tab:gray",
                  "order-only": "tab:blue", "diverged": "tab:orange", "error": "black",
                  "supported": "tab:green", "refuted": "tab:red", "inconclusive": "tab:orange",
                  "inaccurate": "tab:brown"}
#: verdict -> what it means, for legends
VERDICT_WORDS = {"holds": "holds: bound \u2265 measured", "VIOLATED": "VIOLATED: bound < measured",
                 "not-applicable": "not applicable: a precondition fails",
                 "order-only": "order only: O(\u00b7) statement, not judged",
                 "diverged": "diverged: the run blew up", "error": "error",
                 "supported": "supported", "refuted": "refuted",
                 "inconclusive": "inconclusive: too few seeds to tell",
                 "inaccurate": "inaccurate solve: no verdict"}

_ALGOS = {"fedavg": "FedAvg", "fedprox": "FedProx", "fedmax-k": "FedMax(k)", "fedmax": "FedMax",
          "fedsoftmax": "FedSoftMax", "fedau": "FedAU", "beta": "Beta algorithm",
          "fedworse": "FedWorse", "fedbetter": "FedBetter", "scaffold": "SCAFFOLD",
          "fedsoftworse": "FedSoftWorse", "fedsoftbetter": "FedSoftBetter",
          "fedbetter-k": "FedBetter(k)", "fedau-known": "FedAU (known p)", "hybrid": "Hybrid",
          "fedvarp": "FedVARP", "mifa": "MIFA", "fednova": "FedNova", "fedadagrad": "FedAdagrad",
          "fedadam": "FedAdam", "fedyogi": "FedYogi", "poc": "Power-of-choice",
          "fedprox-bc": "FedProx (BC)", "fedavg-hetero": "FedAvg (heterogeneous steps)",
          "average-participating": "average of participants", "average-all": "average of all"}
#: pieces of a compound rule name ('fedsoftbetteravgsoftworse'), in their paper's spelling
_PIECES = {"fed": "Fed", "soft": "Soft", "better": "Better", "worse": "Worse", "avg": "Avg",
           "max": "Max", "prox": "Prox"}
_COMPOUND = re.compile(r"^fed(?:soft|better|worse|avg|max|prox)+$")
#: a parameter varied on an axis -> its name in words and symbol
PARAM_WORDS = {"tau": "local steps per round \u03c4", "T": "rounds T", "t": "round t",
               "E": "local epochs E", "eta": "step size \u03b7", "lr": "step size \u03b7",
               "L": "smoothness L", "mu": "strong convexity \u03bc", "zeta": "dissimilarity \u03b6",
               "K": "cutoff K", "M": "clients M", "N": "clients N", "n_clients": "clients N",
               "local_steps": "local steps \u03c4", "sigma": "gradient noise \u03c3",
               "D": "initial distance D", "beta": "\u03b2", "alpha": "\u03b1"}
_HYPER = {"temperature": "temperature ", "k": "k = ", "a": "\u03b1 = ", "prox": "\u03b1 = ",
          "beta": "\u03b2 = "}
_GREEK = {"alpha": "\u03b1", "beta": "\u03b2", "gamma": "\u03b3", "eta": "\u03b7", "mu": "\u03bc",
          "tau": "\u03c4", "rho": "\u03c1", "zeta": "\u03b6", "sigma": "\u03c3", "omega": "\u03c9",
          "kappa": "\u03ba", "Gamma": "\u0393", "Delta": "\u0394", "lambda": "\u03bb"}
_TERMS = {"init": "initial distance", "noise": "gradient noise", "drift": "client drift",
          "drift_noise": "client drift (noise)", "drift_het": "client drift (heterogeneity)",
          "het": "heterogeneity", "heterogeneity": "heterogeneity", "speed": "speed term",
          "error": "learning-error term", "perturbation": "perturbation", "progress": "progress",
          "variance": "variance", "bias": "bias"}
#: a bound's measured quantity (``Bound.lhs``) in words and symbols (matplotlib mathtext)
QUANTITIES = {
    "avg_shadow_gap": r"average shadow gap $(1/T)\sum_{t<T} F(\bar x_t) - F^*$",
    "final_gap": r"optimality gap $F(w_T) - F^*$",
    "gap_t": r"optimality gap $f(\bar w_t) - f^*$",
    "round_avg_gap": r"round-average gap $(1/\tau)\sum_k F(\bar x^{t,k}) - F^*$",
    "avg_weight_error": r"weight error $(1/T)\sum_t E(p\,\omega_t - 1)^2$",
    "max_client_drift": r"client drift $\max\|x_i - \bar x\|^2$",
    "plateau_gap": r"plateau of the shadow gap $F(\bar x) - F^*$",
    "dist_next": r"squared distance $\|w_{t+1} - w^*\|^2$",
    "avg_grad_norm2": r"mean squared gradient $(1/T)\sum_t \|\nabla F(x_t)\|^2$",
}
_ID = re.compile(r"\b([a-z][a-z0-9]*)\.([a-z][a-z0-9_]*(?:\.[a-z]+)?)\b")
_THEOREM = re.compile(r"\b(Theorem|Lemma|Corollary|Remark|Proposition|eq\.|Fig\.|Sec\.|Exp\.)"
                      r"\s*(\([A-Z]?\.?[0-9][0-9.]*\)|[A-Z]?\.?[0-9]+(?:\.[0-9]+)*)")
_SUB = dict(zip("0123456789tiknp", "\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089"
                                          "\u209c\u1d62\u2096\u2099\u209a"))
_ABBREV = {"Theorem": "Thm", "Corollary": "Cor.", "Remark": "Rem.", "Proposition": "Prop."}


@contextlib.contextmanager
def style():
    """The house rc settings (fonts >= 8 pt, constrained layout) inside the block."""
    import matplotlib.pyplot as plt

    with plt.style.context(STYLE_FILE):
        yield


def save(fig, path, *, close: bool = True, name: str | None = None,
         option: str | None = None) -> pathlib.Path:
    """Write ``fig`` to ``<path>.png`` (300 dpi) and ``<path>.svg``, each atomically, with a
    tight bounding box (nothing clipped); returns the PNG path. ``name`` names the figure to
    the lint's hook (default: the file's stem). ``option``: the path is a user's single-file
    output named by this option (e.g. ``--plot``): an existing file there is replaced only if
    boundlab wrote it and it is unchanged (:func:`boundlab.io.check_replaceable`)."""
    import matplotlib.pyplot as plt

    from boundlab.io import atomic_savefig

    from .lint import record

    path = pathlib.Path(path)
    stem = path.with_suffix("") if path.suffix in (".png", ".svg") else path
    try:
        integer_axes(fig)
        record(fig, name or stem.name)
        for suffix in (".png", ".svg"):
            atomic_savefig(fig, stem.with_suffix(suffix), dpi=300, bbox_inches="tight",
                           pad_inches=0.03, name=option, owned=option is not None)
    finally:
        if close:
            plt.close(fig)
    return stem.with_suffix(".png")


def frame_verdict(ax, verdict: str) -> None:
    """Frame the axes in the verdict's colour."""
    color = VERDICT_COLORS.get(verdict, "black")
    for side in ax.spines.values():
        side.set_edgecolor(color)
        side.set_linewidth(1.6)


def legend_below(fig, handles, labels, ncols: int = 2):
    """One legend for the figure, below every panel (outside the data)."""
    seen = dict(zip(labels, handles))
    width = fig.get_figwidth() * 72 / 4.6  # characters of 8 pt text across the figure
    fit = max(1, int(width // (max(map(len, seen), default=1) + 6)))
    return fig.legend(list(seen.values()), list(seen), loc="outside lower center",
                      ncols=max(1, min(ncols, fit, len(seen))))


def paper_short(tag: str) -> str:
    """'004' -> 'Dhasade et al. (DKR)' (first author et al. beyond two authors)."""
    from ..reproduce.registry import PAPERS

    full = PAPERS.get(tag)
    if full is None:
        return f"paper {tag}"
    m = re.match(r"^(.*?)(?: \((.+)\)|, ([\w-]+))?$", full)
    authors, label = m.group(1), m.group(2) or m.group(3)
    names = re.split(r", | & ", authors)
    who = f"{names[0]} et al." if len(names) > 2 else authors
    return f"{who} ({label})" if label else who


def source_words(source: str) -> str:
    """A bound's ``source`` with each ``seed NNN`` replaced by its paper's authors."""
    return re.sub(r"seed (\d{3})", lambda m: paper_short(m.group(1)), source or "")


def theorem_short(source: str, n: int = 2) -> str:
    """'seed 003, Theorem 1, eq. (7)' -> 'Thm 1, eq. (7)': at most ``n`` statement numbers
    of the first paper named, with '(corrected)' / '(printed)' when the source says so."""
    first = (source or "").split(" = ")[0]
    found = [f"{_ABBREV.get(k, k)} {num}" for k, num in _THEOREM.findall(first)][:n]
    out = ", ".join(found) or scrub(first.split(",")[-1].strip())
    if "corrected" in (source or ""):
        out += " (corrected)"
    elif "printed" in (source or ""):
        out += " (printed)"
    return out


def _algo(token: str) -> str:
    if _COMPOUND.match(token):
        return "".join(_PIECES[p] for p in re.findall("|".join(_PIECES), token))
    for name in sorted(_ALGOS, key=len, reverse=True):
        if token == name or token.startswith(name + "_"):
            rest = token[len(name) + 1:]
            parts = [_ALGOS[name]]
            for h in filter(None, rest.split("_")):
                m = re.match(r"([a-z]+)([-0-9.e]+)$", h)
                if m and m.group(1) in _HYPER:
                    parts.append(_HYPER[m.group(1)] + m.group(2))
                elif re.match(r"[-0-9.e]+$", h):
                    parts.append(f"{_HYPER.get(name, '')}{h}")
                else:
                    parts.append(scrub(h))
            return ", ".join(parts)
    return ""


def case_words(case: str) -> str:
    """A check's ``case`` label in words: algorithms by their papers' names, ``tau=10`` as
    ``τ = 10``, underscores gone."""
    pieces = []
    for piece in str(case).split(", "):
        words = _algo(piece.strip())
        if not words:
            words = re.sub(r"\b([A-Za-z_]+)=([^\s,]+)",
                           lambda m: f"{_GREEK.get(m.group(1), m.group(1))} = {m.group(2)}", piece)
            words = scrub(words)
        pieces.append(words)
    return ", ".join(pieces)


def _id_words(m: re.Match) -> str:
    try:
        import boundlab

        return theorem_short(boundlab.get(m.group(0)).source)
    except Exception:  # noqa: BLE001 - not a catalogue id: keep its words
        return f"{m.group(1)} {m.group(2)}".replace("_", " ")


def scrub(text: str) -> str:
    """Text for a title: catalogue ids become their theorem, ``||a||`` norms get bars,
    Greek names their letters, underscores go."""
    text = _ID.sub(_id_words, str(text))
    text = text.replace("||", "\u2016").replace("<=", "\u2264").replace(">=", "\u2265")
    text = text.replace("->", "\u2192")
    text = re.sub(r"\b(" + "|".join(_GREEK) + r")(?=_|\b)",
                  lambda m: _GREEK[m.group(1)], text)
    text = re.sub(r"_\{?([0-9a-zA-Z])\}?\b", lambda m: _SUB.get(m.group(1), m.group(1)), text)
    return re.sub(r"\beq([0-9]+)\b", r"eq. (\1)", text.replace("_", " "))


def quantity_label(lhs: str | None, fallback: str = "") -> str:
    """Axis label of a bound's measured quantity: words and symbol."""
    if lhs in QUANTITIES:
        return QUANTITIES[lhs]
    return scrub(fallback or lhs or "measured")


def term_words(name: str) -> str:
    """A bound term's name in words."""
    return _TERMS.get(name, scrub(name))


def suptitle(fig, text: str):
    """The figure's title at the figure's width, never cut: two lines at 10 pt, else 9 pt,
    else three at 8 pt (as many as it needs beyond that; the lint flags more than three). The
    whole title is kept as ``fig.full_title`` for captions."""
    text = " ".join(str(text).split())
    fig.full_title = text
    size, lines = 8, []
    for size, per_char, most in ((10, 5.8, 2), (9, 5.2, 2), (8, 4.7, 3)):  # noqa: B007
        lines = textwrap.wrap(text, int(fig.get_figwidth() * 72 / per_char))
        if len(lines) <= most:
            break
    return fig.suptitle("\n".join(lines), fontsize=size)


def integer_axes(fig) -> None:
    """Integer ticks on every linear axis whose plotted data are all integers (rounds,
    local steps, seeds): no fractional tick on a count."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    from .lint_rules import integer_data

    for ax in fig.axes:
        for axis, i in ((ax.xaxis, 0), (ax.yaxis, 1)):
            if axis.get_scale() != "linear" or isinstance(axis.get_major_locator(),
                                                            FixedLocator):
                continue
            if integer_data(ax, i):
                axis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))


def wrap(text: str, width: int = 90) -> str:
    """Wrap a title to lines of at most ``width`` characters."""
    return "\n".join(textwrap.wrap(text, width)) if text else ""
