"""A model and backfill functions importable by name (dynamo_backfill, worker processes)."""

from dynamo_app import models


class Article(models.Model):
    article_id = models.StringField(partition_key=True)
    title = models.StringField()
    slug = models.StringField(null=True)
    touched = models.IntegerField(default=0)

    class Meta:
        table_name = "bf_article"


def slugify(article: Article) -> None:
    """Fill the slug; ``touched`` counts the writes (one per item, or it was done twice)."""
    if article.slug is None:
        article.slug = article.title.lower().replace(" ", "-")
        article.touched += 1


def touch(article: Article) -> None:
    """Not idempotent: applied twice to an item, it shows (``touched == 2``)."""
    article.touched += 1


def unannotated(article):
    article.touched += 1
