#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// The names of millions of files in a few large allocations, referred to by
/// a 32-bit offset instead of a String per file.
///
/// Digest names, lowercase hex then nothing or `.<ext>`, are stored packed:
/// a tag byte, the bytes the hex digits stand for, then the extension; a
/// common extension (or none) is said by the tag alone. The three layouts
/// name files by such digests: SDWebImage by MD5 (`<32 hex>.jpg`: 17 bytes
/// instead of 38), Nuke by SHA-1 (`<40 hex>`: 21 instead of 42), Kingfisher
/// by SHA-256 (`<64 hex>`: 33 instead of 66). Other names are stored as they
/// are. Names come back NUL-terminated, ready for unlinkat.
///
/// Fixed 1 MiB chunks rather than one growing array: growth never copies
/// what is stored nor doubles the peak memory.
final class NameArena {
    static let chunkShift: UInt32 = 20
    static let chunkSize = 1 << 20
    /// 32-bit offsets: 4096 chunks of 1 MiB.
    static let maxChunks = 1 << (32 - 20)

    struct Full: Error {}

    private static let rawTag: CChar = 0
    /// Bytes of the digests that are packed, by index: MD5, SHA-1, SHA-256.
    /// A switch rather than a static array: this runs once per file and
    /// name, where a global's access check and bounds checks show.
    private static func digestLength(_ index: Int) -> Int {
        switch index {
        case 0: return 16
        case 1: return 20
        default: return 32
        }
    }
    /// A packed name's tag: `1 + digest * tagsPerDigest + slot`, where
    /// `digest` indexes `digestLength` and `slot` 0 means the extension
    /// follows the digest bytes (NUL-terminated), `1 + k` that it is
    /// `commonExtensions[k]` (no bytes stored after the digest).
    private static let commonExtensions: [[CChar]] = ["", ".jpg", ".png", ".gif", ".webp", ".jpeg", ".avif", ".heic"]
        .map { Array($0.utf8).map { CChar(bitPattern: $0) } + [0] }
    private static let tagsPerDigest = 1 + commonExtensions.count

    private var chunks: [UnsafeMutablePointer<CChar>] = []
    private var used = NameArena.chunkSize
    /// Where a packed name is spelled out again (names are at most 255 bytes).
    private let scratch = UnsafeMutablePointer<CChar>.allocate(capacity: 512)

    /// Bytes held (allocated chunks).
    var allocatedBytes: Int { chunks.count * Self.chunkSize }
    /// Bytes the names take in the chunks (tags and NULs included).
    private(set) var stored = 0

    /// The longest entry: tag, a NAME_MAX (255) name, NUL.
    private static let maxEntry = 257

    /// Stores `length` bytes of `name`; returns its offset.
    func append(_ name: UnsafePointer<CChar>, length: Int) throws -> UInt32 {
        precondition(length + 2 <= Self.maxEntry)
        if used + Self.maxEntry > Self.chunkSize {
            guard chunks.count < Self.maxChunks else { throw Full() }
            chunks.append(UnsafeMutablePointer<CChar>.allocate(capacity: Self.chunkSize))
            used = 0
        }
        let chunk = chunks[chunks.count - 1]
        let offset = UInt32(chunks.count - 1) << Self.chunkShift | UInt32(used)
        let out = chunk + used
        if let digest = Self.packableDigest(name, length) {
            let bytes = Self.digestLength(digest)
            // Bytes and wrapping arithmetic: this runs for every file, and
            // checked conversions cost more than the packing itself.
            let hex = UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self)
            let packed = UnsafeMutableRawPointer(out + 1).assumingMemoryBound(to: UInt8.self)
            for i in 0..<bytes {
                packed[i] = Self.nibble(hex[2 * i]) &<< 4 | Self.nibble(hex[2 * i + 1])
            }
            let ext = name + 2 * bytes
            let extLength = length - 2 * bytes
            let firstTag = 1 + digest * Self.tagsPerDigest
            if let common = Self.commonExtension(ext, extLength) {
                out[0] = CChar(firstTag + 1 + common)
                used += 1 + bytes
            } else {
                out[0] = CChar(firstTag)
                (out + 1 + bytes).update(from: ext, count: extLength)
                out[1 + bytes + extLength] = 0
                used += 1 + bytes + extLength + 1
            }
        } else {
            out[0] = Self.rawTag
            (out + 1).update(from: name, count: length)
            out[1 + length] = 0
            used += length + 2
        }
        stored += used - Int(offset & UInt32(Self.chunkSize - 1))
        return offset
    }

    /// The NUL-terminated name at `offset`, valid until the next call.
    func name(_ offset: UInt32) -> UnsafePointer<CChar> {
        let entry = chunks[Int(offset >> Self.chunkShift)] + Int(offset & UInt32(Self.chunkSize - 1))
        if entry[0] == Self.rawTag { return UnsafePointer(entry + 1) }
        let tag = Int(entry[0]) - 1
        let bytes = Self.digestLength(tag / Self.tagsPerDigest)
        for i in 0..<bytes {
            let byte = UInt8(bitPattern: entry[1 + i])
            scratch[2 * i] = CChar(bitPattern: Hex.digit(byte >> 4))
            scratch[2 * i + 1] = CChar(bitPattern: Hex.digit(byte))
        }
        let slot = tag % Self.tagsPerDigest
        if slot == 0 {
            let rest = entry + 1 + bytes
            (scratch + 2 * bytes).update(from: rest, count: strlen(rest) + 1)
        } else {
            Self.commonExtensions[slot - 1].withUnsafeBufferPointer {
                (scratch + 2 * bytes).update(from: $0.baseAddress!, count: $0.count)
            }
        }
        return UnsafePointer(scratch)
    }

    /// Index in `commonExtensions` of the `length` bytes at `ext`, if any.
    private static func commonExtension(_ ext: UnsafePointer<CChar>, _ length: Int) -> Int? {
        commonExtensions.firstIndex { candidate in
            candidate.count == length + 1 && memcmp(candidate, ext, length) == 0
        }
    }

    func string(_ offset: UInt32) -> String { String(cString: name(offset)) }

    /// The index (for `digestLength`) of the digest `name` spells: exactly
    /// that many lowercase hex digit pairs, then nothing or `.` (the layouts'
    /// names); nil for any other name. Uppercase hex is not packed: it
    /// would come back lowercase.
    static func packableDigest(_ name: UnsafePointer<CChar>, _ length: Int) -> Int? {
        let bytes = UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self)
        var digits = 0
        while digits < length {
            let c = bytes[digits]
            // 0-9 or a-f, as two unsigned range checks.
            guard c &- 0x30 < 10 || c &- 0x61 < 6 else { break }
            digits += 1
        }
        guard digits == length || name[digits] == 0x2E else { return nil }
        switch digits {
        case 32: return 0
        case 40: return 1
        case 64: return 2
        default: return nil
        }
    }

    /// The value of a lowercase hex digit (`packableDigest` checked it is one).
    private static func nibble(_ c: UInt8) -> UInt8 {
        c <= 0x39 ? c &- 0x30 : c &- 0x57
    }

    deinit {
        for chunk in chunks { chunk.deallocate() }
        scratch.deallocate()
    }
}
