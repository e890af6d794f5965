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
    /// Validation workers (off the network thread).
    public var validationWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)
    public init() {}

    /// Download threads when `--download-threads` is not given: nil leaves
    /// the engine's rule (one per core, `LoopSplit`), 1 when nothing is
    /// decoded. Without decoding each file's whole work (receive, write,
    /// record) is done on the engine thread that received it, and a
    /// second thread doubles the wakeups: 20,000 thumbnails on 2 cores
    /// switched tasks 11,300-15,100 times against 3,200-4,300 and cost
    /// 0.16 CPU-s more (13%) for 6% of wall time. With decoding the
    /// engine threads share the cores with the decoders, and two keep
    /// them fed (1.72 s against 1.81 s). docs/performance.md has the runs.
    public static func automaticDownloadThreads(decoding: Bool) -> Int? { decoding ? nil : 1 }

    var triage: Triage.Options { Triage.Options(refresh: refresh, retryFailed: retryFailed, dryRun: dryRun) }
}
