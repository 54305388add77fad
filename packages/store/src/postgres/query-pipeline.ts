import { Socket } from 'node:net';
import pg from 'pg';
import { DEFAULT_TIMEOUT_MS } from '../store-options.js';
import type { ConnectionPoolStats } from '../types.js';
import { ClientSideError, ConnectionLostError, DeadlineError } from './client-errors.js';
import { isStatementError } from './statement-errors.js';

/** How busy a pool of connections is (see ConnectionPoolStats). */
export type PoolUsage = Omit<ConnectionPoolStats, 'pool'>;

/** One statement for the pipeline: named, so that each connection parses and plans it once. */
export interface PipelinedQuery {
  name: string;
  text: string;
  values: unknown[];
}

interface PipelineConnection {
  client: pg.Client;
  /**
   * The socket pg talks over. The pipeline makes it and hands it to pg (pg's public `stream` option), so that it can
   * cork it for a turn and destroy it when a statement misses its deadline, without reaching into pg's internals.
   */
  socket: Socket;
  /**
   * Settles once connected; rejects with the reason the connection could not be made: a DeadlineError (not made
   * within the deadline), a ConnectionLostError (refused, or closed while connecting), or PostgreSQL's error.
   */
  connected: Promise<void>;
  /** Whether `connected` has resolved: until then no statement is sent on it, and its socket is not corked. */
  ready: boolean;
  /** Statements sent on it (or waiting for it to connect) and not yet answered. */
  inFlight: number;
  /**
   * Set when it connected too late, or a statement on it missed its deadline: the pipeline then destroyed it, failing
   * the other statements on it.
   */
  missedDeadline: boolean;
  /** Set when it ended or failed (its 'end' or 'error' event), or was retired: pg fails what was sent on it. */
  lost: boolean;
}

/** The message of an error, or what it is when it has none (a refused connection may have only a code). */
function describe(error: unknown): string {
  if (error instanceof Error) {
    return error.message || (error as NodeJS.ErrnoException).code || error.name;
  }
  return String(error);
}

/**
 * The error a statement failed with, as the store tells it, by what it saw happen to the connection rather than by
 * the driver's wording: a DeadlineError when a missed deadline took the connection down, a ConnectionLostError when
 * the connection ended or failed. PostgreSQL's own errors, and any other error, are left as they are.
 */
function storeErrorOf(error: unknown, connection: PipelineConnection, timeoutMs: number, statementSent: boolean) {
  if (error instanceof ClientSideError || error instanceof pg.DatabaseError) {
    return error;
  }
  if (connection.missedDeadline) {
    return new DeadlineError(
      `the database did not answer within ${timeoutMs} ms (a statement before this one missed its deadline)`,
      { statementSent, cause: error },
    );
  }
  if (connection.lost) {
    return new ConnectionLostError(`the connection to the database was lost: ${describe(error)}`, {
      statementSent,
      cause: error,
    });
  }
  return error;
}

/**
 * A turn opens another connection (below the limit) only when every open one has this many statements in flight.
 * PostgreSQL runs the statements of one connection one after another, so more connections let a server with more
 * cores work in parallel; but each connection of its own costs its own writes and wake-ups, and on the 2-core
 * benchmark machine deep pipelines on few connections did as well or better.
 */
export const OPEN_ANOTHER_AT = 8;

/**
 * Runs single statements, each on its own (autocommit), over a few connections in pg's pipeline mode.
 *
 * A pooled connection runs one statement per round trip, and each round trip costs a write and a wake-up on both
 * sides. Here every statement issued during one turn of the event loop goes to the same connection, whose socket is
 * corked until the end of the turn: under load, the statements of many requests leave in one write, and PostgreSQL
 * reads them together and answers them in order. Each statement still ends with its own Sync, so it commits or fails
 * alone, exactly as on a pooled connection.
 *
 * Connections are opened as needed, up to `maxConnections`: a turn takes the least busy connection, unless all
 * are busy enough to open another (`OPEN_ANOTHER_AT`). A connection that breaks fails the statements in flight on
 * it (pg rejects them) and is replaced by the next turn that needs one.
 *
 * Each statement has a deadline of `timeoutMs` from the call, waiting for its connection to connect included (a
 * connection not ready within `timeoutMs` of being opened is destroyed). A statement not answered by then fails with
 * a DeadlineError, and its connection is destroyed: the statements sent after it on the same socket could otherwise
 * never be answered (a frozen server), or be matched to the wrong answers. The other statements on it fail with a
 * DeadlineError too, and the connection is replaced like a broken one. The deadlines are the pipeline's own timers,
 * not pg's `query_timeout` and `connectionTimeoutMillis`, whose errors say what happened only in their wording.
 */
