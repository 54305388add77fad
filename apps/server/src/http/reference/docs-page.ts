/**
 * What the reference page may load: scripts, styles and requests from this server only, plus the `data:` images
 * that Swagger UI's stylesheet embeds (its icons). Nothing inline, no frames, no other origin.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The URLs of what the page loads. */
export interface DocsPageUrls {
  stylesheet: string;
  icon: string;
  swaggerUi: string;
  initializer: string;
}

/** The HTML of the reference page: an empty element that Swagger UI fills in. */
export function docsPage(title: string, urls: DocsPageUrls): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${urls.stylesheet}">
    <link rel="icon" type="image/png" href="${urls.icon}">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${urls.swaggerUi}"></script>
    <script src="${urls.initializer}"></script>
  </body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
