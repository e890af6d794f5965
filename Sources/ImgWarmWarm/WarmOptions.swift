import Foundation
import ImgWarmDecode

/// The flow options of `warm` (docs/cli-contract.md), independent of the CLI.
public struct WarmOptions: Sendable {
    public var refresh = false
    public var retryFailed = false
    public var validation = ValidationOptions()
    /// `--dry-run`: decide, never request or write.
    public var dryRun = false
    /// `--budget`: stop fetching new entries once the cache would pass it.
    public var budgetBytes: UInt64?
    /// Entries handed to the engine and not yet finished, at most; keeps
    /// memory bounded by concurrency, not by the manifest.
    public var pipelineDepth = 64
    /// Entries that must finish before a sleeping feeder is woken
    /// (`FeedWindow`); nil: half of `pipelineDepth`.
    public var pipelineWakeBatch: Int?
    /// Workers after the engine: decoders, or the store writers of a run
    /// without decoding (`RunThreads`).
    public var validationWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// Whether an entry that needs no decoding and no `--budget` ticket is
    /// written on the engine thread that completed it instead of by a
    /// worker (`RunThreads.storesOnEngine`).
    public var storesOnEngine = false
    public init() {}

    var triage: Triage.Options { Triage.Options(refresh: refresh, retryFailed: retryFailed, dryRun: dryRun) }
}
