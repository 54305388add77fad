export { type HeldPermissions, heldPermissions, holdsPermission } from './held-permissions.js';
export { metadataProblem, permissionsProblem } from './key-attributes.js';
export { metadataNumberProblem } from './metadata-numbers.js';
export { grants, isPermissionName, namesGranting } from './permission-names.js';
export {
  PermissionQuery,
  type PermissionQueryNode,
  parsePermissionQuery,
  satisfiesPermissionQuery,
} from './permission-query.js';
export { PermissionQueryError } from './permission-query-error.js';
export { permissionQuery } from './permission-query-memo.js';
export { holdsSecretForm, type QuotableShape, quotable, quoteOr } from './quotable.js';
export { SECRET_CHECKSUM_LENGTH, SECRET_PREFIX, SECRET_RANDOM_LENGTH } from './secret-form.js';
