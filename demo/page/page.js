// The demo page's script: sends the chosen request with the pasted key and
// reads the answer with the library's client guards (the `./client` module,
// bundled by the server at /client.js), and shows the demo tenant's keys in
// `<api-keys-manager>` (/elements.js). The specifiers are computed so that
// `deno check` does not try to resolve the browser-only URLs.
const client = await import(new URL("client.js", import.meta.url).href);
await import(new URL("elements.js", import.meta.url).href);

// The element signs in with the token the server hands this page (see demo/page_session.ts).
const session = fetch("/page-session").then((response) => response.json());
const manager = document.createElement("api-keys-manager");
manager.setAttribute("base-url", "/admin");
manager.getToken = async () => {
  const { token } = await session;
  if (typeof token !== "string") throw new Error("no page session (see demo/README.md)");
  return token;
};
document.getElementById("keys-manager").append(manager);

/** Routes offered in the picker: method, path, example body. */
const ROUTES = [
  ["GET", "/api/projects?page=1&limit=5&sort=name&order=asc&status=active"],
  ["GET", "/api/projects?page=2&limit=5"],
  ["GET", "/api/projects?limit=5&fields=id,name"],
  ["GET", "/api/projects/prj_001"],
  ["GET", "/api/projects/prj_999"],
  ["POST", "/api/projects", { name: "Project Zephyr" }],
  ["POST", "/api/projects/prj_003/archive"],
  ["GET", "/api/feed?limit=5"],
  ["GET", "/api/v0/projects"],
  ["GET", "/api/whoami"],
  ["GET", "/api/ping"],
  ["GET", "/admin/keys"],
  ["POST", "/admin/keys", { name: "from the page", scopes: ["projects:read"] }],
];

/** Headers worth showing. */
const SHOWN_HEADERS = [
  "content-type",
  "x-request-id",
  "deprecation",
  "sunset",
  "link",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "retry-after",
];

const $ = (id) => document.getElementById(id);

const picker = $("route");
for (const [index, [method, path]] of ROUTES.entries()) {
  picker.add(new Option(`${method} ${path}`, String(index)));
}
picker.addEventListener("change", () => {
  const body = ROUTES[Number(picker.value)][2];
  $("request-body").value = body === undefined ? "" : JSON.stringify(body, null, 2);
});

/** Every guard's verdict on a response body. */
function verdicts(body) {
  const meta = body !== null && typeof body === "object" ? body.meta : undefined;
  const pagination = meta !== null && typeof meta === "object" ? meta.pagination : undefined;
  return {
    isSuccess: client.isSuccess(body),
    isError: client.isError(body),
    isProblemDetailsResponse: client.isProblemDetailsResponse(body),
    isPaginated: client.isPaginated(meta),
    isOffsetPagination: client.isOffsetPagination(pagination),
    isCursorPagination: client.isCursorPagination(pagination),
    isDeprecated: client.isDeprecated(meta),
    hasResponseTime: client.hasResponseTime(meta),
    hasSort: client.hasSort(meta),
    hasFilters: client.hasFilters(meta),
    hasFieldSelection: client.hasFieldSelection(meta),
    hasRateLimit: client.hasRateLimit(meta),
  };
}

/** One line naming what the body is. */
function describe(body) {
  if (client.isSuccess(body)) return `success envelope${body.code ? ` (${body.code})` : ""}`;
  if (client.isError(body)) return `error envelope: ${body.error.code}`;
  if (client.isProblemDetailsResponse(body)) {
    return `problem details: ${body.code ?? body.title} (${body.type})`;
  }
  return "not a safe-response body";
}

function render(response, body) {
  $("result").hidden = false;
  $("status").textContent = `${response.status} ${response.statusText}`;
  $("verdict").textContent = describe(body);
  $("headers").textContent = SHOWN_HEADERS
    .filter((name) => response.headers.has(name))
    .map((name) => `${name}: ${response.headers.get(name)}`)
    .join("\n");
  $("body").textContent = typeof body === "string" ? body : JSON.stringify(body, null, 2);
  const rows = Object.entries(verdicts(body)).map(([name, result]) => {
    const row = document.createElement("tr");
    row.dataset.guard = name;
    const label = document.createElement("td");
    label.textContent = name;
    const value = document.createElement("td");
    value.dataset.result = String(result);
    value.textContent = String(result);
    row.append(label, value);
    return row;
  });
  $("guards").tBodies[0].replaceChildren(...rows);
}

$("request-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const [method, path] = ROUTES[Number(picker.value)];
  const headers = { Accept: "application/json" };
  const key = $("api-key").value.trim();
  if (key !== "") headers["X-API-Key"] = key;
  const forwardedFor = $("forwarded-for").value.trim();
  if (forwardedFor !== "") headers["X-Forwarded-For"] = forwardedFor;
  const init = { method, headers };
  const text = $("request-body").value.trim();
  if (method !== "GET" && text !== "") {
    headers["Content-Type"] = "application/json";
    init.body = text;
  }
  const response = await fetch(path, init);
  const raw = await response.text();
  let body = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    // shown as text
  }
  render(response, body);
  // The key's "last used" and usage bars appear once the server flushed its usage counts
  // (not while someone works in the element: a reload would move their focus).
  const { usageFlushMs } = await session;
  setTimeout(() => manager.matches(":focus-within") || manager.refresh(), usageFlushMs + 500);
});

// Reports a key to the public revocation route (POST /api/leaked-keys, a form body).
$("leak-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch("/api/leaked-keys", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ key: $("leaked-key").value.trim() }),
  });
  $("leak-answer").textContent = `${response.status} ${await response.text()}`;
});
