"""Helpers shared by the jitterlab notebooks: find (or build) the release binary, run the exact
`jitterlab` command a notebook shows, and load the result folder's CSV files with pandas.

Nothing here computes a result: every number a notebook shows comes from the CSV files that the
printed command wrote, and every colour from the folder's `palette.json` (a colour per
strategy name, the CLI's palette, the same in every run) or `heat_cmap` (viridis, bright is
better). The binary is, in order:

1. `$JITTERLAB`, when set (a path to a `jitterlab` binary);
2. the repository's own release build, after `cargo build --release` in the repository root
   (a no-op when it is up to date), so the notebooks never read results of stale code;
3. `target/release/jitterlab`, when cargo is not installed but a build is there.

Results go to `notebooks/out/<name>/`, emptied before each run so that every file in it comes
from the command printed above it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "notebooks" / "out"

_binary: Path | None = None


def binary() -> Path:
    """The `jitterlab` binary the notebooks run (see the module docs for the order)."""
    global _binary
    if _binary is not None:
        return _binary
    env = os.environ.get("JITTERLAB")
    if env:
        path = Path(env).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"$JITTERLAB is {env!r}, which is not a file")
        _binary = path
    elif shutil.which("cargo"):
        print("$ cargo build --release   # in", REPO)
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        meta = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPO, check=True, capture_output=True, text=True,
        )
        _binary = Path(json.loads(meta.stdout)["target_directory"]) / "release" / "jitterlab"
    else:
        path = REPO / "target" / "release" / "jitterlab"
        if not path.is_file():
            raise FileNotFoundError(
                "no jitterlab binary: install Rust and run `cargo build --release` in "
                f"{REPO}, or set $JITTERLAB to a jitterlab binary"
            )
        _binary = path
    return _binary


def _show(args: list[str]) -> str:
    """The command as a reader types it from the repository root."""
    shown = [str(Path(a).relative_to(REPO)) if a.startswith(str(REPO)) else a for a in args]
    return "$ " + shlex.join(["jitterlab", *shown])


def _exec(args: list[str]) -> subprocess.CompletedProcess:
    """Runs `jitterlab ARGS` in the repository root; shows the command, fails on its errors."""
    exe = binary()
    print(_show(args))
    proc = subprocess.run([str(exe), *args], cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"jitterlab exited with {proc.returncode}:\n{proc.stderr}")
    return proc


@dataclass
class Result:
    """A result folder written by `jitterlab run`, its CSV files loaded on first use."""

    dir: Path
    stdout: str = ""
    seconds: float = 0.0
    _frames: dict = field(default_factory=dict, repr=False)

    def _csv(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            # Sweep values ("10ms", "unlimited") stay text, in the order the sweep wrote them.
            self._frames[name] = pd.read_csv(self.dir / f"{name}.csv", dtype=self.sweep_dtypes)
        return self._frames[name]

    @property
    def scenario(self) -> dict:
        """The resolved `scenario.toml`, every default written out."""
        with open(self.dir / "scenario.toml", "rb") as f:
            return tomllib.load(f)

    @property
    def sweep_keys(self) -> list[str]:
        """The swept dotted keys, in the scenario's order (their CSV columns)."""
        return list(self.scenario.get("sweep", {}).keys())

    @property
    def sweep_dtypes(self) -> dict:
        return {k: str for k in self.sweep_keys}

    summary = property(lambda self: self._csv("summary"))
    aggregate = property(lambda self: self._csv("aggregate"))
    compare = property(lambda self: self._csv("compare"))
    timeseries = property(lambda self: self._csv("timeseries"))
    attempts = property(lambda self: self._csv("attempts"))
    latency = property(lambda self: self._csv("latency"))

    def metric(self, name: str) -> pd.DataFrame:
        """`aggregate.csv` rows of one metric: point, strategy, sweep keys, mean, 95 % interval, n."""
        a = self.aggregate
        return a[a.metric == name].drop(columns="metric").reset_index(drop=True)

    def wide(self, name: str, stat: str = "mean") -> pd.DataFrame:
        """One metric's mean (or `stat`: sd, ci95_low, ...) per strategy, in the run's order.
        For a run without a sweep (one point)."""
        m = self.metric(name)
        return m.set_index("strategy")[stat].loc[list(dict.fromkeys(m.strategy))].to_frame(name)

    @property
    def strategies(self) -> list[str]:
        """Strategy names in the scenario's order."""
        return list(dict.fromkeys(self.summary.strategy))

    @property
    def palette(self) -> dict:
        """`palette.json`: the colours the run's charts use (docs/results.md). Every figure of
        the notebooks takes its colours from here, so a strategy looks the same in a notebook
        as in the report."""
        path = self.dir / "palette.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no such file (a folder written before palette.json existed); "
                f"`jitterlab plot {self.dir}` writes it from the folder's CSV files"
            )
        with open(path) as f:
            return json.load(f)

    @property
    def colors(self) -> dict[str, str]:
        """Each strategy's colour (fixed by its name), as in the charts."""
        return {s["name"]: s["color"] for s in self.palette["strategies"]}

    @property
    def capacity_per_bucket(self) -> float | None:
        """Attempts a queue server completes per output bucket with every worker busy
        (workers / mean service time x bucket): the herd chart's capacity line."""
        s = self.scenario
        server = s.get("server", {})
        if server.get("kind", "queue") != "queue":
            return None
        return server["workers"] / duration_ms(server["service"]["mean"]) * duration_ms(
            s["output"]["bucket"]
        )


