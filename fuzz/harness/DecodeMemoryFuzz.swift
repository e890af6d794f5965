@testable import ImgWarmSupport
@testable import ImgWarmDecode
// libFuzzer entry point asserting the decode memory estimate: for each
// input decoded here, the heap's peak while its decoder runs
// (peak_malloc.c, an interposed malloc) must not pass what
// DecodeMemory.estimate charged for it, the share the decoder's own
// re-checks (iw_set_thread_limits) are made against.
import CImageCodecs
import CPeakMalloc

@_cdecl("LLVMFuzzerTestOneInput")
public func decodeMemoryFuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: count)
    guard let format = ImageFormat.sniff(raw), format.isDecodedHere else { return 0 }
    // The default pixel limit: the estimates matter for large images.
    let maxPixels: UInt64 = 100_000_000
    let estimate = DecodeMemory.estimate(format, raw, maxPixels: maxPixels)
    // Over the largest default --decode-memory (1 GiB) the binary refuses
    // the image before any decoder runs (DecodeMemoryGate): nothing to
    // measure (libavif would take the 4.2 GB its item parse is charged).
    if estimate > 1 << 30 { return 0 }
    iw_peak_begin()
    let verdict = CodecBridge.decode(format, raw, maxPixels: maxPixels, memoryShare: estimate, cpuSeconds: 5)
    let peak = iw_peak_end()
    if peak > estimate {
        fatalError("invariant: \(format.displayName) of \(count) bytes: peak allocation \(peak) bytes over the estimate of \(estimate) (\(verdict))")
    }
    return 0
}
