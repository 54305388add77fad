import type { StoreCore } from './store-core.js';

/**
 * The calls of an aggregate's interface `S` as functions of the core they run on: `updateApiKey(core, ...)` for
 * `S['updateApiKey']`. An aggregate's module exports them, and `onCore` makes them the interface of one core.
 */
export type CoreCalls<S> = {
  [Call in keyof S]: S[Call] extends (...args: infer Args) => infer Result
    ? (core: StoreCore, ...args: Args) => Result
    : never;
};

/** The aggregate's interface whose calls run `calls` on `core`. */
export function onCore<S>(core: StoreCore, calls: CoreCalls<S>): S {
  return Object.fromEntries(
    Object.entries(calls).map(([name, call]) => [
      name,
      (...args: unknown[]) => (call as (core: StoreCore, ...args: unknown[]) => unknown)(core, ...args),
    ]),
  ) as S;
}