def _jitterlab_files(folder: Path) -> set[str] | None:
    """The names jitterlab wrote in `folder`: those its `meta.json` lists (`files`), its
    journal and scenario, its staging folder; None when `folder` is no result folder of
    jitterlab's (its `units.jsonl` does not start with a jitterlab journal header)."""
    try:
        with open(folder / "units.jsonl", "rb") as f:
            header = json.loads(f.readline(4096))
    except (OSError, ValueError):
        return None
    if not isinstance(header, dict) or "jitterlab_journal" not in header:
        return None
    names = {"units.jsonl", "scenario.toml", "meta.json", ".jitterlab-partial"}
    try:
        with open(folder / "meta.json", "rb") as f:
            listed = json.load(f).get("files", [])
        names |= {n for n in listed if isinstance(n, str) and "/" not in n and n not in ("", ".", "..")}
    except (OSError, ValueError, AttributeError):
        pass
    return names


def fresh_folder(out: str) -> Path:
    """`OUT / out`, emptied for a new run: deleted only when it is a result folder jitterlab
    wrote inside `OUT` and holds nothing else; anything else is refused with a ValueError
    (an absolute path, `..`, a link, a folder of the student's, a file of theirs inside)."""
    name = Path(out)
    if not name.parts or name.is_absolute() or any(p in ("", ".", "..") for p in name.parts):
        raise ValueError(
            f"out={str(out)!r}: name a folder inside {OUT} by a relative name without '..' "
            f"(e.g. 'herd'); jl.run deletes and rewrites it, so it never takes a path elsewhere"
        )
    folder = OUT / name
    root = OUT.resolve()
    real = folder.resolve()
    if real == root or root not in real.parents:
        raise ValueError(f"out={str(out)!r}: {folder} leads outside {OUT} (through a link); name another out")
    if not folder.exists() and not folder.is_symlink():
        return folder
    if folder.is_symlink() or not folder.is_dir():
        raise ValueError(f"{folder}: is a link or a file, not a folder jitterlab wrote; jl.run deletes only those: move it away, or name another out")
    names = _jitterlab_files(folder)
    if names is None:
        raise ValueError(
            f"{folder}: not a folder jitterlab wrote (no jitterlab journal units.jsonl); "
            "jl.run deletes only those: move it away, or name another out"
        )
    foreign = sorted(e.name for e in folder.iterdir() if e.name not in names)
    if foreign:
        raise ValueError(
            f"{folder}: holds {foreign[0]!r}, which jitterlab did not write (its meta.json does not list it); "
            "jl.run deletes only folders that hold nothing else: move it away, or name another out"
        )
    shutil.rmtree(folder)
    return folder


def run(scenario: str | None, out: str, *options: str, sets: list[str] | tuple = (),
        echo: bool = True) -> Result:
    """`jitterlab run SCENARIO --set ... OPTIONS --out notebooks/out/OUT --no-plots --quiet`,
    into a fresh folder. `scenario` is a path from the repository root (None: the built-in
    default). Prints the command and (with `echo`) the table it printed; returns the loaded
    result, whose `stdout` keeps that table."""
    folder = fresh_folder(out)
    args = ["run"] + ([scenario] if scenario else [])
    for s in sets:
        args += ["--set", s]
    args += [*options, "--out", str(folder), "--no-plots", "--quiet"]
    started = time.perf_counter()
    proc = _exec(args)
    seconds = time.perf_counter() - started
    if echo:
        print(proc.stdout, end="")
    print(f"({seconds:.1f} s)")
    return Result(folder, proc.stdout, seconds)


def recommend(result: Result, *options: str) -> tuple[str, pd.DataFrame]:
    """`jitterlab recommend DIR OPTIONS --no-plots`: prints its answer, returns it and
    the `pareto.csv` it wrote."""
    # recommend reads an existing pareto.csv back with the folder (and refuses one whose
    # zero-success rows have an empty p99); it rewrites the file whole, so the old one can go.
    (result.dir / "pareto.csv").unlink(missing_ok=True)
    proc = _exec(["recommend", str(result.dir), *options, "--no-plots"])
    print(proc.stdout, end="")
    pareto = pd.read_csv(result.dir / "pareto.csv", dtype=result.sweep_dtypes)
    return proc.stdout, pareto


def delays(*options: str) -> pd.DataFrame:
    """`jitterlab delays OPTIONS`: sleeps drawn by the backoff engine (jitter, sample, retry,
    delay_ms)."""
    proc = _exec(["delays", *options])
    return pd.read_csv(StringIO(proc.stdout))


