import type { AuditEvent } from '@apikeys/client';
import { type ApiKeyRecord, microsToRfc3339 } from '@apikeys/store';
import { describe, expect, it } from 'vitest';
import { metadataText, permissionsText } from '../src/format/api-key.js';
import {
  actorText,
  auditEventHeader,
  auditEventRow,
  changesText,
  NO_EVENTS,
  writeAuditEvents,
} from '../src/format/audit-event.js';
import { JsonListWriter } from '../src/format/json-list.js';
import { keyProgress } from '../src/format/progress.js';
import { storedApiKeyJson } from '../src/format/stored-records.js';
import { fixedTableLine, renderTable } from '../src/format/table.js';
import { displayWidth, printable, shellWords, truncate } from '../src/format/text.js';

describe('text helpers', () => {
  it.each([
    { text: 'plain', width: 5 },
    { text: '\u{1F511}\u{1F511}', width: 4 },
    { text: '日本語', width: 6 },
    { text: 'e\u0301', width: 1 },
    { text: '\u{1F469}\u200d\u{1F4BB}', width: 2 },
  ])('displayWidth($text) is $width columns', ({ text, width }) => {
    expect(displayWidth(text)).toBe(width);
  });

  it('truncate cuts to the width with an ellipsis, never inside a wide character', () => {
    expect(truncate('abcdef', 6)).toBe('abcdef');
    expect(truncate('abcdefg', 6)).toBe('abcde…');
    expect(truncate('日本語のキー', 6)).toBe('日本…');
  });

  it('printable escapes control characters and bidi overrides, and keeps the rest', () => {
    expect(printable('a\nb\tc\u001b[31md\u202eé\u{1F511}')).toBe('a\\nb\\tc\\u001b[31md\\u202eé\u{1F511}');
  });

  it('shellWords quotes only the words a shell would split or expand', () => {
    expect(shellWords(['keys', '--workspace-id', "it's mine", '--after', 'apikey_x'])).toBe(
      "keys --workspace-id 'it'\\''s mine' --after apikey_x",
    );
  });
});

describe('renderTable', () => {
  it('aligns columns by display width, cuts cells past maxWidth and leaves no trailing spaces', () => {
    const lines = renderTable(
      [
        { header: 'NAME', cell: (row: { name: string; n: string }) => row.name, maxWidth: 8 },
        { header: 'N', cell: (row) => row.n },
      ],
      [
        { name: '日本語', n: '1' },
        { name: 'a very long name', n: '22' },
        { name: 'x', n: '' },
      ],
    );

    expect(lines).toEqual(['NAME      N', '日本語    1', 'a very …  22', 'x']);
  });
});

describe('JsonListWriter', () => {
  it.each([0, 1, 3])('writes %i items exactly as JSON.stringify({ data }, null, 2) does', async (count) => {
    const items = Array.from({ length: count }, (_, index) => ({ id: `k${index}`, nested: { n: index, list: [1] } }));
    let out = '';
    const writer = new JsonListWriter(async (text) => {
      out += text;
    });

    for (const item of items) {
      await writer.add(item);
    }
    await writer.end();

    expect(out).toBe(`${JSON.stringify({ data: items }, null, 2)}\n`);
  });
});

describe('keyProgress', () => {
  const stream = (isTTY: boolean) => {
    const written: string[] = [];
    return { isTTY, written, write: (text: string) => written.push(text) };
  };

  it('on a terminal rewrites one line at most every 100 ms, then erases it', () => {
    const tty = stream(true);
    let now = 0;
    const progress = keyProgress(tty, () => now);

    progress.update(1);
    now = 50;
    progress.update(2);
    now = 150;
    progress.update(1200);
    progress.done();

    expect(tty.written).toEqual(['\r\x1b[2Kfetched 1 key…', '\r\x1b[2Kfetched 1200 keys…', '\r\x1b[2K']);
  });

  it('writes nothing when the stream is not a terminal', () => {
    const pipe = stream(false);
    const progress = keyProgress(pipe);

    progress.update(500);
    progress.done();

    expect(pipe.written).toEqual([]);
  });
});

