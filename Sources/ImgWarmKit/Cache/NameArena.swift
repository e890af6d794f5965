#if canImport(Glibc)
import Glibc
#endif

/// The names of millions of files in a few large allocations, referred to by
/// a 32-bit offset instead of a String per file.
///
/// SDWebImage names (`<32 lowercase hex>[.<ext>]`) are stored packed: a tag
/// byte, the 16 bytes the hex digits stand for, then the extension; a common
/// extension (or none) is said by the tag alone: 17 bytes for `<md5>.jpg`
/// instead of 37. Other names are stored as they are. Names come back
/// NUL-terminated, ready for unlinkat.
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
    private static let packedTag: CChar = 1
    /// Tags 2...: packed, and the extension is `commonExtensions[tag - 2]`
    /// (no bytes stored after the 16).
    private static let commonExtensions: [[CChar]] = ["", ".jpg", ".png", ".gif", ".webp", ".jpeg", ".avif", ".heic"]
        .map { Array($0.utf8).map { CChar(bitPattern: $0) } + [0] }
    private static let hexDigits: [CChar] = Array("0123456789abcdef".utf8).map { CChar(bitPattern: $0) }

    private var chunks: [UnsafeMutablePointer<CChar>] = []
    private var used = NameArena.chunkSize
    /// Where a packed name is spelled out again (names are at most 255 bytes).
    private let scratch = UnsafeMutablePointer<CChar>.allocate(capacity: 512)

    /// Bytes held (allocated chunks).
    var allocatedBytes: Int { chunks.count * Self.chunkSize }

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
        var out = chunk + used
        if Self.isPackable(name, length) {
            out[0] = Self.packedTag
            for i in 0..<16 {
                out[1 + i] = CChar(bitPattern: Self.nibble(name[2 * i]) << 4 | Self.nibble(name[2 * i + 1]))
            }
            if let common = Self.commonExtension(name + 32, length - 32) {
                out[0] = CChar(2 + common)
                used += 17
            } else {
                out += 17
                (out).update(from: name + 32, count: length - 32)
                out[length - 32] = 0
                used += 17 + length - 32 + 1
            }
        } else {
            out[0] = Self.rawTag
            (out + 1).update(from: name, count: length)
            out[1 + length] = 0
            used += length + 2
        }
        return offset
    }

    /// The NUL-terminated name at `offset`, valid until the next call.
    func name(_ offset: UInt32) -> UnsafePointer<CChar> {
        let entry = chunks[Int(offset >> Self.chunkShift)] + Int(offset & UInt32(Self.chunkSize - 1))
        if entry[0] == Self.rawTag { return UnsafePointer(entry + 1) }
        for i in 0..<16 {
            let byte = UInt8(bitPattern: entry[1 + i])
            scratch[2 * i] = Self.hexDigits[Int(byte >> 4)]
            scratch[2 * i + 1] = Self.hexDigits[Int(byte & 0x0F)]
        }
        if entry[0] == Self.packedTag {
            let rest = entry + 17
            let restLength = strlen(rest)
            (scratch + 32).update(from: rest, count: restLength + 1)
        } else {
            Self.commonExtensions[Int(entry[0]) - 2].withUnsafeBufferPointer {
                (scratch + 32).update(from: $0.baseAddress!, count: $0.count)
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

    /// 32 lowercase hex digits, then nothing or `.`: SDWebImage's layout.
    private static func isPackable(_ name: UnsafePointer<CChar>, _ length: Int) -> Bool {
        guard length >= 32, length == 32 || name[32] == 0x2E else { return false }
        for i in 0..<32 {
            let c = name[i]
            guard (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) else { return false }
        }
        return true
    }

    private static func nibble(_ c: CChar) -> UInt8 {
        c <= 0x39 ? UInt8(c - 0x30) : UInt8(c - 0x61 + 10)
    }

    deinit {
        for chunk in chunks { chunk.deallocate() }
        scratch.deallocate()
    }
}
