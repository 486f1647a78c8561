/**
 * The HTML report opened in real headless Chromium: the DOM it builds, the layout
 * in light and dark mode, a screenshot and a PDF print. Chromium is installed by
 * {@linkcode chromium} when missing; the tests are skipped, with the reason printed,
 * only where it cannot be.
 */
import assert from "node:assert/strict";
import { assertPresent, ignoreWithout } from "../_system.ts";
import { chromium, groupEnds, runChromium, type RunChromiumOptions } from "./chromium.ts";
import { sampleHtml } from "./sample_calls.ts";

const browser = await chromium();
const missing = "skip" in browser ? browser.skip : undefined;
const ignore = ignoreWithout("the browser tests", missing);

const CHARTS = ["chart-calls", "chart-tokens", "chart-duration", "chart-errors", "chart-detached"];
const TABLES = [
  "table-calls",
  "table-tokens",
  "table-duration",
  "table-errors",
  "table-detached",
  "table-recent",
];

/** Reads what the browser laid out: computed colours, chart boxes, texts that leave their chart. */
const PROBE = `<script>
addEventListener("load", () => {
  const charts = [...document.querySelectorAll("svg.chart")].map((svg) => {
    const box = svg.getBoundingClientRect();
    const width = svg.viewBox.baseVal.width;
    const outside = [...svg.querySelectorAll("text")].filter((t) => {
      const b = t.getBBox();
      return b.x < 0 || b.x + b.width > width + 0.5;
    }).map((t) => t.textContent);
    const bar = svg.querySelector("rect.bar");
    return { id: svg.id, width: box.width, height: box.height, bars: svg.querySelectorAll("rect.bar").length,
      fill: bar ? getComputedStyle(bar).fill : "", outside };
  });
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({
    dark: matchMedia("(prefers-color-scheme: dark)").matches,
    background: getComputedStyle(document.body).backgroundColor,
    color: getComputedStyle(document.body).color,
    overflowX: document.documentElement.scrollWidth > innerWidth,
    innerWidth,
    charts,
  });
  document.body.append(probe);
});
</script>`;

interface Probe {
  dark: boolean;
  background: string;
  color: string;
  overflowX: boolean;
  innerWidth: number;
  charts: { id: string; width: number; height: number; bars: number; fill: string; outside: string[] }[];
}

async function withPage<T>(html: string, fn: (url: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "mcphub-report-" });
  try {
    await Deno.writeTextFile(`${dir}/report.html`, html);
    return await fn(`file://${dir}/report.html`, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs the browser and checks that no process of its group outlives the run. */
async function browse(url: string, args: string[], options: RunChromiumOptions = {}): Promise<string> {
  const { stdout, pgid } = await runChromium((browser as { bin: string }).bin, url, args, options);
  // SIGKILL was sent to the group; /proc is the only view of processes that are not our children.
  await groupEnds(pgid);
  return stdout;
}

function unescape(text: string): string {
  return text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll(
    "&amp;",
    "&",
  );
}

async function probe(html: string, scheme: "light" | "dark", width = 1100): Promise<Probe> {
  // The report's policy forbids every script; this copy allows only the probe.
  const instrumented = html.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    .replace("</body>", `${PROBE}\n</body>`);
  const dom = await withPage(
    instrumented,
    (url) => browse(url, ["--dump-dom"], { scheme, size: [width, 1400] }),
  );
  const match = /<pre id="probe">([^<]*)<\/pre>/.exec(dom);
  assert.ok(match, "the probe did not run");
  return JSON.parse(unescape(match[1]));
}

function pngSize(png: Uint8Array): [number, number] {
  assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], "not a PNG");
  const view = new DataView(png.buffer, png.byteOffset);
  return [view.getUint32(16), view.getUint32(20)];
}

