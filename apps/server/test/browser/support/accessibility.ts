import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

// The browser globals the function run in the page uses, declared for this module only: the server's types have no
// DOM library, and adding it would type the server's own code against browser globals.
declare const window: { axe: { run(context: unknown): Promise<{ violations: AxeViolation[] }> } };
declare const document: unknown;

/** Runs axe-core in the page and returns its serious and critical violations. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not apply to: the policy
  // stays in force for the page itself, whereas a context with bypassCSP would test a page without it.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    return (await window.axe.run(document)).violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
    );
}
