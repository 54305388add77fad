export { type AppDependencies, createApp, MAX_BODY_BYTES } from './app.js';
export { type Config, ConfigError, loadConfig } from './config.js';
export { createLogger } from './logger.js';
export { listen, shutdown } from './server.js';
export { loadSpecFacts, type SpecFacts } from './spec.js';