describe('fixedTableLine', () => {
  const columns = [
    { header: 'A', cell: (row: string[]) => row[0] ?? '', width: 4 },
    { header: 'B', cell: (row: string[]) => row[1] ?? '', width: 4, cut: true },
    { header: 'C', cell: (row: string[]) => row[2] ?? '', width: 0 },
  ];

  it('pads each cell to its width, cuts only where told to, and overflows otherwise', () => {
    expect(fixedTableLine(columns, ['A', 'B', 'C'])).toBe('A     B     C');
    expect(fixedTableLine(columns, ['longer', 'longer', 'last cell, never padded'])).toBe(
      'longer  lon…  last cell, never padded',
    );
    expect(fixedTableLine(columns, ['a', 'b', ''])).toBe('a     b');
    expect(fixedTableLine(columns, ['a\nb', '日本', 'x'])).toBe('a\\nb  日本  x');
  });
});

/** An event as the API returns it, with the fields a test does not care about filled in. */
function auditEvent(fields: Partial<AuditEvent>): AuditEvent {
  return {
    id: 'auditevt_066102fd70d6c0Xk9mQ4vRt7LwB3nY',
    type: 'api_key.updated',
    occurred_at: '2026-11-24T10:15:30.123456Z',
    actor: { type: 'admin_key', id: 'adminkey_01HZX3Q8K2M4N6P8R0T2V4W6' },
    target: { type: 'api_key', id: 'apikey_01HZX3Q8K2M4N6P8R0T2V4W6' },
    changes: {},
    related: null,
    key_count: null,
    request_id: null,
    client: null,
    ...fields,
  };
}

describe('audit event cells', () => {
  it('actorText is the admin key ID, or operator:<name>, or operator when the name is unknown', () => {
    expect(actorText({ type: 'admin_key', id: 'adminkey_1' })).toBe('adminkey_1');
    expect(actorText({ type: 'operator', name: 'alice' })).toBe('operator:alice');
    expect(actorText({ type: 'operator', name: null })).toBe('operator');
  });

  it('changesText shows each change as from → to: names quoted, statuses and times bare, null for none', () => {
    const changes = {
      name: { from: 'a', to: 'b "quoted"' },
      status: { from: 'active', to: 'inactive' },
      expires_at: { from: null, to: '2027-01-31T00:00:00.000000Z' },
    } as const;

    expect(changesText(auditEvent({ changes }))).toBe(
      'name: "a" → "b \\"quoted\\""; status: active → inactive; expires_at: null → 2027-01-31T00:00:00.000000Z',
    );
  });

  it('changesText shows permissions and metadata as compact JSON, whole before and after, null for none', () => {
    const created = auditEvent({
      type: 'api_key.created',
      changes: { permissions: { from: null, to: ['documents.read', 'documents.*'] }, metadata: { from: null, to: {} } },
    });
    const updated = auditEvent({
      changes: {
        permissions: { from: ['documents.read', 'documents.*'], to: [] },
        metadata: { from: { owner: 'a' }, to: { owner: 'b', tags: ['x', 'y'] } },
      },
    });

    expect(changesText(created)).toBe('permissions: null → ["documents.read","documents.*"]; metadata: null → {}');
    expect(changesText(updated)).toBe(
      'permissions: ["documents.read","documents.*"] → []; metadata: {"owner":"a"} → {"owner":"b","tags":["x","y"]}',
    );
  });

  it('changesText adds the other key of a rotation and the count of seeded keys', () => {
    const rotated = auditEvent({
      type: 'api_key.rotated',
      changes: { expires_at: { from: null, to: '2026-11-25T10:15:30.000000Z' } },
      related: { type: 'api_key', id: 'apikey_new' },
    });
    const seeded = auditEvent({ type: 'api_key.seeded', key_count: 2000 });

    expect(changesText(rotated)).toBe('expires_at: null → 2026-11-25T10:15:30.000000Z; related: apikey_new');
    expect(changesText(seeded)).toBe('key_count: 2000');
    expect(changesText(auditEvent({}))).toBe('');
  });

  it('a row lines its cells up under the header, whatever the length of the type', () => {
    const header = auditEventHeader();
    const rows = [
      auditEventRow(auditEvent({ changes: { status: { from: 'active', to: 'inactive' } } })),
      auditEventRow(auditEvent({ type: 'organization.created', actor: { type: 'operator', name: 'alice' } })),
    ];

    for (const name of ['TYPE', 'ACTOR', 'TARGET']) {
      const start = header.indexOf(name);
      for (const row of rows) {
        expect(row[start - 1]).toBe(' ');
        expect(row[start]).not.toBe(' ');
      }
    }
    expect(rows[0]?.slice(header.indexOf('CHANGES'))).toBe('status: active → inactive');
  });
});

