"""What provider.py and oauth.py share: the threaded HTTP server and the
loop that serves it until SIGTERM or ^C.

Python 3.11, standard library only.
"""

import signal
import threading
from http.server import ThreadingHTTPServer


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


def serve(srv):
    """Prints "listening on ADDR:PORT" (what the tests wait for), then
    serves srv until SIGTERM or ^C; returns the exit status, 0."""
    # shutdown() waits for serve_forever() to return: not from its thread.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.shutdown).start())
    print("listening on %s:%d" % srv.server_address[:2], flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    srv.server_close()
    return 0
