// `openclaw-state/runtime`: the runtime's session and transcript helpers over the state databases (read-only except deleteSessionEntry).
export type { RuntimeStoreParams, AgentParams } from "./store.js";
export {
  getSessionEntryAsync,
  getSessionEntryByIdAsync,
  listSessionEntries,
  readSessionUpdatedAtAsync,
  getConversationSessionAsync,
  type SessionEntry,
  type SessionEntryMatch,
  type SessionKeyParams,
  type SessionIdParams,
  type ConversationAddressParams,
  type ConversationSession,
} from "./session-entries.js";
export {
  readSessionTranscriptVisibleMessageDelta,
  DEFAULT_MAX_MESSAGES,
  MAX_MESSAGES_CAP,
  type TranscriptStart,
  type TranscriptIdentityParams,
  type VisibleMessageDeltaParams,
  type VisibleMessageDeltaResult,
  type VisibleMessagePage,
  type VisibleMessageReset,
  type VisibleResetReason,
  type TranscriptUnavailable,
  type TranscriptMissingResult,
} from "./visible-delta.js";
export type { SessionTranscriptMessageEntry } from "./message-rows.js";
export {
  readSessionTranscriptRawDelta,
  readSessionTranscriptEvents,
  readVisibleSessionTranscriptMessageEntries,
  type RawDeltaParams,
  type RawDeltaResult,
  type RawDeltaPage,
  type RawDeltaReset,
  type RawTranscriptEvent,
  type TranscriptEventsParams,
  type SessionTranscriptEvents,
  type SessionTranscriptEvent,
  type VisibleEntriesParams,
} from "./transcript-reads.js";
export {
  readSessionTranscriptCatalogPage,
  CATALOG_DEFAULT_LIMIT,
  CATALOG_MAX_LIMIT,
  CATALOG_DEFAULT_ITEM_CHARS,
  CATALOG_SCAN_ENTRIES,
  CATALOG_PAGE_BYTES,
  type CatalogPageParams,
  type CatalogPage,
  type CatalogItem,
} from "./catalog.js";
export { deleteSessionEntry, type DeleteSessionEntryParams, type DeleteSessionEntryResult } from "./delete-session.js";
export type { SessionBackupResult } from "./session-backup.js";
export {
  TRANSCRIPT_DEFAULT_MAX_BYTES,
  TRANSCRIPT_DEFAULT_MAX_EVENTS,
  TRANSCRIPT_MAX_BYTES_CAP,
  TRANSCRIPT_MAX_EVENTS_CAP,
  type TranscriptResetReason,
} from "../state/transcript-reader.js";
export { OpenclawStateError, UsageError, NotFoundError, OperationError, StateLockedError, DatabaseError, SchemaVersionError, SchemaFormatError } from "../core/errors.js";
