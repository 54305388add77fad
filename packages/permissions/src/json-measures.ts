/** The number of bytes `text` takes as UTF-8, counted without encoding it (no Buffer: this runs in browsers). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      bytes += 1;
    } else if (code < 0x800) {
      bytes += 2;
    } else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else {
      bytes += 3;
    }
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * How deep the JSON text `json` nests: an object or array at the top is level 1, and each one within adds one.
 * It scans the text rather than walking the value, so no input can exhaust the stack.
 */
export function jsonDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) {
        i++;
      } else if (code === 0x22) {
        inString = false;
      }
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b || code === 0x5b) {
      depth++;
      deepest = Math.max(deepest, depth);
    } else if (code === 0x7d || code === 0x5d) {
      depth--;
    }
  }
  return deepest;
}
