"""The client layer: one boto3 client per process and everything a request goes through.

The handle (``handle``) holds the client and the table resolver; every request
goes through its retry policy (``retry``) and is reported to the request log
(``requests``). ``wire`` is DynamoDB's wire form of plain values, ``threads`` the
pool the async API runs in, ``dax`` the DAX client, and ``fastpath`` installs the
parts that do botocore's per-request work with less CPU (``sigv4``, ``parser``,
``pipeline``; ``fallback`` says which are off). Nothing here knows models: every
layer above calls down into it.
"""
