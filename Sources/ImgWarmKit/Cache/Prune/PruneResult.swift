#if canImport(Glibc)
import Glibc
#endif

/// The outcome of `cache prune` (or, with a dry run, what it would do).
/// Byte counts are what the layout sums: allocated bytes (blocks on disk)
/// for SDWebImage and Nuke, logical lengths for Kingfisher.
public struct PruneResult {
    /// One file removed (or that would be), in the order of removal.
    public struct Removal: Sendable {
        /// Index into the inventory's records.
        let index: UInt32
        /// 0 for an expired file, else the trim rank (1: first trimmed, the oldest).
        public let rank: UInt32
        public var reason: Reason { rank == 0 ? .expired : .trimmed }
    }

    /// The removals in order: expired files, then trimmed ones by rank; the
    /// rank of a trimmed file is its position after the expired ones.
    /// The pruner removes records in index order, so the removed indices
    /// come in a few runs of consecutive numbers (broken only where a file
    /// vanished, was renewed or could not be removed): kept as runs, a
    /// million removals take a few bytes instead of 4 MB.
    public struct Removals: RandomAccessCollection, Sendable {
        /// First record index of each run, and how many removals precede it.
        fileprivate var runStarts: [UInt32] = []
        fileprivate var runPositions: [Int] = []
        fileprivate var total = 0
        fileprivate var expiredCount = 0
        public var startIndex: Int { 0 }
        public var endIndex: Int { total }
        public subscript(position: Int) -> Removal {
            precondition(position >= 0 && position < total, "removal index out of range")
            // The last run that starts at or before `position`.
            var low = 0
            var high = runPositions.count
            while low < high {
                let mid = (low + high) / 2
                if runPositions[mid] <= position { low = mid + 1 } else { high = mid }
            }
            let run = low - 1
            let index = runStarts[run] + UInt32(position - runPositions[run])
            return Removal(index: index, rank: position < expiredCount ? 0 : UInt32(position - expiredCount + 1))
        }

        fileprivate mutating func append(_ index: UInt32) {
            if let last = runStarts.last, let start = runPositions.last, last + UInt32(total - start) == index {
                total += 1
                return
            }
            runStarts.append(index)
            runPositions.append(total)
            total += 1
        }
    }

    public enum Reason: String, Sendable { case expired, trimmed }

    public let dryRun: Bool
    public let layout: CacheLayoutKind
    /// The date expiry goes by (Kingfisher: the deadline, its modification
    /// date), nil when the layout has no expiry.
    public let expireType: CacheExpireType?
    /// The date trimming goes by, oldest first.
    public let trimDate: CacheExpireType
    public let sizeMeasure: PrunePolicy.SizeMeasure
    /// Files dated at or before this (nanoseconds since the epoch) expire:
    /// `now - maxAge` for SDWebImage, now for Kingfisher's deadlines; nil
    /// without expiry.
    public let expirationDate: Int64?
    public let maxSize: UInt64?
    /// Below what size trimming stopped (nil when no trim was needed).
    public internal(set) var trimTarget: UInt64?
    /// False when pinned files alone keep the cache above the target.
    public internal(set) var trimTargetReached: Bool?

    public private(set) var removals = Removals()
    public private(set) var removedBytes: UInt64 = 0
    public private(set) var expired = 0
    public private(set) var trimmed = 0
    /// Gone before we got to them (another prune): neither removed nor kept.
    public private(set) var vanished = 0
    public private(set) var vanishedBytes: UInt64 = 0
    /// Spared because their date moved on since the walk (read by the app,
    /// rewritten by a concurrent warm): kept.
    public private(set) var renewed = 0
    /// Files that could not be removed (permissions, read-only filesystem): kept.
    public private(set) var failed = 0
    public private(set) var firstFailure: ImgWarmError?

    public var removedFiles: Int { removals.count }
    public var scannedFiles: Int { inventory.totalFiles }
    public let scannedBytes: UInt64
    public var keptFiles: Int { scannedFiles - removedFiles - vanished }
    public var keptBytes: UInt64 { scannedBytes - removedBytes - vanishedBytes }
    public var pinnedFiles: Int { inventory.pinnedFiles }
    public var pinnedBytes: UInt64 { inventory.pinnedBytes }
    /// Files without the expire type's date (no birth time on this filesystem).
    public var undatedFiles: Int { inventory.undatedFiles }
    public var unreadableDirectories: Int { inventory.unreadableDirectories }
    public var firstDirectoryError: ImgWarmError? { inventory.firstDirectoryError }

    private let inventory: CacheInventory

    init(inventory: CacheInventory, options: PruneOptions, policy: PrunePolicy) {
        self.inventory = inventory
        scannedBytes = inventory.records.reduce(inventory.pinnedBytes) { $0 + UInt64(inventory.bytes($1)) }
        dryRun = options.dryRun
        layout = options.layout.kind
        trimDate = policy.trimDate
        sizeMeasure = policy.size
        maxSize = policy.limit.flatMap { $0 > 0 ? $0 : nil }
        switch policy.expiry {
        case .none:
            expireType = nil
            expirationDate = nil
        case .olderThan(let cutoff, let date):
            expireType = date
            expirationDate = cutoff
        case .deadlinePassed(let now):
            expireType = .modification
            expirationDate = now
        }
    }

    /// `now - maxAge` without overflow: an age beyond 1678 expires nothing.
    static func expiration(now: Int64, maxAge: Double) -> Int64 {
        let nanoseconds = maxAge * 1e9
        guard nanoseconds < 9e18 else { return Int64.min }
        let (date, overflow) = now.subtractingReportingOverflow(Int64(nanoseconds.rounded()))
        return overflow ? Int64.min : date
    }

    /// Counts one file's outcome. Expired files all come before trimmed ones.
    mutating func account(_ outcome: FileRemover.Outcome, index: Int, expired isExpired: Bool) {
        let record = inventory.records[index]
        let bytes = UInt64(inventory.bytes(record))
        switch outcome {
        case .removed:
            removals.append(UInt32(index))
            removedBytes += bytes
            if isExpired {
                expired += 1
                removals.expiredCount += 1
            } else {
                trimmed += 1
            }
        case .vanished:
            vanished += 1
            vanishedBytes += bytes
        case .renewed:
            renewed += 1
        case .failed(let e):
            failed += 1
            if firstFailure == nil {
                firstFailure = ImgWarmError.cache(path: inventory.relativePath(record),
                                          reason: "cannot remove: \(errnoString(e))", errno: e)
            }
        case .folderReplaced:
            failed += 1
            if firstFailure == nil {
                firstFailure = ImgWarmError.cache(path: inventory.relativePath(record),
                                          reason: "not removed: its folder was replaced since the listing (a symbolic link "
                                              + "or another folder now); nothing is removed in it", errno: ESTALE)
            }
        }
    }

    /// The removed file's path relative to the cache folder.
    public func path(of removal: Removal) -> String {
        inventory.relativePath(inventory.records[Int(removal.index)])
    }

    /// The removed file's bytes, as the layout counts them.
    public func bytes(of removal: Removal) -> UInt64 {
        UInt64(inventory.bytes(inventory.records[Int(removal.index)]))
    }

    /// The file's date (nanoseconds since the epoch) as the policy judged
    /// it, nil when it has none (or, for a Kingfisher file past its
    /// deadline, when only the expiry counted).
    public func date(of removal: Removal) -> Int64? {
        let date = inventory.records[Int(removal.index)].date
        switch date {
        case CacheInventory.noDate, PrunePolicy.expiredMark, PrunePolicy.undatedFirst: return nil
        default: return date
        }
    }
}
