import type { AdminKeyRecord } from '@apikeys/store';
import type { Command } from 'commander';
import { NAME_LENGTH, parseId, parseName } from '../arguments.js';
import { UsageError } from '../errors.js';
import { printJson } from '../output.js';
import { operatorChanges, resolveOrganization, withStore } from '../store-session.js';

/** An admin key as the CLI prints it: snake_case, like the API's JSON. */
function describe(adminKey: AdminKeyRecord) {
  return {
    id: adminKey.id,
    organization_id: adminKey.organizationId,
    name: adminKey.name,
    partial_key_hint: adminKey.partialKeyHint,
    status: adminKey.status,
  };
}

/** `apikeys admin-keys create|disable|enable`: the keys that authenticate calls to the admin API. */
export function registerAdminKeys(program: Command): void {
  const adminKeys = program.command('admin-keys').description('manage admin keys (they authenticate the admin API)');

  adminKeys
    .command('create')
    .description('create an admin key; its secret is printed this once and cannot be shown again')
    .requiredOption('--name <name>', `admin key name (${NAME_LENGTH})`, parseName)
    .option('--org <org_id>', 'organization (default: the default organization)', parseId)
    .action((options: { name: string; org?: string }) =>
      withStore(async (store) => {
        const organizationId = await resolveOrganization(store, options.org);
        const { adminKey, secret } = await store.createAdminKey(
          { organizationId, name: options.name },
          operatorChanges(),
        );
        printJson({ ...describe(adminKey), key: secret });
      }),
    );

  for (const [command, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    adminKeys
      .command(`${command} <admin_key_id>`)
      .description(`${command} an admin key`)
      .action((id: string) =>
        withStore(async (store) => {
          const adminKey = await store.setAdminKeyStatus(id, status, operatorChanges());
          if (!adminKey) {
            throw new UsageError(`admin key ${id} does not exist`);
          }
          printJson(describe(adminKey));
        }),
      );
  }
}
