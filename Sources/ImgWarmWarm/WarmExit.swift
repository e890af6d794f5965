#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// What a finished `warm` run's exit status is decided on.
public struct WarmEnding: Sendable {
    /// The cache became unusable (disk full, not writable): the run stopped.
    public var fatal: ImgWarmError?
    /// The first SIGINT or SIGTERM received, if any.
    public var signal: Int32?
    /// Distinct entries of this run (this shard's), and entries left to
    /// other shards.
    public var uniqueCount: Int
    public var outsideShard: Int
    /// Whether the input had unusable lines (the message for an empty plan).
    public var hadProblems: Bool
    public var failed: Int
    /// Entries not fetched because an earlier run failed them: missing from
    /// the cache, so they count as failures.
    public var blocked: Int
    public var maxFailures: Int
    /// A --report, --junit or --metrics file could not be written (its
    /// error is already printed).
    public var reportWriteFailed: Bool
    /// Entries finished and entries in all, for the interruption message.
    public var done: Int
    public var total: Int

    public init(fatal: ImgWarmError? = nil, signal: Int32? = nil, uniqueCount: Int, outsideShard: Int = 0,
                hadProblems: Bool = false, failed: Int = 0, blocked: Int = 0, maxFailures: Int = 0, reportWriteFailed: Bool = false,
                done: Int = 0, total: Int = 0) {
        self.fatal = fatal
        self.signal = signal
        self.uniqueCount = uniqueCount
        self.outsideShard = outsideShard
        self.hadProblems = hadProblems
        self.failed = failed
        self.blocked = blocked
        self.maxFailures = maxFailures
        self.reportWriteFailed = reportWriteFailed
        self.done = done
        self.total = total
    }
}

/// The exit status of a `warm` run and the one line that explains it.
public struct WarmExit: Equatable, Sendable {
    public let status: Int32
    /// For standard error; nil when the summary and the failure lines
    /// already say it (success, failures beyond --max-failures).
    public let message: String?

    public init(status: Int32, message: String?) {
        self.status = status
        self.message = message
    }

    /// The first that applies: the cache became unusable (3), a signal
    /// (128 + its number), only unusable lines (1), no entries at all (0,
    /// with a warning), too many failures or
    /// a report not written (1; blocked entries count as failed: they are
    /// missing from the cache), else success.
    public static func decide(_ e: WarmEnding) -> WarmExit {
        if let fatal = e.fatal {
            return WarmExit(status: fatal.exitStatus, message: fatal.isDiskFull
                ? "\(fatal.path ?? ""): disk full; stopped (files already written are intact)" : fatal.description)
        }
        if let sig = e.signal {
            return WarmExit(status: 128 + sig, message:
                "interrupted by \(sig == SIGINT ? "SIGINT" : "SIGTERM"); \(e.done) of \(e.total) \(e.total == 1 ? "entry" : "entries") done"
                    + (e.done < e.total ? ", \(e.total - e.done) not started or cut short (skipped)" : ""))
        }
        // A generated manifest may be empty: nothing to do is no error. A
        // shard may get nothing of a small manifest.
        if e.uniqueCount == 0 && e.outsideShard == 0 {
            // Unusable lines are failed entries.
            return e.hadProblems
                ? WarmExit(status: ExitStatus.entriesFailed, message: "no usable entries in the manifests")
                : WarmExit(status: ExitStatus.success, message: "warning: no entries in the manifests (0 entries)")
        }
        if e.failed + e.blocked > e.maxFailures || e.reportWriteFailed {
            return WarmExit(status: ExitStatus.entriesFailed, message: nil)
        }
        return WarmExit(status: ExitStatus.success, message: nil)
    }
}