def heat_cmap(better: str) -> str:
    """The colour map of a heat map, as the CLI's charts draw them: viridis with its bright
    (yellow) end the better one, so `better="high"` (success, recovered) is `viridis` and
    `better="low"` (latency, load) is `viridis_r`."""
    if better not in ("high", "low"):
        raise ValueError(f"better is 'high' or 'low', not {better!r}")
    return "viridis" if better == "high" else "viridis_r"


def duration_ms(text: str) -> float:
    """A jitterlab duration ("250ms", "1.5s", "1m") in milliseconds."""
    units = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "min": 60e3, "h": 3600e3}
    s = text.strip()
    split = next((i for i, c in enumerate(s) if c.isalpha() or c == "µ"), None)
    if split is None or s[split:].strip() not in units:
        raise ValueError(f"not a duration with a unit: {text!r}")
    return float(s[:split]) * units[s[split:].strip()]


class WrongPrediction(AssertionError):
    """A prediction the run contradicts: raised by `check`, so that the cell fails."""


@dataclass
class Answer:
    """What the run says about one question of an exercise, and why.

    `measured` is the run's answer: a number (compared within `tolerance`, relative, or
    `absolute` when given), a bool, one of `choices` (text; a tuple of them when the run
    ties and any of them is right), or a frozenset of `choices` (the prediction is a list of
    them, right only when it names exactly that set). `why` says why the run gives it, from
    the scenario's own numbers; the check prints it beside every verdict."""

    measured: object
    why: str
    choices: tuple = ()
    tolerance: float = 0.1
    absolute: float | None = None

    def agrees(self, prediction) -> bool:
        if isinstance(self.measured, frozenset):
            if isinstance(prediction, str) or not isinstance(prediction, (list, tuple, set, frozenset)):
                raise ValueError(f"answer a list of names from {list(self.choices)}, not {prediction!r}")
            named = {str(p).lower() for p in prediction}
            outside = named - {str(c).lower() for c in self.choices}
            if outside:
                raise ValueError(f"answer names from {list(self.choices)}, not {sorted(outside)}")
            return named == {str(m).lower() for m in self.measured}
        if self.choices:
            allowed = [str(c).lower() for c in self.choices]
            if str(prediction).lower() not in allowed:
                raise ValueError(f"answer one of {list(self.choices)}, not {prediction!r}")
            right = self.measured if isinstance(self.measured, tuple) else (self.measured,)
            return str(prediction).lower() in [str(r).lower() for r in right]
        if isinstance(self.measured, bool):
            if not isinstance(prediction, bool):
                raise ValueError(f"answer True or False, not {prediction!r}")
            return prediction == self.measured
        if isinstance(prediction, bool) or not isinstance(prediction, (int, float)):
            raise ValueError(f"answer a number, not {prediction!r}")
        slack = self.absolute if self.absolute is not None else self.tolerance * abs(self.measured)
        return abs(prediction - self.measured) <= slack

    def shown(self) -> str:
        if isinstance(self.measured, frozenset):
            return "[" + ", ".join(sorted(map(str, self.measured))) + "]"
        if isinstance(self.measured, tuple):
            return " or ".join(map(str, self.measured))
        if isinstance(self.measured, float) and not self.choices:
            within = (f"± {self.absolute:g}" if self.absolute is not None
                      else f"± {self.tolerance:.0%}")
            return f"{self.measured:.4g} ({within})"
        return str(self.measured)


def check(prediction: dict, answers: dict[str, Answer]) -> None:
    """Compares a student's prediction (a dict: question -> answer, None while unanswered) with
    what the run gives: one row per question with the verdict and why. Raises
    `WrongPrediction` (the cell fails) when an answer is wrong; with every answer still None
    it only shows the run's answers, so a notebook runs top to bottom before anyone writes."""
    unknown = set(prediction) ^ set(answers)
    if unknown:
        raise KeyError(f"the prediction and the check have different questions: {sorted(unknown)}")
    rows, wrong = [], []
    for question, answer in answers.items():
        guess = prediction[question]
        if guess is None:
            verdict = "not answered"
        elif answer.agrees(guess):
            verdict = "right"
        else:
            verdict = "WRONG"
            wrong.append(f"{question}: you predicted {guess!r}, the run gives "
                         f"{answer.shown()}, because {answer.why}")
        rows.append({"question": question, "your prediction": "" if guess is None else guess,
                     "the run": answer.shown(), "verdict": verdict, "why": answer.why})
    table = pd.DataFrame(rows).set_index("question")
    with pd.option_context("display.max_colwidth", None):
        try:
            from IPython.display import display
            display(table)
        except ImportError:
            print(table.to_string())
    if wrong:
        raise WrongPrediction("wrong prediction:\n" + "\n".join(f"- {w}" for w in wrong))
    if all(prediction[q] is None for q in answers):
        print("No prediction written yet: fill in `predict` above, then run both cells again.")
    else:
        print("Every answer you gave matches the run.")
