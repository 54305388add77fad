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
  /** The few rules of the page's own part: the selector of the API version. */
  pageStylesheet: string;
}

/**
 * The HTML of the reference page: a selector of the API version (which the initializer fills in) and an empty element
 * that Swagger UI fills in with the selected version's document.
 */
export function docsPage(title: string, urls: DocsPageUrls): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${urls.stylesheet}">
    <link rel="stylesheet" href="${urls.pageStylesheet}">
    <link rel="icon" type="image/png" href="${urls.icon}">
  </head>
  <body>
    <nav class="api-versions">
      <label for="api-version">API version</label>
      <select id="api-version"></select>
    </nav>
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

/** The page's own rules: the version selector above Swagger UI's content, in its column. */
export const DOCS_PAGE_STYLESHEET = `.api-versions {
  max-width: 1460px;
  margin: 0 auto;
  padding: 16px 20px 0;
  font-family: sans-serif;
}
.api-versions label {
  margin-right: 8px;
  font-weight: 600;
}
`;
