/**
 * The sixteenth ranking pass, part B (issue #42, changes 520–539): the action of a long imperative request.
 * An agent types one task and its arguments ("store STRIPE_SECRET=sk_test_x as a secret on worker billing-api");
 * the values it pastes are no words of the task. Written with made-up tools.
 */
import assert from "node:assert/strict";
import { ranked, schemaTool as tool, serversIndex as index } from "./_bench_catalog.ts";
import { ACTION, requestAction } from "../../src/resolver/actions.ts";

Deno.test("520: ids, KEY=value pairs and addresses typed into a request are no words of its task (#42)", () => {
  // Each is eight content words or fewer once its values are left out; counted, they were over the cap.
  assert.equal(
    requestAction("store STRIPE_SECRET=sk_test_dummy123 as an encrypted secret on edge worker billing-api"),
    ACTION.create,
  );
  assert.notEqual(
    requestAction(
      "publish entries 4fKx9aT2mQpL0sWv1eRbNc, 7hQmZ1pLxY3kT8uJ2aBcDe and 2bNc8rWeLm5pQ7sT0vXyZa now",
    ),
    0,
  );
  assert.notEqual(
    requestAction("add jane.doe@acme.io to the vault org as a normal user, she can accept it"),
    0,
  );
  // A path or URL names what is acted on: its words still count ("write a tutorial … at /root/…" reads first).
  assert.equal(
    requestAction(
      "Help me write a quick start tutorial for Ant Design in markdown at /root/markdown/antd_tutorial.md.",
    ),
    0,
  );
  // A word joined to a number by a hyphen is a word ("1-star"), not an identifier.
  assert.equal(
    requestAction("Reply to the 1-star App Store review from somebody — say sorry, a fix is coming in 3.1."),
    0,
  );
  const i = index([
    ["edge", [
      tool("secret_list", "List the names of the secrets bound to a worker script.", ["script_name"], [
        "script_name",
      ]),
      tool("secret_put", "Create or update an encrypted secret on a worker script.", [
        "script_name",
        "name",
        "text",
      ]),
      tool("secret_delete", "Delete a secret from a worker script.", ["script_name", "name"]),
      tool("worker_list", "List the worker scripts of the account."),
      tool("env_var_list", "List the plain-text environment variables of a worker script.", ["script_name"]),
    ]],
  ]);
  assert.equal(
    ranked(i, "store STRIPE_SECRET=sk_test_dummy123 as an encrypted secret on edge worker billing-api")[0],
    "secret_put",
  );
});

Deno.test("521: a task typed as a verb, its object and a named value reads the verb's clause only (#42)", () => {
  const request =
    "run the shop AI action 5kUoaYb3PqRs with productName='Trailrunner X', plain text output, " +
    "block until it's finished";
  assert.equal(requestAction(request), ACTION.run);
  // Without a value given by its name, a long request is still a described task: no action read.
  assert.equal(
    requestAction(
      "run the nightly report job for the finance team, plain text output, block until it's finished",
    ),
    0,
  );
  // …and a request that does not open on its verb is none either.
  assert.equal(
    requestAction(
      "Before we send the quarterly numbers to partner_team the legal reviewers and finance director must " +
        "approve every contract draft, it's item 01C0NF99QQ",
    ),
    0,
  );
  const i = index([
    ["shop", [
      tool("get_ai_action", "Get the definition of an AI action: its instruction and variables.", [
        "action_id",
      ]),
      tool(
        "invoke_ai_action",
        "Invoke an AI action with variables and return its generated output.",
        ["action_id", "variables", "output_format", "wait_for_completion"],
      ),
      tool("list_ai_actions", "List the AI actions of a space."),
      tool("get_ai_action_invocation", "Get the status and result of an AI action invocation by its id."),
    ]],
  ]);
  assert.equal(ranked(i, request)[0], "invoke_ai_action");
});
