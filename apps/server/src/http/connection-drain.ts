import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** A response not yet finished, and whether its request asked to keep the connection alive. */
interface PendingResponse {
  res: ServerResponse;
  keepAlive: boolean;
}

/** What a drain needs to know about one connection. */
interface ConnectionUse {
  /** Unfinished responses in the order of their requests: pipelined requests queue up behind the first. */
  pending: PendingResponse[];
  /** `socket.bytesRead` when it last fell idle: more since then means a next request has begun to arrive. */
  bytesReadWhenIdle: number;
}

/** Resolves after the event loop has gone once more through its poll phase, where sockets are read. */
const nextLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Follows a server's connections and drains them on shutdown, so that no request the server has received goes
 * unanswered and no connection is reset.
 *
 * Why not `server.close()` alone: in Node 20 it calls `closeIdleConnections()` at once (httpServerPreClose), and a
 * keep-alive connection counts as idle while its next request still sits unread in the kernel; destroying a socket
 * with unread data sends RST, so that client gets ECONNRESET for a request it had sent. Node's test of "idle" also
 * passes a response that has ended but is not yet flushed. And closing the listening socket resets every connection
 * the kernel has established but Node has not accepted yet: since libuv 1.45 (libuv/libuv#3696) Node accepts one
 * connection per loop turn, so a burst of connections waits in the backlog for as many turns, requests written.
 *
 * So the drain keeps accepting, turn after turn, until a turn accepts no connection (for at most half the grace
 * period, so that the last ones accepted still have time to be answered); only then does it stop listening, with
 * that sweep switched off. Each `setImmediate` after the first spans a full poll phase, which reads every socket that
 * had data, and Node's parser emits `request` synchronously from that read (the first may still fire within the
 * current loop turn, whose poll had already collected its events). Whatever the kernel held when the drain began is
 * then a request in flight, answered with `Connection: close` and closed after its response by Node; only then are
 * the connections closed that have no response pending and no byte of a next request (FIN: nothing is left unread).
 * A connection still open after the grace period is destroyed.
 */
export class ConnectionDrain {
  readonly #connections = new Map<Socket, ConnectionUse>();
  #accepted = 0;
  #stopping = false;
  #swept = false;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.#accepted++;
      this.#connections.set(socket, { pending: [], bytesReadWhenIdle: 0 });
      socket.once('close', () => this.#connections.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#track(req, res));
  }

  /** The last unfinished response on a connection: the one whose end may end the connection. */
  lastPendingResponse(socket: Duplex): ServerResponse | undefined {
    return this.#connections.get(socket as Socket)?.pending.at(-1)?.res;
  }

  /**
   * Accepts the connections already waiting, then stops accepting and resolves once every connection has closed:
   * requests in flight and requests already received are answered, idle connections are closed, and whatever is
   * left is destroyed after `graceMs`.
   */
  async drain(graceMs: number): Promise<void> {
    this.#stopping = true;
    for (const { pending } of this.#connections.values()) {
      this.#closeAfter(pending.at(-1));
    }
    const startedAt = performance.now();
    const deadline = setTimeout(() => {
      for (const socket of this.#connections.keys()) {
        socket.destroy();
      }
    }, graceMs);
    deadline.unref();
    try {
      await this.#acceptWhileConnectionsWait(startedAt + graceMs / 2);
      const closed = this.#stopListening();
      await nextLoopTurn();
      await nextLoopTurn();
      this.#swept = true;
      for (const [socket, use] of this.#connections) {
        this.#closeIfIdle(socket, use);
      }
      await closed;
    } finally {
      clearTimeout(deadline);
    }
  }

  /** Lets the event loop turn until a turn accepts no connection, or until `until` (a `performance.now()` time). */
  async #acceptWhileConnectionsWait(until: number): Promise<void> {
    await nextLoopTurn();
    let acceptedBefore: number;
    do {
      acceptedBefore = this.#accepted;
      await nextLoopTurn();
    } while (this.#accepted !== acceptedBefore && performance.now() < until);
  }

  #track(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    let use = this.#connections.get(socket);
    if (!use) {
      use = { pending: [], bytesReadWhenIdle: 0 };
      this.#connections.set(socket, use);
    }
    const entry: PendingResponse = { res, keepAlive: res.shouldKeepAlive };
    if (this.#stopping) {
      // Only the last response ends the connection: one before it would drop the pipelined requests behind it.
      const previous = use.pending.at(-1);
      if (previous && !previous.res.headersSent) {
        previous.res.shouldKeepAlive = previous.keepAlive;
      }
      this.#closeAfter(entry);
    }
    use.pending.push(entry);
    const connection = use;
    const markIdle = () => {
      if (connection.pending.length === 0) {
        connection.bytesReadWhenIdle = socket.bytesRead;
      }
    };
    let settled = false;
    const settle = () => {
      if (settled) {
        return;
      }
      settled = true;
      connection.pending.splice(connection.pending.indexOf(entry), 1);
      markIdle();
      if (this.#swept) {
        this.#closeIfIdle(socket, connection);
      }
    };
    res.once('finish', settle);
    res.once('close', settle);
    // A body left unread by the handler is read (and dropped) after its response has finished.
    req.once('end', markIdle);
  }

  /** Makes a response end its connection, unless its headers have gone out already. */
  #closeAfter(entry: PendingResponse | undefined): void {
    if (entry && !entry.res.headersSent) {
      entry.res.shouldKeepAlive = false;
    }
  }

  /** Closes a connection with no response pending and no byte of a next request; one that Node ends is left to it. */
  #closeIfIdle(socket: Socket, use: ConnectionUse): void {
    if (!socket.writableEnded && use.pending.length === 0 && socket.bytesRead === use.bytesReadWhenIdle) {
      socket.destroy();
    }
  }

  /** `server.close()` with its immediate sweep of idle connections switched off (see the class comment). */
  #stopListening(): Promise<void> {
    const { server } = this;
    const sweep = server.closeIdleConnections;
    server.closeIdleConnections = () => undefined;
    try {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    } finally {
      server.closeIdleConnections = sweep;
    }
  }
}
