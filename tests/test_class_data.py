"""Django's ``setUpTestData`` with DynamoDB: the class setup may write, and each
test of the class starts with exactly what it wrote (Django rolls back to it; the
test store empties the tables and puts the items back).

Each test checks the class data first and then changes it, so whichever runs
second in a worker proves the first one's changes were undone; under xdist a
test may also run alone, and then proves the class setup ran on empty tables.
(The same under ``manage.py test``: tests/test_test_runs.py's fresh project.)
"""

from django.test import TestCase

from dynamo_app import models
from dynamo_app.exceptions import DoesNotExist, UniqueViolation
from dynamo_app.test import count_requests


class ClassDataNote(models.Model):
    note_id = models.StringField(partition_key=True)
    text = models.StringField()
    email = models.StringField(null=True)
    version = models.VersionField()

    class Meta:
        table_name = "class_data_note"
        unique = [models.Unique("email")]


class SetUpTestDataTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.note = ClassDataNote.objects.create(note_id="n1", text="class-wide", email="a@x.test")

    def assert_only_the_class_data(self):
        self.assertEqual(self.note.text, "class-wide")  # Django's TestData: a copy per test
        with count_requests() as counter:  # restored before the test: nothing counted here
            stored = ClassDataNote.objects.get(note_id="n1")
        self.assertEqual(counter.total, 1)
        self.assertEqual((stored.text, stored.version), ("class-wide", self.note.version))
        self.assertEqual(sorted(n.note_id for n in ClassDataNote.objects.scan()), ["n1"])
        with self.assertRaises(UniqueViolation):  # the class data's lock item came back too
            ClassDataNote.objects.create(note_id="n3", text="", email="a@x.test")
        ClassDataNote.objects.create(note_id="n4", text="", email="b@x.test")  # not taken

    def change_everything(self):
        self.note.text = "changed"
        self.note.save()
        ClassDataNote.objects.get(note_id="n4").delete()
        ClassDataNote.objects.create(note_id="n2", text="", email="c@x.test")

    def test_1(self):
        self.assert_only_the_class_data()
        self.change_everything()

    def test_2(self):
        self.assert_only_the_class_data()
        self.change_everything()
        ClassDataNote.objects.get(note_id="n1").delete()


class WithoutClassDataTests(TestCase):
    """The next class starts on empty tables: the last class's data is gone."""

    def test_starts_empty(self):
        with self.assertRaises(DoesNotExist):
            ClassDataNote.objects.get(note_id="n1")
