import type { AdminKeyRecord, ChangeContext, Store, VerifierKeyRecord } from '@apikeys/store';
import type { Command } from 'commander';
import { NAME_LENGTH, parseId, parseName } from '../arguments.js';
import { UsageError } from '../errors.js';
import { credentialKeyJson } from '../format/stored-records.js';
import { printJson } from '../output.js';
import { operatorChanges, resolveOrganization, withStore } from '../store-session.js';

/** An admin key or a verifier key: the keys that authenticate calls to the API. */
type CredentialKey = AdminKeyRecord | VerifierKeyRecord;

/** What differs between the commands of admin keys and of verifier keys. */
interface CredentialKeyCommands {
  command: string;
  /** What the keys are, in the command's description. */
  description: string;
  /** The key's name in messages: `admin key`. */
  noun: string;
  create(
    store: Store,
    input: { organizationId: string; name: string },
    changes: ChangeContext,
  ): Promise<{
    key: CredentialKey;
    secret: string;
  }>;
  setStatus(
    store: Store,
    id: string,
    status: 'active' | 'disabled',
    changes: ChangeContext,
  ): Promise<CredentialKey | undefined>;
}

/** `apikeys <command> create|disable|enable` for one kind of credential key. */
function registerCredentialKeys(program: Command, kind: CredentialKeyCommands): void {
  const group = program.command(kind.command).description(kind.description);

  group
    .command('create')
    .description(`create ${article(kind.noun)}; its secret is printed this once and cannot be shown again`)
    .requiredOption('--name <name>', `${kind.noun} name (${NAME_LENGTH})`, parseName)
    .option('--org <org_id>', 'organization (default: the default organization)', parseId)
    .action((options: { name: string; org?: string }) =>
      withStore(async (store) => {
        const organizationId = await resolveOrganization(store, options.org);
        const { key, secret } = await kind.create(store, { organizationId, name: options.name }, operatorChanges());
        printJson({ ...credentialKeyJson(key), key: secret });
      }),
    );

  for (const [command, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    group
      .command(`${command} <${kind.noun.replace(' ', '_')}_id>`)
      .description(`${command} ${article(kind.noun)}`)
      .action((id: string) =>
        withStore(async (store) => {
          const key = await kind.setStatus(store, id, status, operatorChanges());
          if (!key) {
            throw new UsageError(`${kind.noun} ${id} does not exist`);
          }
          printJson(credentialKeyJson(key));
        }),
      );
  }
}

const article = (noun: string) => `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;

/** `apikeys admin-keys create|disable|enable`: the keys that authenticate calls to the admin API. */
export function registerAdminKeys(program: Command): void {
  registerCredentialKeys(program, {
    command: 'admin-keys',
    description: 'manage admin keys (they authenticate the admin API)',
    noun: 'admin key',
    create: async (store, input, changes) => {
      const { adminKey, secret } = await store.createAdminKey(input, changes);
      return { key: adminKey, secret };
    },
    setStatus: (store, id, status, changes) => store.setAdminKeyStatus(id, status, changes),
  });
}

/** `apikeys verifier-keys create|disable|enable`: keys that may only verify API keys (for gateways). */
export function registerVerifierKeys(program: Command): void {
  registerCredentialKeys(program, {
    command: 'verifier-keys',
    description: 'manage verifier keys (for gateways: they may only verify API keys and follow their changes)',
    noun: 'verifier key',
    create: async (store, input) => {
      const { verifierKey, secret } = await store.createVerifierKey(input);
      return { key: verifierKey, secret };
    },
    setStatus: (store, id, status) => store.setVerifierKeyStatus(id, status),
  });
}