describe('writeAuditEvents', () => {
  const events = [auditEvent({ id: 'auditevt_1' }), auditEvent({ id: 'auditevt_2' }), auditEvent({ id: 'auditevt_3' })];

  /** Yields the events one at a time, noting in `log` when each is taken, so that writes can be placed among them. */
  async function* source(log: string[]) {
    for (const event of events) {
      log.push(`took ${event.id}`);
      yield event;
    }
  }

  it('writes each JSON line as its event arrives, before the next one is taken', async () => {
    const log: string[] = [];

    await writeAuditEvents(source(log), { json: true }, async (text) => {
      log.push(`wrote ${(JSON.parse(text) as AuditEvent).id}`);
      expect(text.endsWith('\n')).toBe(true);
      expect(text.indexOf('\n')).toBe(text.length - 1);
    });

    expect(log).toEqual(events.flatMap((event) => [`took ${event.id}`, `wrote ${event.id}`]));
  });

  it('writes the table header with the first row, and the rows one by one', async () => {
    const written: string[] = [];

    await writeAuditEvents(events, { json: false }, async (text) => {
      written.push(text);
    });

    expect(written).toEqual([
      `${auditEventHeader()}\n${auditEventRow(events[0] as AuditEvent)}\n`,
      `${auditEventRow(events[1] as AuditEvent)}\n`,
      `${auditEventRow(events[2] as AuditEvent)}\n`,
    ]);
  });

  it.each([
    { json: false, output: `${NO_EVENTS}\n` },
    { json: true, output: '' },
  ])('writes $output for no event (json: $json)', async ({ json, output }) => {
    let out = '';

    await writeAuditEvents([], { json }, async (text) => {
      out += text;
    });

    expect(out).toBe(output);
  });
});

describe('the JSON of stored records (operator commands)', () => {
  const key: ApiKeyRecord = {
    id: 'apikey_000000000000000000000001',
    name: 'Production backend',
    workspaceId: null,
    createdAt: 1_730_332_707_427_722,
    createdBy: { id: 'user_alice', type: 'user' },
    partialKeyHint: 'sk-api-abcd...wxyz',
    status: 'active',
    expiresAt: null,
    principal: null,
    scope: 'workspace',
  };

  it("prints an API key in the first API version's shape, its creation time in microseconds", () => {
    expect(storedApiKeyJson(key)).toEqual({
      id: key.id,
      type: 'api_key',
      name: 'Production backend',
      workspace_id: null,
      created_at: '2024-10-30T23:58:27.427722Z',
      created_by: { id: 'user_alice', type: 'user' },
      partial_key_hint: 'sk-api-abcd...wxyz',
      status: 'active',
    });
  });

  it('prints an expired key as inactive, since that version has no expiry', () => {
    const expiresAt = key.createdAt + 1;

    expect(storedApiKeyJson({ ...key, expiresAt }, expiresAt).status).toBe('inactive');
  });

  it.each([
    [0, '1970-01-01T00:00:00.000000Z'],
    [1_000_000, '1970-01-01T00:00:01.000000Z'],
    [1_730_332_707_000_005, '2024-10-30T23:58:27.000005Z'],
  ])('formats %i microseconds as %s', (micros, text) => {
    expect(microsToRfc3339(micros)).toBe(text);
  });
});

describe('permissions and metadata of a key', () => {
  it('permissionsText joins the names with commas, in their order, and shows none as (none)', () => {
    expect(permissionsText(['documents.read', 'documents.*', '*'])).toBe('documents.read, documents.*, *');
    expect(permissionsText(['none'])).toBe('none');
    expect(permissionsText([])).toBe('(none)');
  });

  it('metadataText is compact JSON, and (none) for the empty object', () => {
    expect(metadataText({ owner: 'team-billing', limits: { rps: 10 }, tags: [] })).toBe(
      '{"owner":"team-billing","limits":{"rps":10},"tags":[]}',
    );
    expect(metadataText({})).toBe('(none)');
  });
});
