/// The URLs of a plan, front-coded: entries go in blocks of `blockSize`
/// consecutive ones; a block's first URL is stored whole, each other URL
/// as the length it shares with that first URL plus the rest of its bytes.
/// Manifests are sorted or generated lists whose neighbours share long
/// prefixes (`https://host/images/0000/photo-00000`), so this stores about
/// a third of the bytes of a million-line manifest, and any URL is still
/// rebuilt in O(1) from two slices (no chain of earlier entries to follow).
/// Written by hand: no library here stores strings this way.
///
/// The caller keeps each entry's `Slot` (in its own fixed-size records)
/// and hands back the slot of the entry's block's first entry to read it.
struct FrontCodedArena {
    static let blockSize = 16
    /// A shared length fits a byte, so a slot adds one byte to a record;
    /// a longer shared prefix is stored in part, never wrong.
    static let maxShared = Int(UInt8.max)

    struct Slot: Equatable {
        /// Where the bytes after the shared prefix start; an extra string
        /// (a key) follows them.
        var offset: ByteArena.Offset
        var shared: UInt8
        var suffixLength: UInt16
    }

    private var arena = ByteArena()
    private var blockFirst: Slot?
    private(set) var count = 0
    /// Bytes stored for all entries (URL parts and keys).
    var storedBytes: Int { arena.byteCount }

    /// The entry whose slot `blockFirst` must be for entry `index`.
    @inline(__always) static func blockStart(of index: Int) -> Int { index & ~(blockSize - 1) }

    /// Appends the next entry's URL and, when given, an extra string stored
    /// whole after it. `url` is at most 65535 bytes.
    mutating func append(url: UnsafeBufferPointer<UInt8>, key: UnsafeBufferPointer<UInt8>?) throws -> Slot {
        let shared = blockFirst.map { first in
            arena.withBytes(at: first.offset, length: Int(first.suffixLength)) { Self.sharedPrefixLength($0, url) }
        } ?? 0
        let offset = try arena.append(UnsafeBufferPointer(rebasing: url[shared...]), key)
        let slot = Slot(offset: offset, shared: UInt8(shared), suffixLength: UInt16(url.count - shared))
        count += 1
        blockFirst = count % Self.blockSize == 0 ? nil : (blockFirst ?? slot)
        return slot
    }

    /// The length of the common prefix of `a` and `b`, at most `maxShared`.
    static func sharedPrefixLength(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count, maxShared)
        var i = 0
        while i < n && a[i] == b[i] { i += 1 }
        return i
    }

    /// The URL of `slot` (or its first `prefix` bytes), whose block starts
    /// with `first`.
    func url(_ slot: Slot, blockFirst first: Slot, prefix: Int? = nil) -> String {
        let shared = Int(slot.shared)
        let length = prefix ?? shared + Int(slot.suffixLength)
        if shared == 0 { return arena.string(at: slot.offset, length: length) }
        if length <= shared { return arena.string(at: first.offset, length: length) }
        return arena.withBytes(at: first.offset, length: shared) { head in
            arena.withBytes(at: slot.offset, length: length - shared) { tail in
                // The split may fall inside a character: only the joined
                // bytes are UTF-8, so they are decoded once, together.
                String(unsafeUninitializedCapacity: length) { out in
                    _ = out.initialize(fromContentsOf: head)
                    _ = out[shared...].initialize(fromContentsOf: tail)
                    return length
                }
            }
        }
    }

    /// The extra string stored after the URL of `slot`.
    func key(after slot: Slot, length: Int) -> String {
        arena.string(at: slot.offset.advanced(by: Int(slot.suffixLength)), length: length)
    }
}

/// UTF-8 bytes in fixed 4 MiB chunks: growing never copies what is stored
/// (a doubling array would briefly hold two copies of a huge manifest).
struct ByteArena {
    /// Chunk index (high 10 bits) and position in it (low 22 bits): 4 bytes
    /// a record, for up to 4 GiB of URLs.
    struct Offset: Equatable {
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
    /// Bytes stored.
    private(set) var byteCount = 0

    /// Appends `a` then `b` contiguously (never split across chunks).
    mutating func append(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>?) throws -> Offset {
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
        byteCount += needed
        return offset
    }

    func withBytes<R>(at offset: Offset, length: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        chunks[offset.chunk].withUnsafeBufferPointer { buf in
            body(UnsafeBufferPointer(rebasing: buf[offset.position..<(offset.position + length)]))
        }
    }

    func string(at offset: Offset, length: Int) -> String {
        withBytes(at: offset, length: length) { String(decoding: $0, as: UTF8.self) }
    }
}
