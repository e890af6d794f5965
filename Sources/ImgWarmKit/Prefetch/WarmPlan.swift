import Crypto

/// Every usable manifest entry of a run, stored compactly (one byte arena
/// for URLs and keys, fixed-size records) so that a manifest of millions of
/// lines fits in a modest amount of memory; then de-duplicated by cache
/// file and put in execution order.
public final class WarmPlan {
    /// 20 bytes an entry.
    struct Record {
        /// Where the URL's UTF-8 bytes start in `arena`; the key follows it
        /// when it differs from the URL.
        var offset: ByteArena.Offset
        var urlLength: UInt16
        /// 0: the key is the URL itself.
        var keyLength: UInt16
        var line: UInt32
        var file: UInt16
        /// RequestPriority raw value, or `noPriority` when the line gave none.
        var priority: UInt8
        /// `ManifestEntry.reencoded`.
        var reencoded: Bool
        /// Index in `hostKeys`, or `noHost`.
        var host: UInt32
    }
    static let noPriority: UInt8 = 255
    static let noHost = UInt32.max

    /// The distinct per-host keys of the entries: few, so each entry keeps
    /// a 4-byte index instead of a string.
    private var hostKeys: [String] = []
    private var hostIndex: [String: UInt32] = [:]

    /// The manifest paths, indexed by `ManifestSource.fileIndex`.
    public private(set) var manifestPaths: [String] = []
    private var arena = ByteArena()
    private var records = ChunkedArray<Record>()
    /// The first 64 bits of each key's MD5, for de-duplication (equal
    /// prefixes are confirmed by comparing the keys), and the last 64: the
    /// cache file name comes from them, so a run hashes each key once.
    private var digests = ChunkedArray<UInt64>()
    private var digestTails = ChunkedArray<UInt64>()
    public private(set) var problems: [ManifestProblem] = []
    /// Entries left out by `--shard`.
    public private(set) var outsideShard = 0

