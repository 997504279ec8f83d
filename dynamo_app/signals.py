"""Model signals: ``pre_save``, ``post_save``, ``pre_delete``, ``post_delete``.

Django's names and arguments, sent by every single-item write and by the
writes of ``dynamo_app.transaction()`` (see docs/reference/signals.md):

* ``pre_save(sender, instance, update_fields)`` before the write is built, so
  a receiver may still change the instance;
* ``post_save(sender, instance, created, update_fields)`` once it succeeded;
* ``pre_delete(sender, instance)`` and ``post_delete(sender, instance)``.

``update_fields`` is a frozenset of field names for ``save(update_fields=...)``
and ``update()``, else None. There is no ``using`` (DynamoDB has no database
alias) and no ``raw`` (nothing saves an instance as loaded, bypassing it).

These are not ``django.db.models.signals``: receivers connected there without
a sender (auditing, caches, search indexes) expect ORM models (``_state.db``,
``_meta.concrete_model``, a database alias) and would fail on a DynamoDB one.
"""

from __future__ import annotations

from django.dispatch import Signal

__all__ = ["post_delete", "post_save", "pre_delete", "pre_save"]

pre_save = Signal()
post_save = Signal()
pre_delete = Signal()
post_delete = Signal()
