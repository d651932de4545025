"""The channel between the driver and the tasks of a barrier stage (fastml/_spark.py holds a
fit's parts in such tasks): the driver listens on a socket, each task connects, proves it
belongs to the fit with a random token shipped with the tasks, and from then on the two
exchange length-prefixed pickles. A task that goes away (Spark reruns the stage) is dropped,
and its successors' links replace it; a link from an older attempt is refused.

Spark's own ``BarrierTaskContext.allGather`` would do the exchange, at about a second per call
(it is built for a rendezvous), against a fraction of a millisecond for a round trip here
(docs/user_guide/spark.rst)."""
import hmac
import pickle
import secrets
import select
import socket
import struct

POLL = 0.2                          # seconds between looks at the barrier job while waiting


class Lost(Exception):
    """A barrier task was lost: Spark reruns the stage, the fit starts over."""


class PartError(Exception):
    """A data error a task reported for one of its parts."""

    def __init__(self, part, error):
        super().__init__(part, error)
        self.part, self.error = part, error


class Link:
    """One socket, messages as length-prefixed pickles (read only from a peer that sent
    the token first: see Channel._accept)."""
    HEAD = struct.Struct("!Q")

    def __init__(self, sock):
        self.sock = sock

    @classmethod
    def connect(cls, address):
        return cls(socket.create_connection(address))

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def send(self, message):
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self.sock.sendall(self.HEAD.pack(len(data)) + data)

    def receive(self):
        """The next message, or None when the other end has gone."""
        head = self.exactly(self.HEAD.size)
        data = None if head is None else self.exactly(self.HEAD.unpack(head)[0])
        return None if data is None else pickle.loads(data)

    def exactly(self, size):
        chunks, left = [], size
        try:
            while left:
                chunk = self.sock.recv(min(left, 1 << 22))
                if not chunk:
                    return None
                chunks.append(chunk)
                left -= len(chunk)
        except OSError:
            return None
        return b"".join(chunks)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def driver_host(spark):
    return spark.sparkContext.getConf().get("spark.driver.host", "127.0.0.1")


class Channel:
    """The driver's end: a listening socket the barrier tasks connect to, and one link per
    task. A connection is read only once its first 32 bytes are the fit's random token,
    which travels with the tasks (a connection without it is closed unread)."""
    TOKEN = 32

    def __init__(self, host, tasks):
        self.token, self.tasks = secrets.token_bytes(self.TOKEN), tasks
        self.server = socket.create_server((host, 0))
        self.address = (host, self.server.getsockname()[1])
        self.links, self.ready, self.attempts, self.floor = {}, {}, {}, -1
        self.job = None

    def gather(self):
        """What every task holds, [[(part, rows, width)] per task], once all are ready (a
        task that reports a data error raises PartError)."""
        self.drop()
        while len(self.ready) < self.tasks:
            sockets = [self.server] + [link.sock for link in self.links.values()]
            readable, _, _ = select.select(sockets, [], [], POLL)
            self.job.check()
            for sock in readable:
                if sock is self.server:
                    self._accept()
                    continue
                task = next(t for t, link in self.links.items() if link.sock is sock)
                message = self.links[task].receive()
                if message is None:         # lost while reading: Spark reruns the stage
                    self.drop()
                    break
                if message[0] == "error":
                    raise PartError(*message[1])
                self.ready[task] = message[1]
        return [self.ready[t] for t in sorted(self.ready)]

    def _accept(self):
        sock, _ = self.server.accept()
        link = Link(sock)
        sock.settimeout(10)
        token = link.exactly(self.TOKEN)
        hello = link.receive() if token is not None and \
            hmac.compare_digest(token, self.token) else None
        sock.settimeout(None)
        if not hello or hello[1] <= self.floor:     # a stranger, or a task of a lost attempt
            link.close()
            return
        task, attempt = hello
        self.links[task], self.attempts[task] = link, attempt

    def ask(self, request):
        """Send `request` to every task; their replies in task order. A data error raises
        PartError (the first part's, in part order); a lost task raises Lost."""
        for link in self.links.values():
            link.send(request)
        replies, errors = [], []
        for task in sorted(self.links):
            status, value = self._reply(self.links[task])
            (errors if status == "error" else replies).append(value)
        if errors:
            raise PartError(*min(errors, key=lambda e: -1 if e[0] is None else e[0]))
        return replies

    def _reply(self, link):
        while True:
            readable, _, _ = select.select([link.sock], [], [], POLL)
            if readable:
                reply = link.receive()
                if reply is None:
                    self.drop()
                    raise Lost()
                return reply
            self.job.check()

    def drop(self):
        """Forget the current tasks (lost: Spark reruns their stage with new attempts)."""
        for link in self.links.values():
            link.close()
        self.floor = max([self.floor, *self.attempts.values()])
        self.links, self.ready = {}, {}

    def close(self):
        for link in self.links.values():
            try:
                link.send(("stop",))
            except OSError:
                pass
            link.close()
        self.server.close()
