/** How much output is gathered before it is written. */
const CHUNK_CHARS = 64 * 1024;

function indent(json: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return json
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}

/**
 * Writes `{"data": [...]}` one item at a time, byte for byte as `JSON.stringify({ data }, null, 2)` would, so a list
 * of any length is printed without being held in memory (or in one string, which V8 caps at about 512 MiB).
 */
export class JsonListWriter {
  readonly #write: (text: string) => Promise<void>;
  #pending = '';
  #count = 0;

  constructor(write: (text: string) => Promise<void>) {
    this.#write = write;
  }

  /** Appends one item. */
  async add(item: unknown): Promise<void> {
    this.#pending += `${this.#count === 0 ? '{\n  "data": [\n' : ',\n'}${indent(JSON.stringify(item, null, 2), 4)}`;
    this.#count += 1;
    if (this.#pending.length >= CHUNK_CHARS) {
      await this.#flush();
    }
  }

  /** Closes the list and the document. */
  async end(): Promise<void> {
    this.#pending += this.#count === 0 ? '{\n  "data": []\n}\n' : '\n  ]\n}\n';
    await this.#flush();
  }

  async #flush(): Promise<void> {
    const text = this.#pending;
    this.#pending = '';
    await this.#write(text);
  }
}
