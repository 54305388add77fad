import pg from 'pg';
import { DEFAULT_TIMEOUT_MS } from '../store-options.js';
import type { ConnectionPoolStats } from '../types.js';
import { DeadlineError } from './deadline-error.js';
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
  /** Settles once connected; rejects with the reason the connection could not be made. */
  connected: Promise<void>;
  /** Whether `connected` has resolved: until then no statement is sent on it, and its socket is not corked. */
  ready: boolean;
  /** Statements sent on it (or waiting for it to connect) and not yet answered. */
  inFlight: number;
  /** Set when a statement on it missed its deadline: pg then destroyed it, failing the other statements on it. */
  missedDeadline: boolean;
}

/** The message of pg's error for a statement not answered within its `query_timeout`. */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * A turn opens another connection (below the limit) only when every open one has this many statements in flight.
 * PostgreSQL runs the statements of one connection one after another, so more connections let a server with more
 * cores work in parallel; but each connection of its own costs its own writes and wake-ups, and on the 2-core
 * benchmark machine deep pipelines on few connections did as well or better.
 */
export const OPEN_ANOTHER_AT = 8;

/** What the pipeline does with the socket under a pg client. */
interface ClientSocket {
  cork(): void;
  uncork(): void;
  destroy(): void;
}

/** The socket under a pg client. pg keeps it as `connection.stream`, which its own Query class corks the same way. */
function socketOf(client: pg.Client): ClientSocket | undefined {
  const stream = (client as unknown as { connection?: { stream?: Partial<Record<keyof ClientSocket, unknown>> } })
    .connection?.stream;
  return typeof stream?.cork === 'function' &&
    typeof stream.uncork === 'function' &&
    typeof stream.destroy === 'function'
    ? (stream as ClientSocket)
    : undefined;
}

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
 * Each statement has a deadline of `timeoutMs` from the call, waiting for its connection to connect included (the
 * client config's `connectionTimeoutMillis` should not exceed it). A statement not answered by then is failed by
 * pg's `query_timeout`, which in pipeline mode destroys the connection: the statements sent after it on the same
 * socket could otherwise never be answered (a frozen server), or be matched to the wrong answers. The other
 * statements on it fail with a DeadlineError, and the connection is replaced like a broken one.
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
    try {
      if (!connection.ready) {
        await connection.connected;
      }
      const remainingMs = Math.ceil(deadline - performance.now());
      if (remainingMs <= 0) {
        // Nothing was sent: the connection stays in use.
        throw new DeadlineError(`no connection to the database within ${this.timeoutMs} ms`);
      }
      const query = { name, text, values, rowMode: 'array' as const, query_timeout: remainingMs };
      const result = await connection.client.query<unknown[]>(query);
      return result.rows;
    } catch (error) {
      if (error instanceof DeadlineError || isStatementError(error)) {
        throw error;
      }
      if (error instanceof Error && error.message === QUERY_TIMEOUT_MESSAGE) {
        connection.missedDeadline = true;
      } else if (connection.missedDeadline) {
        throw new DeadlineError(
          `the database did not answer within ${this.timeoutMs} ms (a statement before this one missed its deadline)`,
          { cause: error },
        );
      }
      this.#retire(connection);
      throw error;
    } finally {
      connection.inFlight--;
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
    const missed = () => new DeadlineError(`no connection to the database within ${this.timeoutMs} ms`);
    if (performance.now() >= deadline) {
      throw missed();
    }
    const connection = await this.#transactionConnection(deadline);
    let reusable = false;
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
      const send = (statement: { name?: string; text: string; values?: unknown[] }) => {
        const query = { ...statement, rowMode: 'array' as const, query_timeout: remainingMs };
        return connection.client.query<unknown[]>(query);
      };
      const socket = socketOf(connection.client);
      socket?.cork();
      const sent = [send({ text: 'begin' }), ...queries.map(send), send({ text: 'commit' })];
      socket?.uncork();
      const settled = await Promise.allSettled(sent);
      const failure = settled.find((outcome) => outcome.status === 'rejected');
      if (failure) {
        reusable = isStatementError(failure.reason);
        throw failure.reason;
      }
      reusable = true;
      return settled.slice(1, -1).map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.rows : []));
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
      throw new DeadlineError(`no connection to the database within ${this.timeoutMs} ms`);
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
    await Promise.all(connections.map(({ client }) => this.#end(client)));
  }

  async #end(client: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const destroyed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        socketOf(client)?.destroy();
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
    const socket = connection.ready ? socketOf(connection.client) : undefined;
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
    const client = new pg.Client({ ...this.clientConfig, pipeline: true } as pg.ClientConfig);
    const connected = client.connect().then(() => {});
    const connection: PipelineConnection = { client, connected, ready: false, inFlight: 0, missedDeadline: false };
    // A broken connection (a server restart, say) errors its statements in flight and leaves the set; without a
    // listener, its 'error' event would crash the process.
    client.on('error', () => this.#retire(connection));
    client.on('end', () => this.#retire(connection));
    connected.then(
      () => {
        connection.ready = true;
      },
      () => this.#retire(connection), // the statements waiting for it fail with the reason
    );
    set.add(connection);
    return connection;
  }

  /** Takes a connection out of use; the statements already sent on it get their answers or their errors. */
  #retire(connection: PipelineConnection): void {
    const idle = this.#idleTransactionConnections.indexOf(connection);
    if (idle !== -1) {
      this.#idleTransactionConnections.splice(idle, 1);
    }
    if (this.#connections.delete(connection) || this.#transactionConnections.delete(connection)) {
      connection.client.end().catch(() => {});
    }
  }
}
