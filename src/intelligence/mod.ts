/**
 * Local usage intelligence: call records, stats queries and the `mcphub stats`
 * report formats.
 *
 * @module
 */
export {
  type CallRecord,
  type CallVia,
  capUtf8,
  intelligenceMigrations,
  MAX_ERROR_BYTES,
  Recorder,
  type RecorderOptions,
} from "./recorder.ts";
export {
  parseSince,
  queryStats,
  type RecentCall,
  type ServerStats,
  SINCE_FORMS,
  statsMetaTool,
  type StatsMetaToolResult,
  type StatsQuery,
  type StatsReport,
  type StatsTotals,
  type ToolStats,
  type TopTool,
  topTools,
  type TopToolsOptions,
} from "./query.ts";
export {
  describeWindow,
  formatStatsJson,
  formatStatsMarkdown,
  formatStatsText,
  formatWhen,
  noDataSentence,
  type StatsFormatOptions,
} from "./format.ts";