Deno.test({
  name: "the report in headless Chromium has every chart, table and fixture number",
  ignore,
  fn: async () => {
    assertPresent("the browser tests", missing);
    const html = await sampleHtml({ tools: true, recent: 3 });
    const dom = await withPage(html, (url) => browse(url, ["--dump-dom"]));
    for (const id of CHARTS) assert.match(dom, new RegExp(`<svg id="${id}" class="chart"`), id);
    for (const id of TABLES) assert.match(dom, new RegExp(`<table id="${id}">`), id);
    assert.doesNotMatch(dom, /<script/);
    const card = (id: string) =>
      new RegExp(`id="total-${id}"><div class="value">([^<]*)</div>`).exec(dom)?.[1];
    assert.deepEqual(
      ["calls", "errors", "tokens", "reached", "kept", "time", "detached"].map(card),
      ["6", "2", "~25,535", "~685", "~24,850", "1.5 s", "1"],
    );
    assert.match(dom, /<p id="period">All time: 2026-11-20 06:00:00 to 2026-11-30 06:00:00 UTC\.<\/p>/);
    assert.match(dom, /Store: <code>\/home\/dev\/\.local\/share\/mcphub\/mcphub\.db<\/code>/);
    // The tokens table: fs kept 24,850 of 25,060 out; the duration chart: slack__post is slowest.
    assert.match(
      dom,
      /<tr><td><code>fs<\/code><\/td><td class="n">2<\/td><td class="n">25,060<\/td><td class="n">210<\/td><td class="n">24,850<\/td><td class="n">1<\/td><\/tr>/,
    );
    assert.match(dom, /<text [^>]*class="note"[^>]*>p50 1,000 ms · p95 1,000 ms<\/text>/);
    assert.match(dom, /<text [^>]*class="note"[^>]*>100\.0% \(1 of 1\)<\/text>/);
    // Five non-empty stacked segments over 11 days: Nov 20 fs, Nov 22 slack, Nov 27 github, Nov 30 github + fs.
    const calls = /<svg id="chart-calls"[^]*?<\/svg>/.exec(dom)![0];
    assert.equal(calls.match(/<rect [^>]*class="bar /g)?.length, 5);
    assert.equal(/<table id="table-calls">[^]*?<\/table>/.exec(dom)![0].match(/<tr>/g)?.length, 12);
  },
});

Deno.test({
  name: "the report lays out in light and dark mode without overflow",
  ignore,
  fn: async () => {
    assertPresent("the browser tests", missing);
    const html = await sampleHtml({ tools: true, recent: 3 });
    const light = await probe(html, "light");
    const dark = await probe(html, "dark");
    assert.deepEqual([light.dark, dark.dark], [false, true]);
    assert.deepEqual([light.background, light.color], ["rgb(255, 255, 255)", "rgb(31, 35, 40)"]);
    assert.deepEqual([dark.background, dark.color], ["rgb(13, 17, 23)", "rgb(230, 237, 243)"]);
    for (const view of [light, dark]) {
      assert.deepEqual(view.charts.map((c) => c.id), CHARTS);
      assert.equal(view.overflowX, false);
      for (const chart of view.charts) {
        assert.ok(chart.width > 700 && chart.height > 50, `${chart.id} is ${chart.width}x${chart.height}`);
        assert.ok(chart.bars > 0, `${chart.id} has no bars`);
        assert.deepEqual(chart.outside, [], `${chart.id} has text outside the chart`);
      }
    }
    // Series colours follow the scheme: the first bar (fs, the second series) is #1a7f37 in light mode,
    // #3fb950 in dark.
    assert.equal(light.charts[0].fill, "rgb(26, 127, 55)");
    assert.equal(dark.charts[0].fill, "rgb(63, 185, 80)");
    // A narrow window (headless Chromium's narrowest is 500 px) scales the charts down; wide tables scroll
    // in their own box, the page never sideways.
    const narrow = await probe(html, "light", 420);
    assert.ok(narrow.innerWidth < 760, `innerWidth ${narrow.innerWidth}`);
    assert.equal(narrow.overflowX, false);
    const widths = narrow.charts.map((c) => c.width);
    assert.ok(widths.every((w) => w <= narrow.innerWidth - 48), JSON.stringify(widths));
  },
});

Deno.test({
  name: "the report screenshots in both schemes and prints to PDF",
  ignore,
  fn: async () => {
    assertPresent("the browser tests", missing);
    const html = await sampleHtml({ tools: true, recent: 3 });
    await withPage(html, async (url, dir) => {
      const shots: Uint8Array[] = [];
      for (const scheme of ["light", "dark"] as const) {
        const path = `${dir}/${scheme}.png`;
        await browse(url, [`--screenshot=${path}`], { scheme, size: [1000, 1600] });
        const png = await Deno.readFile(path);
        assert.deepEqual(pngSize(png), [1000, 1600]);
        shots.push(png);
      }
      assert.notDeepEqual(shots[0], shots[1]);
      await browse(url, [`--print-to-pdf=${dir}/report.pdf`, "--no-pdf-header-footer"]);
      const pdf = await Deno.readFile(`${dir}/report.pdf`);
      assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), "%PDF-");
      assert.ok(pdf.length > 10_000, `the PDF has ${pdf.length} bytes`);
    });
  },
});

Deno.test({
  name: "the live page in headless Chromium shows server states and reloads",
  ignore,
  fn: async () => {
    assertPresent("the browser tests", missing);
    const html = await sampleHtml({ since: 7 * 86_400_000, live: true });
    const dom = await withPage(html, (url) => browse(url, ["--dump-dom"]));
    assert.match(dom, /<meta http-equiv="refresh" content="10">/);
    assert.match(dom, /<h1>mcphub: live<\/h1>/);
    const rows = /<table id="table-servers">[^]*?<\/table>/.exec(dom)![0].match(/<tr>.*?<\/tr>/g)!;
    assert.deepEqual(rows.slice(1).map((r) => r.replace(/<[^>]+>/g, "|").replace(/\|+/g, "|")), [
      "|github|connected|41|http|0|",
      "|slack|backoff|0|stdio|3|exited with code 1; next attempt 2026-11-30T06:00:08.000Z|",
      "|fs|disabled|0|stdio|0|",
    ]);
    for (const id of CHARTS.slice(0, 4)) assert.match(dom, new RegExp(`<svg id="${id}"`));
  },
});
