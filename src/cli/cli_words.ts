/**
 * Messages from the shared discovery code name meta-tools (`search_tools`,
 * `list_servers`, …), which is right for an agent. A person at the CLI gets the
 * command that does the same.
 *
 * @module
 */

/** Meta-tool name -> the CLI command a person runs instead. */
function commandFor(tool: string, query: string): string {
  switch (tool) {
    case "list_servers":
      return "mcphub list";
    case "describe_tool":
      return "mcphub describe server__tool";
    default: // search_tools, resolve_tool
      return `mcphub search ${JSON.stringify(query)}`;
  }
}

/**
 * `text` with meta-tool names replaced by CLI commands: the `describe_tool: ` style prefix goes,
 * "Call search_tools …" becomes "Run `mcphub search "QUERY"` …" ("call" -> "run"), "list_servers" becomes `mcphub list`.
 * Names without a CLI equivalent (call_tool, get_result, poll_result) are left as they are.
 */
export function cliWords(text: string, query = "what you want to do"): string {
  const names = "list_servers|search_tools|resolve_tool|describe_tool";
  return text
    .replace(new RegExp(`^(?:mcphub__)?(?:${names}): `), "")
    .replace(
      new RegExp(`\\b([Cc])all (${names})\\b`, "g"),
      (_, c: string, tool: string) => `${c === "C" ? "R" : "r"}un \`${commandFor(tool, query)}\``,
    )
    .replace(new RegExp(`\\b(${names})\\b`, "g"), (_, tool: string) => `\`${commandFor(tool, query)}\``);
}

/** Search words for a tool name: `fx__big_file` -> `fx big file`. */
export function nameAsQuery(name: string): string {
  return name.replace(/[_\-.]+/g, " ").trim();
}
