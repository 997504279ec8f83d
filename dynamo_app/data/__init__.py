"""Whole tables in and out: the typed JSON form of items (``serialization``),
dump and load (``dumpload``), backfills (``backfill``), unique locks out of step
with their owners (``integrity``), and the progress line they print
(``progress``). A client of the model layer.
"""
