// Starts Swagger UI on the API's own OpenAPI document. Served as a file (not an inline script)
// so the page works under a Content-Security-Policy with script-src 'self'.
/* global SwaggerUIBundle */
window.addEventListener('DOMContentLoaded', () => {
  const root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.dataset.specUrl,
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // "Try it out" uses the key entered under "Authorize"; it is not kept across reloads.
    persistAuthorization: false,
    validatorUrl: null,
  });
});
