// Shared backup types: the archive manifest (schemaVersion 1), assets, skipped items and progress events.

export const MANIFEST_SCHEMA_VERSION = 1;
export const MANIFEST_FORMAT = "openclaw-state-backup";
export const MANIFEST_NAME = "manifest.json";
export const PAYLOAD_DIR = "payload";
export const ARCHIVE_SUFFIX = ".tar.gz";
/** Default archive names end with this, after an ISO time with ':' replaced by '-'. */
export const DEFAULT_ARCHIVE_TAIL = "-openclaw-backup.tar.gz";

export type AssetKind = "state" | "config" | "credentials" | "workspace";

/** One top-level thing the archive holds: a directory tree or a single file. */
export interface BackupAsset {
  kind: AssetKind;
  /** The path as configured (before symlink resolution). */
  sourcePath: string;
  /** Archive-relative path of the asset's root, e.g. `payload/state`. */
  archivePath: string;
  type: "dir" | "file";
  /** Paths inside the asset (relative, '/'-separated) that were left out on purpose, e.g. a backups dir. */
  excluded: string[];
}

export interface SkippedItem {
  path: string;
  reason: string;
  kind?: AssetKind | "file" | "special" | "sidecar" | "symlink";
}

export interface ManifestFile {
  /** Archive-relative path (under `payload/`), '/'-separated. */
  archivePath: string;
  size: number;
  /** Hex sha256 of the archived bytes; null only in a dry-run manifest. */
  sha256: string | null;
  /** Permission bits as archived (0600, or 0700 for executables). */
  mode: number;
  mtimeMs: number;
  /** A plain file's body as a segment of its own (absent for small files, databases, dry-runs, earlier versions): what a later archive may copy. */
  body?: ManifestFileBody;
  /** The live file's stat identity when it was read, provably unchanged and not racy (absent otherwise). */
  sourceState?: ManifestFileStamp;
}

/** A plain file's body (content + tar padding) as whole gzip members / zstd frames, `offset` bytes after the payload's first byte. */
export interface ManifestFileBody extends ManifestBody {
  offset: number;
}

/** Stat identity of a file (decimal strings: 64-bit values and nanoseconds do not fit a JSON number). */
export interface ManifestFileStamp {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

export interface ManifestDirectory {
  archivePath: string;
}

export interface ManifestSymlink {
  archivePath: string;
  /** The link text, recorded as-is and never followed. */
  target: string;
}

export type DatabaseRole = "global" | "agent" | "other";

export interface ManifestDatabase {
  role: DatabaseRole;
  agentId: string | null;
  sourcePath: string;
  archivePath: string;
  /** PRAGMA user_version of the snapshot. */
  schemaVersion: number;
  pageCount: number;
  pageSize: number;
  rowCounts: Record<string, number>;
  /** "ok" after integrity_check passed; "not-checked" in a dry-run. */
  integrity: "ok" | "not-checked";
  sizeBytes: number;
  sha256: string | null;
  /** The body's compressed bytes in this archive (absent in dry-runs and archives of earlier versions): what a later archive may copy. */
  body?: ManifestBody;
  /** The live database when it was snapshotted, provably unchanged during the snapshot (absent otherwise). */
  sourceState?: ManifestSourceState;
}

/** A database body's compressed bytes (content + tar padding, whole gzip members / zstd frames). */
export interface ManifestBody {
  compression: "gzip" | "zstd" | "none";
  length: number;
  /** sha256 of the compressed bytes. */
  sha256: string;
}

/** Stat identity of a database's main file, -wal and -journal (null where absent), and its header's counters. */
export interface ManifestSourceState {
  files: Array<ManifestFileStamp | null>;
  /** The main file header's change counter and schema version (user_version); null when it could not be read. */
  header: { changeCounter: number; schemaVersion: number } | null;
}

/**
 * Why an archive was taken, recorded so that prune can protect an archive by what it is rather than by how it looks
 * (absent in manifests written before this field: prune then falls back to the old fingerprint).
 */
export const BACKUP_PURPOSES = ["backup", "pre-migration", "pre-restore", "pre-reset"] as const;
export type BackupPurpose = (typeof BACKUP_PURPOSES)[number];

export interface BackupManifest {
  schemaVersion: typeof MANIFEST_SCHEMA_VERSION;
  format: typeof MANIFEST_FORMAT;
  runId: string;
  createdAt: string;
  archiveRoot: string;
  tool: { name: string; version: string };
  platform: { os: string; arch: string; release: string };
  nodeVersion: string;
  options: { onlyConfig: boolean; includeWorkspace: boolean; verify: boolean; dryRun: boolean; purpose?: BackupPurpose };
  paths: { homeDir: string; stateDir: string; configPath: string; credentialsDir: string; backupDir: string };
  assets: BackupAsset[];
  skipped: SkippedItem[];
  directories: ManifestDirectory[];
  files: ManifestFile[];
  symlinks: ManifestSymlink[];
  databases: ManifestDatabase[];
  totals: { files: number; bytes: number; databases: number; directories: number; symlinks: number };
}

export type BackupPhase = "plan" | "snapshot" | "archive" | "finalize" | "verify" | "extract" | "swap";

export interface BackupProgressEvent {
  phase: BackupPhase;
  bytesDone: number;
  bytesTotal?: number;
  path?: string;
}

export type ProgressCallback = (event: BackupProgressEvent) => void;
