/**
 * The forms of the gateway: without key service, with the caching verifier, the same with a permission requirement
 * on its route, with a verifier without cache.
 */
export const GATEWAY_FORMS = ['floor', 'cached', 'cached-requirement', 'plain'] as const;
export type GatewayForm = (typeof GATEWAY_FORMS)[number];
