#!/usr/bin/env python3
"""Writes the tables of tests/serve_io_test.cc from Python itself.

serve_answer_quotients.inc: {numerator high 64 bits, low 64 bits,
denominator, bits of float(Fraction(n, d))}: Python's correctly rounded
quotient (ties to even) for ties at the 54th bit of the quotient and either
side of them, every path of NearestQuotient and random operands.
serve_answer_reprs.inc: {bits of a double, repr(double)}: Python's repr for
the edge cases of SPEC 10.5's doubles and random doubles of every
magnitude. Deterministic (a fixed seed): rerun with python3 to regenerate.
"""
import os
import random
import struct
from fractions import Fraction


HERE = os.path.dirname(os.path.abspath(__file__))
U64 = 2**64
U128 = 2**128


def bits(x):
    """The IEEE 754 binary64 encoding of the float x, as an integer."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def quotients(rng):
    """(numerator, denominator) pairs, 0 < n < 2^128, 0 < d < 2^64."""
    pairs = []

    def add(n, d):
        if 0 < n < U128 and 0 < d < U64:
            pairs.append((n, d))

    # Ties at the 54th bit of the quotient (m odd of 54 bits, halved) and
    # either side of them, through both paths: a quotient of over 64 bits
    # (d = 2, 6) and the long division (d = 2^(k+1)).
    for k in [0, 1, 5, 11, 40, 60, 74]:
        for m in [2**53 + 1, 2**53 + 3, 2**54 - 1, 2**53 + 2**52 + 1]:
            n = m << k
            for d in ([2 ** (k + 1)] if k < 63 else []) + [2, 6]:
                tie = n * 3 if d == 6 else n
                for x in (tie - 1, tie, tie + 1):
                    add(x, d)
    for d in [3, 7, 10, 1000, 12031, 2**32 + 1, 2**63 + 1, U64 - 1, U64 - 59]:
        for n in [1, 2, d - 1, d + 1, 2**53, 2**53 + 1, U64 - 1, U64,
                  2**100 + 12345, U128 - 1, 2**127 // 3, 10**38]:
            add(n, d)
    for _ in range(300):
        n_bits, d_bits = rng.randint(1, 128), rng.randint(1, 64)
        add(rng.getrandbits(n_bits) or 1, rng.getrandbits(d_bits) or 1)
    # Random denominators with a quotient at a tie, and either side of it.
    for _ in range(100):
        d = rng.randint(2, U64 - 1)
        m = (rng.getrandbits(53) | 2**52) * 2 + 1
        k = rng.randint(0, 60)
        n = int(Fraction(m, 2) * 2**k * d)
        for x in (n - 1, n, n + 1):
            add(x, d)
    return pairs


def doubles(rng):
    """Edge cases of SPEC 10.5's doubles, then random ones."""
    values = [0.0, 1.0, 1e16, 1e-5, 0.0001, 123456789012345680.0, 5e-324,
              0.2, 1.5, 1e25, 9999999999999998.0, 1e16 - 2, 1e15, 0.00011,
              0.000099999, float(2**53), float(2**53 + 2), 1 / 3, 2 / 3, 0.1,
              0.42857142857142855, 1e-4 * 0.999999, 1e300,
              1.7976931348623157e308, 2.2250738585072014e-308, 12345.678,
              100.0, 1e22, 1e21, 1e-7, 123.0, 0.5, 3.0]
    for _ in range(400):
        kind = rng.randint(0, 3)
        if kind == 0:
            x = rng.random()
        elif kind == 1:
            x = rng.random() * 10 ** rng.randint(-8, 20)
        elif kind == 2:
            x = float(rng.randint(0, 2**60))
        else:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(63)))[0]
        if x == x and x != float("inf"):
            values.append(x)
    # Quotients of integers, the shape of hit ratios and mean waits.
    for _ in range(100):
        values.append(rng.randint(0, 10**6) / rng.randint(1, 10**6))
        values.append(rng.randint(0, U64) / rng.randint(1, 2**20))
    return values


def main():
    rng = random.Random(20261207)
    with open(os.path.join(HERE, "serve_answer_quotients.inc"), "w") as out:
        for n, d in quotients(rng):
            expected = bits(float(Fraction(n, d)))
            out.write(f"    {{0x{n >> 64:016x}u, 0x{n % U64:016x}u, {d}u, "
                      f"0x{expected:016x}u}},\n")
    with open(os.path.join(HERE, "serve_answer_reprs.inc"), "w") as out:
        for x in doubles(rng):
            out.write(f'    {{0x{bits(x):016x}u, "{repr(x)}"}},\n')


if __name__ == "__main__":
    main()
