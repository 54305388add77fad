/**
 * The form of every secret the service issues, as the spec's Authentication section states it: a prefix naming its
 * kind, 43 random base62 characters (256 bits) and, for secrets issued since the checksum exists, 6 characters of
 * checksum. Issuing and checking secrets is the store's job; the form alone lives here, below every package that
 * must recognise a secret, browsers included.
 */
export const SECRET_PREFIX = {
  admin: 'sk-adm-',
  apiKey: 'sk-api-',
  verifier: 'sk-vfy-',
} as const;

/** The number of random base62 characters after a secret's prefix. */
export const SECRET_RANDOM_LENGTH = 43;

/** The number of checksum characters after the random part of a current secret. */
export const SECRET_CHECKSUM_LENGTH = 6;