    /// Entry index → the entry it duplicates (duplicates are few: sparse).
    private var duplicateOf: [UInt32: UInt32] = [:]
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
        let url = entry.url.utf8, key = entry.key.utf8
        // Lines are at most ManifestReader.maxLineBytes (< 64 KiB).
        guard url.count <= Int(UInt16.max), key.count <= Int(UInt16.max) else {
            add(ManifestProblem(source: entry.source, reason: "URL or key longer than 65535 bytes"))
            return
        }
        let keyIsURL = entry.key == entry.url
        guard let offset = try? arena.append(url, keyIsURL ? nil : key) else {
            add(ManifestProblem(source: entry.source, reason: "manifests hold more than 4 GiB of URLs; split them over several runs"))
            return
        }
        var host = Self.noHost
        if let h = entry.hostKey {
            if let known = hostIndex[h] {
                host = known
            } else if hostKeys.count < Int(Self.noHost) {
                host = UInt32(hostKeys.count)
                hostIndex[h] = host
                hostKeys.append(h)
            }
        }
        records.append(Record(
            offset: offset, urlLength: UInt16(url.count), keyLength: keyIsURL ? 0 : UInt16(key.count),
            line: UInt32(clamping: entry.source.line), file: UInt16(clamping: entry.source.fileIndex),
            priority: entry.priority.map { UInt8($0.rawValue) } ?? Self.noPriority,
            reencoded: entry.reencoded, host: host))
        digests.append(digest.0)
        digestTails.append(digest.1)
    }

    public func add(_ problem: ManifestProblem) {
        problems.append(problem)
    }

    static func digest(of key: String) -> (UInt64, UInt64) {
        CacheFileName.digest(ofKey: key).withUnsafeBytes { raw in
            (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// De-duplicates by cache file (the highest priority wins, then the
    /// first line) and orders the rest: high, normal, low; FIFO or LIFO
    /// within a priority.
    public func finalize() {
        let n = records.count
        duplicateOf = [:]
        var byDigest = [UInt32](0..<UInt32(n))
        byDigest.sort { a, b in
            let da = digests[Int(a)], db = digests[Int(b)]
            return da != db ? da < db : a < b
        }
        var i = 0
        while i < n {
            var j = i + 1
            while j < n && digests[Int(byDigest[j])] == digests[Int(byDigest[i])] { j += 1 }
            if j - i > 1 { resolveDuplicates(byDigest[i..<j]) }
            i = j
        }
        byDigest = []
        var counts = [0, 0, 0]
        for index in 0..<n where duplicateOf[UInt32(index)] == nil { counts[priority(index).rawValue] += 1 }
        var starts = [counts[2] + counts[1], counts[2], 0]  // low, normal, high
        order = [UInt32](repeating: 0, count: counts.reduce(0, +))
        for index in 0..<n where duplicateOf[UInt32(index)] == nil {
            let p = priority(index).rawValue
            order[starts[p]] = UInt32(index)
            starts[p] += 1
        }
        if executionOrder == .lifo {
            var start = 0
            for p in [2, 1, 0] {
                order[start..<(start + counts[p])].reverse()
                start += counts[p]
            }
        }
    }

    /// Entries whose digest prefixes are equal: the same key (so the same
    /// cache file) unless the 64-bit prefixes collide. Within each group of
    /// equal keys the highest priority wins, then the first line.
    private func resolveDuplicates(_ group: ArraySlice<UInt32>) {
        var remaining = Array(group)
        while let first = remaining.first {
            let key = self.key(Int(first))
            let same = remaining.filter { $0 == first || self.key(Int($0)) == key }
            remaining.removeAll { same.contains($0) }
            guard same.count > 1 else { continue }
            var winner = same[0]
            for k in same.dropFirst() where priority(Int(k)).rawValue > priority(Int(winner)).rawValue { winner = k }
            for k in same where k != winner { duplicateOf[k] = winner }
        }
    }

    public func priority(_ index: Int) -> RequestPriority {
        let p = records[index].priority
        return p == Self.noPriority ? defaultPriority : RequestPriority(rawValue: Int(p)) ?? defaultPriority
    }

    public func url(_ index: Int) -> String {
        let r = records[index]
        return arena.string(at: r.offset, length: Int(r.urlLength))
    }

    public func key(_ index: Int) -> String {
        let r = records[index]
        if r.keyLength == 0 { return url(index) }
        return arena.string(at: r.offset.advanced(by: Int(r.urlLength)), length: Int(r.keyLength))
    }

    /// Whether the entry's URL was percent- or IDNA-encoded from the
    /// manifest text (`ParsedURL.reencoded`).
    public func reencoded(_ index: Int) -> Bool { records[index].reencoded }

    /// The per-host limit's key of the entry's URL, when its line was parsed.
    public func hostKey(_ index: Int) -> String? {
        let h = records[index].host
        return h == Self.noHost ? nil : hostKeys[Int(h)]
    }

    /// The entry's file names in `cache`, from the MD5 computed when it was
    /// added (the SDWebImage layout names files by it: no second hash).
    public func entryName(_ index: Int, in cache: DiskCache) -> CacheEntryName {
        var digest = (digests[index], digestTails[index])
        return withUnsafeBytes(of: &digest) { cache.layout.entryName(forKey: key(index), md5: $0) }
    }

    public func source(_ index: Int) -> ManifestSource {
        ManifestSource(fileIndex: Int(records[index].file), line: Int(records[index].line))
    }

    /// The entry that `index` duplicates, or nil.
    public func duplicate(of index: Int) -> Int? {
        duplicateOf[UInt32(index)].map(Int.init)
    }

    public func describe(_ source: ManifestSource) -> String {
        let path = source.fileIndex < manifestPaths.count ? manifestPaths[source.fileIndex] : "?"
        return "\(path == "-" ? "<stdin>" : path):\(source.line)"
    }
}

/// UTF-8 bytes in fixed 4 MiB chunks: growing never copies what is stored
/// (a doubling array would briefly hold two copies of a huge manifest).
struct ByteArena {
    /// Chunk index (high 10 bits) and position in it (low 22 bits): 4 bytes
    /// a record, for up to 4 GiB of URLs.
    struct Offset {
        var packed: UInt32
        init(chunk: Int, position: Int) { packed = UInt32(chunk) << 22 | UInt32(position) }
        var chunk: Int { Int(packed >> 22) }
        var position: Int { Int(packed & 0x3F_FFFF) }
        func advanced(by n: Int) -> Offset { Offset(chunk: chunk, position: position + n) }
    }
    static let chunkSize = 4 << 20
    static let maxChunks = 1 << 10
    struct FullError: Error {}
    private var chunks: [[UInt8]] = []

    /// Appends `a` then `b` contiguously (never split across chunks).
    mutating func append(_ a: String.UTF8View, _ b: String.UTF8View?) throws -> Offset {
        let needed = a.count + (b?.count ?? 0)
        if chunks.isEmpty || chunks[chunks.count - 1].count + needed > Self.chunkSize {
            guard chunks.count < Self.maxChunks else { throw FullError() }
            var chunk = [UInt8]()
            chunk.reserveCapacity(max(Self.chunkSize, needed))
            chunks.append(chunk)
        }
        let last = chunks.count - 1
        let offset = Offset(chunk: last, position: chunks[last].count)
        chunks[last].append(contentsOf: a)
        if let b { chunks[last].append(contentsOf: b) }
        return offset
    }

    func string(at offset: Offset, length: Int) -> String {
        chunks[offset.chunk].withUnsafeBufferPointer { buf in
            let start = offset.position
            return String(decoding: UnsafeBufferPointer(rebasing: buf[start..<(start + length)]), as: UTF8.self)
        }
    }
}

/// An append-only array in fixed-size chunks: no reallocation copies, so
/// the peak memory of a million records is the records themselves.
struct ChunkedArray<Element> {
    private static var chunkLength: Int { 1 << 16 }
    private var chunks: [[Element]] = []
    private(set) var count = 0

    mutating func append(_ e: Element) {
        if count % Self.chunkLength == 0 {
            var c = [Element]()
            c.reserveCapacity(Self.chunkLength)
            chunks.append(c)
        }
        chunks[chunks.count - 1].append(e)
        count += 1
    }

    subscript(i: Int) -> Element {
        chunks[i / Self.chunkLength][i % Self.chunkLength]
    }
}
