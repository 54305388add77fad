import { type EpochMicros, nowMicros } from '@apikeys/store';

/**
 * What tells the server the time, in microseconds since the epoch. `compose` owns the one clock and passes it down:
 * no layer below reads the time of day on its own.
 */
export type Clock = () => EpochMicros;

/** The wall clock, with microseconds that keep increasing within a millisecond (`nowMicros`). */
export const systemClock: Clock = nowMicros;
