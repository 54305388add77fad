import type { Command } from 'commander';
import { NAME_LENGTH, parseName } from '../arguments.js';
import { organizationJson } from '../format/stored-records.js';
import { printJson } from '../output.js';
import { operatorChanges, withStore } from '../store-session.js';

/** `apikeys orgs create|list`: the organizations (tenants). */
export function registerOrgs(program: Command): void {
  const orgs = program.command('orgs').description('manage organizations');

  orgs
    .command('create')
    .description('create an organization')
    .requiredOption('--name <name>', `organization name (${NAME_LENGTH})`, parseName)
    .action((options: { name: string }) =>
      withStore(async (store) =>
        printJson(organizationJson(await store.createOrganization(options.name, operatorChanges()))),
      ),
    );

  orgs
    .command('list')
    .description('list every organization, oldest first')
    .action(() =>
      withStore(async (store) => printJson({ data: (await store.listOrganizations()).map(organizationJson) })),
    );
}
