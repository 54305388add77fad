import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { compression } from 'vite-plugin-compression2';

/** Where `pnpm dev` sends API requests: a server started with `pnpm dev` (or `pnpm start`) at the repository root. */
const apiOrigin = process.env.APIKEYS_BASE_URL ?? 'http://127.0.0.1:8080';

// The server serves the built files under /console (apps/server/src/http/console); the dev server serves them at the
// same path, and passes the API's paths on to a running server, so that the console stays same-origin in both.
export default defineConfig({
  base: '/console/',
  plugins: [
    react(),
    // Brotli and gzip copies of the scripts and styles (`.br`, `.gz` beside each), which the server sends to browsers
    // that accept them; the page and the icon are a few hundred bytes.
    compression({ include: /\.(?:js|css)$/, algorithms: ['brotliCompress', 'gzip'] }),
  ],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No source maps in the served files: the console ships only what runs.
    sourcemap: false,
    // Everything under /console/assets/ is named by its content hash and cached for a year.
    assetsDir: 'assets',
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: true,
    proxy: { '/v1': apiOrigin },
  },
});
