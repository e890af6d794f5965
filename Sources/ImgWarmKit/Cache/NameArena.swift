/// The names of millions of files in a few large allocations: each name is
/// copied once, NUL-terminated (so it can go straight to unlinkat), and
/// referred to by a 32-bit offset instead of a String per file.
///
/// Fixed 1 MiB chunks rather than one growing array: growth never copies
/// what is stored nor doubles the peak memory.
final class NameArena {
    static let chunkShift: UInt32 = 20
    static let chunkSize = 1 << 20
    /// 32-bit offsets: 4096 chunks of 1 MiB.
    static let maxChunks = 1 << (32 - 20)

    struct Full: Error {}

    private var chunks: [UnsafeMutablePointer<CChar>] = []
    private var used = NameArena.chunkSize

    /// Bytes held (allocated chunks).
    var allocatedBytes: Int { chunks.count * Self.chunkSize }

    /// Copies `length` bytes of `name` plus a NUL; returns the offset.
    func append(_ name: UnsafePointer<CChar>, length: Int) throws -> UInt32 {
        precondition(length < Self.chunkSize)
        if used + length + 1 > Self.chunkSize {
            guard chunks.count < Self.maxChunks else { throw Full() }
            chunks.append(UnsafeMutablePointer<CChar>.allocate(capacity: Self.chunkSize))
            used = 0
        }
        let chunk = chunks[chunks.count - 1]
        (chunk + used).update(from: name, count: length)
        chunk[used + length] = 0
        let offset = UInt32(chunks.count - 1) << Self.chunkShift | UInt32(used)
        used += length + 1
        return offset
    }

    /// The NUL-terminated name at `offset`; valid while the arena lives.
    func pointer(_ offset: UInt32) -> UnsafePointer<CChar> {
        UnsafePointer(chunks[Int(offset >> Self.chunkShift)] + Int(offset & UInt32(Self.chunkSize - 1)))
    }

    func string(_ offset: UInt32) -> String { String(cString: pointer(offset)) }

    deinit {
        for chunk in chunks { chunk.deallocate() }
    }
}
