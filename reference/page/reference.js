// The API reference page: Swagger UI (swagger-ui-dist, served from
// /docs/viewer/) renders the document this deployment serves at
// /v1/openapi.json. Its `servers` name the production and staging hosts;
// here they are replaced by this origin, so that "Try it out" calls the
// deployment that served the page and nothing else (the page's
// Content-Security-Policy allows no other host anyway).
"use strict";

(async function render() {
  const status = document.getElementById("status");
  try {
    const response = await fetch("/v1/openapi.json", {
      headers: { accept: "application/json" },
    });
    if (!response.ok) {
      throw new Error(`GET /v1/openapi.json answered ${response.status}`);
    }
    const spec = await response.json();
    spec.servers = [
      { url: new URL("/v1", window.location.origin).href, description: "This deployment" },
    ];
    window.ui = SwaggerUIBundle({
      spec,
      dom_id: "#reference",
      deepLinking: true,
      // No badge fetched from validator.swagger.io: nothing leaves this origin.
      validatorUrl: null,
      // The key lives in the page's memory only, never in localStorage.
      persistAuthorization: false,
      supportedSubmitMethods: ["get", "head", "post"],
      displayRequestDuration: true,
      defaultModelsExpandDepth: 1,
    });
    status.remove();
  } catch (error) {
    status.textContent = `The API document could not be loaded: ${error.message}`;
    status.classList.add("failed");
  }
})();
