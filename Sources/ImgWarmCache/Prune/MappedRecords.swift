#if canImport(Glibc)
import Glibc
#endif
import CFileScan

/// A growable array of trivial values in one anonymous memory mapping.
///
/// Swift's Array grows by allocating a buffer twice the size and copying:
/// at a million prune records that is 8 + 16 MB at once, and the freed
/// buffers stay in the malloc heap. Here growth is mremap, which moves the
/// pages, so the records never exist twice and the memory returns to the
/// system with the array. `buffer` is a view that sorts and partitions in
/// place; it is valid until the next `append`.
final class MappedRecords<Element: BitwiseCopyable> {
    private(set) var buffer = UnsafeMutableBufferPointer<Element>(start: nil, count: 0)
    private var capacity = 0

    struct Full: Error {}

    func append(_ element: Element) throws {
        if buffer.count == capacity { try grow() }
        (buffer.baseAddress! + buffer.count).initialize(to: element)
        buffer = UnsafeMutableBufferPointer(start: buffer.baseAddress, count: buffer.count + 1)
    }

    private func grow() throws {
        let stride = MemoryLayout<Element>.stride
        // 64 KiB first, then doubling: growth never copies, so doubling
        // costs address space only.
        let newCapacity = max(capacity * 2, (64 << 10) / stride)
        guard let memory = imgwarm_map_grow(buffer.baseAddress, capacity * stride, newCapacity * stride) else {
            throw Full()
        }
        buffer = UnsafeMutableBufferPointer(start: memory.bindMemory(to: Element.self, capacity: newCapacity),
                                            count: buffer.count)
        capacity = newCapacity
    }

    deinit {
        if let base = buffer.baseAddress {
            munmap(base, capacity * MemoryLayout<Element>.stride)
        }
    }
}