export class QueryPipeline {
  readonly #connections = new Set<PipelineConnection>();
  #turnConnection: PipelineConnection | undefined;
  #closed = false;
  /** Connections that run transactions (`transaction`), one at a time each; those idle wait here for the next. */
  readonly #transactionConnections = new Set<PipelineConnection>();
  readonly #idleTransactionConnections: PipelineConnection[] = [];
  /** Transactions waiting for one of those connections, all `maxConnections` being in use. */
  readonly #waitingForTransactionConnection: ((connection: PipelineConnection | undefined) => void)[] = [];

  constructor(
    private readonly clientConfig: pg.ClientConfig,
    private readonly maxConnections: number,
    private readonly timeoutMs: number = DEFAULT_TIMEOUT_MS,
  ) {}

  /** Runs one statement and returns its rows as arrays of column values. */
  async query({ name, text, values }: PipelinedQuery): Promise<unknown[][]> {
    if (this.#closed) {
      throw new Error('the store is closed');
    }
    const deadline = performance.now() + this.timeoutMs;
    const connection = this.#connectionOfThisTurn();
    connection.inFlight++;
    let sent = false;
    try {
      if (!connection.ready) {
        await connection.connected;
      }
      const remainingMs = Math.ceil(deadline - performance.now());
      if (remainingMs <= 0) {
        // Nothing was sent: the connection stays in use.
        throw new DeadlineError(`no connection to the database within ${this.timeoutMs} ms`, { statementSent: false });
      }
      this.#refuseLost(connection);
      sent = true;
      const query = { name, text, values, rowMode: 'array' as const };
      const result = await this.#withinDeadline(connection, connection.client.query<unknown[]>(query), remainingMs);
      return result.rows;
    } catch (error) {
      if (isStatementError(error) || (error instanceof DeadlineError && !error.statementSent)) {
        throw error;
      }
      const storeError = storeErrorOf(error, connection, this.timeoutMs, sent);
      this.#retire(connection);
      throw storeError;
    } finally {
      connection.inFlight--;
    }
  }

