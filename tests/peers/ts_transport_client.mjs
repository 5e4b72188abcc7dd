// The TypeScript SDK 1.x client over one of its transports, driven by
// tests/interop/test_interop_transports.py:
//   TS_SDK_DIR=<folder with node_modules/@modelcontextprotocol/sdk> \
//   node ts_transport_client.mjs sse|websocket <url>
// Lists the tools, resources and prompts of examples.everything, calls a tool, reads a
// resource, gets a prompt, answers one elicitation, and prints one JSON object of what it
// saw on stdout (the test asserts on it).
import { pathToFileURL } from "node:url";

const root = `${process.env.TS_SDK_DIR}/node_modules/@modelcontextprotocol/sdk/dist/esm/`;
const load = (path) => import(pathToFileURL(root + path).href);
const { Client } = await load("client/index.js");
const { ElicitRequestSchema } = await load("types.js");

const [mode, target] = process.argv.slice(2);
const client = new Client(
  { name: "ts-transport-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: { username: "ts", email: "ts@example.com" },
}));
let transport;
if (mode === "sse") {
  const { SSEClientTransport } = await load("client/sse.js");
  transport = new SSEClientTransport(new URL(target));
} else {
  const { WebSocketClientTransport } = await load("client/websocket.js");
  transport = new WebSocketClientTransport(new URL(target));
}
await client.connect(transport);

const text = (result) => (result?.content ?? []).map((part) => part.text).join("\n");
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const called = text(await client.callTool({ name: "test_simple_text", arguments: {} }));
const elicited = text(
  await client.callTool({ name: "test_elicitation", arguments: { message: "Who?" } }),
);
const resources = (await client.listResources()).resources.map((r) => r.uri);
const read = (await client.readResource({ uri: "test://static-text" })).contents[0].text;
const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
const prompt = await client.getPrompt({
  name: "test_prompt_with_arguments",
  arguments: { arg1: "a", arg2: "b" },
});
const seen = {
  version: client.getServerVersion()?.name ?? null,
  tools,
  called,
  elicited,
  resources,
  read,
  prompts,
  promptRoles: prompt.messages.map((m) => m.role),
};
await client.close();
console.log(JSON.stringify(seen));
