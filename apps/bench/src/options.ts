import { parseArgs } from 'node:util';

/** The bench's `--help`. */
export const USAGE = `pnpm bench [options]   (pnpm bench:quick = pnpm bench --quick)

Seeds SQLite and PostgreSQL with keys and as many audit events, starts the real server (one process, and two
replicas on PostgreSQL) and three references (bare node:http, bare Express, Express with express-openapi-validator)
as child processes, and drives each with autocannon from another process. Then the gateway scenario: an Express
gateway protected by the README's requireApiKey in three forms (cached, plain, floor) in front of a key server
(targets gateway-sqlite-<keys>, gateway-postgres-<keys>). Prints a table; writes apps/bench/results/*.json.

  --quick                 10k and 100k keys, 2 s per scenario, a subset of scenarios (about three minutes)
  --duration <s>          seconds measured per scenario (full: 10, quick: 2)
  --warmup <s>            unmeasured seconds of the same load before each scenario (full: 4, quick: 1); longer
                          until every connection has had a response
  --first-warmup <s>      the same before each server's first scenario, while V8 optimizes its code (full: 8, quick: 4)
  --connections <n>       autocannon connections (50)
  --rounds <n>            run every scenario on every target n times in turn (1); every figure the targets judge
                          (each side of a ratio, a p99, a rate) is the mean of its runs
  --sizes <a,b>           the smaller and the larger number of keys (full: 10000,1000000; quick: 10000,100000)
  --only <text>           run only target/scenario names containing <text> (repeatable), e.g. sqlite-1m/list-20,
                          or gateway (a gateway target always runs its three forms: gateway-sqlite-10k/cached);
                          the references' scenarios compared with always run, and so does a variant's base
                          (sqlite-1m/update for sqlite-1m+no-audit/update)
  --skip-postgres         leave out the PostgreSQL targets
  --postgres-url <url>    PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres); the suite creates
                          and drops the databases apikeys_bench_<keys> on it
  --profile <t/s>         run one scenario (e.g. sqlite-1m/list-20, or a reference's: express-validator/list-20)
                          with its server under node --cpu-prof; the profile goes to apps/bench/profiles/ and a
                          summary is printed
  --base <commit>         also run the server of <commit> (built in a clean checkout under the OS temp dir, reused
                          once built), on databases seeded by its own code, as a counterpart of each one-process
                          target (sqlite-1m@<commit>) run between two runs of the current one; prints each
                          scenario's CPU per request and req/s as current ÷ base with the spread over the rounds
                          (use --rounds 3 or more); not with --profile
  -h, --help`;

/** The bench's options, parsed from its command line (`args`, without Node and the script); throws on a bad value. */
export function parseOptions(args: readonly string[]) {
  const { values } = parseArgs({
    args: [...args],
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      'first-warmup': { type: 'string' },
      connections: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '1' },
      sizes: { type: 'string' },
      only: { type: 'string', multiple: true, default: [] },
      'skip-postgres': { type: 'boolean', default: false },
      'postgres-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      profile: { type: 'string' },
      base: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const number = (name: string, text: string | undefined, fallback: number) => {
    const value = text === undefined ? fallback : Number(text);
    if (!Number.isFinite(value) || value < 0) {
      throw new Error(`--${name} must be a non-negative number (got ${JSON.stringify(text)})`);
    }
    return value;
  };
  const rounds = number('rounds', values.rounds, 1);
  if (!Number.isInteger(rounds) || rounds < 1) {
    throw new Error(`--rounds must be a whole number ≥ 1 (got ${JSON.stringify(values.rounds)})`);
  }
  const sizes = (values.sizes ?? (values.quick ? '10000,100000' : '10000,1000000')).split(',').map(Number);
  if (sizes.length !== 2 || sizes.some((size) => !Number.isInteger(size) || size < 1000)) {
    throw new Error(`--sizes must be two whole numbers ≥ 1000, e.g. 10000,1000000 (got ${values.sizes})`);
  }
  if (values.base !== undefined && values.profile !== undefined) {
    throw new Error('--base and --profile do not go together: profile one scenario of one build at a time');
  }
  if (values.base?.trim() === '') {
    throw new Error('--base needs a commit, e.g. --base 9845cbd or --base main');
  }
  return {
    help: values.help,
    quick: values.quick,
    durationSeconds: number('duration', values.duration, values.quick ? 2 : 10),
    warmupSeconds: number('warmup', values.warmup, values.quick ? 1 : 4),
    firstWarmupSeconds: number('first-warmup', values['first-warmup'], values.quick ? 4 : 8),
    connections: number('connections', values.connections, 50),
    rounds,
    sizes: sizes as [number, number],
    only: values.profile ? [values.profile] : values.only,
    skipPostgres: values['skip-postgres'],
    postgresUrl: values['postgres-url'],
    profile: values.profile,
    base: values.base,
  };
}

/** What the bench was asked to do. */
export type BenchOptions = ReturnType<typeof parseOptions>;
