"""The suite uses dynamo_app.testing's fixtures exactly as a user's project would."""

import os

import pytest

# Never let boto3's credential chain probe an instance-metadata address.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(scope="session", autouse=True)
def demo_tables_only_in_demo_tests():
    """Withdraw the demo's tables, which installing project.roster registered:
    tests/demo_support.py's demo_site registers them for the demo's tests."""
    from dynamo_app.tables import registry
    from tests.demo_support import DEMO_TABLES

    for definition in DEMO_TABLES:
        registry.unregister(definition.declared_name)
    yield
    for definition in DEMO_TABLES:
        registry.register(definition)
