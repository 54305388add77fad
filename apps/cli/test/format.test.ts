import { describe, expect, it } from 'vitest';
import { JsonListWriter } from '../src/format/json-list.js';
import { keyProgress } from '../src/format/progress.js';
import { renderTable } from '../src/format/table.js';
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
