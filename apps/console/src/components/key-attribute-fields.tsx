import { FieldProblem } from './field-problem.js';
import { MetadataHelp, PermissionsHelp } from './key-attribute-help.js';

/** What the checks before sending found wrong with each field, in words. */
export interface AttributeProblems {
  permissions?: string;
  metadata?: string;
}

/** What the fields show at first: the key's values as text (a key's page), or nothing (the create page). */
interface InitialAttributes {
  permissions: string;
  metadata: string;
}

/**
 * The permissions field (one name a line) and the metadata field (a JSON object) of a form, each with its help and
 * the problem the checks before sending found. `initial` fills them, and is their React key, so that they show the
 * saved values again after each save.
 */
export function KeyAttributeFields({
  id,
  problems,
  initial,
  optional = false,
}: {
  /** The form's `useId()`: the fields' IDs start with it. */
  id: string;
  problems: AttributeProblems;
  initial?: InitialAttributes | undefined;
  /** Whether the labels say the fields may stay empty. */
  optional?: boolean;
}) {
  const describedBy = (field: keyof AttributeProblems) =>
    `${id}-${field}-help${problems[field] === undefined ? '' : ` ${id}-${field}-problem`}`;
  const textarea = (field: keyof AttributeProblems) => ({
    id: `${id}-${field}`,
    name: field,
    spellCheck: false,
    autoComplete: 'off',
    'aria-invalid': problems[field] !== undefined,
    'aria-describedby': describedBy(field),
    ...(initial === undefined ? {} : { defaultValue: initial[field] }),
  });
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-permissions`}>{optional ? 'Permissions (optional)' : 'Permissions'}</label>
        <textarea
          key={initial?.permissions}
          {...textarea('permissions')}
          rows={initial === undefined ? 3 : 4}
          placeholder="documents.read"
        />
        <PermissionsHelp id={`${id}-permissions-help`} />
        <FieldProblem id={`${id}-permissions-problem`} problem={problems.permissions} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-metadata`}>
          {optional ? 'Metadata, a JSON object (optional)' : 'Metadata (a JSON object)'}
        </label>
        <textarea
          key={initial?.metadata}
          {...textarea('metadata')}
          rows={initial === undefined ? 4 : 6}
          placeholder='{"owner": "team-billing"}'
        />
        <MetadataHelp id={`${id}-metadata-help`} />
        <FieldProblem id={`${id}-metadata-problem`} problem={problems.metadata} />
      </div>
    </>
  );
}
