// The importer registry: one module per legacy source kind; a new kind is a new file added here.
import type { SourceImporter, SourceKind } from "../types.js";
import { authJsonImporter } from "./auth-json.js";
import { authProfilesImporter } from "./auth-profiles.js";
import { authStateImporter } from "./auth-state.js";
import { cronJobsImporter } from "./cron-jobs.js";
import { cronRunsImporter } from "./cron-runs.js";
import { cronStateImporter } from "./cron-state.js";
import { deliveryQueueImporter } from "./delivery-queue.js";
import { execApprovalsImporter } from "./exec-approvals.js";
import { oauthCredentialsImporter } from "./oauth-credentials.js";
import { sessionsIndexImporter } from "./sessions-index.js";
import { subagentRunsImporter } from "./subagent-runs.js";
import { transcriptImporter } from "./transcript.js";
import { conversationBindingsImporter } from "./conversation-bindings.js";
import { deviceAuthImporter, deviceIdentityImporter, devicePairingImporter, nodePairingImporter } from "./devices.js";
import { modelCatalogsImporter } from "./model-catalogs.js";
import { acpxProcessLeasesImporter } from "./acpx-process-leases.js";
import { auditLogsImporter, configAuditImporter, gatewayInstanceIdImporter, pluginInstallsImporter, ttsSettingsImporter } from "./plugin-state-files.js";
import { acpEventLedgerImporter } from "./acp-ledger.js";
import { channelAllowFromImporter, channelPairingImporter } from "./channel-pairing.js";
import { pluginBindingApprovalsImporter, restartSentinelImporter, voicewakeRoutingImporter, voicewakeTriggersImporter } from "./gateway-settings.js";
import { mediaImporter } from "./media.js";
import { apnsRegistrationsImporter, nodeHostConfigImporter, webPushSubscriptionsImporter, webPushVapidKeysImporter } from "./node-and-push.js";
import { sqliteSidecarImporter } from "./sqlite-sidecars.js";
import { acpStreamImporter, trajectoryImporter } from "./trajectory.js";
import { sandboxRegistryImporter } from "./sandbox-registry.js";
import { commitmentsImporter, configHealthImporter, tuiLastSessionImporter, updateCheckImporter } from "./small-state.js";
import { workspaceStateImporter } from "./workspace-state.js";

/**
 * In import order within each target database: an agent's session indexes before its transcripts
 * (transcripts look up their session row). Agent-database sources run before global-database ones.
 */
export const IMPORTERS: readonly SourceImporter[] = [
  // Agent databases.
  sessionsIndexImporter,
  transcriptImporter,
  // Sidecars after the transcripts: run events attach to the session rows those wrote.
  trajectoryImporter,
  acpStreamImporter,
  // Global database. A store's jobs before its state (merged into the job rows) and its run logs.
  cronJobsImporter,
  cronStateImporter,
  cronRunsImporter,
  // An agent's auth-profiles.json first: it wins over the legacy auth.json and credentials/oauth.json.
  authProfilesImporter,
  authStateImporter,
  authJsonImporter,
  oauthCredentialsImporter,
  execApprovalsImporter,
  deliveryQueueImporter,
  subagentRunsImporter,
  // Issue 5, second half.
  conversationBindingsImporter,
  modelCatalogsImporter,
  deviceIdentityImporter,
  deviceAuthImporter,
  devicePairingImporter,
  nodePairingImporter,
  sandboxRegistryImporter,
  updateCheckImporter,
  configHealthImporter,
  tuiLastSessionImporter,
  commitmentsImporter,
  gatewayInstanceIdImporter,
  ttsSettingsImporter,
  configAuditImporter,
  auditLogsImporter,
  pluginInstallsImporter,
  workspaceStateImporter,
  // Issue 13 item 2: access control first (pairing), then node/push, settings, ledgers, media, sidecars.
  channelAllowFromImporter,
  channelPairingImporter,
  nodeHostConfigImporter,
  webPushSubscriptionsImporter,
  webPushVapidKeysImporter,
  apnsRegistrationsImporter,
  voicewakeTriggersImporter,
  voicewakeRoutingImporter,
  pluginBindingApprovalsImporter,
  restartSentinelImporter,
  acpxProcessLeasesImporter,
  acpEventLedgerImporter,
  mediaImporter,
  sqliteSidecarImporter,
];

export function importerFor(kind: SourceKind): SourceImporter {
  const importer = IMPORTERS.find((i) => i.kind === kind);
  if (!importer) throw new Error(`no importer for source kind ${kind}`);
  return importer;
}

export const SOURCE_KINDS: readonly SourceKind[] = IMPORTERS.map((i) => i.kind);
