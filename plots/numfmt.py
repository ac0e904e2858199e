"""Number formatting for figures and the report: significant digits, no spurious precision."""
import math


def sig(x, digits=3):
    """x to `digits` significant digits, trailing zeros dropped: plain from 0.001 to below 1e6 (1234.5 -> '1230'),
    scientific outside (1.2e-05 -> '1.2e-5')."""
    if x is None:
        return "-"
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    x = float(f"{x:.{digits - 1}e}")  # round first: 9.996 -> 10.0 changes the magnitude
    magnitude = math.floor(math.log10(abs(x)))
    if magnitude < -3 or magnitude >= 6:
        return sci(x, digits)
    return _trim(f"{x:.{max(0, digits - 1 - magnitude)}f}")


def _trim(text):
    """'1.50' -> '1.5', '2.00' -> '2'."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def time_unit(max_ns):
    """(divisor, unit) that make max_ns read as a few digits: (1e6, 'ms') for 2.5e6 ns."""
    for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if max_ns >= div:
            return div, unit
    return 1.0, "ns"


def duration(ns, digits=3):
    """A time in nanoseconds in the unit that suits it: 2.5e6 -> '2.5 ms'."""
    if ns is None:
        return "-"
    div, unit = time_unit(abs(ns))
    return f"{sig(ns / div, digits)} {unit}"


def pct(fraction, digits=2):
    """A fraction as a percentage with `digits` significant digits: 0.0345 -> '3.5%'."""
    return "-" if fraction is None else f"{sig(100 * fraction, digits)}%"


def times(ratio, digits=3):
    """A ratio as a multiplier: 3.21 -> '3.21x'."""
    return "-" if ratio is None else f"{sig(ratio, digits)}x"


def sci(x, digits=1):
    """Scientific notation without padding: 2e-05 -> '2e-5', 0.0015 -> '1.5e-3' (digits=2)."""
    if x is None:
        return "-"
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{_trim(mantissa)}e{int(exponent)}"
