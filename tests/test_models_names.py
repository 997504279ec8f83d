"""A field may not take a name the model class already uses (dynamo.E114).

Field values live in the instance, so a field named ``update`` would turn
``obj.update`` into a string and ``obj.save(update_fields=...)`` into a
``TypeError``. Class creation refuses it, naming model, field and clash.
"""

import pytest

from dynamo_app import models
from dynamo_app.exceptions import ModelDefinitionError


def declare(name, *bases, **fields):
    """A model class with a partition key ``id`` and ``fields``."""
    attrs = {
        "__module__": __name__,
        "id": models.StringField(partition_key=True),
        "Meta": type("Meta", (), {"table_name": f"names_{name.lower()}"}),
        **fields,
    }
    return type(name, bases or (models.Model,), attrs)


@pytest.mark.parametrize(
    "name, clash",
    [
        ("update", "Model.update (a method)"),
        ("save", "Model.save (a method)"),
        ("delete", "Model.delete (a method)"),
        ("refresh_from_db", "Model.refresh_from_db (a method)"),
        ("asave", "Model.asave (a method)"),
        ("pk", "Model.pk (a property)"),
        ("key", "Model.key (a property)"),
        ("extra_attributes", "Model.extra_attributes (a property)"),
        ("objects", "Model.objects (every model has it)"),
        ("DoesNotExist", "Model.DoesNotExist (every model has it)"),
        ("_meta", "Model._meta (every model has it)"),
        ("_state", "Model._state (every model has it)"),
    ],
)
def test_a_field_named_like_the_model_api_is_a_declaration_error(name, clash):
    with pytest.raises(ModelDefinitionError) as raised:
        declare("Clash", **{name: models.StringField(null=True)})
    message = str(raised.value)
    assert f"Clash.{name}: the field name clashes with {clash}" in message
    assert f"Rename the field; db_name={name!r} keeps the stored attribute name" in message
    assert "[dynamo.E114]" in message


def test_every_public_name_of_model_is_refused():
    """Read from the class, so a method added to Model is covered without a list to edit."""
    names = [n for n in dir(models.Model) if not n.startswith("__")]
    assert {"update", "save", "pk", "aupdate"} <= set(names)
    for name in names:
        with pytest.raises(ModelDefinitionError, match=f"Clash.{name}: the field name clashes"):
            declare("Clash", **{name: models.IntegerField(null=True)})


def test_a_name_used_by_a_parent_model_class_is_refused_too():
    class Publishable(models.Model):
        class Meta:
            abstract = True

        def publish(self):
            self.update(set={"state": "published"})

    with pytest.raises(ModelDefinitionError, match=r"Publishable\.publish \(a method\)"):
        declare("Article", Publishable, publish=models.BooleanField(null=True))


class Titled(models.Model):
    title = models.StringField(null=True)

    class Meta:
        abstract = True


class Post(Titled):
    """What stays allowed: a redeclared field, an own ``save``, and the fix the
    error suggests (another Python name, the same stored attribute)."""

    id = models.StringField(partition_key=True)
    title = models.StringField(max_length=20, null=True)
    update_ = models.StringField(db_name="update", null=True)

    class Meta:
        table_name = "names_post"

    def save(self, **kwargs):
        self.title = (self.title or "").strip()
        super().save(**kwargs)


def test_own_methods_redeclared_fields_and_db_name_work(dynamo_db):
    assert Post._meta.fields_by_name["title"].max_length == 20
    post = Post(id="a", title="  Hello ", update_="v1")
    post.save()
    post.update(set={"update_": "v2"})
    post.save(update_fields=["update_"])
    item = dynamo_db.call(
        "get_item", TableName=dynamo_db.table_name("names_post"), Key={"id": {"S": "a"}}
    )["Item"]
    assert item == {"id": {"S": "a"}, "title": {"S": "Hello"}, "update": {"S": "v2"}}
    assert Post.objects.get(id="a", consistent=True).update_ == "v2"
