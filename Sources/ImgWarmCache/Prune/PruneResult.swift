#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// The outcome of `cache prune` (or, with a dry run, what it would do),
/// whichever backend pruned: a plain folder's sweep (`CachePruner`, its
/// removals kept as runs of inventory records) or an index's eviction
/// (its removals listed). `PruneReport` prints both the same way.
/// Byte counts are what the layout sums: allocated bytes (blocks on disk)
/// for SDWebImage and Nuke, logical lengths for Kingfisher and the indexes.
public struct PruneResult {
    /// One file removed (or that would be), in the order of removal.
    public struct Removal: Sendable {
        /// Index into the inventory's records, or into `removed`.
        let index: UInt32
        /// 0 for a file that is not trimmed, else the trim rank (1: first
        /// trimmed, the oldest).
        public let rank: UInt32
        public let reason: Reason
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
        /// An index's removals, in its order (nil: a folder's runs), and
        /// the rank of each (0 unless trimmed).
        fileprivate var listed: [Reason]?
        fileprivate var listedRanks: [UInt32] = []
        public var startIndex: Int { 0 }
        public var endIndex: Int { listed?.count ?? total }

        init() {}

        fileprivate init(listing removed: [Removed]) {
            var trimmed: UInt32 = 0
            listed = removed.map(\.reason)
            listedRanks = removed.map { r in
                guard r.reason == .trimmed else { return 0 }
                trimmed += 1
                return trimmed
            }
        }

