"""The statistics every report uses: the Wilson score interval, Student's t quantiles, Cohen's kappa. Pure.

One place, so that a table of accuracy, a spread over repeats and the judge's agreement with humans use
the same constants and are tested against the same published values.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

Z_95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""
T_95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
"""Two-sided 95% critical values of Student's t for 1 to 30 degrees of freedom (the printed tables)."""


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``trials`` (which stays inside [0, 1] for small counts)."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError("need 0 <= successes <= trials and trials > 0")
    p, z2 = successes / trials, z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    # With no successes the lower root is exactly 0, with no failures the upper root exactly 1 (Newcombe 1998);
    # centre - half rounds to 5.6e-17 for 0/3 and centre + half to 1 - 1.1e-16 for 10/10, which left p outside.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def t_critical(df: int) -> float:
    """The two-sided 95% critical value of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df <= len(T_95):
        return T_95[df - 1]
    # Cornish-Fisher expansion around the normal quantile; within 1e-3 of the exact value beyond 30.
    z = Z_95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)


def mean_interval(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """Mean and 95% t interval of ``values``, the interval clipped to [0, 1]; no interval for fewer than 2."""
    if not values:
        return None, None, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None, None
    half = t_critical(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def cohen_kappa_2x2(both_pass: int, only_first: int, only_second: int, both_fail: int) -> float | None:
    """Cohen's kappa of two raters' pass/fail on the same items, (p_o - p_e) / (1 - p_e).

    None when undefined (no items, or chance agreement is 1). Computed on whole counts,
    n * agreed - chance over n**2 - chance, so the only rounding is the last division.
    """
    n = both_pass + only_first + only_second + both_fail
    first_pass = both_pass + only_first
    second_pass = both_pass + only_second
    # n**2 times the chance agreement p_e
    chance = first_pass * second_pass + (n - first_pass) * (n - second_pass)
    if n == 0 or chance == n * n:
        return None
    return (n * (both_pass + both_fail) - chance) / (n * n - chance)
