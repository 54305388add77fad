/** The forms of the gateway: without key service, with the caching verifier, with a verifier without cache. */
export const GATEWAY_FORMS = ['floor', 'cached', 'plain'] as const;
export type GatewayForm = (typeof GATEWAY_FORMS)[number];
