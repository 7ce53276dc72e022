"""Markdown pieces the report is made of."""

from __future__ import annotations


def ms(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{x * 1000:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, columns padded to their widest cell."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def fmt(r: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |"

    return "\n".join([fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(fmt(r) for r in rows)])
