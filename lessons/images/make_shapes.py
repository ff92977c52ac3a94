#!/usr/bin/env python3
"""Writes shapes.pgm, the picture lessons sample from: a 40x40 grey scene (a bright disc,
a dark bar, a diagonal edge and a soft gradient), binary PGM, no dependencies.

    python3 lessons/images/make_shapes.py lessons/images/shapes.pgm
"""
import math
import sys


def pixel(y, x):
    v = 40 + 2.5 * x                                   # gradient left to right
    if (y - 14) ** 2 + (x - 13) ** 2 < 64:             # disc
        v = 235
    if 27 <= y <= 31 and 6 <= x <= 33:                 # bar
        v = 15
    if x - y > 18:                                     # edge in the top-right corner
        v = 200 - 3 * (x - y)
    return max(0, min(255, int(round(v))))


def main(path):
    h = w = 40
    data = bytes(pixel(y, x) for y in range(h) for x in range(w))
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h) + data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "shapes.pgm")
