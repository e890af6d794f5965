import ImgWarmSupport
import ImgWarmDownload
/// What to do with one entry before any request: the first stage of `warm`.
///
/// A pure function of the entry's cache lookup, whether its URL is on the
/// failed-URL list, whether the budget is already spent, and the options;
/// the only state it may read, the entry's stored HTTP validators, comes
/// through a closure that is called only for an entry to be revalidated
/// (one SQLite read, and never for the common new entry).
public enum Triage {
    public enum Decision: Equatable, Sendable {
        /// Its file exists and `--refresh` is off: no request.
        case cached(bytes: Int64)
        /// On the failed-URL list and not cached: no request unless
        /// `--retry-failed`.
        case blocked
        /// Not attempted: `--budget` is already spent.
        case skipped(EntryError)
        /// `--dry-run`: what a real run would do, recorded as such (never
        /// as `downloaded`): fetch a new file or revalidate a cached one.
        case wouldFetch(revalidate: Bool)
        /// Request it; validators (`--refresh` of a cached file) make the
        /// request conditional.
        case fetch(validators: HTTPValidators?)
    }

    public struct Options: Equatable, Sendable {
        public var refresh = false
        public var retryFailed = false
        public var dryRun = false
        public init(refresh: Bool = false, retryFailed: Bool = false, dryRun: Bool = false) {
            self.refresh = refresh
            self.retryFailed = retryFailed
            self.dryRun = dryRun
        }
    }

    /// `existingBytes`: the size of the entry's cached file, nil when none.
    /// `budgetSpent`: `--budget` is given and the cache already holds it.
    public static func decide(existingBytes: Int64?, isFailedURL: Bool, budgetSpent: Bool, options: Options,
                              validators: () -> HTTPValidators?) -> Decision {
        if let bytes = existingBytes {
            if !options.refresh { return .cached(bytes: bytes) }
            // Revalidating a cached file takes no new room: the budget
            // does not stop it, and a 304 or a replacement is not new room.
            if options.dryRun { return .wouldFetch(revalidate: true) }
            let v = validators()
            return .fetch(validators: v?.isEmpty == false ? v : nil)
        }
        // A cached file wins over the failed list (another run fetched it
        // since); only a missing one is blocked.
        if isFailedURL && !options.retryFailed { return .blocked }
        if budgetSpent { return .skipped(.budget) }
        if options.dryRun { return .wouldFetch(revalidate: false) }
        return .fetch(validators: nil)
    }
}
