"""``python -m benchmarks.server``: the local server in a process of its own.

It prints its URL on the first line of stdout, then serves until killed. A
separate process keeps the server's CPU and memory out of the client's
measurements (tracemalloc, process time) and lets both use a core each.
"""

from dynamo_app.local.server import LocalServer

if __name__ == "__main__":
    server = LocalServer().start()
    print(server.url, flush=True)
    server.serve_forever()
