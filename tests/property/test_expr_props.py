"""Properties of the suite language's numbers: expressions, bssplit shares, ppm, rate splits."""

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from iogate.expr import COUNT, SIZE, ExprError, evaluate, parse
from iogate.job import PPM
from iogate.lower import split_rates, to_ppm
from iogate.spec.blocks import shares_of
from iogate.spec.models import Workload
from iogate.spec.rates import Rates

# -- expressions agree with Fraction arithmetic ----------------------------------------------

_LEAF = st.integers(min_value=0, max_value=10**6).map(lambda n: (str(n), Fraction(n)))


def _combine(children):
    def build(op, a, b):
        text = f"({a[0]}) {op} ({b[0]})"
        if op == "/":
            return text, None if b[1] is None or a[1] is None or b[1] == 0 else a[1] / b[1]
        if a[1] is None or b[1] is None:
            return text, None
        return text, {"+": a[1] + b[1], "-": a[1] - b[1], "*": a[1] * b[1]}[op]
    return st.builds(build, st.sampled_from("+-*/"), children, children)


_EXPR = st.recursive(_LEAF, _combine, max_leaves=12)


@given(_EXPR)
def test_evaluation_agrees_with_fractions(case):
    text, expected = case
    if expected is None:  # a division by zero somewhere
        try:
            evaluate(parse(text), kind=COUNT)
        except ExprError as exc:
            assert "divides by zero" in str(exc) or "overflows" in str(exc)
        else:
            raise AssertionError(f"{text} should have been refused")
        return
    try:
        got = evaluate(parse(text), kind=COUNT)
    except ExprError as exc:
        assert "overflows" in str(exc)
        return
    assert got == expected


# -- bssplit: format, parse, same shares -----------------------------------------------------

@st.composite
def _split(draw):
    sizes = draw(st.lists(st.integers(min_value=0, max_value=14), min_size=1, max_size=8,
                          unique=True))
    blanks = draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    if not any(blanks):
        cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=len(sizes) - 1,
                                    max_size=len(sizes) - 1)))
        pcts = [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]
    else:  # the given ones leave something over for the blanks
        given_count = blanks.count(False)
        budget = draw(st.integers(0, 99))
        cuts = sorted(draw(st.lists(st.integers(0, budget), min_size=given_count,
                                    max_size=given_count)))
        parts = [b - a for a, b in zip([0, *cuts[:-1]], cuts, strict=True)] if cuts else []
        it = iter(parts)
        pcts = [None if blank else next(it) for blank in blanks]
    return [(512 << s, p) for s, p in zip(sizes, pcts, strict=True)]


@given(_split())
def test_bssplit_round_trip(entries):
    text = ":".join(f"{bs}" if p is None else f"{bs}/{p}" for bs, p in entries)
    split = Workload.model_validate({"name": "w", "size": "1g", "bssplit": text}).bssplit
    assert split is not None
    assert split.read is not None
    shares = shares_of(split.read)
    assert [bs for bs, _ in shares] == [bs for bs, _ in entries]
    given_total = sum(p for _, p in entries if p is not None)
    blanks = sum(1 for _, p in entries if p is None)
    for (_, share), (_, p) in zip(shares, entries, strict=True):
        assert share == (Fraction(p) if p is not None else Fraction(100 - given_total, blanks))
    assert sum(s for _, s in shares) == 100
    assert split.write == split.read


# -- ppm conversion ----------------------------------------------------------------------------

@given(st.lists(st.fractions(min_value=0, max_value=10**6, max_denominator=10**4),
                min_size=1, max_size=64).filter(lambda xs: sum(xs) > 0))
def test_ppm_sums_exactly_and_each_share_is_within_one_ppm(shares):
    ppm = to_ppm(shares)
    assert sum(ppm) == PPM
    total = sum(shares)
    for p, s in zip(ppm, shares, strict=True):
        assert abs(p - s * PPM / total) < 1


# -- rate splits -------------------------------------------------------------------------------

@given(st.integers(min_value=1, max_value=10**12), st.integers(min_value=0, max_value=100))
def test_rate_split_sums_to_the_total(total, mix):
    read, write = split_rates(Rates(total=total), "randrw", mix)
    assert read + write == total
    assert abs(read - Fraction(total * mix, 100)) <= Fraction(1, 2)


# -- percentages scale what they are added to ------------------------------------------------

@given(st.integers(min_value=0, max_value=10**9), st.sampled_from("+-"),
       st.decimals(min_value=0, max_value=1000, places=3))
def test_a_percentage_added_is_that_share(base, sign, pct):
    got = evaluate(parse(f"base {sign} {pct:f}%"), kind=SIZE, names={"base": Fraction(base)})
    share = Fraction(str(pct)) / 100
    assert got == base * (1 + share if sign == "+" else 1 - share)
