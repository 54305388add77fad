/** One document the reference page offers: its name in the page's selector, and where it is served. */
export interface ReferenceDocument {
  name: string;
  url: string;
}

/**
 * The script that starts Swagger UI on the reference page, served as a file of its own because the page's
 * Content-Security-Policy allows no inline script (nor inline style, which rules out Swagger UI's own top bar). It
 * fills the page's version selector with `documents`, opens the first one, and loads another when it is selected.
 */
export function docsInitializer(documents: readonly ReferenceDocument[]): string {
  return `const documents = ${JSON.stringify(documents)};
const selector = document.getElementById('api-version');
for (const { name, url } of documents) {
  selector.add(new Option(name, url));
}
const ui = SwaggerUIBundle({
  url: documents[0].url,
  dom_id: '#swagger-ui',
  deepLinking: true,
  // The operationId is how the client's documentation and the generated types name each operation.
  displayOperationId: true,
  // No validator badge, which would ask validator.swagger.io about the spec: nothing here calls another server.
  validatorUrl: null,
  // ?url= and ?configUrl= in the address must not point this page at another document.
  queryConfigEnabled: false,
  // "Try it out" calls the server that serves this page, wherever it runs, rather than the spec's example server
  // (http://127.0.0.1:8080), which the page's Content-Security-Policy would block anyway.
  requestInterceptor: (request) => {
    const target = new URL(request.url, window.location.href);
    request.url = window.location.origin + target.pathname + target.search;
    return request;
  },
});
selector.addEventListener('change', () => {
  ui.specActions.updateUrl(selector.value);
  ui.specActions.download(selector.value);
});
`;
}
