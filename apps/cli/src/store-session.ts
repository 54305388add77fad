import { userInfo } from 'node:os';
import {
  type ChangeContext,
  DEFAULT_ORGANIZATION,
  openMigratedStore,
  parseDatabaseUrl,
  type Store,
} from '@apikeys/store';
import { UsageError } from './errors.js';

/**
 * The operating-system user running the CLI, recorded as the operator of its changes; null when it cannot be told
 * (`userInfo` throws for a user with no entry in the password database, as in some containers).
 */
export function operatorName(readUser: () => { username: string } = () => userInfo()): string | null {
  try {
    return readUser().username || null;
  } catch {
    return null;
  }
}

/** The context of every change an operator command makes on the database: the operator, by OS user name. */
export function operatorChanges(): ChangeContext {
  return { actor: { type: 'operator', name: operatorName() } };
}

/**
 * Opens the store named by DATABASE_URL (as the server does), brings its schema up to date, runs `work` with the
 * names of the migrations this run applied, and closes the store.
 */
export async function withStore<T>(work: (store: Store, applied: string[]) => Promise<T>): Promise<T> {
  let location: ReturnType<typeof parseDatabaseUrl>;
  try {
    location = parseDatabaseUrl(process.env.DATABASE_URL);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { store, applied } = await openMigratedStore(location);
  try {
    return await work(store, applied);
  } finally {
    await store.close();
  }
}

/** The organization a command acts on: `--org`, or the default organization. It must exist. */
export async function resolveOrganization(store: Store, org: string | undefined): Promise<string> {
  const id = org ?? DEFAULT_ORGANIZATION.id;
  if (!(await store.getOrganization(id))) {
    throw new UsageError(`organization ${id} does not exist (see: apikeys orgs list)`);
  }
  return id;
}
