"""Model signals: ``pre_save``, ``post_save``, ``pre_delete``, ``post_delete``.

Django's names and arguments, sent by every single-item write and by the
writes of ``dynamo_app.transaction()`` (see docs/reference/signals.md):

* ``pre_save(sender, instance, update_fields)`` before the write is built, so
  a receiver may still change the instance;
* ``post_save(sender, instance, created, update_fields)`` once it succeeded;
* ``pre_delete(sender, instance)`` and ``post_delete(sender, instance)``.

After a write is done, every receiver of its ``post_*`` signal runs, and after a
transaction every receiver for every write it committed: a receiver that
raises stops none of the others, and its exception is raised once all have run
(the first one, the others noted on it). The writes stay written.

``update_fields`` is a frozenset of field names for ``save(update_fields=...)``
and ``update()``, else None. There is no ``using`` (DynamoDB has no database
alias) and no ``raw`` (nothing saves an instance as loaded, bypassing it).

These are not ``django.db.models.signals``: receivers connected there without
a sender (auditing, caches, search indexes) expect ORM models (``_state.db``,
``_meta.concrete_model``, a database alias) and would fail on a DynamoDB one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.dispatch import Signal

__all__ = ["post_delete", "post_save", "pre_delete", "pre_save"]

pre_save = Signal()
post_save = Signal()
pre_delete = Signal()
post_delete = Signal()


def send_after_write(sent: Iterable[tuple[Signal, Any, dict[str, Any]]]) -> None:
    """Send ``(post_* signal, instance, arguments)`` of writes that are done to every
    receiver, as ``send_robust`` does; then raise the first receiver's exception,
    the others noted on it. A receiver's failure must not keep the receivers of
    a committed write from learning of it."""
    errors: list[Exception] = []
    for signal, instance, arguments in sent:
        responses = signal.send_robust(type(instance), instance=instance, **arguments)
        errors.extend(r for _, r in responses if isinstance(r, Exception))
    if errors:
        first = errors[0]
        for other in errors[1:]:
            first.add_note(f"Another post_* receiver raised, too: {other!r}")
        raise first
