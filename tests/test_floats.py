"""The JSON float codec (explorer/floats.py): one rule, both ways, through a strict JSON parser."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.floats import NEG_INF_JSON, from_json, list_to_json, to_json, value_from_json

# every finite float32 but -9999.0 itself, which is how -inf is written (see test_a_finite_minus_9999_reads_as_minus_inf)
FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False).filter(lambda x: x != NEG_INF_JSON)
VALUES = st.lists(FLOAT32 | st.just(math.nan) | st.just(-math.inf), max_size=40)


def strict(values: list) -> list:
    """`values` through a JSON text that has no NaN and no Infinity (as a browser's JSON.parse reads it)."""
    return json.loads(json.dumps(values, allow_nan=False))


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, NaN equal to NaN, of one dtype."""
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(VALUES, st.booleans())
def test_float32_arrays_round_trip(values, shortest):
    """NaN, -inf and every finite float32 come back as themselves, either way of writing them."""
    a = np.array(values, np.float32)
    out = strict(list_to_json(a, shortest=shortest))
    assert same(from_json(out, np.float32), a)
    for x, y in zip(a.tolist(), out):
        if math.isnan(x):
            assert y is None
        elif x == -math.inf:
            assert y == NEG_INF_JSON
        else:
            assert isinstance(y, float) and np.float32(y) == np.float32(x)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.just(math.nan) | st.just(-math.inf)))
def test_float64_arrays_round_trip_exactly(values):
    """The exact writing keeps float64 (lookup's joint logprobs) to the last bit."""
    a = np.array([x for x in values if x != NEG_INF_JSON], np.float64)
    assert same(from_json(strict(list_to_json(a)), np.float64), a)


@settings(max_examples=100, deadline=None)
@given(FLOAT32 | st.just(math.nan) | st.just(-math.inf))
def test_scalar_and_list_agree(x):
    assert to_json(x) == list_to_json([x])[0]
    back = value_from_json(strict([to_json(x)])[0])
    assert (math.isnan(back) and math.isnan(x)) or back == x


def test_the_table_of_the_module_docstring():
    assert list_to_json(np.array([np.nan, -np.inf, np.inf, -0.41, 0.0], np.float32)) == [
        None,
        -9999.0,
        None,
        -0.4099999964237213,  # the float32 nearest to -0.41, exactly
        0.0,
    ]
    assert list_to_json(np.array([np.nan, -np.inf, np.inf, -0.41], np.float32), shortest=True) == [
        None,
        -9999.0,
        None,
        -0.41,
    ]
    assert list_to_json([]) == [] and list_to_json([], shortest=True) == []
    assert to_json(np.float32(-np.inf)) == -9999.0 and to_json(np.float64(np.inf)) is None
    assert isinstance(to_json(np.float32(1.5)), float) and isinstance(list_to_json(np.array([2], np.int64))[0], float)


@pytest.mark.parametrize("clamped", [False, True])
def test_reading(clamped):
    """-9999.0 is -inf; below it only where the body clamps (OpenAI, vLLM); None is NaN; nested lists keep their shape."""
    got = from_json([[None, -9999.0], [-12000.0, -0.5]], np.float32, clamped=clamped)
    want = np.array([[np.nan, -np.inf], [-np.inf if clamped else -12000.0, -0.5]], np.float32)
    assert same(got, want)
    assert same(from_json([], np.float64), np.zeros(0, np.float64))
    assert same(from_json([[], []]), np.zeros((2, 0), np.float32))
    assert value_from_json(-12000, clamped=clamped) == (-math.inf if clamped else -12000.0)
    assert value_from_json(-9999.0, clamped=clamped) == -math.inf
    assert math.isnan(value_from_json(None, clamped=clamped))
    assert value_from_json(-0.25, clamped=clamped) == -0.25


def test_reading_does_not_touch_its_input():
    a = np.array([-9999.0, -1.0])
    from_json(a, np.float64, clamped=True)
    assert a.tolist() == [-9999.0, -1.0]


def test_a_finite_minus_9999_reads_as_minus_inf():
    """The one value the rule cannot carry: -9999.0 itself is how -inf is written, so it reads back as -inf."""
    assert list_to_json([-9999.0]) == [-9999.0] and from_json([-9999.0]).tolist() == [-math.inf]
