/**
 * Request arbitraries, derived from the spec: every operation of every API version, with its paths, parameters and
 * body schemas, comes from the version's document, and the hostile forms of `hostile.ts` are applied on top. A
 * generated request is a valid request of an operation plus a list of mutations, so that shrinking removes the
 * mutations that do not matter.
 */
import { API_VERSIONS, LATEST_API_VERSION } from '@apikeys/api-types';
import fc from 'fast-check';
import { bodyMutations, unexpectedBodyMutations } from './body-mutations.js';
import { type ArbitraryContext, applyAll, BODY_METHODS, type Mutation, validDraft } from './drafts.js';
import { headerMutations } from './header-mutations.js';
import { parameterMutations } from './parameter-mutations.js';
import type { FuzzRequest } from './request.js';
import type { OperationModel, SpecModels } from './spec-model.js';
import { methodAndPathMutations } from './target-mutations.js';

/** What the families need besides the documents: the fixture's values (see `ArbitraryContext`). */
export type FamilyContext = Omit<ArbitraryContext, 'model' | 'versions'> & { models: SpecModels };

/** An operation of one version's document, with the context its requests are built in. */
interface VersionOperation {
  operation: OperationModel;
  context: ArbitraryContext;
}

/** A family of requests: a valid request of some operation, and up to `max` mutations of the family's kind. */
function family(
  name: string,
  operations: readonly VersionOperation[],
  mutations: (operation: OperationModel, context: ArbitraryContext) => fc.Arbitrary<Mutation>,
  max: number,
): fc.Arbitrary<FuzzRequest> {
  // One arbitrary per operation, built once: a chain would rebuild them for every request.
  const perOperation = operations.map(({ operation, context }) =>
    fc
      .tuple(validDraft(operation, context), fc.array(mutations(operation, context), { minLength: 0, maxLength: max }))
      .map(([draft, changes]) => applyAll({ ...draft, labels: [name, ...draft.labels] }, changes)),
  );
  return fc.oneof(...perOperation);
}

/**
 * Every operation of every version. The probes take no version header and are the same in every document: they
 * are taken from the latest one only.
 */
function versionOperations(context: FamilyContext): VersionOperation[] {
  return API_VERSIONS.flatMap((version) => {
    const model = context.models[version];
    const versionContext: ArbitraryContext = { ...context, model, versions: API_VERSIONS };
    return model.operations
      .filter((operation) => !operation.public || version === LATEST_API_VERSION)
      .map((operation) => ({ operation, context: versionContext }));
  });
}

/** The families of requests, each fuzzed by its own property so that a finding in one does not hide the others. */
export function requestFamilies(context: FamilyContext): Record<string, fc.Arbitrary<FuzzRequest>> {
  const operations = versionOperations(context);
  const withBody = operations.filter(({ operation }) => operation.body && BODY_METHODS.has(operation.method));
  const withoutBody = operations.filter(({ operation }) => !operation.body);
  return {
    parameters: family('parameters', operations, parameterMutations, 3),
    bodies: fc.oneof(
      { weight: 4, arbitrary: family('bodies', withBody, bodyMutations, 3) },
      { weight: 1, arbitrary: family('bodies', withoutBody, (_operation, c) => unexpectedBodyMutations(c), 1) },
    ),
    headers: family('headers', operations, headerMutations, 3),
    'methods and paths': family('methods and paths', operations, (_operation, c) => methodAndPathMutations(c), 2),
  };
}
