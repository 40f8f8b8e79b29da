"""The shared statistics against values published in the literature, never against the code under test.

Each reference value names its source. Where a source prints fewer digits than the code computes, the
tolerance is half a unit of the last printed digit. Values marked "scipy" were computed independently with
scipy 1.17 (``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` and ``scipy.stats.t.ppf(0.975,
df)``) and agree with the printed sources to every printed digit.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, strategies as st

from capreplay.util.stats import Z_95, cohen_kappa_2x2, mean_interval, t_critical, wilson_interval

# ---------------------------------------------------------------------------------------------- Wilson

# Newcombe R. G. (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
# methods", Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score interval without continuity
# correction), the paper's four worked examples, printed to 4 decimals. scipy gives 0.255289-0.366210,
# 0.062386-0.160487, 0-0.161125, 0.006113-0.171755.
NEWCOMBE_WILSON = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("successes", "trials", "low", "high"), NEWCOMBE_WILSON)
def test_wilson_interval_matches_newcombe_1998_table_i(successes: int, trials: int, low: float, high: float) -> None:
    got_low, got_high = wilson_interval(successes, trials)
    assert got_low == pytest.approx(low, abs=5e-5)
    assert got_high == pytest.approx(high, abs=5e-5)


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        # the mirror images of Newcombe's examples: n - r successes give 1 - the interval
        (263 - 81, 263, 1 - 0.3662, 1 - 0.2553),
        (20, 20, 1 - 0.1611, 1.0),
        # scipy: 5/10 -> 0.236593-0.763407; 1/1 -> 0.206549-1; 0/1 -> 0-0.793451
        (5, 10, 0.236593, 0.763407),
        (1, 1, 0.206549, 1.0),
        (0, 1, 0.0, 0.793451),
    ],
)
def test_wilson_interval_at_the_edges_and_by_symmetry(successes: int, trials: int, low: float, high: float) -> None:
    got_low, got_high = wilson_interval(successes, trials)
    assert got_low == pytest.approx(low, abs=5e-5)
    assert got_high == pytest.approx(high, abs=5e-5)


def test_z_95_is_the_normal_quantile() -> None:
    # the 0.975 quantile of the standard normal: 1.960 in every printed table (NIST/SEMATECH e-Handbook,
    # 1.3.6.7.1), 1.959963984540054 by scipy.stats.norm.ppf(0.975)
    assert pytest.approx(1.959963984540054, abs=1e-15) == Z_95


def test_a_wider_z_gives_a_wider_interval_around_the_same_centre() -> None:
    # z = 2.575829 (99%): Newcombe's example 81/263 widens on both sides
    low95, high95 = wilson_interval(81, 263)
    low99, high99 = wilson_interval(81, 263, z=2.5758293035489004)
    assert low99 < low95 and high99 > high95


@pytest.mark.parametrize("trials", [3, 6, 7, 10, 13, 25, 123])
def test_wilson_interval_of_none_or_all_is_exactly_closed_at_0_or_1(trials: int) -> None:
    # Newcombe (1998): for r = 0 the lower limit is 0, for r = n the upper limit is 1, exactly; these counts
    # once gave 5.6e-17 and 1 - 1.1e-16 from rounding, an interval that did not hold the observed proportion
    assert wilson_interval(0, trials)[0] == 0.0
    assert wilson_interval(trials, trials)[1] == 1.0


@given(st.integers(min_value=1, max_value=5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_stays_inside_0_1_and_holds_the_observed_proportion(counts: tuple[int, int]) -> None:
    successes, trials = counts
    low, high = wilson_interval(successes, trials)
    p = successes / trials
    assert 0.0 <= low <= p <= high <= 1.0
    assert low < high
    if successes == 0:
        assert low == 0.0
    if successes == trials:
        assert high == 1.0
    # the Wilson bounds are the two roots of (p - pi)^2 = z^2 pi (1 - pi) / n: check that definition directly
    for bound in (low, high):
        if 0.0 < bound < 1.0:
            assert (p - bound) ** 2 == pytest.approx(Z_95**2 * bound * (1 - bound) / trials, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize(("successes", "trials"), [(0, 0), (1, 0), (-1, 5), (6, 5), (3, -2)])
def test_wilson_interval_refuses_impossible_counts(successes: int, trials: int) -> None:
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(successes, trials)


# ---------------------------------------------------------------------------------------------- Student t

# Two-sided 95% (one-sided 0.975) critical values as printed in Fisher R. A. & Yates F., "Statistical Tables
# for Biological, Agricultural and Medical Research" (6th ed., 1963), Table III, and in the NIST/SEMATECH
# e-Handbook of Statistical Methods, section 1.3.6.7.2 "Critical values of the Student's t distribution"
# (3 decimals). scipy: 12.7062, 4.30265, 3.18245, 2.57058, 2.22814, 2.08596, 2.04227.
PRINTED_T = [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228), (20, 2.086), (30, 2.042)]
# Beyond the table's rows of one degree of freedom, the same tables print df = 40, 60, 120 (and NIST 100).
# scipy: 2.02108, 2.00030, 1.98397, 1.97993.
PRINTED_T_BEYOND_30 = [(40, 2.021), (60, 2.000), (100, 1.984), (120, 1.980)]


@pytest.mark.parametrize(("df", "value"), PRINTED_T)
def test_t_critical_matches_the_printed_table(df: int, value: float) -> None:
    assert t_critical(df) == pytest.approx(value, abs=5e-4)


@pytest.mark.parametrize(("df", "value"), PRINTED_T_BEYOND_30)
def test_t_critical_beyond_30_matches_the_printed_rows(df: int, value: float) -> None:
    assert t_critical(df) == pytest.approx(value, abs=5e-4)


@pytest.mark.parametrize(
    ("df", "value"),
    # scipy.stats.t.ppf(0.975, df), to 5 decimals: between the printed rows and far beyond them
    [(31, 2.03951), (35, 2.03011), (50, 2.00856), (200, 1.97190), (1000, 1.96234), (10_000, 1.96020)],
)
def test_t_critical_between_and_beyond_the_printed_rows(df: int, value: float) -> None:
    assert t_critical(df) == pytest.approx(value, abs=1e-3)


def test_t_critical_approaches_the_normal_quantile_from_above() -> None:
    # the last row of every printed table, df = infinity: 1.960
    values = [t_critical(df) for df in (30, 31, 40, 60, 120, 1000, 10**6)]
    assert values == sorted(values, reverse=True)
    assert all(v > 1.959963 for v in values)
    assert t_critical(10**6) == pytest.approx(1.960, abs=5e-4)
    assert t_critical(10**9) == pytest.approx(1.959964, abs=1e-6)


def test_t_critical_decreases_over_the_whole_table() -> None:
    values = [t_critical(df) for df in range(1, 200)]
    assert all(a > b for a, b in itertools.pairwise(values))


@pytest.mark.parametrize("df", [0, -1])
def test_t_critical_needs_a_degree_of_freedom(df: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        t_critical(df)


# ---------------------------------------------------------------------------------------------- mean interval

# Student (1908), "The probable error of a mean", Biometrika 6:1-25: Cushny and Peebles' extra hours of
# sleep with two drugs, ten patients. The differences (drug 2 minus drug 1) have mean 1.58 and a 95%
# t interval of 0.7001142 to 2.4598858 (R's t.test(extra ~ group, data = sleep, paired = TRUE), printed
# with the opposite sign; scipy agrees). mean_interval clips to [0, 1], so the differences are used in tenths
# of an hour: the interval scales with the data. The table's t(9) = 2.262 against the exact 2.26216 moves
# the half-width by 0.00016 * 1.2296 / sqrt(10) / 10 = 6e-6.
SLEEP_DIFFERENCES = [1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4]


def test_mean_interval_matches_students_sleep_data() -> None:
    mean, low, high = mean_interval([d / 10 for d in SLEEP_DIFFERENCES])
    assert mean == pytest.approx(0.158, abs=1e-12)
    assert low == pytest.approx(0.07001142, abs=2e-5)
    assert high == pytest.approx(0.24598858, abs=2e-5)


def test_mean_interval_by_hand_with_the_printed_t() -> None:
    # 0.6, 0.7, 0.8, 0.7, 0.7: mean 0.7, s = sqrt(0.02 / 4), s / sqrt(5) = sqrt(0.001); t(4) = 2.776
    mean, low, high = mean_interval([0.6, 0.7, 0.8, 0.7, 0.7])
    half = 2.776 * math.sqrt(0.001)
    assert mean == pytest.approx(0.7)
    assert (low, high) == (pytest.approx(0.7 - half, abs=1e-9), pytest.approx(0.7 + half, abs=1e-9))


def test_mean_interval_is_clipped_to_0_1_and_absent_below_two_values() -> None:
    # 1.0 and 0.2: mean 0.6, s / sqrt(2) = 0.4, t(1) = 12.706: the interval -4.48..5.68, clipped
    assert mean_interval([1.0, 0.2]) == (pytest.approx(0.6), 0.0, 1.0)
    assert mean_interval([0.25]) == (0.25, None, None)
    assert mean_interval([]) == (None, None, None)
    assert mean_interval([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)


# ---------------------------------------------------------------------------------------------- Cohen's kappa

# (both pass, only the first passes, only the second passes, both fail) -> kappa, each worked out in the source:
PUBLISHED_KAPPA = [
    # Wikipedia, "Cohen's kappa", simple example: 50 grant proposals, two readers; p_o = 0.70, p_e = 0.50
    ((20, 5, 10, 15), 0.40),
    # Wikipedia, "Cohen's kappa", same percentages but different numbers: p_o = 0.60 in both, p_e = 0.54 and
    # 0.46; the article prints kappa = 0.1304 and 0.2593 (by hand: 0.06 / 0.46 and 0.14 / 0.54)
    ((45, 15, 25, 15), 0.1304),
    ((25, 35, 5, 35), 0.2593),
    # Newman T. B. & Kohn M. A., "Evidence-Based Diagnosis" (2nd ed.), chapter 5 problem answers: observed
    # agreement 2/5 = 40%, expected (1/5 * 4 + 4/5 * 1) / 5 = 32%, kappa = 0.08 / 0.68, printed 0.118
    ((1, 0, 3, 1), 0.118),
]


@pytest.mark.parametrize(("counts", "kappa"), PUBLISHED_KAPPA)
def test_kappa_matches_worked_examples(counts: tuple[int, int, int, int], kappa: float) -> None:
    digits = len(str(kappa).split(".")[1])
    assert cohen_kappa_2x2(*counts) == pytest.approx(kappa, abs=0.5 * 10**-digits)


def test_kappa_of_perfect_agreement_disagreement_and_chance() -> None:
    # Cohen (1960), "A coefficient of agreement for nominal scales", Educational and Psychological
    # Measurement 20:37-46: kappa is 1 for complete agreement, 0 for agreement at chance level, and its lower
    # bound -1 is reached only with margins of one half (complete disagreement, balanced)
    assert cohen_kappa_2x2(10, 0, 0, 30) == 1.0
    assert cohen_kappa_2x2(0, 5, 5, 0) == -1.0
    # independent raters: first passes 1/2, second 1/2, each cell 1/4 of 40
    assert cohen_kappa_2x2(10, 10, 10, 10) == 0.0
    # complete disagreement with unbalanced margins stays above -1: p_o = 0, p_e = (8*2 + 2*8) / 100 = 0.32
    assert cohen_kappa_2x2(0, 8, 2, 0) == pytest.approx(-0.32 / 0.68)


def test_kappa_is_symmetric_in_the_two_raters() -> None:
    # swapping the raters swaps the off-diagonal cells and leaves kappa unchanged
    assert cohen_kappa_2x2(20, 5, 10, 15) == cohen_kappa_2x2(20, 10, 5, 15)


@pytest.mark.parametrize("counts", [(0, 0, 0, 0), (7, 0, 0, 0), (0, 0, 0, 3)])
def test_kappa_is_none_when_undefined(counts: tuple[int, int, int, int]) -> None:
    # no items, or both raters give one verdict throughout: chance agreement is 1 and kappa is 0 / 0
    assert cohen_kappa_2x2(*counts) is None


@given(st.tuples(*[st.integers(0, 200)] * 4))
def test_kappa_equals_its_definition_and_stays_in_minus_one_to_one(counts: tuple[int, int, int, int]) -> None:
    a, b, c, d = counts
    n = a + b + c + d
    kappa = cohen_kappa_2x2(a, b, c, d)
    if n == 0:
        assert kappa is None
        return
    p_o = (a + d) / n
    p_e = ((a + b) / n) * ((a + c) / n) + ((c + d) / n) * ((b + d) / n)
    if math.isclose(p_e, 1.0, abs_tol=1e-15):
        assert kappa is None
        return
    assert kappa is not None
    assert kappa == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-9)
    assert -1.0 <= kappa <= 1.0