  /** Fails, before anything is sent, on a connection that ended or failed while the caller waited for it. */
  #refuseLost(connection: PipelineConnection): void {
    if (connection.lost) {
      throw new ConnectionLostError('the connection to the database was lost before the statement was sent', {
        statementSent: false,
      });
    }
  }

  /**
   * What `sent` resolves with, unless `ms` pass first: then the connection is destroyed (what was sent on it can no
   * longer be told apart from what comes next) and the call fails with a DeadlineError.
   */
  async #withinDeadline<T>(connection: PipelineConnection, sent: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        connection.missedDeadline = true;
        connection.socket.destroy();
        reject(new DeadlineError(`the database did not answer within ${this.timeoutMs} ms`, { statementSent: true }));
      }, ms);
    });
    try {
      return await Promise.race([sent, late]);
    } finally {
      clearTimeout(timer);
      // pg fails the statement once its connection is destroyed; nobody waits for that any more.
      sent.catch(() => {});
    }
  }

  /**
   * Runs statements in one transaction, on a connection that nothing else uses meanwhile: `begin`, the statements and
   * `commit` leave in one write, and PostgreSQL answers them in order, so that the transaction takes one round trip
   * and one flush of the WAL. Resolves with each statement's rows once it has committed. Rejects with the first
   * statement's error when one fails: PostgreSQL then refuses the statements after it and turns the `commit` into a
   * rollback, so none of them is made. The deadline runs from `since`: a transaction of writes that waited gets
   * what remains of theirs.
   */
  async transaction(queries: readonly PipelinedQuery[], since = performance.now()): Promise<unknown[][][]> {
    if (this.#closed) {
      throw new Error('the store is closed');
    }
    const deadline = since + this.timeoutMs;
    const missed = () =>
      new DeadlineError(`no connection to the database within ${this.timeoutMs} ms`, { statementSent: false });
    if (performance.now() >= deadline) {
      throw missed();
    }
    const connection = await this.#transactionConnection(deadline);
    let reusable = false;
    let commitSent = false;
    try {
      if (!connection.ready) {
        // Connecting may hang (a frozen server): it gets what remains of the deadline, no more.
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(missed()), Math.max(0, deadline - performance.now()));
        });
        try {
          await Promise.race([connection.connected, late]);
        } finally {
          clearTimeout(timer);
        }
      }
      const remainingMs = Math.ceil(deadline - performance.now());
      if (remainingMs <= 0) {
        reusable = true;
        throw missed();
      }
      this.#refuseLost(connection);
      const send = (statement: { name?: string; text: string; values?: unknown[] }) =>
        connection.client.query<unknown[]>({ ...statement, rowMode: 'array' as const });
      connection.socket.cork();
      const sent = [send({ text: 'begin' }), ...queries.map(send), send({ text: 'commit' })];
      connection.socket.uncork();
      commitSent = true;
      const settled = await this.#withinDeadline(connection, Promise.allSettled(sent), remainingMs);
      const failure = settled.find((outcome) => outcome.status === 'rejected');
      if (failure) {
        reusable = isStatementError(failure.reason);
        throw failure.reason;
      }
      reusable = true;
      return settled.slice(1, -1).map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.rows : []));
    } catch (error) {
      throw isStatementError(error) ? error : storeErrorOf(error, connection, this.timeoutMs, commitSent);
    } finally {
      if (reusable && !this.#closed && this.#transactionConnections.has(connection)) {
        this.#releaseTransactionConnection(connection);
      } else {
        this.#retire(connection);
        this.#waitingForTransactionConnection.shift()?.(undefined);
      }
    }
  }

  /**
   * A connection for a transaction: an idle one, a new one below `maxConnections`, or the next one released, waited
   * for until `deadline`.
   */
  async #transactionConnection(deadline: number): Promise<PipelineConnection> {
    if (this.#closed) {
      throw new Error('the store is closed');
    }
    const idle = this.#idleTransactionConnections.pop();
    if (idle) {
      return idle;
    }
    if (this.#transactionConnections.size < this.maxConnections) {
      return this.#open(this.#transactionConnections);
    }
    let timer: NodeJS.Timeout | undefined;
    const released = await new Promise<PipelineConnection | undefined | 'late'>((resolve) => {
      const waiting = (connection: PipelineConnection | undefined) => resolve(connection);
      this.#waitingForTransactionConnection.push(waiting);
      timer = setTimeout(
        () => {
          // Out of the queue first, so that no connection is ever handed to a transaction that gave up.
          this.#waitingForTransactionConnection.splice(this.#waitingForTransactionConnection.indexOf(waiting), 1);
          resolve('late');
        },
        Math.max(0, deadline - performance.now()),
      );
    });
    clearTimeout(timer);
    if (released === 'late') {
      throw new DeadlineError(`no connection to the database within ${this.timeoutMs} ms`, { statementSent: false });
    }
    // A retired connection leaves room for a new one.
    return released ?? this.#transactionConnection(deadline);
  }

  /** Hands a connection to the next transaction waiting for one, or keeps it idle. */
  #releaseTransactionConnection(connection: PipelineConnection): void {
    const next = this.#waitingForTransactionConnection.shift();
    if (next) {
      next(connection);
    } else {
      this.#idleTransactionConnections.push(connection);
    }
  }

  /**
   * Connections open or opening, those with statements in flight, and the statements queued behind another one on
   * their connection (PostgreSQL runs a connection's statements one after another).
   */
  stats(): PoolUsage {
    let inUse = 0;
    let waiting = 0;
    for (const { inFlight } of this.#connections) {
      inUse += inFlight > 0 ? 1 : 0;
      waiting += Math.max(0, inFlight - 1);
    }
    return { size: this.#connections.size, inUse, waiting };
  }

  /**
   * Ends every connection once the statements sent on it are answered (they have their deadlines), and destroys
   * those still open `timeoutMs` later: a frozen server never acknowledges the end of a connection.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const connections = [...this.#connections, ...this.#transactionConnections];
    this.#connections.clear();
    this.#transactionConnections.clear();
    this.#idleTransactionConnections.length = 0;
    for (const waiting of this.#waitingForTransactionConnection.splice(0)) {
      waiting(undefined);
    }
    await Promise.all(connections.map((connection) => this.#end(connection)));
  }

  async #end({ client, socket }: PipelineConnection): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const destroyed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        socket.destroy();
        resolve();
      }, this.timeoutMs);
    });
    await Promise.race([client.end().catch(() => {}), destroyed]);
    clearTimeout(timer);
  }

  #connectionOfThisTurn(): PipelineConnection {
    const current = this.#turnConnection;
    if (current && this.#connections.has(current)) {
      return current;
    }
    const connection = this.#leastBusyOrNew();
    this.#turnConnection = connection;
    const socket = connection.ready ? connection.socket : undefined;
    socket?.cork();
    setImmediate(() => {
      this.#turnConnection = undefined;
      socket?.uncork();
    });
    return connection;
  }

  #leastBusyOrNew(): PipelineConnection {
    let leastBusy: PipelineConnection | undefined;
    for (const connection of this.#connections) {
      if (!leastBusy || connection.inFlight < leastBusy.inFlight) {
        leastBusy = connection;
      }
    }
    if (leastBusy && (leastBusy.inFlight < OPEN_ANOTHER_AT || this.#connections.size >= this.maxConnections)) {
      return leastBusy;
    }
    return this.#open(this.#connections);
  }

  /** Opens a connection, kept in `set` until it is retired. */
  #open(set: Set<PipelineConnection>): PipelineConnection {
    const socket = new Socket();
    const client = new pg.Client({ ...this.clientConfig, stream: () => socket, pipeline: true } as pg.ClientConfig);
    const connection: PipelineConnection = {
      client,
      socket,
      connected: Promise.resolve(),
      ready: false,
      inFlight: 0,
      missedDeadline: false,
      lost: false,
    };
    // Set before pg's own connect timeout (`connectionTimeoutMillis`), so that it fires first.
    const late = setTimeout(() => {
      connection.missedDeadline = true;
      socket.destroy();
    }, this.timeoutMs);
    connection.connected = client.connect().then(
      () => {
        clearTimeout(late);
        connection.ready = true;
      },
      (error: unknown) => {
        clearTimeout(late);
        this.#retire(connection); // the statements waiting for it fail with the reason
        if (connection.missedDeadline) {
          throw new DeadlineError(`no connection to the database within ${this.timeoutMs} ms`, {
            statementSent: false,
            cause: error,
          });
        }
        if (error instanceof pg.DatabaseError) {
          throw error;
        }
        throw new ConnectionLostError(`cannot connect to the database: ${describe(error)}`, {
          statementSent: false,
          cause: error,
        });
      },
    );
    // Rejections reach the statements waiting for it; when none waits, none must go unhandled.
    connection.connected.catch(() => {});
    // A broken connection (a server restart, say) errors its statements in flight and leaves the set; without a
    // listener, its 'error' event would crash the process.
    client.on('error', () => this.#retire(connection));
    client.on('end', () => this.#retire(connection));
    set.add(connection);
    return connection;
  }

  /** Takes a connection out of use; the statements already sent on it get their answers or their errors. */
  #retire(connection: PipelineConnection): void {
    connection.lost = true;
    const idle = this.#idleTransactionConnections.indexOf(connection);
    if (idle !== -1) {
      this.#idleTransactionConnections.splice(idle, 1);
    }
    if (this.#connections.delete(connection) || this.#transactionConnections.delete(connection)) {
      connection.client.end().catch(() => {});
    }
  }
}
