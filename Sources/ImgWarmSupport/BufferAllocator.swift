import CFileScan

/// How the C allocator treats the large, short-lived buffers of a bulk run:
/// image bodies (50-300 KB photos) and libcurl's 256 KiB receive buffers,
/// allocated and freed thousands of times.
///
/// glibc's defaults give each such buffer fresh pages: an allocation above
/// the mmap threshold (128 KiB, adjusted upwards only after a free) is
/// mapped and unmapped per buffer, and free space above the trim threshold
/// at the heap's top is returned to the kernel. Every new page then costs a
/// page fault and zeroing on first touch (perf on `warm --no-validate` of
/// 5,000 photos: 12% of the run's samples in page faults, most inside
/// recv() filling curl's buffer). Fixed thresholds keep freed buffers in
/// the heap for the next one: system CPU of that run fell by a third. The
/// heap then holds on to its peak (bounded by the pipeline: concurrency x
/// body size) until the process exits, which for a batch run is the point.
public enum BufferAllocator {
    /// Buffers up to this size are served from the heap.
    static let heapLimit: Int32 = 32 << 20
    /// Free memory the heap keeps before giving any back.
    static let keptFreeBytes: Int32 = 256 << 20

    /// A decoder's buffers from this size up are given back to the kernel
    /// when it is done (`releaseFreeMemory`).
    public static let releasedAfterDecode: UInt64 = 8 << 20

    /// Returns the free memory of every heap to the kernel. The decode
    /// memory budget (`DecodeMemoryGate`) needs it after a large decode:
    /// the thresholds below keep buffers of up to 32 MiB in the heap of the
    /// worker thread that freed them (each has its own arena), so every
    /// worker would go on holding the largest image it ever decoded, and
    /// six 4000x4000 progressive JPEGs decoded one at a time under
    /// `--decode-memory 100MiB` still peaked at 182 MiB over the run's
    /// baseline (two workers, 91 MiB each). Costs well under a millisecond
    /// next to a decode that needs 8 MiB.
    public static func releaseFreeMemory() {
        _ = imgwarm_malloc_trim()
    }

    /// Call once at the start of a bulk command, before its threads start.
    public static func tuneForBulkBuffers() {
        _ = imgwarm_malloc_thresholds(heapLimit, keptFreeBytes)
    }
}
