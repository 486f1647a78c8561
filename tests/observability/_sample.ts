// Prints a sample trace and a sample scrape for docs/observability.md (not a test).
import { connectGateway, DENO, FIXTURE, q, tempDir, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "../http/http_helpers.ts";
import { startOtlpReceiver } from "./otlp_receiver.ts";

await using dir = await tempDir();
{
  await using receiver = startOtlpReceiver();
  const config = await writeConfig(
    dir.path,
    `servers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}, --trace]\n`,
    "trace.yaml",
  );
  const gw = await connectGateway(config, {
    env: {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "mcphub",
      OTEL_DENO_CONSOLE: "ignore",
    },
  });
  const result = await gw.client.callTool({
    name: "fx__trace",
    arguments: {},
    _meta: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
  });
  await gw.close();
  console.log("server received:", (result.content as { text: string }[])[0].text);
  await receiver.span((s) => s.name === "tools/call trace");
  await receiver.span((s) => s.name === "tools/call fx__trace");
  const flat = (attrs: { key: string; value: Record<string, unknown> }[]) =>
    Object.fromEntries(attrs.map((a) => [a.key, Object.values(a.value)[0]]));
  for (const s of receiver.spans().filter((s) => s.traceId === "4bf92f3577b34da6a3ce929d0e0e4736")) {
    console.log(JSON.stringify(
      {
        name: s.name,
        kind: s.kind,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId,
        attributes: flat(s.attributes),
        status: s.status,
      },
      null,
      2,
    ));
  }
}
{
  const config = await writeConfig(
    dir.path,
    `metrics_token: \${MT}\nservers:\n  fx:\n    command: ${q(DENO)}\n    args: [run, -A, ${q(FIXTURE)}]\n`,
    "scrape.yaml",
  );
  await using listener = await startListener(config, { env: { MT: "metrics-token-0123456789abcdef" } });
  {
    await using client = await httpClient(listener.url);
    await client.callTool({ name: "fx__echo", arguments: { text: "hi" } });
    await client.callTool({ name: "fx__echo", arguments: { text: "hi" } });
    await client.callTool({ name: "fx__fail", arguments: { text: "no" } });
    await client.callTool({ name: "fx__big", arguments: { bytes: 100000 } });
    await fetch(`${listener.origin}/metrics`).then((r) => r.body?.cancel());
    const text = await (await fetch(`${listener.origin}/metrics`, {
      headers: { authorization: "Bearer metrics-token-0123456789abcdef" },
    })).text();
    console.log(text);
  }
}
