import { CONFIG_VARIABLES, type ConfigVariable, configDefaults } from './config.js';

/** The markers docs/operations.md holds its generated configuration table between. */
export const CONFIG_TABLE_START =
  '<!-- generated from apps/server/src/config.ts by `pnpm --filter @apikeys/server docs:config`: do not edit -->';
export const CONFIG_TABLE_END = '<!-- end of the generated configuration table -->';

export const CONFIG_TABLE_HEADER = ['Variable', 'Default', 'Accepts', 'Meaning'] as const;

/** Plain text in a table cell: Markdown would read `<path>` as a tag and `|` as the end of the cell. */
const escapeText = (text: string) => text.replace(/[<>|]/g, (character) => `\\${character}`);

/** The table's rows, one per variable of config.ts, in its order: the cells as the Markdown writes them. */
export function configTableRows(): string[][] {
  const defaults = configDefaults();
  return Object.entries(CONFIG_VARIABLES).map(([name, doc]) => {
    const value = defaults[name as ConfigVariable];
    const unset = value === undefined ? doc.unset : `\`${String(value)}\``;
    if (unset === undefined) {
      throw new Error(`config.ts: ${name} has no default value, so its doc needs \`unset\``);
    }
    return [`\`${name}\``, unset, escapeText(doc.accepts), doc.meaning];
  });
}

/** The table in Markdown, its columns padded as the formatter (Biome) pads them. */
export function renderConfigTable(): string {
  const rows = [[...CONFIG_TABLE_HEADER], ...configTableRows()];
  const widths = CONFIG_TABLE_HEADER.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header ?? []), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}

/** `document` with the text between the markers replaced by the table; throws when the markers are missing. */
export function withConfigTable(document: string): string {
  const start = document.indexOf(CONFIG_TABLE_START);
  const end = document.indexOf(CONFIG_TABLE_END);
  if (start === -1 || end < start) {
    throw new Error(`the document has no "${CONFIG_TABLE_START}" … "${CONFIG_TABLE_END}" markers`);
  }
  const before = document.slice(0, start + CONFIG_TABLE_START.length);
  return `${before}\n\n${renderConfigTable()}\n\n${document.slice(end)}`;
}
