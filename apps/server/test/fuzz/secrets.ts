/**
 * The secrets no response and no log line may hold: the fixture's, and every secret a create or a rotation issued
 * during the run (shown once, in its own response). A text is searched for any 16 consecutive characters of a
 * secret's random part, in time linear in the text whatever the number of secrets.
 */

/** How many consecutive characters of a secret's random part count as a leak. */
const WINDOW = 16;
const RUN = new RegExp(`[A-Za-z0-9]{${WINDOW},}`, 'g');

/** A leak found: the name of the secret, as a report may show it. */
export interface Leak {
  shown: string;
}

/** Every secret known to the run, each with the name a report shows instead of it. */
export class SecretRegistry {
  /** Each window of each secret's random part, to the name of the secret. */
  readonly #windows = new Map<string, string>();
  readonly #names: { value: string; shown: string }[] = [];

  /** Adds a secret (`sk-xxx-` and its random part) under the name a report shows for it. */
  add(value: string, shown: string): void {
    const random = value.replace(/^sk-[a-z]+-/, '');
    if (random.length < WINDOW) {
      throw new Error(`${shown} is too short to be a secret`);
    }
    for (let at = 0; at + WINDOW <= random.length; at += 1) {
      this.#windows.set(random.slice(at, at + WINDOW), shown);
    }
    this.#names.push({ value, shown });
  }

  /** The first secret `text` holds any 16 consecutive characters of, if any. */
  find(text: string): Leak | undefined {
    for (const [run] of text.matchAll(RUN)) {
      for (let at = 0; at + WINDOW <= run.length; at += 1) {
        const shown = this.#windows.get(run.slice(at, at + WINDOW));
        if (shown !== undefined) {
          return { shown };
        }
      }
    }
    return undefined;
  }

  /** The text with every known secret replaced by its name, so that a report can be shared. */
  redact(text: string): string {
    let out = text;
    for (const { value, shown } of this.#names) {
      out = out.replaceAll(value, shown).replaceAll(value.replace(/^sk-[a-z]+-/, ''), `<random part of ${shown}>`);
    }
    return out;
  }
}
