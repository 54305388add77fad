import Database from 'better-sqlite3';
import pg from 'pg';
import { openStore } from '../src/open-store.js';
import { seedApiKeys } from '../src/seeding/index.js';
import { DEFAULT_ORGANIZATION } from '../src/organizations.js';

const engine = process.argv[2] ?? 'sqlite';
const count = Number(process.argv[3] ?? 100000);
const path = `/tmp/permplan-${count}.sqlite`;
const url = `postgres://postgres@127.0.0.1:5432/permplan_${count}`;
let lastSql = '';
let lastParams: unknown[] = [];
const location = engine === 'sqlite' ? { kind: 'sqlite' as const, path } : { kind: 'postgres' as const, url };
if (engine === 'postgres') {
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  const exists = await admin.query('select 1 from pg_database where datname = $1', [`permplan_${count}`]);
  if (exists.rowCount === 0) await admin.query(`create database permplan_${count}`);
  await admin.end();
}
const opened = await openStore(location, {
  onQuery: (sql: string, parameters: readonly unknown[]) => {
    lastSql = sql;
    lastParams = [...parameters];
  },
} as never);
await opened.migrator.migrateToLatest();
const { store } = opened;
const org = DEFAULT_ORGANIZATION.id;
const existing = await store.listApiKeys({ organizationId: org, limit: 1 });
if (existing.kind === 'page' && existing.keys.length === 0) {
  const t = Date.now();
  await seedApiKeys(store, { organizationId: org, count, workspaces: 10, users: 50, seed: 1, lifecycle: true });
  console.log('seeded in', Date.now() - t, 'ms');
}
for (const permission of ['documents.read', 'billing.write', 'nothing.here']) {
  await store.listApiKeys({ organizationId: org, limit: 20, filters: { permission } });
  const t = performance.now();
  let n = 0;
  for (let i = 0; i < 20; i++) {
    const r = await store.listApiKeys({ organizationId: org, limit: 20, filters: { permission } });
    n = r.kind === 'page' ? r.keys.length : -1;
  }
  console.log(permission, ((performance.now() - t) / 20).toFixed(2), 'ms/page', n, 'keys');
}
console.log(lastSql);
if (engine === 'sqlite') {
  await store.close();
  const db = new Database(path, { readonly: true });
  console.log(db.prepare(`explain query plan ${lastSql}`).all(...(lastParams as never[])).map((r: any) => r.detail).join('\n'));
} else {
  await store.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const r = await c.query(`explain analyze ${lastSql}`, lastParams as never[]);
  console.log(r.rows.map((x: any) => x['QUERY PLAN']).join('\n'));
  await c.end();
}
