/**
 * `GET /metrics` on the listener (issue #45), scraped by a real Prometheus (Debian's `prometheus`
 * package, installed by scripts/setup_prometheus.ts): the exposition passes `promtool check metrics`,
 * `metrics_token:` guards it, and Prometheus's query API reads the series back.
 */
import assert from "node:assert/strict";
import { DENO, FIXTURE, listeningPorts, q, tempDir, until, writeConfig } from "../helpers.ts";
import { httpClient, startListener } from "../http/http_helpers.ts";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const AGENT_TOKEN = "agent-token-0123456789abcdef";

async function available(command: string): Promise<boolean> {
  try {
    return (await new Deno.Command(command, { args: ["--version"], stdout: "null", stderr: "null" }).output())
      .success;
  } catch {
    return false;
  }
}

const installed = await available("prometheus") && await available("promtool");
// Under CI on Linux the setup installs Prometheus: missing there is a failure, not a skip.
const required = Deno.env.get("CI") === "true" && Deno.build.os === "linux";

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

Deno.test({
  name:
    "Prometheus scrapes /metrics with the metrics_token and reads the MCP durations and mcphub gauges back",
  ignore: !installed && !required,
  async fn() {
    assert.ok(installed, "prometheus and promtool are required under CI: run scripts/setup_prometheus.ts");
    await using dir = await tempDir();
    const config = await writeConfig(
      dir.path,
      [
        "metrics_token: ${MCPHUB_TEST_METRICS_TOKEN}",
        "agents:",
        "  ops:",
        "    token: ${MCPHUB_TEST_AGENT_TOKEN}",
        "servers:",
        "  fx:",
        `    command: ${q(DENO)}`,
        `    args: [run, -A, ${q(FIXTURE)}]`,
        "",
      ].join("\n"),
    );
    await using listener = await startListener(config, {
      env: { MCPHUB_TEST_METRICS_TOKEN: METRICS_TOKEN, MCPHUB_TEST_AGENT_TOKEN: AGENT_TOKEN },
    });
    const metricsUrl = `${listener.origin}/metrics`;
    {
      await using client = await httpClient(listener.url, AGENT_TOKEN);
      const echo = await client.callTool({
        name: "fx__echo",
        arguments: { text: "label-values-never-from-input" },
      });
      assert.equal((echo as { isError?: boolean }).isError, undefined);
      const fail = await client.callTool({ name: "fx__fail", arguments: { text: "no" } });
      assert.equal((fail as { isError?: boolean }).isError, true);
      // Over the response budget: stored, and answered with a receipt.
      const big = await client.callTool({ name: "fx__big", arguments: { bytes: 100_000 } });
      assert.equal((big.structuredContent as { status?: string }).status, "stored");
      // A tool name that is not in the catalog: a protocol error, and no series named after it.
      await assert.rejects(client.callTool({ name: "made_up_tool_name", arguments: {} }));

      // The guard: no token, an agent's token, and a wrong one are refused; the metrics token reads.
      const tries: Record<string, string>[] = [{}, { authorization: `Bearer ${AGENT_TOKEN}` }, {
        authorization: "Bearer wrong",
      }];
      for (const headers of tries) {
        const refused = await fetch(metricsUrl, { headers });
        await refused.body?.cancel();
        assert.equal(refused.status, 401);
      }
      const scrape = await fetch(metricsUrl, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.equal(scrape.status, 200);
      assert.equal(scrape.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
      const text = await scrape.text();
      await Deno.writeTextFile(`${dir.path}/scrape.txt`, text);
      assert.match(
        text,
        /^mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="fx__echo"\} 1$/m,
      );
      assert.match(
        text,
        /^mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="fx__fail",error_type="tool_error"\} 1$/m,
      );
      assert.match(
        text,
        /^mcp_client_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="echo",server="fx"\} 1$/m,
      );
      assert.match(
        text,
        /^mcp_server_operation_duration_seconds_bucket\{.*gen_ai_tool_name="fx__echo",le="\+Inf"\} 1$/m,
      );
      assert.match(text, /^mcphub_server_state\{server="fx",state="connected"\} 1$/m);
      assert.match(text, /^mcphub_sessions_open\{agent="ops"\} 1$/m);
      assert.match(text, /^mcphub_requests_refused_total\{code="401"\} 3$/m);
      assert.match(text, /^mcphub_tools_held\{server="fx"\} 0$/m);
      assert.match(text, /^mcphub_results_spooled_total\{server="fx"\} 1$/m);
      assert.match(text, /^mcphub_store_results 1$/m);
      const stored = Number(/^mcphub_store_result_bytes (\d+)$/m.exec(text)?.[1]);
      assert.ok(stored >= 100_000, text);
      assert.ok(!text.includes("made_up_tool_name") && !text.includes("label-values-never-from-input"));

      const check = await new Deno.Command("promtool", {
        args: ["check", "metrics"],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = check.stdin.getWriter();
      await writer.write(new TextEncoder().encode(text));
      await writer.close();
      const checked = await check.output();
      const said = new TextDecoder().decode(checked.stdout) + new TextDecoder().decode(checked.stderr);
      assert.equal(checked.code, 0, said);
      assert.equal(said.trim(), "");
    }

    // A real Prometheus scrapes the listener with the token and answers queries about it.
    const target = new URL(listener.origin).host;
    await Deno.writeTextFile(
      `${dir.path}/prometheus.yml`,
      [
        "global:",
        "  scrape_interval: 1s",
        "scrape_configs:",
        "  - job_name: mcphub",
        "    authorization:",
        "      type: Bearer",
        `      credentials: ${METRICS_TOKEN}`,
        "    static_configs:",
        `      - targets: ["${target}"]`,
        "",
      ].join("\n"),
    );
    const prometheus = new Deno.Command("prometheus", {
      args: [
        `--config.file=${dir.path}/prometheus.yml`,
        `--storage.tsdb.path=${dir.path}/tsdb`,
        // Port 0: the kernel picks one no other process holds (a free-port guess could be taken before
        // Prometheus binds it); the port it got is read from /proc.
        "--web.listen-address=127.0.0.1:0",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const port = await until("Prometheus listening", async () => {
        const status = await Promise.race([prometheus.status, Promise.resolve(undefined)]);
        if (status) throw new Error(`Prometheus exited (code ${status.code}) before listening`);
        return listeningPorts(prometheus.pid)[0];
      });
      const query = async (promql: string): Promise<Sample[]> => {
        const response = await fetch(
          `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`,
        ).catch(() => undefined);
        if (!response?.ok) {
          await response?.body?.cancel();
          return [];
        }
        const body = await response.json() as { status: string; data: { result: Sample[] } };
        assert.equal(body.status, "success");
        return body.data.result;
      };
      // Prometheus scrapes on its own schedule: wait until the first scrape is stored.
      const up = await until("Prometheus's first scrape", async () => {
        const result = await query('up{job="mcphub"}');
        return result.length ? result : undefined;
      });
      assert.equal(up[0].value[1], "1");
      const echo = await query('mcp_server_operation_duration_seconds_count{gen_ai_tool_name="fx__echo"}');
      assert.deepEqual(echo.map((s) => [s.metric.mcp_method_name, s.metric.error_type, s.value[1]]), [
        ["tools/call", undefined, "1"],
      ]);
      const failed = await query('mcp_client_operation_duration_seconds_count{error_type="tool_error"}');
      assert.deepEqual(failed.map((s) => [s.metric.server, s.metric.gen_ai_tool_name, s.value[1]]), [
        ["fx", "fail", "1"],
      ]);
      const state = await query('mcphub_server_state{server="fx"} == 1');
      assert.deepEqual(state.map((s) => s.metric.state), ["connected"]);
      const quantile = await query(
        'histogram_quantile(0.5, sum by (le) (mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call"}))',
      );
      assert.equal(quantile.length, 1);
      assert.ok(Number(quantile[0].value[1]) > 0);
    } finally {
      prometheus.kill("SIGTERM");
      await prometheus.status;
    }
  },
});
