/**
 * The fifteenth ranking pass, part B (issue #42, changes 360–379): real catalogs' vocabulary and schemas. A
 * request's words are read for what they say of the thing acted on, not matched against every field a tool's
 * schema names.
 */
import assert from "node:assert/strict";
import { buildCatalog } from "../../src/catalog/mod.ts";
import { assess, buildIndex, rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { benchIndex } from "./_bench_catalog.ts";

/** A tool of an excerpt with the properties of its input schema (each with its description). */
function tool(name: string, description: string, properties: Record<string, string> = {}) {
  const props = Object.fromEntries(
    Object.entries(properties).map(([k, d]) => [k, { type: "string", description: d }]),
  );
  return { name, description, inputSchema: { type: "object", properties: props } };
}

function index(name: string, tools: ReturnType<typeof tool>[]): ResolverIndex {
  return buildIndex(buildCatalog([{ name, description: "", tags: [], useWhen: [], tools }]));
}

const first = (i: ResolverIndex, request: string, n = 1) =>
  rankQuery(i, request, { maxHits: n }).hits.map((h) => h.tool.short);

/** A helpdesk's ticket tools, as its `tools/list` describes them (blind15's Freshdesk, abridged). */
const helpdesk = () =>
  index("freshdesk", [
    tool(
      "create_freshdesk_ticket",
      "Create a new Freshdesk ticket. Required: email, subject, description (HTML body). PRIORITY: 1=Low, " +
        "2=Medium, 3=High, 4=Urgent (or names). STATUS: 2=Open, 3=Pending, 4=Resolved, 5=Closed (or names).",
      {
        email: "Requester email address (required)",
        subject: "Ticket subject line",
        description: "Ticket description (HTML supported)",
        priority: "Priority: 1=Low, 2=Medium, 3=High, 4=Urgent (or names)",
        status: "Status: 2=Open, 3=Pending, 4=Resolved, 5=Closed (or names)",
        type: 'Ticket type (e.g. "Bug", "Question")',
        tags: "Tags to apply",
        responder_id: "Agent ID to assign ticket to",
        group_id: "Group ID to assign ticket to",
        custom_fields: "Custom field values as key-value pairs",
      },
    ),
    tool(
      "get_freshdesk_ticket",
      "Get a single Freshdesk ticket by ID with optional conversations. Set include_conversations to true to " +
        "fetch the conversation thread (replies and notes).",
      { ticket_id: "Ticket ID", include_conversations: "Include the conversation thread" },
    ),
    tool(
      "reply_to_freshdesk_ticket",
      "Add a public reply to a Freshdesk ticket. The reply is visible to the customer. For internal notes use " +
        "add_freshdesk_note instead.",
      { ticket_id: "Ticket ID", body: "Reply body (HTML)" },
    ),
    tool(
      "add_freshdesk_note",
      "Add a note to a Freshdesk ticket. Default: private (agents only). Set private to false for a note visible " +
        "to the requester. For public replies use reply_to_freshdesk_ticket.",
      { ticket_id: "Ticket ID", body: "Note body (HTML)", private: "Private note (agents only)" },
    ),
  ]);

Deno.test("360: a thing named by its identifier exists: the tool making one of its kind is not first (#42)", async () => {
  const freshdesk = helpdesk();
  // The ticket exists: a reply on it is offered, no new ticket first (its schema names "customer" and more).
  const blind15 = await benchIndex("blind15_catalog.json");
  const reply = first(
    blind15,
    "on ticket 51877 let the customer know the fix went live this morning and they just need to log out and back " +
      "in. they'll read this so keep it friendly",
    5,
  );
  assert.notEqual(reply[0], "create_freshdesk_ticket");
  assert.ok(reply.includes("reply_to_freshdesk_ticket"), reply.join(" "));
  // A new ticket is still made when none is named.
  assert.equal(
    first(freshdesk, "open a new ticket for jane@acme.io: refund still not processed")[0],
    "create_freshdesk_ticket",
  );
  // The call exists: its recordings are listed, no call is made.
  assert.equal(
    first(
      blind15,
      "were there any recordings made on call CA77aa88bb99cc00dd11ee22ff33aa44bb? QA wants to listen to it",
    )[0],
    "TwilioApiV2010--ListRecording",
  );
});

Deno.test("360: a file name, a place under a thing and a noun used apart name no existing thing (#42)", () => {
  const comments = index("cms", [
    tool("create_comment", "Create a comment on an entry. Set parent to reply to a comment.", {
      entry_id: "Entry id",
      parent: "Comment to reply to",
      body: "Comment text",
    }),
    tool("get_comments", "Get the comments of an entry.", { entry_id: "Entry id" }),
    tool("delete_comment", "Delete a comment.", { comment_id: "Comment id" }),
  ]);
  // "under her comment c-991": a new comment goes there.
  assert.equal(
    first(comments, "answer Maria under her comment c-991 on entry 6aB9: image is fixed")[0],
    "create_comment",
  );
  const tags = index("notes", [
    tool("add-tags", "Add tags to notes.", { files: "Note files", tags: "Tags to add" }),
    tool("remove-tags", "Remove tags from notes.", { files: "Note files", tags: "Tags to remove" }),
  ]);
  // "tag meeting-0412.md": a file, no tag named 0412.
  assert.equal(first(tags, "tag meeting-0412.md and meeting-0419.md with project/apollo")[0], "add-tags");
});

Deno.test("361: bouncing a machine or a service restarts it (#42)", async () => {
  const blind19 = await benchIndex("blind19_catalog.json");
  assert.equal(
    first(blind19, "bounce droplet 38119204, nginx on it stopped answering and i cant ssh in")[0],
    "reboot-droplet",
  );
  const blind12 = await benchIndex("blind12_catalog.json");
  const restart = first(
    blind12,
    "the worker on railway is stuck with stale memory. just bounce it, no new deploy needed",
    5,
  );
  assert.ok(restart.includes("service_restart"), restart.join(" "));
});

Deno.test("362: kicking something off starts it (#42)", async () => {
  const reference = await benchIndex("plain_catalog.json");
  const ranked = rankQuery(
    reference,
    "kick off something slow that reports progress, 10 seconds, 5 steps - testing my progress bar",
    {
      maxHits: 5,
    },
  );
  assert.equal(ranked.hits[0]?.tool.short, "trigger-long-running-operation");
  assert.equal(assess(ranked).status, "ambiguous");
});

Deno.test("363: cloning a thing copies or duplicates it (#42)", async () => {
  const blind16 = await benchIndex("blind16_catalog.json");
  const ranked = first(
    blind16,
    'clone the Template tab (sheetId 0) in our weekly report file 1WkRpt55 and name the copy "Week 23"',
    5,
  );
  assert.ok(ranked.includes("sheets_duplicate_sheet"), ranked.join(" "));
});

Deno.test("364: a picture of what a screen or page shows is a screenshot (#42)", async () => {
  const blind17 = await benchIndex("blind17_catalog.json");
  assert.equal(
    first(blind17, "snap a picture of what the remote browser is showing, whole page please")[0],
    "screenshot",
  );
});

Deno.test("365: what one can use instead of a thing is a substitute for it (#42)", async () => {
  const blind22 = await benchIndex("blind22_catalog.json");
  const ranked = rankQuery(blind22, "out of buttermilk — what can i use instead?", { maxHits: 5 });
  assert.equal(ranked.hits[0]?.tool.short, "substitute");
  assert.equal(assess(ranked).status, "ambiguous");
});
