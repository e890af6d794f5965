import Crypto

/// Every usable manifest entry of a run, stored compactly (one byte arena
/// for URLs and keys, fixed-size records) so that a manifest of millions of
/// lines fits in a modest amount of memory; then de-duplicated by cache
/// file and put in execution order.
public final class WarmPlan {
    struct Record {
        /// Offset of the URL's UTF-8 bytes in `arena`; the key follows it
        /// when it differs from the URL.
        var offset: Int
        var urlLength: UInt32
        /// 0: the key is the URL itself.
        var keyLength: UInt32
        var line: UInt32
        var file: UInt16
        /// RequestPriority raw value, or `noPriority` when the line gave none.
        var priority: UInt8
    }
    static let noPriority: UInt8 = 255

    /// The manifest paths, indexed by `ManifestSource.fileIndex`.
    public private(set) var manifestPaths: [String] = []
    private var arena: [UInt8] = []
    private var records: [Record] = []
    /// MD5 of each key: equal digests mean one cache file.
    private var digests: [(UInt64, UInt64)] = []
    public private(set) var problems: [ManifestProblem] = []
    /// Entries left out by `--shard`.
    public private(set) var outsideShard = 0

    /// For each entry, the index of the entry it duplicates, or -1.
    private var duplicateOf: [Int32] = []
    /// Unique entries in execution order.
    public private(set) var order: [UInt32] = []

    public let defaultPriority: RequestPriority
    public let executionOrder: ExecutionOrder
    public let shard: Shard?

    /// `--shard K/N`: K in 1...N.
    public struct Shard: Sendable, Equatable {
        public var index: Int
        public var count: Int
        public init(index: Int, count: Int) {
            self.index = index
            self.count = count
        }
        /// A stable hash of the cache key (its MD5, as the file name), so
        /// N jobs split one manifest with no overlap and even sizes.
        func contains(digest: (UInt64, UInt64)) -> Bool {
            Int(digest.0 % UInt64(count)) == index - 1
        }
    }

    public init(defaultPriority: RequestPriority = .normal, order: ExecutionOrder = .fifo, shard: Shard? = nil) {
        self.defaultPriority = defaultPriority
        self.executionOrder = order
        self.shard = shard
    }

    public var count: Int { records.count }
    public var uniqueCount: Int { order.count }

    public func addManifestPath(_ path: String) -> Int {
        manifestPaths.append(path)
        return manifestPaths.count - 1
    }

    public func add(_ entry: ManifestEntry) {
        let digest = Self.digest(of: entry.key)
        if let shard, !shard.contains(digest: digest) {
            outsideShard += 1
            return
        }
        let offset = arena.count
        arena.append(contentsOf: entry.url.utf8)
        let urlLength = arena.count - offset
        var keyLength = 0
        if entry.key != entry.url {
            arena.append(contentsOf: entry.key.utf8)
            keyLength = arena.count - offset - urlLength
        }
        records.append(Record(
            offset: offset, urlLength: UInt32(urlLength), keyLength: UInt32(keyLength),
            line: UInt32(clamping: entry.source.line), file: UInt16(clamping: entry.source.fileIndex),
            priority: entry.priority.map { UInt8($0.rawValue) } ?? Self.noPriority))
        digests.append(digest)
    }

    public func add(_ problem: ManifestProblem) {
        problems.append(problem)
    }

    static func digest(of key: String) -> (UInt64, UInt64) {
        var bytes = Array(key.utf8)
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        let d = Insecure.MD5.hash(data: bytes)
        return d.withUnsafeBytes { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// De-duplicates by cache file (the highest priority wins, then the
    /// first line) and orders the rest: high, normal, low; FIFO or LIFO
    /// within a priority.
    public func finalize() {
        let n = records.count
        duplicateOf = [Int32](repeating: -1, count: n)
        var byDigest = [UInt32](0..<UInt32(n))
        byDigest.sort { a, b in
            let da = digests[Int(a)], db = digests[Int(b)]
            if da.0 != db.0 { return da.0 < db.0 }
            if da.1 != db.1 { return da.1 < db.1 }
            return a < b
        }
        var i = 0
        while i < n {
            var j = i + 1
            while j < n && digests[Int(byDigest[j])] == digests[Int(byDigest[i])] { j += 1 }
            if j - i > 1 {
                var winner = byDigest[i]
                for k in (i + 1)..<j where priority(Int(byDigest[k])).rawValue > priority(Int(winner)).rawValue {
                    winner = byDigest[k]
                }
                for k in i..<j where byDigest[k] != winner { duplicateOf[Int(byDigest[k])] = Int32(winner) }
            }
            i = j
        }
        byDigest = []
        digests = []  // no longer needed: frees 16 bytes an entry
        var buckets: [[UInt32]] = [[], [], []]
        for index in 0..<n where duplicateOf[index] < 0 {
            buckets[priority(index).rawValue].append(UInt32(index))
        }
        if executionOrder == .lifo { for b in 0..<3 { buckets[b].reverse() } }
        order = buckets[2] + buckets[1] + buckets[0]
        order.reserveCapacity(order.count)
    }

    public func priority(_ index: Int) -> RequestPriority {
        let p = records[index].priority
        return p == Self.noPriority ? defaultPriority : RequestPriority(rawValue: Int(p)) ?? defaultPriority
    }

    public func url(_ index: Int) -> String {
        let r = records[index]
        return arena.withUnsafeBufferPointer { buf in
            String(decoding: UnsafeBufferPointer(rebasing: buf[r.offset..<(r.offset + Int(r.urlLength))]), as: UTF8.self)
        }
    }

    public func key(_ index: Int) -> String {
        let r = records[index]
        if r.keyLength == 0 { return url(index) }
        let start = r.offset + Int(r.urlLength)
        return arena.withUnsafeBufferPointer { buf in
            String(decoding: UnsafeBufferPointer(rebasing: buf[start..<(start + Int(r.keyLength))]), as: UTF8.self)
        }
    }

    public func source(_ index: Int) -> ManifestSource {
        ManifestSource(fileIndex: Int(records[index].file), line: Int(records[index].line))
    }

    /// The entry that `index` duplicates, or nil.
    public func duplicate(of index: Int) -> Int? {
        let d = duplicateOf[index]
        return d < 0 ? nil : Int(d)
    }

    public func describe(_ source: ManifestSource) -> String {
        let path = source.fileIndex < manifestPaths.count ? manifestPaths[source.fileIndex] : "?"
        return "\(path == "-" ? "<stdin>" : path):\(source.line)"
    }
}
