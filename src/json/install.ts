/**
 * Installs the JSON guard ({@linkcode installJsonGuard}) when loaded: main.ts imports this module first,
 * so the guard is in place before any other module (the MCP SDK included) is even evaluated.
 *
 * @module
 */
import { installJsonGuard } from "./guard.ts";

installJsonGuard();
