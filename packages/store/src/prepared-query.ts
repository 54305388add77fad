import type { Compilable } from 'kysely';

// Stands for a value in a query built once: a string no caller's value can equal, as it starts with a NUL (the
// API refuses NUL in every string input).
const SLOT_MARK = '\u0000apikeys-slot:';

type Slot<Name extends string> = { name: Name } | { constant: unknown };

/**
 * Puts a named value in a query being prepared. It is typed `never` so that it fits wherever the query builder
 * expects a value; the value itself is given at each run.
 */
export type SlotFunction<Name extends string> = (name: Name) => never;

/**
 * A Kysely query built and compiled once and run many times with new values. Building and compiling a query
 * costs tens of microseconds, as much as running one of the store's indexed reads; the hot reads (authentication,
 * retrieve, list) come in a few shapes, so each shape is compiled on first use and its SQL reused.
 */
export class PreparedQuery<Name extends string> {
  readonly sql: string;
  readonly #slots: readonly Slot<Name>[];

  constructor(build: (slot: SlotFunction<Name>) => Compilable) {
    const slot = (name: Name) => `${SLOT_MARK}${name}` as never;
    const compiled = build(slot).compile();
    this.sql = compiled.sql;
    this.#slots = compiled.parameters.map((parameter) =>
      typeof parameter === 'string' && parameter.startsWith(SLOT_MARK)
        ? { name: parameter.slice(SLOT_MARK.length) as Name }
        : { constant: parameter },
    );
  }

  /** The parameters in the order the SQL takes them. */
  parameters(values: Readonly<Record<Name, unknown>>): unknown[] {
    return this.#slots.map((slot) => ('name' in slot ? values[slot.name] : slot.constant));
  }
}

/** Prepared queries by shape: each is built and compiled the first time its shape is asked for. */
export class PreparedQueryCache {
  readonly #queries = new Map<string, PreparedQuery<string>>();

  /** The query of this shape; `build` runs only the first time, and must build the same query for the same shape. */
  get<Name extends string>(shape: string, build: (slot: SlotFunction<Name>) => Compilable): PreparedQuery<Name> {
    let query = this.#queries.get(shape);
    if (!query) {
      query = new PreparedQuery<Name>(build) as PreparedQuery<string>;
      this.#queries.set(shape, query);
    }
    return query as PreparedQuery<Name>;
  }
}