        public subscript(position: Int) -> Removal {
            if let listed {
                return Removal(index: UInt32(position), rank: listedRanks[position], reason: listed[position])
            }
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
            let expired = position < expiredCount
            return Removal(index: index, rank: expired ? 0 : UInt32(position - expiredCount + 1), reason: expired ? .expired : .trimmed)
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

    /// Why a file goes: its date is past the expiry; the size (or count)
    /// limit trimmed it; or no index row names it (flutter's files of a
    /// killed run).
    public enum Reason: String, Sendable { case expired, trimmed, unindexed }

    /// A removal an index backend lists: the path relative to the cache
    /// folder (an absolute one under it is made relative), its bytes.
    public struct Removed: Sendable {
        public var path: String
        public var bytes: Int64
        public var reason: Reason
        public init(path: String, bytes: Int64, reason: Reason) {
            self.path = path
            self.bytes = bytes
            self.reason = reason
        }
    }

    public let dryRun: Bool
    /// The `--layout` value.
    public let layout: String
    /// The date expiry goes by (Kingfisher: the deadline, its modification
    /// date), nil when the layout has no expiry or goes by no file date.
    public internal(set) var expireType: CacheExpireType?
    /// The date trimming goes by, oldest first; nil when the library's
    /// order is its index's (a journal's, a database's).
    public internal(set) var trimDate: CacheExpireType?
    public internal(set) var sizeMeasure: PrunePolicy.SizeMeasure
    /// Files dated at or before this (nanoseconds since the epoch) expire:
    /// `now - maxAge` for SDWebImage, now for Kingfisher's deadlines; nil
    /// without expiry.
    public internal(set) var expirationDate: Int64?
    public internal(set) var maxSize: UInt64?
    /// Below what size trimming stopped (nil when no trim was needed).
    public internal(set) var trimTarget: UInt64?
    /// False when pinned files alone keep the cache above the target.
    public internal(set) var trimTargetReached: Bool?
    /// Whether a DiskLruCache journal was rebuilt (`journal.tmp`, renamed
    /// over it) after the removals.
    public var rebuiltJournal = false

    /// The removals in order (see `Removals`).
    public var removals: Removals { inventory == nil ? Removals(listing: removed) : folderRemovals }
    private var folderRemovals = Removals()
    private var folderRemovedBytes: UInt64 = 0
    private var folderExpired = 0
    private var folderTrimmed = 0
    /// Gone before we got to them (another prune): neither removed nor kept.
    public private(set) var vanished = 0
    public private(set) var vanishedBytes: UInt64 = 0
    /// Spared because their date moved on since the walk (read by the app,
    /// rewritten by a concurrent warm): kept.
    public private(set) var renewed = 0
    /// Files that could not be removed (permissions, read-only filesystem): kept.
    public private(set) var failed = 0
    public private(set) var firstFailure: ImgWarmError?

    /// An index's figures, set by the backend: entries (and their bytes)
    /// before and after, and those pinned by `--keep`.
    public var entriesBefore = 0
    public var bytesBefore: Int64 = 0
    public var entriesAfter = 0
    public var bytesAfter: Int64 = 0
    public var pinnedEntries = 0
    public var pinnedEntryBytes: Int64 = 0

    /// An index's removals in its order (paths under the cache folder are
    /// shown relative to it).
    public var removed: [Removed] = []
    private let directoryPrefix: String

    public var removedFiles: Int { inventory == nil ? removed.count : folderRemovals.count }
    public var removedBytes: UInt64 {
        guard inventory == nil else { return folderRemovedBytes }
        return removed.reduce(UInt64(0)) { $0 + UInt64(max(0, $1.bytes)) }
    }
    public var expired: Int { inventory == nil ? removed.filter { $0.reason == .expired }.count : folderExpired }
    public var trimmed: Int { inventory == nil ? removed.filter { $0.reason == .trimmed }.count : folderTrimmed }
    public var unindexed: Int { removed.filter { $0.reason == .unindexed }.count }
    public var scannedFiles: Int { inventory?.totalFiles ?? entriesBefore }
    public let scannedBytes: UInt64
    public var keptFiles: Int { inventory == nil ? entriesAfter : scannedFiles - removedFiles - vanished }
    public var keptBytes: UInt64 {
        inventory == nil ? UInt64(max(0, bytesAfter)) : scannedBytes - folderRemovedBytes - vanishedBytes
    }
    public var pinnedFiles: Int { inventory?.pinnedFiles ?? pinnedEntries }
    public var pinnedBytes: UInt64 { inventory?.pinnedBytes ?? UInt64(max(0, pinnedEntryBytes)) }
    /// Files without the expire type's date (no birth time on this filesystem).
    public var undatedFiles: Int { inventory?.undatedFiles ?? 0 }
    public var unreadableDirectories: Int { inventory?.unreadableDirectories ?? 0 }
    public var firstDirectoryError: ImgWarmError? { inventory?.firstDirectoryError }

    private let inventory: CacheInventory?

    init(inventory: CacheInventory, options: PruneOptions, policy: PrunePolicy) {
        self.inventory = inventory
        directoryPrefix = ""
        scannedBytes = inventory.records.reduce(inventory.pinnedBytes) { $0 + UInt64(inventory.bytes($1)) }
        dryRun = options.dryRun
        layout = options.layout.name
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

    /// An index backend's result, to be filled in: removals listed in
    /// `removed` (absolute paths under `directory` become relative),
    /// lengths summed (`logical`).
    public init(layout: String, directory: String, dryRun: Bool) {
        inventory = nil
        directoryPrefix = directory.hasSuffix("/") ? directory : directory + "/"
        scannedBytes = 0
        self.dryRun = dryRun
        self.layout = layout
        sizeMeasure = .logical
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
        guard let inventory else { return }
        let record = inventory.records[index]
        let bytes = UInt64(inventory.bytes(record))
        switch outcome {
        case .removed:
            folderRemovals.append(UInt32(index))
            folderRemovedBytes += bytes
            if isExpired {
                folderExpired += 1
                folderRemovals.expiredCount += 1
            } else {
                folderTrimmed += 1
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
        guard let inventory else {
            let path = removed[Int(removal.index)].path
            return path.hasPrefix(directoryPrefix) ? String(path.dropFirst(directoryPrefix.count)) : path
        }
        return inventory.relativePath(inventory.records[Int(removal.index)])
    }

    /// The removed file's bytes, as the layout counts them.
    public func bytes(of removal: Removal) -> UInt64 {
        guard let inventory else { return UInt64(max(0, removed[Int(removal.index)].bytes)) }
        return UInt64(inventory.bytes(inventory.records[Int(removal.index)]))
    }

    /// The file's date (nanoseconds since the epoch) as the policy judged
    /// it, nil when it has none (or, for a Kingfisher file past its
    /// deadline, when only the expiry counted; or an index's entry).
    public func date(of removal: Removal) -> Int64? {
        guard let inventory else { return nil }
        let date = inventory.records[Int(removal.index)].date
        switch date {
        case CacheInventory.noDate, PrunePolicy.expiredMark, PrunePolicy.undatedFirst: return nil
        default: return date
        }
    }
}
