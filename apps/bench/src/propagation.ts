import { LATEST_API_VERSION } from '@apikeys/api-types';

/** How long a change took to reach another replica's verification, over repeated trials. */
export interface PropagationResult {
  target: string;
  /** Milliseconds from the end of each deactivation through the first replica to the second's first `INACTIVE`. */
  delaysMs: number[];
  /** Trials whose change had not reached the second replica after `LIMIT_MS` (counted at the limit). */
  timedOut: number;
}

/** Trials per run: each creates a key, verifies it on the second replica, deactivates it on the first. */
export const PROPAGATION_TRIALS = 50;
const LIMIT_MS = 5_000;

/**
 * Measures how long a deactivation through one replica takes to show in another's verification: the second replica
 * holds the key in its cache (verified once before), so only the change's notification can make it answer
 * `INACTIVE` before the cache's time to live.
 */
export async function measurePropagation(
  target: string,
  [writer, reader]: readonly { baseUrl: string }[],
  headers: Record<string, string>,
): Promise<PropagationResult> {
  if (!writer || !reader) {
    throw new Error(`${target}: propagation needs two replicas`);
  }
  const send = async (baseUrl: string, path: string, body: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { ...headers, 'vendor-version': LATEST_API_VERSION, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      throw new Error(`${target}: POST ${path} answered ${response.status}: ${await response.text()}`);
    }
    return (await response.json()) as Record<string, unknown>;
  };
  const codeOnReader = async (secret: string) => (await send(reader.baseUrl, '/v1/keys/verify', { key: secret })).code;
  const delaysMs: number[] = [];
  let timedOut = 0;
  for (let trial = 0; trial < PROPAGATION_TRIALS; trial++) {
    const { id, key } = (await send(writer.baseUrl, '/v1/organizations/api_keys', {
      name: `propagation ${trial}`,
    })) as {
      id: string;
      key: string;
    };
    if ((await codeOnReader(key)) !== 'VALID') {
      throw new Error(`${target}: a new key does not verify as VALID on the second replica`);
    }
    await send(writer.baseUrl, `/v1/organizations/api_keys/${id}`, { status: 'inactive' });
    const changed = performance.now();
    let delay = 0;
    while ((await codeOnReader(key)) !== 'INACTIVE') {
      delay = performance.now() - changed;
      if (delay > LIMIT_MS) {
        timedOut += 1;
        break;
      }
    }
    delaysMs.push(Math.min(performance.now() - changed, LIMIT_MS));
  }
  return { target, delaysMs: delaysMs.sort((a, b) => a - b), timedOut };
}

/** The median and the maximum of a run's delays. */
export function propagationSummary({ delaysMs }: PropagationResult): { medianMs: number; maxMs: number } {
  return { medianMs: delaysMs[Math.floor(delaysMs.length / 2)] ?? Number.NaN, maxMs: delaysMs.at(-1) ?? Number.NaN };
}
