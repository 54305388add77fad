export { type AppDependencies, createApp } from './app.js';
export { type Config, ConfigError, loadConfig } from './config.js';
export { createLogger } from './logger.js';
export { listen, shutdown, warmUpAndMarkStarted } from './server.js';
