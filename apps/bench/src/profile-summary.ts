import { readFileSync } from 'node:fs';

/** The parts of a V8 `.cpuprofile` this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Where a frame's code lives: a package under node_modules, the repository's own sources, Node's internals, or
 * one of V8's pseudo-frames such as `(garbage collector)`.
 */
export function categoryOf(url: string, functionName: string): string {
  if (url === '') {
    // Native functions, and code generated at run time (ajv's compiled validators), have no URL.
    return functionName.startsWith('(') ? functionName : '(native or generated)';
  }
  if (url.startsWith('node:')) {
    return 'node:internals';
  }
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pnpm?.[1]) {
    return pnpm[1];
  }
  const plain = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (plain?.[1]) {
    return plain[1];
  }
  // Sources when run with tsx; the bundle (dist/) holds the server's own code and every @apikeys package.
  const own = /\/(apps|packages)\/([^/]+)\/(src|dist)\//.exec(url);
  return own ? `${own[1]}/${own[2]} (own code)` : url;
}

/** A frame's source file: relative to node_modules or to the repository, or Node's internal module name. */
export function fileOf(url: string, functionName: string): string {
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/(.+)$/.exec(url);
  if (pnpm?.[1]) {
    return pnpm[1];
  }
  const own = /\/((?:apps|packages)\/[^/]+\/(?:src|dist)\/.+)$/.exec(url);
  if (own?.[1]) {
    return own[1];
  }
  return url.startsWith('node:') ? url : categoryOf(url, functionName);
}

const ms = (micros: number) => `${(micros / 1000).toFixed(0).padStart(7)} ms`;
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1).padStart(5)} %`;

/**
 * Summarises a CPU profile: the busiest functions by self time, the self time of each package, and the time under
 * (inclusive: anywhere on the stack) each source file. Idle time is left out of the percentages. The server's own
 * code is one bundle (apps/server/dist/main.js), so its functions are best found by name.
 */
export function summarizeProfile(path: string, top = 30): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) {
      parent.set(child, node.id);
    }
  }
  const selfByFunction = new Map<string, number>();
  const selfByCategory = new Map<string, number>();
  const totalByFile = new Map<string, number>();
  let busy = 0;
  const add = (map: Map<string, number>, key: string, value: number) => map.set(key, (map.get(key) ?? 0) + value);

  profile.samples.forEach((sample, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const node = byId.get(sample);
    if (!node || node.callFrame.functionName === '(idle)') {
      return;
    }
    busy += delta;
    const { functionName, url, lineNumber } = node.callFrame;
    const category = categoryOf(url, functionName);
    add(selfByFunction, `${functionName || '(anonymous)'}  ${category}${url ? `:${lineNumber + 1}` : ''}`, delta);
    add(selfByCategory, category, delta);
    const seen = new Set<string>();
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (frame && frame.functionName !== '(root)') {
        seen.add(fileOf(frame.url, frame.functionName));
      }
    }
    for (const file of seen) {
      add(totalByFile, file, delta);
    }
  });

  const sorted = (map: Map<string, number>, n: number) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  const lines = [`busy (non-idle) time: ${ms(busy).trim()}`, '', `top ${top} functions by self time:`];
  for (const [name, micros] of sorted(selfByFunction, top)) {
    lines.push(`  ${ms(micros)} ${pct(micros, busy)}  ${name}`);
  }
  lines.push('', 'self time by package:');
  for (const [name, micros] of sorted(selfByCategory, 25)) {
    lines.push(`  ${ms(micros)} ${pct(micros, busy)}  ${name}`);
  }
  lines.push(
    '',
    'inclusive time by file (the file anywhere on the stack; middleware that calls next() includes what follows):',
  );
  for (const [name, micros] of sorted(totalByFile, 40)) {
    lines.push(`  ${ms(micros)} ${pct(micros, busy)}  ${name}`);
  }
  return lines.join('\n');
}
