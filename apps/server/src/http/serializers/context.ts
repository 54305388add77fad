import type { EpochMicros } from '@apikeys/store';

/** What a serializer needs besides the record: the caller's default workspace, and the moment of the request. */
export interface SerializeContext {
  /** The real ID of the organization's default workspace, whose keys are stored with a null workspace. */
  defaultWorkspaceId: string;
  /** The moment the request is served: a key whose expiry is at or before it is expired. */
  now: EpochMicros;
}
