// A 2026-07-28 server on the TypeScript SDK v2 (@modelcontextprotocol/server), served over
// Streamable HTTP on 127.0.0.1 by its fetch-shaped createMcpHandler behind node:http; the
// peer of tests/interop/test_interop_client_2026.py:
//   node ts_v2_server.mjs --sdk <folder with node_modules/@modelcontextprotocol/server>
//     [--tools N] [--page-size P] [--loops]
// It listens on a port of its own choosing and says so on stderr
// ("mcpgen: serving MCP at http://127.0.0.1:PORT/mcp").
//
// What it serves (one McpServer per request, from module state, as createMcpHandler wants):
// * tools `count` {method} (how many requests of `method` reached this process: counted
//   as each POST arrives, before the SDK sees it), `add_tool` {name} (registers a tool
//   and publishes tools/list_changed), `touch` {uri} (publishes resources/updated), and
//   N more tools `bulk_0000`… (--tools);
// * the resource test://watched; capabilities tools.listChanged, resources.subscribe;
// * the SDK's cache hints: tools/list {ttlMs 60000, private}, resources/list {ttlMs 60000,
//   public};
// * tools/list in pages of P (--page-size; default all at once), its handler replaced
//   through the low-level server; with --loops, prompts/list answers every page with the
//   nextCursor "again" and resources/templates/list goes round A → B → A.
import http from "node:http";
import { pathToFileURL } from "node:url";

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(name);
  return at < 0 ? fallback : argv[at + 1];
};
const root = `${option("--sdk", ".")}/node_modules/@modelcontextprotocol/server/dist/`;
const { McpServer, createMcpHandler, fromJsonSchema } = await import(
  pathToFileURL(root + "index.mjs").href
);
const bulk = Number(option("--tools", "0"));
const pageSize = Number(option("--page-size", "0"));
const loops = argv.includes("--loops");

const WATCHED = "test://watched";
const counts = new Map();
const added = [];
const text = (value) => ({ content: [{ type: "text", text: String(value) }] });
const schema = (properties) => ({
  type: "object",
  properties: Object.fromEntries(properties.map((name) => [name, { type: "string" }])),
  required: properties,
});
/** The tools: name → [description, argument names, what a call does]. */
const TOOLS = {
  count: [
    "Requests of a method this server received",
    ["method"],
    ({ method }) => counts.get(method) ?? 0,
  ],
  add_tool: [
    "Adds a tool, then says the tool list changed",
    ["name"],
    ({ name }) => {
      added.push(name);
      handler.notify.toolsChanged();
      return `added ${name}`;
    },
  ],
  touch: [
    "Says a resource was updated",
    ["uri"],
    ({ uri }) => {
      handler.notify.resourceUpdated(uri);
      return `touched ${uri}`;
    },
  ],
};

/** Each input schema as the SDK takes it, made once: the server is built for every request. */
const standards = new Map();
function standard(inputSchema) {
  const key = JSON.stringify(inputSchema);
  if (!standards.has(key)) standards.set(key, fromJsonSchema(inputSchema));
  return standards.get(key);
}

function tools() {
  const all = Object.entries(TOOLS).map(([name, [description, args, call]]) => ({
    name,
    description,
    inputSchema: schema(args),
    call,
  }));
  const extra = [...added];
  for (let i = 0; i < bulk; i++) extra.push(`bulk_${String(i).padStart(4, "0")}`);
  for (const name of extra) {
    all.push({ name, description: `tool ${name}`, inputSchema: schema([]), call: () => name });
  }
  return all;
}

function build() {
  const mcp = new McpServer(
    { name: "ts-v2-peer", version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
      },
      cacheHints: {
        "tools/list": { ttlMs: 60000, cacheScope: "private" },
        "resources/list": { ttlMs: 60000, cacheScope: "public" },
      },
    },
  );
  const served = tools();
  for (const { name, description, inputSchema, call } of served) {
    const config = { description, inputSchema: standard(inputSchema) };
    mcp.registerTool(name, config, async (args) => text(await call(args)));
  }
  mcp.registerResource("watched", WATCHED, { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "watched" }],
  }));
  mcp.registerPrompt("greet", { description: "A greeting" }, async () => ({
    messages: [{ role: "user", content: { type: "text", text: "Hello" } }],
  }));
  // Pages and loops: handlers of the low-level server, in place of McpServer's.
  if (pageSize > 0) {
    const listed = served.map(({ name, description, inputSchema }) => ({
      name,
      description,
      inputSchema,
    }));
    mcp.server.setRequestHandler("tools/list", async (request) => {
      const start = Number(request.params?.cursor ?? "0");
      const end = start + pageSize;
      const page = { tools: listed.slice(start, end) };
      if (end < listed.length) page.nextCursor = String(end);
      return page;
    });
  }
  if (loops) {
    mcp.server.setRequestHandler("prompts/list", async () => ({
      prompts: [{ name: "greet" }],
      nextCursor: "again",
    }));
    mcp.server.setRequestHandler("resources/templates/list", async (request) => ({
      resourceTemplates: [{ name: "item", uriTemplate: "test://items/{id}" }],
      nextCursor: request.params?.cursor === "A" ? "B" : "A",
    }));
  }
  return mcp;
}

const handler = createMcpHandler(() => build(), { legacy: "reject" });

function counted(body) {
  try {
    const message = JSON.parse(body.toString("utf8"));
    for (const one of Array.isArray(message) ? message : [message]) {
      if (one && typeof one.method === "string" && one.id !== undefined) {
        counts.set(one.method, (counts.get(one.method) ?? 0) + 1);
      }
    }
  } catch {
    // not JSON: the SDK answers it
  }
}

const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  if (req.method === "POST") counted(body);
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  const aborted = new AbortController();
  res.on("close", () => aborted.abort());
  try {
    const response = await handler.fetch(
      new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
        signal: aborted.signal,
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.flushHeaders();
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (aborted.signal.aborted) {
          await reader.cancel().catch(() => {});
          break;
        }
        res.write(value);
      }
    }
    res.end();
  } catch (error) {
    if (!res.headersSent) res.writeHead(500);
    res.end();
    if (!aborted.signal.aborted) console.error(`ts-v2-peer: ${error?.stack ?? error}`);
  }
});

server.listen(0, "127.0.0.1", () => {
  console.error(`mcpgen: serving MCP at http://127.0.0.1:${server.address().port}/mcp`);
});
const stop = () => {
  handler.close().finally(() => process.exit(0));
  server.closeAllConnections?.();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
