"""`harness web`: a browser (a phone's too) on the daemon's live sessions.

A bridge like `harness acp`: a client of the daemon over its socket, serving a
small web page on loopback (the daemon itself never listens on TCP). The only
module tree that imports the web stack (aiohttp) and the QR library (segno),
loaded only when `harness web` runs. It imports protocol and, to start the
daemon as every command does, the client's launcher; never the daemon.
docs/web.md tells how to use it and how it is kept safe.
"""
