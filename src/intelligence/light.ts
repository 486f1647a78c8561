/**
 * The call recorder and its PostgreSQL sink, without the stats queries, formats and the HTML report:
 * what `mcp serve` needs before it answers the host's `initialize` (start-up time; the `stats` meta-tool
 * loads `mod.ts` on its first call). `mod.ts` is all of it.
 *
 * @module
 */
export {
  type CallRecord,
  type CallVia,
  capUtf8,
  INSERT_COLUMNS,
  intelligenceMigrations,
  MAX_ERROR_BYTES,
  Recorder,
  type RecorderOptions,
  type RecordRow,
  type RecordSink,
} from "./recorder.ts";
export { pgIntelligenceMigrations, pgRecordSink } from "./pg.ts";
