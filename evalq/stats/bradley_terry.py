"""Bradley-Terry strengths from pairwise outcomes, with bootstrap intervals over rows: every
pair is judged on every row and pooled into one model, so a ranking never depends on the order
comparisons happen to be made in."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Comparison = tuple[str, str, float]  # (a, b, a's score: 1 win, 0.5 tie, 0 loss)
DEFAULT_PRIOR = 0.5
DEFAULT_BOOTSTRAP = 500


def tally(
    candidates: Sequence[str], comparisons: Iterable[Comparison]
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """(wins[a][b]: a's points against b, games[a][b]: comparisons of a with b)."""
    wins = {a: dict.fromkeys(candidates, 0.0) for a in candidates}
    games = {a: dict.fromkeys(candidates, 0.0) for a in candidates}
    for a, b, score in comparisons:
        if a == b or a not in wins or b not in wins:
            raise ValueError(f"bad comparison {a!r} vs {b!r} for candidates {list(candidates)}")
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"score {score} of {a!r} vs {b!r} is outside [0, 1]")
        wins[a][b] += score
        wins[b][a] += 1.0 - score
        games[a][b] += 1.0
        games[b][a] += 1.0
    return wins, games


def fit(
    candidates: Sequence[str],
    comparisons: Iterable[Comparison],
    *,
    prior: float = DEFAULT_PRIOR,
    max_iter: int = 10_000,
    tol: float = 1e-10,
    start: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Strengths (summing to 1) of P(i beats j) = s_i / (s_i + s_j) by Hunter's
    minorisation-maximisation; a tie is half a win each way. ``prior`` virtual points each way
    per pair keep an undefeated or winless candidate finite (must be > 0 unless every candidate
    has won and lost something). ``start`` (e.g. the full-data fit, for a bootstrap resample)
    only changes how fast it converges. Pure Python: rankings have few candidates."""
    names = list(dict.fromkeys(candidates))
    if len(names) < 2:
        return dict.fromkeys(names, 1.0)
    wins, games = tally(names, comparisons)
    total_wins = {a: sum(wins[a].values()) + prior * (len(names) - 1) for a in names}
    pair_games = {a: {b: games[a][b] + 2 * prior for b in names if b != a} for a in names}
    strength = dict.fromkeys(names, 1.0 / len(names))
    if start is not None and all(start.get(a, 0.0) > 0 for a in names):
        total = sum(start[a] for a in names)
        strength = {a: start[a] / total for a in names}
    for _ in range(max_iter):
        updated = {}
        for a in names:
            denominator = sum(n / (strength[a] + strength[b]) for b, n in pair_games[a].items())
            updated[a] = total_wins[a] / denominator if denominator > 0 else strength[a]
        norm = sum(updated.values())
        if norm <= 0:
            break
        updated = {a: s / norm for a, s in updated.items()}
        change = max(abs(updated[a] - strength[a]) for a in names)
        strength = updated
        if change < tol:
            break
    return strength


def order_of(strength: dict[str, float], candidates: Sequence[str]) -> list[str]:
    """Strongest first; equal strengths keep the candidates' given order."""
    position = {c: i for i, c in enumerate(candidates)}
    return sorted(candidates, key=lambda c: (-strength[c], position[c]))


def win_matrix(
    candidates: Sequence[str], comparisons: Iterable[Comparison]
) -> dict[str, dict[str, float | None]]:
    """m[a][b]: the share of a-vs-b comparisons a won (ties half); None if never compared."""
    wins, games = tally(candidates, comparisons)
    return {
        a: {b: (wins[a][b] / games[a][b] if games[a][b] else None) for b in candidates if b != a}
        for a in candidates
    }


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) of ``values`` by linear interpolation."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class Ranking:
    order: list[str]
    strength: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    rank_ci95: dict[str, tuple[int, int]]
    rows: int
    bootstrap: int
    seed: int


def rank(
    candidates: Sequence[str],
    rows: Sequence[Sequence[Comparison]],
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
    prior: float = DEFAULT_PRIOR,
) -> Ranking:
    """Fit on all rows, then refit on ``bootstrap`` seeded resamples of the rows (with
    replacement) for the 2.5th-97.5th percentiles of each strength and rank: more rows give
    narrower intervals."""
    names = list(dict.fromkeys(candidates))
    strength = fit(names, (c for row in rows for c in row), prior=prior)
    samples: dict[str, list[float]] = {c: [] for c in names}
    ranks: dict[str, list[float]] = {c: [] for c in names}
    rng = random.Random(seed)
    if rows:
        for _ in range(bootstrap):
            resample = [rows[rng.randrange(len(rows))] for _ in rows]
            comparisons = (c for row in resample for c in row)
            fitted = fit(names, comparisons, prior=prior, start=strength)
            for position, c in enumerate(order_of(fitted, names), start=1):
                samples[c].append(fitted[c])
                ranks[c].append(float(position))
    ci95 = {
        c: (percentile(v, 0.025), percentile(v, 0.975)) if v else (strength[c], strength[c])
        for c, v in samples.items()
    }
    rank_ci95 = {
        c: (round(percentile(v, 0.025)), round(percentile(v, 0.975))) if v else (0, 0)
        for c, v in ranks.items()
    }
    return Ranking(
        order=order_of(strength, names),
        strength=strength,
        ci95=ci95,
        rank_ci95=rank_ci95,
        rows=len(rows),
        bootstrap=bootstrap if rows else 0,
        seed=seed,
    )
