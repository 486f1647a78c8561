/**
 * The GitHub workflows parse as YAML and keep their shape: CI runs `deno task ok` on three OSes with a
 * pinned Deno and Node; a `v*` tag builds every target and attaches binaries and checksums.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { ROOT } from "../helpers.ts";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  "working-directory"?: string;
}

interface Job {
  "runs-on": string;
  strategy?: { matrix: { os: string[] } };
  steps: Step[];
}

interface Workflow {
  name: string;
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

async function workflow(name: string): Promise<Workflow> {
  return parse(await Deno.readTextFile(`${ROOT}.github/workflows/${name}`)) as Workflow;
}

function uses(job: Job, action: string): Step {
  const step = job.steps.find((s) => s.uses?.split("@")[0] === action);
  assert.ok(step, `a step uses ${action}`);
  assert.match(step.uses!, /@v\d+$/, `${action} is pinned to a major version`);
  return step;
}

function runs(job: Job, command: string): number {
  const index = job.steps.findIndex((s) => s.run?.trim() === command);
  assert.ok(index >= 0, `a step runs "${command}"`);
  return index;
}

Deno.test("ci.yml runs deno task ok on ubuntu, macos and windows with Deno 2.9 and Node", async () => {
  const ci = await workflow("ci.yml");
  assert.ok("push" in ci.on);
  assert.equal(ci.permissions.contents, "read");
  const jobs = Object.values(ci.jobs);
  assert.equal(jobs.length, 1);
  const job = jobs[0]!;
  assert.deepEqual(job.strategy?.matrix.os, ["ubuntu-latest", "macos-latest", "windows-latest"]);
  assert.equal(job["runs-on"], "${{ matrix.os }}");
  const deno = uses(job, "denoland/setup-deno");
  assert.match(String(deno.with?.["deno-version"]), /^v2\.9\.\d+$/);
  assert.ok(uses(job, "actions/setup-node").with?.["node-version"]);
  const checkout = job.steps.indexOf(uses(job, "actions/checkout"));
  const lf = job.steps.findIndex((s) => s.run?.includes("core.autocrlf false"));
  assert.ok(lf >= 0 && lf < checkout, "Windows keeps LF endings: set before checkout");
  assert.ok(runs(job, "deno task ok") > checkout);
});

Deno.test("release.yml builds every target on a v* tag and attaches binaries and SHA-256 sums", async () => {
  const release = await workflow("release.yml");
  const ci = await workflow("ci.yml");
  assert.deepEqual(release.on, { push: { tags: ["v*"] } });
  assert.equal(release.permissions.contents, "write");
  const job = Object.values(release.jobs)[0]!;
  assert.equal(
    uses(job, "denoland/setup-deno").with?.["deno-version"],
    uses(Object.values(ci.jobs)[0]!, "denoland/setup-deno").with?.["deno-version"],
    "CI and release pin the same Deno",
  );
  const ok = runs(job, "deno task ok");
  const compile = runs(job, "deno task compile");
  assert.ok(ok < compile, "checked before it is built");
  const verify = job.steps.findIndex((s) => /sha256sum --check/.test(s.run ?? ""));
  assert.ok(verify > compile);
  const publish = uses(job, "softprops/action-gh-release");
  assert.ok(job.steps.indexOf(publish) > verify);
  const files = String(publish.with?.files).trim().split("\n");
  assert.deepEqual(files, ["dist/mcphub-*", "dist/SHA256SUMS"]);
  assert.equal(publish.with?.fail_on_unmatched_files, true);
});
