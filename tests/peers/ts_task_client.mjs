// The TypeScript SDK 1.x client's experimental task API against our server (2025-11-25
// core tasks), driven by tests/interop/test_interop_ts_tasks.py:
//   TS_SDK_DIR=<folder with node_modules/@modelcontextprotocol/sdk> \
//   node ts_task_client.mjs stdio <command> [args...]  |  node ts_task_client.mjs http <url>
// Runs examples.everything's task tools through client.experimental.tasks and prints one
// JSON object of what it saw on stdout (the test asserts on it).
import { pathToFileURL } from "node:url";

const root = `${process.env.TS_SDK_DIR}/node_modules/@modelcontextprotocol/sdk/dist/esm/`;
const load = (path) => import(pathToFileURL(root + path).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { CallToolResultSchema, ElicitRequestSchema } = await load("types.js");

const [mode, target, ...rest] = process.argv.slice(2);
const client = new Client(
  { name: "ts-task-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
const elicited = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicited.push({
    message: request.params.message,
    related: request.params._meta?.["io.modelcontextprotocol/related-task"] ?? null,
  });
  return { action: "accept", content: { confirm: true } };
});
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target));
await client.connect(transport);

const text = (result) => (result?.content ?? []).map((part) => part.text).join("\n");
const seen = (message) => {
  switch (message.type) {
    case "taskCreated":
    case "taskStatus":
      return { type: message.type, taskId: message.task.taskId, status: message.task.status };
    case "result":
      return { type: "result", text: text(message.result), isError: !!message.result.isError };
    default:
      return { type: message.type, code: message.error?.code, message: message.error?.message };
  }
};
async function stream(name, args) {
  const messages = [];
  const params = { name, arguments: args };
  for await (const message of client.experimental.tasks.callToolStream(params)) {
    messages.push(seen(message));
  }
  return messages;
}
const created = (messages) => messages.find((m) => m.type === "taskCreated")?.taskId;
const caught = async (promise) => {
  try {
    return { value: await promise };
  } catch (error) {
    return { code: error.code, message: error.message };
  }
};

const out = { capabilities: client.getServerCapabilities()?.tasks ?? null };
const tools = (await client.listTools()).tools;
out.taskSupport = Object.fromEntries(
  tools.filter((t) => t.execution?.taskSupport).map((t) => [t.name, t.execution.taskSupport]),
);
out.slow = await stream("slow_compute", { seconds: 1, label: "ts" });
out.confirm = await stream("confirm_delete", { filename: "a.txt" });
out.elicited = elicited;
out.failing = await stream("failing_job", {});
const failed = await caught(
  client.experimental.tasks.getTaskResult(created(out.failing), CallToolResultSchema),
);
out.failingResult = failed.value ? { text: text(failed.value), isError: failed.value.isError } : failed;
out.protocolError = await stream("protocol_error_job", {});
out.protocolErrorResult = await caught(
  client.experimental.tasks.getTaskResult(created(out.protocolError), CallToolResultSchema),
);

// cancel a long task once it exists
const long = client.experimental.tasks.callToolStream({
  name: "slow_compute",
  arguments: { seconds: 60, label: "long" },
});
const first = (await long.next()).value;
out.cancelCreated = seen(first);
out.cancelled = await client.experimental.tasks.cancelTask(first.task.taskId);
out.afterCancel = (await client.experimental.tasks.getTask(first.task.taskId)).status;
await long.return();
out.cancelAgain = await caught(client.experimental.tasks.cancelTask(first.task.taskId));

out.listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => ({
  taskId: t.taskId,
  status: t.status,
}));
out.plain = text(
  await client.callTool({ name: "slow_compute", arguments: { seconds: 0, label: "plain" } }),
);
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
