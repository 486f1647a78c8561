/**
 * Elicitation modes (MCP 2025-11-25 added URL mode): which a host's capabilities offer, and the refusal
 * of a request in a mode it does not. `elicitation: {}` (as 2025-06-18 hosts declare it) offers form mode
 * only; `url` must be declared (`elicitation: {form: {}, url: {}}`). A URL-mode request asks the host to
 * open a URL (sign-in, payment) out of band; the server later sends `notifications/elicitation/complete`
 * with the request's `elicitationId` (2025-11-25; the 2026-07-28 revision has neither the id nor the
 * notification: the host's retry carries the answer).
 *
 * @module
 */

type Params = Record<string, unknown>;

/** The mode of an `elicitation/create` request: "url", or "form" (also when absent). */
export function elicitationMode(params: Params | undefined): string {
  return typeof params?.mode === "string" ? params.mode : "form";
}

/**
 * Why a host with capabilities `caps` cannot take an `elicitation/create` with `params`, or undefined
 * when it can (the rule the SDK's client applies to its own capabilities).
 */
export function elicitationRefusal(caps: Params | undefined, params: Params | undefined): string | undefined {
  const elicitation = caps?.elicitation as Params | undefined;
  if (!elicitation) return "the host does not offer elicitation";
  const mode = elicitationMode(params);
  const url = elicitation.url !== undefined;
  const form = elicitation.form !== undefined || !url;
  if (mode === "url" && !url) {
    return 'the host does not offer URL-mode elicitation (its capabilities have no "elicitation.url"), so it ' +
      "cannot show the server's URL";
  }
  if (mode === "form" && !form) return 'the host offers only URL-mode elicitation (no "elicitation.form")';
  if (mode !== "url" && mode !== "form") {
    return `unknown elicitation mode ${JSON.stringify(mode.slice(0, 40))}`;
  }
  return undefined;
}
