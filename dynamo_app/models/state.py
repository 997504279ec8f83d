"""``obj._state``: what an instance knows about its stored item, beside its values.

Django keeps such bookkeeping in ``ModelState``; here it is the item as last
read or written, whether it was read in part, and the attributes the model
does not declare. The field values stay in the instance ``__dict__`` (the
generated codec reads and writes them there); this object is built by the
same generated ``decode`` in one call, with slots, so it costs what the
three dict entries it replaces did.
"""

from __future__ import annotations

from typing import Any, ClassVar


class ItemState:
    """``stored``: the item as last read or written (wire form), None for an
    instance not read or written yet. ``partial``: read with ``only()``, so a
    whole-item ``save()`` would erase what was not read. ``extra``: stored
    attributes the model does not declare (wire form), written back by ``save()``.
    ``raw``: written as the values are, no field filling itself (``LoadedState``)."""

    __slots__ = ("stored", "partial", "extra")
    raw: ClassVar[bool] = False

    def __init__(
        self,
        stored: dict[str, Any] | None = None,
        partial: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.stored = stored
        self.partial = partial
        self.extra = {} if extra is None else extra

    def __repr__(self) -> str:
        state = "partial" if self.partial else "new" if self.stored is None else "read"
        return f"<ItemState {state}, {len(self.extra)} extra>"


class LoadedState(ItemState):
    """The state of an instance made from a dump line: its values are written as
    they were dumped (no ``auto_now``, no new sequence number), as Django's
    ``loaddata`` saves raw. A class of its own, so no other state carries the flag."""

    __slots__ = ()
    raw = True
