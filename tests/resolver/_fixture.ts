/**
 * A small catalog shaped like real MCP servers (filesystem, GitHub, fetch,
 * time, a geocoder), shared by the resolver tests.
 *
 * @module
 */
import {
  buildCatalog,
  type CatalogServer,
  type CatalogTool,
  type ToolDefinition,
} from "../../src/catalog/mod.ts";

function tool(
  name: string,
  description: string,
  props: string[] = [],
  required: string[] = [],
): ToolDefinition {
  return {
    name,
    description,
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(props.map((p) => [p, { type: "string" }])),
      required,
    },
  };
}

/** Servers of the fixture catalog. */
export function fixtureServers(): CatalogServer[] {
  return [
    {
      name: "filesystem",
      description: "Secure file operations within allowed directories",
      tags: ["files"],
      useWhen: ["reading or editing local files"],
      tools: [
        tool(
          "read_text_file",
          "Read the complete contents of a file from the file system as text. Handles various text encodings.",
          ["path", "head", "tail"],
          ["path"],
        ),
        tool(
          "read_media_file",
          "Read an image or audio file. Returns the base64 encoded data and MIME type.",
          [
            "path",
          ],
          ["path"],
        ),
        tool(
          "read_multiple_files",
          "Read the contents of multiple files simultaneously. More efficient than reading files one by one.",
          ["paths"],
          ["paths"],
        ),
        tool(
          "write_file",
          "Create a new file or completely overwrite an existing file with new content.",
          ["path", "content"],
          ["path", "content"],
        ),
        tool("edit_file", "Make line-based edits to a text file. Returns a git-style diff.", [
          "path",
          "edits",
          "dryRun",
        ], ["path", "edits"]),
        tool("create_directory", "Create a new directory or ensure a directory exists.", ["path"], ["path"]),
        tool("list_directory", "Get a detailed listing of all files and directories in a specified path.", [
          "path",
        ], ["path"]),
        tool("directory_tree", "Get a recursive tree view of files and directories as a JSON structure.", [
          "path",
        ], ["path"]),
        tool("move_file", "Move or rename files and directories.", ["source", "destination"], [
          "source",
          "destination",
        ]),
        tool(
          "search_files",
          "Recursively search for files and directories matching a pattern.",
          ["path", "pattern", "excludePatterns"],
          ["path", "pattern"],
        ),
        tool(
          "get_file_info",
          "Retrieve detailed metadata about a file or directory: size, times, permissions.",
          [
            "path",
          ],
          ["path"],
        ),
      ],
    },
    {
      name: "github",
      description: "GitHub API: repositories, issues, pull requests",
      tags: ["code"],
      tools: [
        tool("github_search_repositories", "Search for GitHub repositories", ["query", "page"], ["query"]),
        tool("github_create_issue", "Create a new issue in a GitHub repository", [
          "owner",
          "repo",
          "title",
          "body",
        ], ["owner", "repo", "title"]),
        tool("github_list_commits", "Get list of commits of a branch in a GitHub repository", [
          "owner",
          "repo",
          "sha",
        ], ["owner", "repo"]),
        tool("github_get_file_contents", "Get the contents of a file or directory from a GitHub repository", [
          "owner",
          "repo",
          "path",
        ], ["owner", "repo", "path"]),
      ],
    },
    {
      name: "fetch",
      description: "Web content fetching",
      tools: [
        tool("fetch", "Fetches a URL from the internet and extracts its contents as markdown.", ["url"], [
          "url",
        ]),
      ],
    },
    {
      name: "time",
      description: "Time and timezone conversion",
      tools: [
        tool("get_current_time", "Get current time in a specific timezone", ["timezone"], ["timezone"]),
        tool("convert_time", "Convert time between timezones", [
          "source_timezone",
          "time",
          "target_timezone",
        ]),
      ],
    },
    {
      name: "maps",
      description: "Places, geocoding and routes",
      tools: [
        tool("geocode_address", "Convert an address or place name to latitude and longitude coordinates.", [
          "address",
        ], ["address"]),
        tool("find_nearby_places", "Find points of interest near a location.", [
          "latitude",
          "longitude",
          "radius",
        ], [
          "latitude",
          "longitude",
        ]),
      ],
    },
  ];
}

/** The fixture catalog, as the gateway builds it. */
export function fixtureCatalog(): CatalogTool[] {
  return buildCatalog(fixtureServers());
}
