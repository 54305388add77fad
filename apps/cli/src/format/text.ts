/**
 * Control characters, bidirectional overrides and line separators: names may hold any character but NUL, and these
 * would move the cursor, recolour the terminal or reorder the line when printed as they are.
 */
const UNSAFE = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` safe to print on a terminal: every unsafe character is shown as an escape (`\n`, `\u001b`). */
export function printable(text: string): string {
  return text.replace(
    UNSAFE,
    (char) => ESCAPES[char] ?? `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;
const EMOJI = /\p{Emoji_Presentation}|\ufe0f/u;

/** East Asian wide and fullwidth blocks (CJK, Hangul, kana, fullwidth forms): two columns on a terminal. */
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x20000, 0x3fffd],
];

function graphemeWidth(grapheme: string): number {
  if (ZERO_WIDTH.test(grapheme)) {
    return 0;
  }
  if (EMOJI.test(grapheme)) {
    return 2;
  }
  const code = grapheme.codePointAt(0) ?? 0;
  return WIDE_RANGES.some(([from, to]) => code >= from && code <= to) ? 2 : 1;
}

/** The columns `text` takes on a terminal, per user-perceived character: 2 for emoji and CJK, 0 for marks. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    width += graphemeWidth(segment);
  }
  return width;
}

/** `text` cut to at most `maxWidth` columns, ending with `…` when it was cut; never splits a character. */
export function truncate(text: string, maxWidth: number): string {
  if (displayWidth(text) <= maxWidth) {
    return text;
  }
  let kept = '';
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const next = graphemeWidth(segment);
    if (width + next > maxWidth - 1) {
      break;
    }
    kept += segment;
    width += next;
  }
  return `${kept}…`;
}

/** `text` padded with spaces on the right to `width` columns. */
export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

/** Words joined into a command line that a POSIX shell splits back into the same words. */
export function shellWords(words: readonly string[]): string {
  return words.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)).join(' ');
}
