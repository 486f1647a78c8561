/**
 * Local usage intelligence: call records, stats queries and the `mcphub stats`
 * report formats.
 *
 * @module
 */
export * from "./light.ts";
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
  formatCount,
  formatMs,
  formatRate,
  formatStatsJson,
  formatStatsMarkdown,
  formatStatsText,
  formatWhen,
  noDataSentence,
  plural,
  type StatsFormatOptions,
  statsSummaryLine,
} from "./format.ts";
export {
  bucketStart,
  MAX_DAYS,
  MAX_WEEKS,
  queryReportData,
  type ReportBucket,
  type ReportData,
  type ReportQuery,
  type ReportServer,
  type ReportTool,
  type ReportTotals,
} from "./report_data.ts";
export {
  type LiveServer,
  MAX_CHART_ROWS,
  MAX_SERIES,
  renderStatsHtml,
  type StatsHtmlOptions,
} from "./html.ts";
export { escapeHtml, niceScale } from "./svg.ts";
