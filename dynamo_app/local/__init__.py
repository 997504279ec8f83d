"""The local DynamoDB-compatible server (moto's) for development and tests.

``server`` runs it on 127.0.0.1, ``shared`` keeps one per project for all its
processes (``ENDPOINT = "embedded"``), ``state`` keeps its tables across
restarts. It imports nothing of the app but its exceptions.
"""
