import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { buildIndex, search } from "../../src/resolver/mod.ts";
import { catalogFromJson } from "../../scripts/eval_resolver.ts";

const DATA = new URL("../../scripts/bench/data/", import.meta.url);

const tool = (name: string, description: string, ...args: string[]) => ({
  name,
  description,
  inputSchema: { type: "object", properties: Object.fromEntries(args.map((a) => [a, { type: "string" }])) },
});
const server = (name: string, tools: ReturnType<typeof tool>[]) => ({ name, tags: [], useWhen: [], tools });

/** Two blind catalogs (Contentful, Strapi, Figma, YouTube; GitHub, Slack…) and five servers of LiveMCPBench's. */
async function catalog() {
  const servers = [];
  for (const file of ["blind13_catalog.json", "heldout2_catalog.json"]) {
    servers.push(...JSON.parse(await Deno.readTextFile(new URL(file, DATA))).servers);
  }
  const recorded = catalogFromJson({ servers });
  const added = buildCatalog([
    server("youtube-transcript", [
      tool("get_transcript", "Extract transcript from a YouTube video URL or ID", "url", "lang"),
    ]),
    server("mindmap", [
      tool(
        "convert_markdown_to_mindmap",
        "Convert Markdown content to a mindmap mind map.",
        "markdown_content",
      ),
    ]),
    server("mcp-server-chart", [
      tool(
        "generate_mind_map",
        "Generate a mind map chart to organizes and presents information in a hierarchical structure with branches " +
          "radiating from a central topic, such as, a diagram showing the relationship between a main topic and its subtopics.",
        "data",
      ),
    ]),
    server("wikipedia", [
      tool(
        "extract_key_facts",
        "Extract key facts from a Wikipedia article, optionally focused on a topic.",
        "title",
      ),
    ]),
    server("image-extractor", [
      tool(
        "extract_image_from_url",
        "Extract and analyze images from web URLs. Perfect for analyzing web screenshots, online photos, diagrams, " +
          "or any image accessible via HTTP/HTTPS for visual content analysis and text extraction.",
        "url",
      ),
    ]),
  ]);
  return buildIndex([...recorded, ...added]);
}

Deno.test("a step whose best tool matches little votes less than the steps naming a tool's object (issue #42)", async () => {
  const index = await catalog();
  const top5 = (q: string) => search(index, q, { maxHits: 5 }).map((h) => h.tool.namespaced);
  // Three steps; the last ("tell me what the main content of the lecture is") names no tool's object, and its
  // best tools (Strapi's relations, by "main" and "content") took the place of the mind map step's converter.
  const found = top5(
    "Extract the key points of this TED talk in https://www.youtube.com/watch?v=arj7oStGLkU, organize them into " +
      "a mind map, and tell me what the main content of the lecture is.",
  );
  assert.ok(found.includes("youtube-transcript__get_transcript"), found.join(" "));
  assert.ok(found.includes("mindmap__convert_markdown_to_mindmap"), found.join(" "));
});
