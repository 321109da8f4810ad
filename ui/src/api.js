// Calls to the server's HTTP/JSON API. The page is served at /ui/ and calls
// /ui/api/<the API's own paths>, which the server hands to the same gateway
// as /ctxc.v1.ContextCompilerService/<Method>: the same authentication,
// limits and errors. A browser that logged in to /ui/ sends its credentials
// to every path below it, so the calls need no token of their own.
const base = "api/ctxc.v1.ContextCompilerService/";

// ApiError carries the gateway's google.rpc.Status: code, message, details.
export class ApiError extends Error {
  constructor(method, httpStatus, status) {
    super(status?.message || `HTTP ${httpStatus}`);
    this.method = method;
    this.httpStatus = httpStatus;
    this.code = status?.code;
    this.details = status?.details || [];
  }

  // fields lists the BadRequest field violations ("field: description").
  get fields() {
    const out = [];
    for (const d of this.details) {
      for (const v of d.fieldViolations || []) out.push(`${v.field}: ${v.description}`);
    }
    return out;
  }
}

export async function call(method, body) {
  const resp = await fetch(base + method, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body ?? {}),
    credentials: "same-origin",
  });
  const text = await resp.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = { message: text.slice(0, 200) };
  }
  if (!resp.ok) throw new ApiError(method, resp.status, parsed);
  return parsed;
}
