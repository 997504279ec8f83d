"""The declared tables against the deployed ones: the schema workflow (``schema``:
plan, migrate, verify), the tables as infrastructure code (``iac``) and the
least-privilege IAM policy (``iam``). It reads table definitions from the
registry (``dynamo_app.tables``), never the models.
"""
